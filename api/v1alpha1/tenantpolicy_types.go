package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultTenantPolicyName is the TenantPolicy that governs every hub namespace
// no other TenantPolicy selects (its namespaceSelector is ignored). Without
// it, the built-in default policy does (docs/security.md).
const DefaultTenantPolicyName = "default"

// TenantPolicySpec is what a fleet admin lets the tenants of some hub
// namespaces set in their HostedClusterDeployments. It is fail-closed: a field
// of the HostedCluster or NodePool spec that neither the built-in
// tenant-settable set nor spec.fields names is refused, and so is any value
// the rules below do not allow. Nothing refused reaches a management cluster.
type TenantPolicySpec struct {
	// namespaceSelector selects the hub namespaces this policy governs. A
	// namespace selected by more than one TenantPolicy is governed by none:
	// its HostedClusterDeployments are refused until the admin resolves the
	// overlap. Ignored for the policy named "default", which governs every
	// namespace no other policy selects.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// fields are the fields of the HostedCluster and NodePool specs tenants may
	// set, beyond the built-in tenant-settable set.
	// +optional
	Fields TenantFields `json:"fields,omitempty"`

	// releaseImages are the release images tenants may run (spec.release.image
	// and spec.controlPlaneRelease.image of the HostedCluster, spec.release.image
	// of NodePools). The release payload decides which control-plane operator
	// runs on the management cluster, so an image from anywhere is refused.
	// Unset: the official OpenShift release repository only.
	// +optional
	ReleaseImages *ReleaseImagePolicy `json:"releaseImages,omitempty"`

	// platforms are the platforms tenants may use and their per-platform
	// limits. Unset: None and KubeVirt.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Platforms []PlatformPolicy `json:"platforms,omitempty"`

	// hostnames are the DNS domains under which tenants may publish services
	// (spec.services[].servicePublishingStrategy route and load-balancer
	// hostnames, spec.kubeAPIServerDNSName, spec.configuration.ingress.domain).
	// Every hostname is also unique across the fleet. Empty: tenants publish
	// no hostname of their own.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	Hostnames []string `json:"hostnames,omitempty"`

	// forced are fields the admin sets on every HostedCluster and NodePool of
	// these namespaces, over whatever the tenant wrote.
	// +optional
	Forced ForcedFields `json:"forced,omitempty"`

	// quotas bound what the namespaces' HostedClusterDeployments may ask for
	// together. The number of HostedClusterDeployments per namespace is
	// bounded with a Kubernetes ResourceQuota on
	// count/hostedclusterdeployments.hcpfleet.io (docs/configuration.md).
	// +optional
	Quotas TenantQuotas `json:"quotas,omitempty"`

	// referencedObjects bound the Secrets and ConfigMaps a
	// HostedClusterDeployment refers to, which the hub copies to the
	// management cluster.
	// +optional
	ReferencedObjects ReferencedObjectPolicy `json:"referencedObjects,omitempty"`

	// upgradeOverrides release the hub's hold of a minor upgrade that
	// installed operators do not support (UpgradeBlocked, reason
	// OperatorIncompatible), each for one HostedClusterDeployment and exactly
	// one release image. Only the fleet admin writes TenantPolicies, so a
	// tenant cannot override the hold.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	UpgradeOverrides []UpgradeOverride `json:"upgradeOverrides,omitempty"`

	// allowCordonToleration lets the namespaces' HostedClusterDeployments be
	// bound to a cordoned management cluster (ManagedCluster taint
	// hcpfleet.io/unschedulable): each one that wants it says so with a
	// toleration of that taint in its Placement. Without it (the default) a
	// cordon holds for every HostedClusterDeployment, whatever its Placement
	// tolerates: tenants write Placements, so they cannot bypass a cordon on
	// their own.
	// +optional
	AllowCordonToleration bool `json:"allowCordonToleration,omitempty"`

	// allowImportOptOut lets the namespaces' HostedClusterDeployments set
	// spec.import: Disabled, so that their hosted clusters are not imported
	// as ManagedClusters (and escape what the admin aims at ManagedClusters:
	// ACM policies, add-ons). Without it (the default) a
	// HostedClusterDeployment that sets it is refused.
	// +optional
	AllowImportOptOut bool `json:"allowImportOptOut,omitempty"`
}

