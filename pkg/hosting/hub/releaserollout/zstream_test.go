package releaserollout

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/golden"
)

func ocp(v string) string { return "quay.io/openshift-release-dev/ocp-release:" + v + "-multi" }

// With latestZStream each hosted cluster goes to the newest published
// release of the minor it runs, among the updates it reports when it
// reports any; one already there is done as it is; one already moving to a
// newer z-stream keeps going there.
func TestPlanLatestZStream(t *testing.T) {
	w := newWorld("a", "b", "c", "d", "e")
	published := []v1alpha1.ReleaseStatus{{Version: "4.18.5", Image: ocp("4.18.5")}, {Version: "4.18.9", Image: ocp("4.18.9")},
		{Version: "4.18.10", Image: ocp("4.18.10")}, {Version: "4.17.12", Image: ocp("4.17.12")}, {Version: "4.19.1", Image: ocp("4.19.1")}}
	// a: 4.18.5, reports nothing → 4.18.10.
	// b: 4.18.5, reports only 4.18.9 available → 4.18.9.
	w.get("b").Available = []v1alpha1.ReleaseStatus{{Version: "4.18.9", Image: ocp("4.18.9")}}
	// c: 4.17.3 → 4.17.12 (its own minor, never 4.18).
	c := w.get("c")
	c.Current, c.Release, c.Latest.Image, c.Latest.Version = "4.17.3", ocp("4.17.3"), ocp("4.17.3"), "4.17.3"
	c.NodePools[0].Release = ocp("4.17.3")
	// d: at 4.18.10 already.
	d := w.get("d")
	d.Current, d.Release, d.Latest.Image, d.Latest.Version = "4.18.10", ocp("4.18.10"), ocp("4.18.10"), "4.18.10"
	d.NodePools[0].Release = ocp("4.18.10")
	// e: moved to 4.18.9 by hand, still at 4.18.5: keeps going to 4.18.9.
	w.get("e").Release = ocp("4.18.9")
	s := spec(5, intstr.FromString("100%"))
	s.Release = v1alpha1.RolloutRelease{LatestZStream: true}
	p := Compute(Input{Spec: s, Published: published, Now: w.now, HostedClusters: w.hcs})
	want := map[string]string{"a": ocp("4.18.10"), "b": ocp("4.18.9"), "c": ocp("4.17.12")}
	got := map[string]string{}
	for _, m := range p.Moves {
		got[m.Name] = m.Image
	}
	for n, image := range want {
		if got[n] != image {
			t.Errorf("%s moves to %q, want %q", n, got[n], image)
		}
	}
	if len(got) != len(want) {
		t.Errorf("moves %v, want only a, b, c", got)
	}
	for _, h := range p.HostedClusters {
		switch h.Name {
		case "d":
			if h.State != v1alpha1.RolloutStateDone || h.Reason != ReasonAtLatest {
				t.Errorf("d: %s %s, want Done %s", h.State, h.Reason, ReasonAtLatest)
			}
		case "e":
			if h.State != v1alpha1.RolloutStateUpgrading || !strings.Contains(h.Message, ocp("4.18.9")) {
				t.Errorf("e: %s %s: %s, want Upgrading to 4.18.9", h.State, h.Reason, h.Message)
			}
		}
	}
	golden.Compare(t, "latest-z-stream", log(1, p))
}

// A node pool that reports its version is done only at the release's: its
// readiness alone (which may come back before its version) is not enough.
func TestPlanNodePoolVersion(t *testing.T) {
	w := newWorld("a")
	a := w.get("a")
	a.Release, a.NodePools[0].Release, a.Current = newImage, newImage, "4.18.9"
	a.Latest = &v1alpha1.VersionHistoryEntry{State: v1alpha1.VersionUpdateCompleted, Image: newImage, Version: "4.18.9", CompletionTime: a.Latest.CompletionTime}
	a.NodePools[0].Version = "4.18.5"
	s := spec(1, intstr.FromInt32(1))
	p := Compute(Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: w.hcs})
	if h := p.HostedClusters[0]; h.State != v1alpha1.RolloutStateUpgrading || h.Reason != ReasonNodePoolsUpgrading {
		t.Errorf("pool ready at 4.18.5: %s %s, want Upgrading %s", h.State, h.Reason, ReasonNodePoolsUpgrading)
	}
	a.NodePools[0].Version = "4.18.9"
	p = Compute(Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: w.hcs})
	if h := p.HostedClusters[0]; h.State != v1alpha1.RolloutStateDone {
		t.Errorf("pool ready at 4.18.9: %s %s, want Done", h.State, h.Reason)
	}
}
