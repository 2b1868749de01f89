package relocation

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

func candidate(name string) scheduling.Candidate {
	return scheduling.Candidate{Name: name, ClusterAvailable: true, AddOnAvailable: true, OperatorInstalled: true,
		SupportedVersions: []string{"4.18"}, Platforms: []string{"None"}, Load: 1, Capacity: 10}
}

func TestDestination(t *testing.T) {
	req := scheduling.Request{Name: "app", HostingNamespace: "clusters", ReleaseMinor: "4.18", Platform: "None"}
	cordoned := candidate("cluster-3")
	cordoned.Cordoned = true
	full := candidate("cluster-4")
	full.Load = full.Capacity
	old := candidate("cluster-5")
	old.SupportedVersions = []string{"4.16"}
	kubevirtOnly := candidate("cluster-6")
	kubevirtOnly.Platforms = []string{"KubeVirt"}
	busy := candidate("cluster-2")
	busy.Load = 5
	all := []scheduling.Candidate{candidate("cluster-1"), busy, cordoned, full, old, kubevirtOnly, candidate("cluster-7")}

	tests := []struct {
		name, named    string
		candidates     []scheduling.Candidate
		tolerates      bool
		want, reason   string
		messageMention string
	}{
		{"the scheduler's choice, never the source", "", all, false, "cluster-7", "", ""},
		{"named", "cluster-2", all, false, "cluster-2", "", ""},
		{"named source", "cluster-1", all, false, "", ReasonDestinationIsSource, "cluster-1"},
		{"named cordoned", "cluster-3", all, false, "", ReasonDestinationCordoned, "cordoned"},
		{"named cordoned, even when the hosted cluster tolerates cordons", "cluster-3", all, true, "", ReasonDestinationCordoned, "cordoned"},
		{"named full", "cluster-4", all, false, "", ReasonDestinationFull, "cluster-4"},
		{"named without the release", "cluster-5", all, false, "", ReasonDestinationLacksRelease, "4.18"},
		{"named without the platform", "cluster-6", all, false, "", ReasonDestinationLacksPlatform, "None"},
		{"named outside the candidates", "cluster-9", all, false, "", ReasonDestinationNotAllowed, "cluster-9"},
		{"only the source", "", all[:1], false, "", ReasonDestinationNotAvailable, "cluster-1"},
		{"none fits: the most common reason, every cluster named", "", []scheduling.Candidate{candidate("cluster-1"), cordoned, full, func() scheduling.Candidate {
			c := candidate("cluster-8")
			c.Cordoned = true
			return c
		}()}, false, "", ReasonDestinationCordoned, "cluster-4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := req
			r.ToleratesCordon = tt.tolerates
			got, reason, message := Destination(r, tt.candidates, "cluster-1", tt.named, scheduling.StrategySpread)
			if got != tt.want || reason != tt.reason {
				t.Fatalf("Destination = %q, %q (%s); want %q, %q", got, reason, message, tt.want, tt.reason)
			}
			if !strings.Contains(message, tt.messageMention) {
				t.Fatalf("message %q does not mention %q", message, tt.messageMention)
			}
		})
	}
}

// TestRedecide: before the restore, the recorded destination stays while
// it fits (even when another is now emptier); a full one is replaced by
// the scheduler's choice unless the admin named it; with none left, the
// move is refused with the reason.
func TestRedecide(t *testing.T) {
	req := scheduling.Request{Name: "app", HostingNamespace: "clusters", ReleaseMinor: "4.18", Platform: "None"}
	busy, empty, full := candidate("cluster-2"), candidate("cluster-3"), candidate("cluster-2")
	busy.Load, empty.Load, full.Load = 8, 0, full.Capacity
	for _, tt := range []struct {
		name       string
		candidates []scheduling.Candidate
		named      string
		want       string
		reason     string
	}{
		{"still fits", []scheduling.Candidate{candidate("cluster-1"), busy, empty}, "", "cluster-2", ""},
		{"filled since: another, and why", []scheduling.Candidate{candidate("cluster-1"), full, empty}, "", "cluster-3", ReasonDestinationFull},
		{"filled since, named: refused", []scheduling.Candidate{candidate("cluster-1"), full, empty}, "cluster-2", "", ReasonDestinationFull},
		{"filled since, no other", []scheduling.Candidate{candidate("cluster-1"), full}, "", "", ReasonDestinationFull},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, reason, message := Redecide(req, tt.candidates, "cluster-1", "cluster-2", tt.named, scheduling.StrategySpread)
			if got != tt.want || reason != tt.reason || (reason == "") != (message == "") {
				t.Fatalf("Redecide = %q, %q (%s); want %q, %q", got, reason, message, tt.want, tt.reason)
			}
		})
	}
}

// TestInbound: the moves that count on their destination are the other
// running ones, not ended ones nor the relocation deciding.
func TestInbound(t *testing.T) {
	t0 := time.Unix(1000, 0)
	mine := relocationOf("mine", "app", string(PhaseBackingUp), t0)
	mine.Status.Destination = "cluster-2"
	running := relocationOf("running", "web", string(PhaseVerifying), t0)
	running.Status.Destination = "cluster-2"
	switched := relocationOf("switched", "db", string(PhaseCleaningSource), t0)
	switched.Status.Destination = "cluster-3"
	done := relocationOf("done", "old", string(PhaseDone), t0)
	done.Status.Destination = "cluster-2"
	queued := relocationOf("queued", "new", "", t0)
	got := Inbound(&mine, []v1alpha1.HostedClusterRelocation{mine, running, switched, done, queued})
	want := map[string][]types.NamespacedName{"cluster-2": {{Namespace: "team-a", Name: "web"}}, "cluster-3": {{Namespace: "team-a", Name: "db"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Inbound = %v, want %v", got, want)
	}
}
