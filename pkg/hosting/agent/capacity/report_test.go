package capacity

import (
	"testing"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

func TestFreeCapacityScore(t *testing.T) {
	for _, tc := range []struct{ count, max, want int32 }{
		{0, 80, 100}, {40, 80, 0}, {80, 80, -100}, {95, 80, -100}, {20, 80, 50}, {1, 3, 33}, {0, 0, -100},
	} {
		r := Report{HostedClusters: tc.count, MaxHostedClusters: tc.max}
		if got := r.FreeCapacityScore(); got != tc.want {
			t.Errorf("FreeCapacityScore(%d of %d) = %d, want %d", tc.count, tc.max, got, tc.want)
		}
		if s := r.FreeCapacityScore(); s < -100 || s > 100 {
			t.Errorf("score %d out of range", s)
		}
	}
}

func TestClaims(t *testing.T) {
	r := Report{HostedClusters: 3, ManagedHostedClusters: 2, MaxHostedClusters: 3, AboveThreshold: 2, SupportedVersions: []string{"4.19", "4.18"}, Platforms: Platforms(false)}
	c := r.Claims()
	want := map[string]string{
		ClaimHostingCluster: "true", ClaimFull: "true", ClaimAboveThreshold: "true", ClaimZero: "false",
		ClaimHostedClusters: "3", ClaimUnmanagedHostedClusters: "1", ClaimSupportedVersions: "4.19,4.18", ClaimPlatforms: "Agent,KubeVirt,None",
		ClaimCapacity: "3", ClaimResourceSlots: "none", ClaimCapacityBasis: "min(maxHostedClusters 3, 0 nodes: cpu 0, memory 0; no size per hosted control plane) = 3",
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("claim %s = %q, want %q", k, c[k], v)
		}
	}
	if len(c) != len(want) {
		t.Errorf("%d claims, want %d: %v", len(c), len(want), c)
	}
	r.HostedClusters, r.ManagedHostedClusters = 0, 0
	if c := r.Claims(); c[ClaimZero] != "true" || c[ClaimFull] != "false" || c[ClaimAboveThreshold] != "false" || c[ClaimUnmanagedHostedClusters] != "0" {
		t.Errorf("empty cluster claims: %v", c)
	}
	if r.FreeSlots() != 3 || (Report{HostedClusters: 5, MaxHostedClusters: 3}).FreeSlots() != 0 {
		t.Error("FreeSlots")
	}
	if p := Platforms(true); len(p) != 4 || p[0] != "AWS" {
		t.Errorf("Platforms(true) = %v", p)
	}
}

func TestIsManaged(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{
		{nil, false},
		{map[string]string{"app": "x"}, false},
		{map[string]string{hosting.LabelHCDName: ""}, false},
		{map[string]string{hosting.LabelHCDNamespace: "team-a"}, false},
		{map[string]string{hosting.LabelHCDName: "hc-1"}, true},
		{map[string]string{hosting.LabelHCDNamespace: "team-a", hosting.LabelHCDName: "hc-1"}, true},
	} {
		if got := IsManaged(tc.labels); got != tc.want {
			t.Errorf("IsManaged(%v) = %v, want %v", tc.labels, got, tc.want)
		}
	}
}
