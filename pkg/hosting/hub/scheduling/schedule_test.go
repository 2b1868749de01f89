package scheduling

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
)

func ready(name string, load, capacity int32) Candidate {
	return Candidate{Name: name, ClusterAvailable: true, AddOnAvailable: true, OperatorInstalled: true,
		SupportedVersions: []string{"4.19", "4.18", "4.17"}, Platforms: []string{"Agent", "KubeVirt", "None"},
		Load: load, Capacity: capacity}
}

var req = Request{Name: "hc", HostingNamespace: "clusters", NodePools: []string{"hc-workers"}, ReleaseMinor: "4.18", Platform: "Agent"}

func TestScheduleStrategies(t *testing.T) {
	cands := []Candidate{ready("c", 10, 40), ready("a", 5, 10), ready("b", 10, 40)}
	// Spread: utilization after placing one more: a 6/10, b 11/40, c 11/40 →
	// b and c tie; b wins by name.
	if d := Schedule(req, cands, StrategySpread); d.Cluster != "b" {
		t.Errorf("spread chose %q, want b", d.Cluster)
	}
	if d := Schedule(req, cands, StrategyBinPack); d.Cluster != "a" {
		t.Errorf("bin-pack chose %q, want a", d.Cluster)
	}
}

func TestScheduleSpreadsABurstEvenly(t *testing.T) {
	cands := []Candidate{ready("a", 0, 40), ready("b", 0, 40), ready("c", 0, 40)}
	placed := map[string]int{}
	for i := range 100 {
		r := req
		r.Name = fmt.Sprintf("hc-%d", i)
		d := Schedule(r, cands, StrategySpread)
		if d.Cluster == "" {
			t.Fatalf("request %d unschedulable: %s", i, d.Message())
		}
		placed[d.Cluster]++
		for j := range cands {
			if cands[j].Name == d.Cluster {
				cands[j].Load++
			}
		}
	}
	if placed["a"] != 34 || placed["b"] != 33 || placed["c"] != 33 {
		t.Errorf("100 over 3 clusters: %v, want 34/33/33", placed)
	}
	// 120 fill them exactly; the 121st does not fit.
	for i := 100; i < 120; i++ {
		r := req
		r.Name = fmt.Sprintf("hc-%d", i)
		d := Schedule(r, cands, StrategySpread)
		for j := range cands {
			if cands[j].Name == d.Cluster {
				cands[j].Load++
			}
		}
	}
	d := Schedule(req, cands, StrategySpread)
	if d.Cluster != "" || d.Reason() != v1alpha1.ReasonCapacityExhausted {
		t.Errorf("121st: cluster %q reason %s, want none and CapacityExhausted", d.Cluster, d.Reason())
	}
	if want := "3 full (a: full (40/40); b: full (40/40); c: full (40/40))"; !strings.Contains(d.Message(), want) {
		t.Errorf("message %q lacks %q", d.Message(), want)
	}
}

func TestScheduleFiltersAndMessage(t *testing.T) {
	full := ready("full", 80, 80)
	down := ready("down", 0, 80)
	down.AddOnAvailable = false
	old := ready("old", 0, 80)
	old.SupportedVersions = []string{"4.15", "4.16"}
	noAgent := ready("no-agent", 0, 80)
	noAgent.Platforms = []string{"KubeVirt"}
	taken := ready("taken", 0, 80)
	taken.Occupied = map[string]bool{NodePoolKey("clusters", "hc-workers"): true}
	unknown := ready("unknown", 0, 80)
	unknown.SupportedVersions = nil
	d := Schedule(req, []Candidate{full, down, old, noAgent, taken, unknown}, StrategySpread)
	if d.Cluster != "" {
		t.Fatalf("chose %q, want none", d.Cluster)
	}
	if d.Reason() != v1alpha1.ReasonNoSuitableHostingCluster {
		t.Errorf("reason %s", d.Reason())
	}
	msg := d.Message()
	for _, want := range []string{
		"no management cluster fits; 6 clusters: ",
		"1 full (full: full (80/80))",
		"1 add-on unavailable (down: the hcp-fleet add-on is not available)",
		"2 release not supported (old: does not support OpenShift 4.18 (supports 4.15-4.16); unknown: the HyperShift operator has not reported its supported versions yet)",
		"1 platform not supported (no-agent: cannot host platform Agent (hosts KubeVirt))",
		"1 name taken (taken: a NodePool clusters/hc-workers from another HostedClusterDeployment is bound there)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message\n%s\nlacks\n%s", msg, want)
		}
	}
	// A release pinned by digest is not checked against supported versions.
	digest := req
	digest.ReleaseMinor = ""
	if d := Schedule(digest, []Candidate{old}, StrategySpread); d.Cluster != "old" {
		t.Errorf("digest release: chose %q, want old", d.Cluster)
	}
	if d := Schedule(req, nil, StrategySpread); d.Reason() != v1alpha1.ReasonNoPlacementDecisions {
		t.Errorf("no candidates: reason %s", d.Reason())
	}
}

