package delivery

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
	olmhub "github.com/hcp-fleet/hcp-fleet/pkg/olm/hub"
)

// setOLMAnnotations sets the fleet's OLM annotations on the HostedCluster
// the spec delivers: HyperShift's catalog images and registry overrides
// for release's minor, what the agent needs (Subscription defaults, the
// CatalogSources to report beyond openshift-marketplace), and HyperShift's
// force-upgrade-to when the gate lets an upgrade past OLM's block.
func (s *Spec) setOLMAnnotations(hcd *v1alpha1.HostedClusterDeployment, sets []unstructured.Unstructured, policy *v1alpha1.OLMConfig, release string, upgrade olmhub.Decision) {
	own, _ := s.HostedClusterAnnotations()
	minor, _ := releaseMinor(hcd, sets, release)
	s.FleetAnnotations = olmhub.CatalogAnnotations(policy, olmhub.HostedCluster{
		Minor:       minor,
		Placement:   string(hcd.Spec.HostedCluster.Spec.OLMCatalogPlacement),
		Annotations: own,
	})
	set := func(key, value string) {
		if value == "" {
			return
		}
		if s.FleetAnnotations == nil {
			s.FleetAnnotations = map[string]string{}
		}
		s.FleetAnnotations[key] = value
	}
	// For the agent, which applies them in the hosted cluster
	// (pkg/olm/agent/subscriptiondefaults).
	set(olm.AnnotationSubscriptionDefaults, olm.EncodeSubscriptionDefaults(olmhub.SubscriptionDefaults(policy, hcd.Spec.OLM)))
	// For the agent, which reports their health too
	// (pkg/olm/agent/operatorlimits).
	set(olm.AnnotationCatalogSources, olmhub.CatalogSources(policy))
	if upgrade.Force {
		// HyperShift's own gate: its operator upgrades past
		// ClusterVersionUpgradeable=False only to exactly this image.
		set(olm.AnnotationForceUpgradeTo, hcd.Spec.HostedCluster.Spec.Release.Image)
	}
}
