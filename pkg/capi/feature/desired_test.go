package feature

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/capacity"
)

func TestSettingsFrom(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec v1alpha1.HostingConfigSpec
		want Settings
	}{
		{"empty spec: Auto, no providers", v1alpha1.HostingConfigSpec{}, Settings{Mode: crds.ModeAuto}},
		{"Private", v1alpha1.HostingConfigSpec{CAPIMode: v1alpha1.CAPIModePrivate}, Settings{Mode: crds.ModePrivate}},
		{"bootstrap only", v1alpha1.HostingConfigSpec{AgentProviders: &v1alpha1.AgentProvidersConfig{Bootstrap: true}},
			Settings{Mode: crds.ModeAuto, Providers: ProviderSet{Bootstrap: true}}},
		{"control plane brings bootstrap along", v1alpha1.HostingConfigSpec{AgentProviders: &v1alpha1.AgentProvidersConfig{ControlPlane: true}},
			Settings{Mode: crds.ModeAuto, Providers: ProviderSet{Bootstrap: true, ControlPlane: true}}},
		{"OIDC storage: hosts AWS", v1alpha1.HostingConfigSpec{Install: &v1alpha1.InstallOptions{OIDCStorage: &v1alpha1.OIDCStorageS3{Bucket: "b"}}},
			Settings{Mode: crds.ModeAuto, AWS: true}},
		{"install options without OIDC storage: no AWS", v1alpha1.HostingConfigSpec{Install: &v1alpha1.InstallOptions{ExternalDNS: &v1alpha1.ExternalDNSConfig{}}},
			Settings{Mode: crds.ModeAuto}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SettingsFrom(&tc.spec); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The infrastructure CRDs follow the platforms the agent advertises
// (capacity.Platforms), not the agent providers.
func TestCRDOptionsFollowAdvertisedPlatforms(t *testing.T) {
	for _, tc := range []struct {
		settings Settings
		want     []crds.Provider
	}{
		{Settings{}, []crds.Provider{crds.ProviderAgent, crds.ProviderKubeVirt}},
		{Settings{Providers: ProviderSet{Bootstrap: true}}, []crds.Provider{crds.ProviderAgent, crds.ProviderKubeVirt}},
		{Settings{AWS: true}, []crds.Provider{crds.ProviderAgent, crds.ProviderKubeVirt, crds.ProviderAWS}},
	} {
		if got := tc.settings.CRDOptions().Providers; !slices.Equal(got, tc.want) {
			t.Errorf("%+v: provider CRD sets %v, want %v", tc.settings, got, tc.want)
		}
	}
	// Every platform the agent advertises has its infrastructure CRDs.
	infra := map[string]crds.Provider{"Agent": crds.ProviderAgent, "KubeVirt": crds.ProviderKubeVirt, "AWS": crds.ProviderAWS}
	for _, aws := range []bool{false, true} {
		for _, platform := range capacity.Platforms(aws) {
			p, ok := infra[platform]
			if platform == "None" {
				continue // no CAPI infrastructure
			}
			if !ok || !slices.Contains(Settings{AWS: aws}.CRDOptions().Providers, p) {
				t.Errorf("platform %s is advertised (AWS %v) without its CAPI infrastructure CRDs", platform, aws)
			}
		}
	}
}

// needsApply skips exactly the CRDs that are ours and carry the same hash.
func TestNeedsApply(t *testing.T) {
	built, err := crds.Build(crds.ModeStandard, crds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := withAppliedHash(built)
	if err != nil {
		t.Fatal(err)
	}
	again, err := withAppliedHash(built)
	if err != nil {
		t.Fatal(err)
	}
	if want[0].Annotations[AppliedHashAnnotation] != again[0].Annotations[AppliedHashAnnotation] {
		t.Fatal("the applied hash is not stable")
	}
	if want[0].Annotations[AppliedHashAnnotation] == want[1].Annotations[AppliedHashAnnotation] {
		t.Fatal("two different CRDs have the same hash")
	}
	if _, ok := built[0].Annotations[AppliedHashAnnotation]; ok {
		t.Fatal("withAppliedHash changed its input")
	}

	live := map[string]metav1.Object{}
	for _, crd := range want {
		live[crd.Name] = &metav1.ObjectMeta{Name: crd.Name, Labels: crd.Labels, Annotations: crd.Annotations}
	}
	if got := needsApply(want, live); len(got) != 0 {
		t.Errorf("nothing changed, yet %d CRDs to apply", len(got))
	}

	stale := want[0].Name
	live[stale] = &metav1.ObjectMeta{Name: stale, Labels: want[0].Labels, Annotations: map[string]string{AppliedHashAnnotation: "old"}}
	foreign := want[1].Name
	live[foreign] = &metav1.ObjectMeta{Name: foreign, Annotations: want[1].Annotations} // no managed-by label: not ours
	missingCRD := want[2].Name
	delete(live, missingCRD)
	got := map[string]bool{}
	for _, crd := range needsApply(want, live) {
		got[crd.Name] = true
	}
	if len(got) != 3 || !got[stale] || !got[foreign] || !got[missingCRD] {
		t.Errorf("to apply: %v, want %s, %s (the Installer then skips it) and %s", got, stale, foreign, missingCRD)
	}
}

func TestInFamily(t *testing.T) {
	for name, want := range map[string]bool{
		"machines.cluster.x-k8s.io":                              true,
		"metal3machines.infrastructure.cluster.x-k8s.io":         true,
		"machines.cluster.hypershift.openshift.io":               true,
		"hostedclusters.hypershift.openshift.io":                 false,
		"agentmachines.capi-provider.agent-install.openshift.io": false,
		"infraenvs.agent-install.openshift.io":                   false,
	} {
		if got := inFamily(name); got != want {
			t.Errorf("inFamily(%s) = %v", name, got)
		}
	}
}
