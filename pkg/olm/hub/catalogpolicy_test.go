package hub

import (
	"maps"
	"testing"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

func digest(c byte) string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return "@sha256:" + string(b)
}

var policy = &v1alpha1.OLMConfig{
	Catalogs: []v1alpha1.OLMCatalogImages{
		{OpenShiftVersion: "4.17", RedHatOperators: "r/ro" + digest('1'), CertifiedOperators: "r/co" + digest('2'),
			CommunityOperators: "r/cm" + digest('3'), RedHatMarketplace: "r/rm" + digest('4')},
		{OpenShiftVersion: "4.18", RedHatOperators: "r/ro" + digest('5'), CertifiedOperators: "r/co" + digest('6'),
			CommunityOperators: "r/cm" + digest('7'), RedHatMarketplace: "r/rm" + digest('8')},
	},
	RegistryOverrides: []v1alpha1.RegistryOverride{
		{Source: "registry.redhat.io/redhat", Mirrors: []string{"m1.example.com/redhat", "m2.example.com/redhat"}},
		{Source: "quay.io", Mirrors: []string{"m1.example.com/quay"}},
	},
}

const overrides = "registry.redhat.io/redhat=m1.example.com/redhat,registry.redhat.io/redhat=m2.example.com/redhat,quay.io=m1.example.com/quay"

func catalogs418(extra map[string]string) map[string]string {
	out := map[string]string{
		olm.AnnotationRedHatOperatorsCatalogImage:    "r/ro" + digest('5'),
		olm.AnnotationCertifiedOperatorsCatalogImage: "r/co" + digest('6'),
		olm.AnnotationCommunityOperatorsCatalogImage: "r/cm" + digest('7'),
		olm.AnnotationRedHatMarketplaceCatalogImage:  "r/rm" + digest('8'),
	}
	maps.Copy(out, extra)
	return out
}

func TestCatalogAnnotations(t *testing.T) {
	for name, tc := range map[string]struct {
		policy *v1alpha1.OLMConfig
		hc     HostedCluster
		want   map[string]string
	}{
		"no policy": {nil, HostedCluster{Minor: "4.18"}, nil},
		"management placement, the minor's catalogs and the overrides": {policy, HostedCluster{Minor: "4.18", Placement: "Management"},
			catalogs418(map[string]string{olm.AnnotationCatalogRegistryOverrides: overrides})},
		"unset placement is management": {policy, HostedCluster{Minor: "4.18"},
			catalogs418(map[string]string{olm.AnnotationCatalogRegistryOverrides: overrides})},
		"guest placement: overrides only": {policy, HostedCluster{Minor: "4.18", Placement: olm.PlacementGuest},
			map[string]string{olm.AnnotationCatalogRegistryOverrides: overrides}},
		"a minor without catalogs: overrides only": {policy, HostedCluster{Minor: "4.19"},
			map[string]string{olm.AnnotationCatalogRegistryOverrides: overrides}},
		"unknown minor: overrides only": {policy, HostedCluster{},
			map[string]string{olm.AnnotationCatalogRegistryOverrides: overrides}},
		// HyperShift takes the four images as one set: the HCD's one image
		// keeps the fleet's whole set away (and HyperShift reports the
		// HCD's incomplete set itself).
		"the HCD's own catalog image wins over the whole set": {policy,
			HostedCluster{Minor: "4.18", Annotations: map[string]string{olm.AnnotationCommunityOperatorsCatalogImage: "mine" + digest('9')}},
			map[string]string{olm.AnnotationCatalogRegistryOverrides: overrides}},
		"the HCD's own overrides win": {policy,
			HostedCluster{Minor: "4.18", Annotations: map[string]string{olm.AnnotationCatalogRegistryOverrides: "a=b"}},
			catalogs418(nil)},
		"catalogs only": {&v1alpha1.OLMConfig{Catalogs: policy.Catalogs}, HostedCluster{Minor: "4.17"},
			map[string]string{
				olm.AnnotationRedHatOperatorsCatalogImage:    "r/ro" + digest('1'),
				olm.AnnotationCertifiedOperatorsCatalogImage: "r/co" + digest('2'),
				olm.AnnotationCommunityOperatorsCatalogImage: "r/cm" + digest('3'),
				olm.AnnotationRedHatMarketplaceCatalogImage:  "r/rm" + digest('4'),
			}},
		"nothing applies": {&v1alpha1.OLMConfig{Catalogs: policy.Catalogs}, HostedCluster{Minor: "4.18", Placement: olm.PlacementGuest}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			got := CatalogAnnotations(tc.policy, tc.hc)
			if !maps.Equal(got, tc.want) {
				t.Errorf("got %v\nwant %v", got, tc.want)
			}
			if tc.want == nil && got != nil {
				t.Errorf("got an empty map instead of nil")
			}
		})
	}
}
