package tenancy

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// The offer says what Check allows: the built-in platforms and repository,
// Agent only with its namespaces, the admin's repositories and quota; a
// policy that allows nothing offers nothing but why.
func TestOffer(t *testing.T) {
	if got, want := Builtin().Offer(), (Offer{Policy: "the built-in default tenant policy",
		Platforms:           []PlatformOffer{{Type: "KubeVirt"}, {Type: "None"}},
		ReleaseRepositories: []string{DefaultReleaseRepository}}); !reflect.DeepEqual(got, want) {
		t.Errorf("built-in: %+v, want %+v", got, want)
	}
	p := compile(t, v1alpha1.TenantPolicySpec{
		Platforms:     []v1alpha1.PlatformPolicy{{Type: "Agent"}, {Type: "KubeVirt", AgentNamespaces: []string{"ignored"}}},
		ReleaseImages: &v1alpha1.ReleaseImagePolicy{Repositories: []string{"registry.example.com/ocp/*"}, RequireDigest: true},
		Quotas:        v1alpha1.TenantQuotas{MaxNodePoolReplicas: ptr.To[int32](6)},
	})
	got := p.Offer()
	if want := []PlatformOffer{{Type: "KubeVirt"}}; !reflect.DeepEqual(got.Platforms, want) {
		t.Errorf("platforms %+v, want %+v (Agent without namespaces is refused by Check)", got.Platforms, want)
	}
	if !got.RequireDigest || !reflect.DeepEqual(got.ReleaseRepositories, []string{"registry.example.com/ocp/*"}) || got.MaxNodePoolReplicas == nil || *got.MaxNodePoolReplicas != 6 {
		t.Errorf("got %+v", got)
	}
	agent := compile(t, v1alpha1.TenantPolicySpec{Platforms: []v1alpha1.PlatformPolicy{{Type: "Agent", AgentNamespaces: []string{"agents-a"}}}})
	if got, want := agent.Offer().Platforms, []PlatformOffer{{Type: "Agent", AgentNamespaces: []string{"agents-a"}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("agent: %+v, want %+v", got, want)
	}
	// What is offered passes Check: the offered platform and a release of
	// an offered repository.
	d := deployment(set("platform.type", "KubeVirt"), set("release.image", "registry.example.com/ocp/release@sha256:abc"),
		set("np.release.image", "registry.example.com/ocp/release@sha256:abc"))
	if v := p.Check(d, fakeFleet{}); len(v.List) != 0 {
		t.Errorf("an offered choice is refused: %s", v.Message())
	}
	broken, _ := Compile("TenantPolicy broken", v1alpha1.TenantPolicySpec{Fields: v1alpha1.TenantFields{HostedCluster: []string{"etcd.*"}}})
	if o := broken.Offer(); !strings.Contains(o.Refused, "TenantPolicy broken is invalid") || o.Platforms != nil || o.ReleaseRepositories != nil {
		t.Errorf("broken policy offers %+v", o)
	}
}
