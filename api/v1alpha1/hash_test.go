package v1alpha1_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	hcpv1 "github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

func baseHostingConfigSpec() hcpv1.HostingConfigSpec {
	cpu, mem := resource.MustParse("5"), resource.MustParse("18Gi")
	return hcpv1.HostingConfigSpec{
		Operator: &hcpv1.HyperShiftOperatorConfig{
			Image:          "quay.io/hypershift/hypershift-operator:4.18",
			ImageOverrides: map[string]hcpv1.ImagePullSpec{"IMAGE_CLUSTER_API": "a", "IMAGE_KONNECTIVITY": "b"},
		},
		Capacity: &hcpv1.CapacityConfig{
			MaxHostedClusters:     80,
			AboveThreshold:        60,
			PerHostedControlPlane: &hcpv1.ResourceBaseline{CPU: &cpu, Memory: &mem},
		},
		CAPIMode: hcpv1.CAPIModeAuto,
		OLM: &hcpv1.OLMConfig{RegistryOverrides: []hcpv1.RegistryOverride{
			{Source: "registry.redhat.io", Mirrors: []string{"m1.example.com", "m2.example.com"}},
		}},
		AgentProviders: &hcpv1.AgentProvidersConfig{Bootstrap: true},
	}
}

// TestHashChangesOnlyWithSpec: equal specs hash equally whatever the map insertion
// order, and every change of any field changes the hash.
func TestHashChangesOnlyWithSpec(t *testing.T) {
	base := baseHostingConfigSpec()
	baseHash := mustHash(t, &base)
	if len(baseHash) != 64 {
		t.Fatalf("hash %q is not a hex SHA-256", baseHash)
	}

	same := base.DeepCopy()
	same.Operator.ImageOverrides = map[string]hcpv1.ImagePullSpec{}
	same.Operator.ImageOverrides["IMAGE_KONNECTIVITY"] = "b"
	same.Operator.ImageOverrides["IMAGE_CLUSTER_API"] = "a"
	if h := mustHash(t, same); h != baseHash {
		t.Errorf("an equal spec hashes to %s, want %s", h, baseHash)
	}

	changes := map[string]func(s *hcpv1.HostingConfigSpec){
		"operator image":      func(s *hcpv1.HostingConfigSpec) { s.Operator.Image += "-1" },
		"image override":      func(s *hcpv1.HostingConfigSpec) { s.Operator.ImageOverrides["IMAGE_KONNECTIVITY"] = "c" },
		"added override":      func(s *hcpv1.HostingConfigSpec) { s.Operator.ImageOverrides["IMAGE_AGENT_CAPI_PROVIDER"] = "d" },
		"max hosted clusters": func(s *hcpv1.HostingConfigSpec) { s.Capacity.MaxHostedClusters = 81 },
		"threshold":           func(s *hcpv1.HostingConfigSpec) { s.Capacity.AboveThreshold = 61 },
		"cpu baseline": func(s *hcpv1.HostingConfigSpec) {
			q := resource.MustParse("6")
			s.Capacity.PerHostedControlPlane.CPU = &q
		},
		"capi mode": func(s *hcpv1.HostingConfigSpec) { s.CAPIMode = hcpv1.CAPIModePrivate },
		"mirror order": func(s *hcpv1.HostingConfigSpec) {
			s.OLM.RegistryOverrides[0].Mirrors = []string{"m2.example.com", "m1.example.com"}
		},
		"agent providers": func(s *hcpv1.HostingConfigSpec) { s.AgentProviders.ControlPlane = true },
		"install options": func(s *hcpv1.HostingConfigSpec) {
			s.Install = &hcpv1.InstallOptions{PrivatePlatform: &hcpv1.PrivatePlatformConfig{Type: hcpv1.PrivatePlatformNone}}
		},
		"removed olm": func(s *hcpv1.HostingConfigSpec) { s.OLM = nil },
		"subscription defaults": func(s *hcpv1.HostingConfigSpec) {
			s.OLM.SubscriptionDefaults = &hcpv1.SubscriptionDefaults{NodeSelector: map[string]hcpv1.LabelValue{"zone": "a"}}
		},
	}
	seen := map[string]string{baseHash: "base"}
	for name, change := range changes {
		s := base.DeepCopy()
		change(s)
		h := mustHash(t, s)
		if other, dup := seen[h]; dup {
			t.Errorf("changing %s gives the same hash as %s", name, other)
		}
		seen[h] = name
	}
}

func mustHash(t *testing.T, s *hcpv1.HostingConfigSpec) string {
	t.Helper()
	h, err := s.Hash()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
