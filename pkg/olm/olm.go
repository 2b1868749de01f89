// Package olm holds what the hub and the agent agree on about OLM in hosted
// clusters (OCPSTRAT-112, OLM in the hosted control plane), and HyperShift's names for it: the HostedCluster
// annotations that choose a hosted cluster's catalog images and registry
// overrides. Hub code (catalog policy, upgrade gating) and agent code
// (catalogs, catalog health, guest operator compatibility) live in
// sub-packages and never import each other.
package olm

// HyperShift's HostedCluster annotations for OLM catalogs
// (github.com/openshift/hypershift/api/hypershift/v1beta1). The control-plane
// operator takes the four catalog images only together and only by digest
// ("if OLM catalog images are overridden, all the values for the 4 default
// catalogs should be provided"), and only with olmCatalogPlacement
// management; the registry overrides apply with either placement.
const (
	AnnotationRedHatOperatorsCatalogImage    = "hypershift.openshift.io/redhat-operators-catalog-image"
	AnnotationCertifiedOperatorsCatalogImage = "hypershift.openshift.io/certified-operators-catalog-image"
	AnnotationCommunityOperatorsCatalogImage = "hypershift.openshift.io/community-operators-catalog-image"
	AnnotationRedHatMarketplaceCatalogImage  = "hypershift.openshift.io/redhat-marketplace-catalog-image"
	// AnnotationCatalogRegistryOverrides is "source=mirror,source=mirror";
	// a source may repeat, once per mirror.
	AnnotationCatalogRegistryOverrides = "hypershift.openshift.io/olm-catalogs-is-registry-overrides"
)

// CatalogImageAnnotations are the four catalog image annotations, which
// HyperShift uses all together or not at all.
var CatalogImageAnnotations = []string{
	AnnotationRedHatOperatorsCatalogImage,
	AnnotationCertifiedOperatorsCatalogImage,
	AnnotationCommunityOperatorsCatalogImage,
	AnnotationRedHatMarketplaceCatalogImage,
}

// PlacementGuest is HostedCluster spec.olmCatalogPlacement "guest": OLM in
// the hosted cluster runs the catalogs. Anything else (unset, "management")
// runs them in the hosted control plane.
const PlacementGuest = "guest"

// Upgrade gating between the hub and the agent.
const (
	// AnnotationOperatorLimits is written by the agent on each delivered
	// HostedCluster on the management cluster: the JSON list of the guest's
	// operator limits ([]Limit, at most MaxReportedLimits), read back by the
	// hub through the ManifestWork's status feedback. An hcpfleet.io key, so
	// no HostedClusterDeployment can set it.
	AnnotationOperatorLimits = "hcpfleet.io/olm-operator-limits"
	// MaxReportedLimits bounds the report: enough to name what blocks, small
	// enough for the feedback.
	MaxReportedLimits = 20

	// IncompatibleOperatorsInstalled is olm-operator's reason for its
	// ClusterOperator operator-lifecycle-manager's Upgradeable=False (an
	// installed operator's olm.maxOpenShiftVersion forbids the next minor),
	// which the cluster-version operator, and from it the HostedCluster's
	// ClusterVersionUpgradeable, carry when it is the only block.
	IncompatibleOperatorsInstalled = "IncompatibleOperatorsInstalled"
	// AnnotationForceUpgradeTo is HyperShift's: the HyperShift operator
	// upgrades a HostedCluster whose ClusterVersionUpgradeable is False only
	// to the release image this annotation names exactly.
	AnnotationForceUpgradeTo = "hypershift.openshift.io/force-upgrade-to"
)