func TestScheduleHostingNamespacePolicy(t *testing.T) {
	teams := func(name string, allowed ...v1alpha1.HostingNamespaceName) Candidate {
		c := ready(name, 0, 80)
		c.HostingConfig, c.HostingNamespaces = "hcp-fleet/teams", allowed
		return c
	}
	defaults := ready("defaults", 0, 80) // no hostingNamespaces: clusters only
	agentThere := teams("agent-there", "team-x")
	agentThere.AgentNamespace = "team-x"
	teamX := req
	teamX.HostingNamespace = "team-x"
	for _, tc := range []struct {
		name       string
		req        Request
		candidates []Candidate
		want       string // chosen cluster, or "" and the message must contain wantMsg
		wantMsg    string
	}{
		{"default policy allows clusters", req, []Candidate{defaults}, "defaults", ""},
		{"listed namespace", teamX, []Candidate{defaults, teams("teams", "clusters", "team-x")}, "teams", ""},
		{"clusters not allowed once a list is set", req, []Candidate{teams("teams", "team-x")}, "",
			"no management cluster fits; 1 cluster: 1 hosting namespace not allowed (teams: hosting namespace clusters is not allowed by HostingConfig hcp-fleet/teams (allows team-x))"},
		{"namespace listed nowhere", teamX, []Candidate{defaults, teams("teams", "team-y")}, "",
			"2 hosting namespace not allowed (defaults: hosting namespace team-x is not allowed by the default HostingConfig (allows clusters); teams: hosting namespace team-x is not allowed by HostingConfig hcp-fleet/teams (allows team-y))"},
		{"the agent's namespace", teamX, []Candidate{agentThere}, "",
			"agent-there: hosting namespace team-x is the hcp-fleet agent's namespace there"},
		{"a reserved namespace even if listed", Request{Name: "hc", HostingNamespace: "kube-system"}, []Candidate{teams("teams", "kube-system")}, "",
			"hosting namespace kube-system is not allowed by HostingConfig hcp-fleet/teams"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Schedule(tc.req, tc.candidates, StrategySpread)
			if d.Cluster != tc.want {
				t.Fatalf("chose %q, want %q (%s)", d.Cluster, tc.want, d.Message())
			}
			if tc.want != "" {
				return
			}
			if d.Reason() != v1alpha1.ReasonHostingNamespaceNotAllowed {
				t.Errorf("reason %s, want %s", d.Reason(), v1alpha1.ReasonHostingNamespaceNotAllowed)
			}
			if !strings.Contains(d.Message(), tc.wantMsg) {
				t.Errorf("message\n%s\nlacks\n%s", d.Message(), tc.wantMsg)
			}
		})
	}
	// A namespace refused by policy is reported before anything else about
	// the cluster: it would not fit even once available.
	down := teams("down", "team-y")
	down.ClusterAvailable = false
	if d := Schedule(teamX, []Candidate{down}, StrategySpread); d.Rejected[0].Category != RejectHostingNamespace {
		t.Errorf("unavailable cluster that refuses the namespace: %s", d.Message())
	}
}

func TestReleaseMinor(t *testing.T) {
	for image, want := range map[string]string{
		"quay.io/openshift-release-dev/ocp-release:4.18.5-multi":    "4.18",
		"quay.io/openshift-release-dev/ocp-release:4.16.0-x86_64":   "4.16",
		"registry.local:5000/ocp/release:4.19.1":                    "4.19",
		"registry.local:5000/ocp/release":                           "",
		"quay.io/openshift-release-dev/ocp-release@sha256:0123abcd": "",
		"quay.io/x/release:latest":                                  "",
		"quay.io/x/release:4.10":                                    "4.10",
	} {
		if got := ReleaseMinor(image); got != want {
			t.Errorf("ReleaseMinor(%q) = %q, want %q", image, got, want)
		}
	}
}

func TestLoad(t *testing.T) {
	for _, c := range []struct{ total, unmanaged, bound, want int32 }{
		{0, 0, 30, 30},   // a burst the report has not seen yet
		{15, 10, 25, 35}, // 10 foreign + 25 bound
		{15, 0, 10, 15},  // 5 of ours are orphaned or still tearing down
		{0, 0, 0, 0},
	} {
		if got := hostmodel.Load(c.total, c.unmanaged, c.bound); got != c.want {
			t.Errorf("Load(%d, %d, %d) = %d, want %d", c.total, c.unmanaged, c.bound, got, c.want)
		}
	}
}
