package capacity

import "testing"

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
	r := Report{HostedClusters: 3, MaxHostedClusters: 3, AboveThreshold: 2, SupportedVersions: []string{"4.19", "4.18"}, Platforms: Platforms(false)}
	c := r.Claims()
	want := map[string]string{
		ClaimHostingCluster: "true", ClaimFull: "true", ClaimAboveThreshold: "true", ClaimZero: "false",
		ClaimHostedClusters: "3", ClaimSupportedVersions: "4.19,4.18", ClaimPlatforms: "Agent,KubeVirt,None",
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("claim %s = %q, want %q", k, c[k], v)
		}
	}
	r.HostedClusters = 0
	if c := r.Claims(); c[ClaimZero] != "true" || c[ClaimFull] != "false" || c[ClaimAboveThreshold] != "false" {
		t.Errorf("empty cluster claims: %v", c)
	}
	if r.FreeSlots() != 3 || (Report{HostedClusters: 5, MaxHostedClusters: 3}).FreeSlots() != 0 {
		t.Error("FreeSlots")
	}
	if p := Platforms(true); len(p) != 4 || p[0] != "AWS" {
		t.Errorf("Platforms(true) = %v", p)
	}
}
