package hub

import (
	"slices"
	"strings"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// HostedCluster is what the catalog policy needs to know of one hosted
// cluster.
type HostedCluster struct {
	// Minor is the OpenShift minor version ("4.18") of the release the
	// HostedCluster is delivered with, or "" when unknown.
	Minor string
	// Placement is its spec.olmCatalogPlacement.
	Placement string
	// Annotations are the annotations the HostedClusterDeployment itself puts
	// on the HostedCluster (after the hub's annotation policy); they win.
	Annotations map[string]string
}

// CatalogAnnotations are the annotations the fleet's policy adds to a
// HostedCluster (nil when none):
//   - the four catalog images of policy.catalogs for the hosted cluster's
//     minor, when its catalogs run on the management side and the
//     HostedClusterDeployment sets none of the four itself (HyperShift takes
//     all four or none, so one set is never mixed with another);
//   - the registry overrides, unless the HostedClusterDeployment sets them.
//
// Pure, so the delivery's input hash changes exactly when the result does.
func CatalogAnnotations(policy *v1alpha1.OLMConfig, hc HostedCluster) map[string]string {
	if policy == nil {
		return nil
	}
	out := map[string]string{}
	if hc.Placement != olm.PlacementGuest && hc.Minor != "" && !setsAny(hc.Annotations, olm.CatalogImageAnnotations) {
		i := slices.IndexFunc(policy.Catalogs, func(c v1alpha1.OLMCatalogImages) bool { return c.OpenShiftVersion == hc.Minor })
		if i >= 0 {
			c := policy.Catalogs[i]
			out[olm.AnnotationRedHatOperatorsCatalogImage] = c.RedHatOperators
			out[olm.AnnotationCertifiedOperatorsCatalogImage] = c.CertifiedOperators
			out[olm.AnnotationCommunityOperatorsCatalogImage] = c.CommunityOperators
			out[olm.AnnotationRedHatMarketplaceCatalogImage] = c.RedHatMarketplace
		}
	}
	if _, own := hc.Annotations[olm.AnnotationCatalogRegistryOverrides]; !own {
		if v := RegistryOverrides(policy.RegistryOverrides); v != "" {
			out[olm.AnnotationCatalogRegistryOverrides] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// RegistryOverrides renders overrides in HyperShift's format,
// "source=mirror,source=mirror", one pair per mirror, in the order given
// (the API refuses ',' and '=' in sources and mirrors).
func RegistryOverrides(overrides []v1alpha1.RegistryOverride) string {
	var pairs []string
	for _, o := range overrides {
		for _, m := range o.Mirrors {
			pairs = append(pairs, o.Source+"="+m)
		}
	}
	return strings.Join(pairs, ",")
}

func setsAny(annotations map[string]string, keys []string) bool {
	for _, k := range keys {
		if _, ok := annotations[k]; ok {
			return true
		}
	}
	return false
}