// TenantFields are fields tenants may set beyond the built-in tenant-settable
// set. A path is dot-separated from the spec ("etcd.unmanaged",
// "services[].servicePublishingStrategy.nodePort.port"); "[]" steps into the
// items of a list; a path allows everything under it.
type TenantFields struct {
	// allowAll lets tenants set every field of the HostedCluster and NodePool
	// specs, including fields newer than the HyperShift API hcp-fleet pins:
	// for one trusted team. Release images, platforms, hostnames, quotas and
	// names the hub owns are still checked, and every Secret or ConfigMap
	// reference still resolves in the tenant's own namespace.
	// +optional
	AllowAll bool `json:"allowAll,omitempty"`

	// hostedCluster are more paths of spec.hostedCluster.spec tenants may set.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=512
	HostedCluster []string `json:"hostedCluster,omitempty"`

	// nodePool are more paths of spec.nodePools[].spec tenants may set.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=512
	NodePool []string `json:"nodePool,omitempty"`

	// labels are label keys or patterns of reserved domains
	// (hypershift.openshift.io, hcpfleet.io, kubernetes.io, k8s.io,
	// open-cluster-management.io, openshift.io) tenants may put on their
	// HostedClusters and NodePools ("*" never crosses the "/"). Other reserved
	// keys are refused: HyperShift and the management cluster act on them
	// (hypershift.openshift.io/hosted-cluster-size, say).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=317
	Labels []string `json:"labels,omitempty"`
}

// ReleaseImagePolicy says which release images tenants may run.
type ReleaseImagePolicy struct {
	// repositories are image repositories ("quay.io/openshift-release-dev/ocp-release")
	// whose images tenants may run, by tag or digest; a repository ending in
	// "/*" allows every repository under that path.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=512
	Repositories []string `json:"repositories,omitempty"`

	// requireDigest refuses images referenced by tag: a tag can be moved to
	// another payload after the admin looked at it.
	// +optional
	RequireDigest bool `json:"requireDigest,omitempty"`
}

// PlatformPolicy allows one HyperShift platform.
type PlatformPolicy struct {
	// type is a HyperShift platform type: None, KubeVirt, Agent, AWS, Azure,
	// PowerVS, OpenStack, GCP.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Type string `json:"type"`

	// agentNamespaces are the namespaces of the management cluster whose Agents
	// (bare-metal hosts registered with the assisted installer) the hosted
	// clusters may claim, for type Agent (platform.agent.agentNamespace). Empty:
	// the Agent platform is not allowed, since Agents of any namespace would be.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	AgentNamespaces []string `json:"agentNamespaces,omitempty"`
}

// ForcedFields are what the admin sets over the tenant's spec.
type ForcedFields struct {
	// hostedClusterSpec is merged over every HostedCluster's spec (the admin's
	// values win; lists are replaced): nodeSelector, tolerations,
	// controllerAvailabilityPolicy, say.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	HostedClusterSpec *apiextensionsv1.JSON `json:"hostedClusterSpec,omitempty"`

	// nodePoolSpec is merged over every NodePool's spec.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	NodePoolSpec *apiextensionsv1.JSON `json:"nodePoolSpec,omitempty"`

	// hostedClusterLabels are put on every HostedCluster (over the tenant's).
	// +optional
	HostedClusterLabels map[string]string `json:"hostedClusterLabels,omitempty"`

	// hostedClusterAnnotations are put on every HostedCluster (over the
	// tenant's), whatever the hub's --hosted-cluster-annotations allow:
	// hypershift.openshift.io/control-plane-priority-class, say.
	// +optional
	HostedClusterAnnotations map[string]string `json:"hostedClusterAnnotations,omitempty"`
}

// TenantQuotas bound a namespace's HostedClusterDeployments together.
type TenantQuotas struct {
	// maxNodePoolReplicas bounds the sum of spec.replicas (or
	// spec.autoScaling.max) over every node pool of the namespace's
	// HostedClusterDeployments. Unset: no bound.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxNodePoolReplicas *int32 `json:"maxNodePoolReplicas,omitempty"`
}

// ReferencedObjectPolicy bounds referenced Secrets and ConfigMaps.
type ReferencedObjectPolicy struct {
	// maxSizeBytes is the largest Secret or ConfigMap (its data, in bytes) a
	// HostedClusterDeployment may refer to. Unset: 262144 (256 KiB).
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxSizeBytes *int64 `json:"maxSizeBytes,omitempty"`
}

// UpgradeOverride lets one HostedClusterDeployment go to one release although
// installed operators do not support its minor.
type UpgradeOverride struct {
	// namespace of the HostedClusterDeployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`

	// name of the HostedClusterDeployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// releaseImage is the release image allowed, exactly as
	// spec.hostedCluster.spec.release.image names it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	ReleaseImage string `json:"releaseImage"`
}

// TenantPolicy says what the tenants of some hub namespaces may set in their
// HostedClusterDeployments. Cluster-scoped and written by the fleet admin
// only; the hub reads it. See docs/security.md for the built-in default and
// every field's class.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=tenantpolicies,singular=tenantpolicy,shortName=tp,scope=Cluster
// +kubebuilder:printcolumn:name="All Fields",type="boolean",JSONPath=".spec.fields.allowAll"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type TenantPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the policy.
	// +required
	Spec TenantPolicySpec `json:"spec"`
}

// TenantPolicyList is a list of TenantPolicies.
//
// +kubebuilder:object:root=true
type TenantPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TenantPolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&TenantPolicy{}, &TenantPolicyList{})
}
