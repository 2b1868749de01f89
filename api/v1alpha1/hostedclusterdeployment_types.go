package v1alpha1

import (
	"strings"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultHostingNamespace is the namespace on the hosting cluster that receives the
// HostedCluster and its NodePools when spec.hostingNamespace is not set. It is the
// namespace the HyperShift documentation and CLI use.
const DefaultHostingNamespace = "clusters"

// ReservedHostingNamespace reports whether ns belongs to the management cluster, OCM,
// the HyperShift operator or hcp-fleet, so no hosted cluster may be delivered there:
// default, kube-*, openshift, openshift-*, open-cluster-management*, hypershift and
// hcp-fleet* (the agent's default namespace and ours); and kube, open, open-cluster and
// hcp, because HyperShift runs the control plane in "<ns>-<name>", which would then
// fall among them (kube-system for a hosted cluster named system). It is the rule the API applies
// to spec.hostingNamespace and HostingConfig spec.hostingNamespaces, written once more
// for the hub.
func ReservedHostingNamespace(ns string) bool {
	switch ns {
	case "default", "openshift", "hypershift":
		return true
	}
	for _, prefix := range []string{"kube-", "openshift-", "open-cluster-management", "hcp-fleet"} {
		if strings.HasPrefix(ns, prefix) {
			return true
		}
	}
	// The control-plane namespace <ns>-<name> must not be reserved either.
	return ns == "kube" || strings.HasPrefix("open-cluster-management", ns+"-") || strings.HasPrefix("hcp-fleet", ns+"-")
}

// DeletionPolicy says what happens on the hosting cluster when a
// HostedClusterDeployment is deleted.
// +kubebuilder:validation:Enum=Delete;Orphan
type DeletionPolicy string

const (
	// DeletionPolicyDelete deletes the HostedCluster and its NodePools on the hosting
	// cluster, waits until HyperShift has torn them down, and only then lets the
	// HostedClusterDeployment go.
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyOrphan stops managing the HostedCluster and its NodePools and
	// leaves them running on the hosting cluster.
	DeletionPolicyOrphan DeletionPolicy = "Orphan"
)

// ImportMode says whether hosted clusters are imported into OCM/ACM as
// ManagedClusters.
// +kubebuilder:validation:Enum=Enabled;Disabled
type ImportMode string

const (
	// ImportEnabled imports the hosted cluster once it is available (the
	// default).
	ImportEnabled ImportMode = "Enabled"
	// ImportDisabled creates no ManagedCluster for it; its admin kubeconfig
	// is still mirrored to the hub.
	ImportDisabled ImportMode = "Disabled"
)

// HostedClusterDeploymentSpec is what the fleet admin asks for: a HyperShift hosted
// cluster, and where it may run.
//
// Fields of the HyperShift API that our pinned Go types do not know (a newer
// HyperShift operator on the hosting cluster may) are kept by the apiserver under
// hostedCluster.spec and nodePools[].spec; see HostedClusterTemplate.
//
// +kubebuilder:validation:XValidation:rule="has(self.placement) || has(self.hostingCluster)",message="spec.placement or spec.hostingCluster is required: name an OCM Placement in this namespace that may choose the hosting cluster, or pin one ManagedCluster"
type HostedClusterDeploymentSpec struct {
	// placement is the name of an OCM Placement in this namespace. The hosted cluster is
	// scheduled onto one of the ManagedClusters the Placement decides on, so the
	// ManagedClusterSetBindings of this namespace limit where it can go. When both
	// placement and hostingCluster are set, hostingCluster must be one of the
	// Placement's decisions. Changing placement after the hosted cluster was scheduled
	// does not move it: scheduling happens once.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message="spec.placement must be the name of a Placement: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
	Placement string `json:"placement,omitempty"`

	// hostingCluster pins the hosted cluster to the ManagedCluster of this name. The
	// cluster must still be in a ManagedClusterSet bound to this namespace. It may be
	// changed or removed until the hosted cluster is scheduled (status.hostingCluster
	// is set); from then on it can only name that cluster, because scheduling is
	// permanent: to move a hosted cluster, delete and recreate the
	// HostedClusterDeployment.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message="spec.hostingCluster must be the name of a ManagedCluster: a lowercase RFC 1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)"
	HostingCluster string `json:"hostingCluster,omitempty"`

	// hostingNamespace is the namespace on the hosting cluster that receives the
	// HostedCluster and its NodePools. HyperShift runs the hosted control plane in the
	// namespace "<hostingNamespace>-<metadata.name>" next to it. It cannot be changed
	// later: moving the HostedCluster would destroy and recreate the hosted cluster.
	// Namespaces of the management cluster itself, OCM, the HyperShift operator and
	// hcp-fleet are refused (default, kube-*, openshift, openshift-*,
	// open-cluster-management*, hypershift, hcp-fleet*), and the hosted cluster is
	// scheduled only onto management clusters whose HostingConfig lists the namespace
	// in spec.hostingNamespaces (by default only clusters).
	// +optional
	// +kubebuilder:default=clusters
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message="spec.hostingNamespace must be a valid namespace name: a lowercase RFC 1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)"
	// +kubebuilder:validation:XValidation:rule=`!(self in ['default', 'openshift', 'hypershift'] || self.startsWith('kube-') || self.startsWith('openshift-') || self.startsWith('open-cluster-management') || self.startsWith('hcp-fleet') || self == 'kube' || 'open-cluster-management'.startsWith(self + '-') || 'hcp-fleet'.startsWith(self + '-'))`,messageExpression="'spec.hostingNamespace ' + self + ' is reserved: default, kube-*, openshift, openshift-*, open-cluster-management*, hypershift and hcp-fleet* belong to the management cluster, OCM, the HyperShift operator or the hcp-fleet agent, and kube, open, open-cluster and hcp would put the HyperShift control-plane namespace (<namespace>-<name>) among them; use a namespace the fleet admin allows in the HostingConfig (spec.hostingNamespaces, by default clusters)'"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.hostingNamespace is immutable: the HostedCluster lives in that namespace on the hosting cluster and moving it would destroy and recreate the hosted cluster"
	HostingNamespace string `json:"hostingNamespace,omitempty"`

	// hostedCluster is the HyperShift HostedCluster to create on the hosting cluster,
	// as <hostingNamespace>/<metadata.name>.
	// +required
	HostedCluster HostedClusterTemplate `json:"hostedCluster"`

	// nodePools are the HyperShift NodePools of the hosted cluster, created on the
	// hosting cluster as <hostingNamespace>/<name>. NodePool names must be unique in
	// that namespace on the hosting cluster, across all hosted clusters that live
	// there; prefixing them with the HostedClusterDeployment's name keeps them apart.
	// At most 30 node pools: the bound lets the apiserver price the CEL rules of
	// HyperShift's NodePoolSpec schema, which run once per list item.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=30
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q.name == p.name))",message="spec.nodePools[].name must be unique"
	NodePools []NodePoolTemplate `json:"nodePools,omitempty"`

	// deletionPolicy says what happens to the HostedCluster and its NodePools on the
	// hosting cluster when this HostedClusterDeployment is deleted: Delete (the
	// default) tears the hosted cluster down and waits until it is gone; Orphan leaves
	// it running there, unmanaged.
	// +optional
	// +kubebuilder:default=Delete
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// olm holds this hosted cluster's OLM settings that override the fleet's (its
	// management cluster's HostingConfig spec.olm).
	// +optional
	OLM *HostedClusterOLM `json:"olm,omitempty"`

	// import Disabled keeps the hub from importing this hosted cluster as a
	// ManagedCluster (ACM's auto-import turned off for it); its admin
	// kubeconfig is still mirrored into this namespace. Only where the
	// namespace's TenantPolicy sets allowImportOptOut: elsewhere the
	// HostedClusterDeployment is refused. A hosted cluster imported before
	// stays imported until its ManagedCluster is deleted (then it is not
	// imported again). Unset or Enabled: imported, unless the hub
	// (--import-hosted-clusters=false) or the management cluster's
	// HostingConfig (spec.hostedClusterImport) turns imports off.
	// +optional
	Import ImportMode `json:"import,omitempty"`
}

// HostedClusterOLM are a hosted cluster's own OLM settings.
type HostedClusterOLM struct {
	// subscriptionDefaults replaces the HostingConfig's spec.olm.subscriptionDefaults
	// for this hosted cluster: the node selector and tolerations the agent sets on OLM
	// Subscriptions in it that set neither. Empty ({}) sets none here, whatever the
	// HostingConfig says.
	// +optional
	SubscriptionDefaults *SubscriptionDefaults `json:"subscriptionDefaults,omitempty"`
}

// HostedClusterTemplate describes the HyperShift HostedCluster to create on the
// hosting cluster.
//
// Unknown fields: spec is HyperShift's HostedClusterSpec as of the HyperShift API
// version this project pins. Every object in its schema is marked
// x-kubernetes-preserve-unknown-fields (see hack/crd), so fields that only a newer
// HyperShift knows are stored and returned by the apiserver unchanged, while every
// field we do know is still validated. Decoding into these Go types drops such
// fields, so controllers must
//   - read hostedCluster.spec and nodePools[].spec as unstructured (or raw JSON) when
//     building what they deliver to the hosting cluster, and
//   - never write a whole HostedClusterDeployment back from a typed copy (Update):
//     change metadata such as finalizers with a patch, and status through the status
//     subresource, which ignores spec.
//
// +kubebuilder:validation:XValidation:rule="has(self.spec.release) && has(self.spec.release.image) && size(self.spec.release.image) > 0",message="spec.hostedCluster.spec.release.image is required: the OpenShift release image the hosted cluster runs, e.g. quay.io/openshift-release-dev/ocp-release:4.18.5-multi"
type HostedClusterTemplate struct {
	// labels are put on the HostedCluster on the hosting cluster.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are put on the HostedCluster on the hosting cluster. HyperShift reads
	// some of its settings from annotations (hypershift.openshift.io/...).
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// spec is the HyperShift HostedCluster spec. The Secrets and ConfigMaps it refers to
	// (pull secret, SSH key, etcd encryption key, additional trust bundle, ...) are
	// read from this HostedClusterDeployment's namespace on the hub and delivered
	// together with the HostedCluster.
	// +required
	Spec hyperv1.HostedClusterSpec `json:"spec"`
}

// NodePoolTemplate describes one HyperShift NodePool of the hosted cluster. Unknown
// fields under spec are preserved as for HostedClusterTemplate.Spec, with the same
// consequences for controllers.
//
// +kubebuilder:validation:XValidation:rule="has(self.spec.release) && has(self.spec.release.image) && size(self.spec.release.image) > 0",message="spec.nodePools[].spec.release.image is required: the OpenShift release image of the pool's nodes"
type NodePoolTemplate struct {
	// name is the name of the NodePool on the hosting cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message="spec.nodePools[].name must be a lowercase RFC 1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"
	Name string `json:"name"`

	// labels are put on the NodePool on the hosting cluster.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are put on the NodePool on the hosting cluster.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// spec is the HyperShift NodePool spec. spec.clusterName must be the
	// HostedClusterDeployment's metadata.name, which is the name of the HostedCluster on
	// the hosting cluster.
	// +required
	Spec hyperv1.NodePoolSpec `json:"spec"`
}

// HostedClusterDeploymentStatus is what the hub observed: where the hosted cluster
// was scheduled, whether it was delivered, and the state HyperShift reports for it.
//
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.hostingCluster) || (has(self.hostingCluster) && (self.hostingCluster == oldSelf.hostingCluster || (has(self.conditions) && self.conditions.exists(c, c.type == 'Scheduled' && c.reason == 'Relocated'))))",message="status.hostingCluster is set once and changes only with the Scheduled condition's reason Relocated: a scheduled hosted cluster moves only through a HostedClusterRelocation"
type HostedClusterDeploymentStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// hostingCluster is the ManagedCluster the hosted cluster was scheduled onto. It is
	// set once and changes only when a HostedClusterRelocation moved the hosted cluster
	// (the Scheduled condition's reason is then Relocated); when that cluster is lost the
	// conditions say so and the hosted cluster is not moved elsewhere.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	HostingCluster string `json:"hostingCluster,omitempty"`

	// manifestWork is the name of the ManifestWork, in the namespace named after
	// hostingCluster, that delivers the hosted cluster to the hosting cluster.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ManifestWork string `json:"manifestWork,omitempty"`

	// conditions describe the hosted cluster's state: Scheduled, Delivered, Available,
	// Progressing, Degraded, NodePoolsReady, HostingClusterAvailable, UpgradeBlocked,
	// CatalogsReady, Imported.
	// Each carries a reason and a human-readable message.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// version is the OpenShift version of the hosted cluster as HyperShift reports it.
	// +optional
	Version *HostedClusterVersionStatus `json:"version,omitempty"`

	// controlPlaneEndpoint is where the hosted cluster's API server is reachable.
	// +optional
	ControlPlaneEndpoint *APIEndpoint `json:"controlPlaneEndpoint,omitempty"`

	// kubeconfigSecret is the Secret in this namespace that holds the hosted cluster's
	// admin kubeconfig, mirrored from the hosting cluster once the hosted cluster is
	// available.
	// +optional
	KubeconfigSecret *SecretKeyReference `json:"kubeconfigSecret,omitempty"`

	// managedCluster is the name of the ManagedCluster that represents the hosted
	// cluster itself on the hub, once it has been imported.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	ManagedCluster string `json:"managedCluster,omitempty"`

	// nodePools reports the nodes of each node pool in spec.nodePools.
	// +optional
	// +listType=map
	// +listMapKey=name
	NodePools []NodePoolStatus `json:"nodePools,omitempty"`
}

// HostedClusterVersionStatus is a compact form of HyperShift's ClusterVersionStatus.
type HostedClusterVersionStatus struct {
	// desired is the release the hosted cluster runs or is rolling out.
	// +optional
	Desired ReleaseStatus `json:"desired,omitempty"`

	// current is the version of the most recent release that was completely rolled
	// out. It is empty until the first rollout completes.
	// +optional
	Current string `json:"current,omitempty"`

	// history lists the releases rolled out to the hosted cluster, newest first, as
	// HyperShift reports them (it keeps a bounded number of entries).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	History []VersionHistoryEntry `json:"history,omitempty"`

	// availableUpdates are the releases the hosted cluster's update service
	// recommends from the release it runs, newest first, as HyperShift
	// reports them (status.version.availableUpdates) and the agent carries
	// them to the hub. Empty when none are reported (no channel, no update
	// service, or none recommended).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	AvailableUpdates []ReleaseStatus `json:"availableUpdates,omitempty"`

	// conditionalUpdates are the releases the update service knows risks
	// for, newest first, with whether any of them applies to this hosted
	// cluster (status.version.conditionalUpdates). A ReleaseRollout never
	// moves a hosted cluster to one that is not recommended unless it
	// accepts its risks by name (spec.acceptRisks).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	ConditionalUpdates []ConditionalUpdate `json:"conditionalUpdates,omitempty"`
}

// ConditionalUpdate is a release the hosted cluster may update to when the
// risks known for it do not apply, after OpenShift's ConditionalUpdate.
type ConditionalUpdate struct {
	// release is the release of the update.
	// +required
	Release ReleaseStatus `json:"release"`

	// recommended is the status of the cluster-version operator's
	// Recommended condition for it: True when none of the risks applies to
	// the hosted cluster, False when one does, Unknown when they could not
	// be evaluated.
	// +optional
	// +kubebuilder:validation:Enum=True;False;Unknown
	Recommended metav1.ConditionStatus `json:"recommended,omitempty"`

	// reason is that condition's reason: the name of the risk that
	// applies, MultipleReasons, AsExpected or EvaluationFailed.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Reason string `json:"reason,omitempty"`

	// risks are the risks known for the update.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Risks []UpdateRisk `json:"risks,omitempty"`
}

// UpdateRisk is one known risk of an update, after OpenShift's
// ConditionalUpdateRisk.
type UpdateRisk struct {
	// name is the risk's CamelCase name, which spec.acceptRisks of a
	// ReleaseRollout names to accept it.
	// +required
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// message says what the risk is, in words.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// url points to more about the risk.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	URL string `json:"url,omitempty"`

	// matchingRules are the types of the rules that decide whether the risk
	// applies (Always, PromQL), in order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=64
	MatchingRules []string `json:"matchingRules,omitempty"`
}

// ReleaseStatus names an OpenShift release.
type ReleaseStatus struct {
	// version is the semantic version of the release, e.g. 4.18.5.
	// +optional
	Version string `json:"version,omitempty"`

	// image is the release image pull spec.
	// +optional
	Image string `json:"image,omitempty"`
}

// VersionUpdateState is the state of one rollout in the version history.
type VersionUpdateState string

const (
	// VersionUpdateCompleted means the release was completely rolled out.
	VersionUpdateCompleted VersionUpdateState = "Completed"
	// VersionUpdatePartial means the rollout has not completed (it is in progress or
	// was superseded).
	VersionUpdatePartial VersionUpdateState = "Partial"
)

// VersionHistoryEntry is one rollout of a release to the hosted cluster.
type VersionHistoryEntry struct {
	// state is Completed once the release is completely rolled out, otherwise Partial.
	// +required
	State VersionUpdateState `json:"state"`

	// version is the semantic version of the release.
	// +optional
	Version string `json:"version,omitempty"`

	// image is the release image pull spec.
	// +optional
	Image string `json:"image,omitempty"`

	// startedTime is when the rollout began.
	// +optional
	StartedTime *metav1.Time `json:"startedTime,omitempty"`

	// completionTime is when the rollout completed; unset while it is Partial.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// APIEndpoint is a network address of an API server.
type APIEndpoint struct {
	// host is the hostname or IP address.
	// +required
	Host string `json:"host"`

	// port is the TCP port.
	// +required
	Port int32 `json:"port"`
}

// SecretKeyReference names one key of a Secret in the same namespace.
type SecretKeyReference struct {
	// name is the name of the Secret.
	// +required
	Name string `json:"name"`

	// key is the key in the Secret's data.
	// +required
	Key string `json:"key"`
}

// NodePoolStatus reports the nodes of one node pool.
type NodePoolStatus struct {
	// name is the name of the node pool, as in spec.nodePools[].name.
	// +required
	Name string `json:"name"`

	// replicas is the number of nodes the pool should have: spec.replicas of the
	// NodePool, or the autoscaler's current target when it autoscales.
	// +optional
	Replicas int32 `json:"replicas"`

	// readyReplicas is the number of nodes that are available (the NodePool's
	// status.replicas).
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// version is the OpenShift version the NodePool reports its nodes run
	// (its status.version); empty until HyperShift reports one.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version,omitempty"`
}

// HostedClusterDeployment asks for a HyperShift hosted cluster to run on a management
// ("hosting") cluster that the given Placement allows, or on a pinned one. The hub
// schedules it once, delivers the HostedCluster and NodePools (with the Secrets and
// ConfigMaps they refer to) in a ManifestWork, imports the hosted cluster as a
// ManagedCluster once it is available, and reports its state here.
//
// Its name is the HostedCluster's and the imported ManagedCluster's, so it must be a
// DNS label and cannot be a name the hub itself uses: OCM makes the hub namespace of
// a ManagedCluster's name its cluster namespace, so default, kube-*, openshift,
// openshift-*, open-cluster-management*, multicluster-engine, hypershift, hcp-fleet*
// and local-cluster (ACM's name for the hub) are refused.
//
// Scheduling is permanent but for a relocation, and the schema enforces it in two rules:
// status.hostingCluster can be set once and changed only with the Scheduled condition's
// reason Relocated, which the scheduler writes for a HostedClusterRelocation that switched
// (rule on the status), and once it is set,
// spec.hostingCluster can only name that cluster (rule on the root object, the only
// place a rule sees both spec and status). A transition rule on spec alone cannot do
// this, since it cannot tell whether scheduling has happened. The root rule also makes a
// scheduler's binding fail when it was computed from a stale spec: a status write is
// validated against the stored spec.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=hostedclusterdeployments,singular=hostedclusterdeployment,shortName=hcd;hcds,scope=Namespaced
// +kubebuilder:printcolumn:name="Hosting Cluster",type="string",JSONPath=".status.hostingCluster",description="The management cluster the hosted cluster runs on"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".status.version.current",description="The OpenShift version completely rolled out"
// +kubebuilder:printcolumn:name="Available",type="string",JSONPath=".status.conditions[?(@.type==\"Available\")].status",description="Whether the hosted cluster's API is available"
// +kubebuilder:printcolumn:name="Upgrade Blocked",type="string",JSONPath=".status.conditions[?(@.type==\"UpgradeBlocked\")].status",description="Whether a requested minor upgrade is held because installed operators do not support it"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Placement",type="string",JSONPath=".spec.placement",priority=1
// +kubebuilder:printcolumn:name="Desired",type="string",JSONPath=".status.version.desired.version",priority=1,description="The OpenShift version being rolled out"
// +kubebuilder:printcolumn:name="Catalogs Ready",type="string",JSONPath=".status.conditions[?(@.type==\"CatalogsReady\")].status",priority=1,description="Whether the hosted cluster's OLM catalogs serve"
// +kubebuilder:printcolumn:name="Message",type="string",JSONPath=".status.conditions[?(@.type==\"Available\")].message",priority=1
// +kubebuilder:validation:XValidation:rule=`self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message="metadata.name must be a lowercase RFC 1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit): it becomes the HostedCluster's name and part of its DNS names"
// +kubebuilder:validation:XValidation:rule=`!(self.metadata.name in ['default', 'local-cluster', 'openshift', 'hypershift', 'multicluster-engine'] || self.metadata.name.startsWith('kube-') || self.metadata.name.startsWith('openshift-') || self.metadata.name.startsWith('open-cluster-management') || self.metadata.name.startsWith('hcp-fleet'))`,messageExpression="'metadata.name ' + self.metadata.name + ' is reserved: the hosted cluster is imported as a ManagedCluster of this name, and OCM makes the hub namespace of that name its cluster namespace; default, kube-*, openshift, openshift-*, open-cluster-management*, multicluster-engine, hypershift and hcp-fleet* belong to the hub, and local-cluster is the name ACM gives the hub itself'"
// +kubebuilder:validation:XValidation:rule="size(self.spec.hostingNamespace) + size(self.metadata.name) <= 62",message="spec.hostingNamespace and metadata.name are too long together: HyperShift runs the control plane in the namespace <hostingNamespace>-<name>, which must be at most 63 characters"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.nodePools) || self.spec.nodePools.all(p, p.spec.clusterName == self.metadata.name)",message="spec.nodePools[].spec.clusterName must equal metadata.name: the HostedCluster on the hosting cluster is named after this HostedClusterDeployment"
// +kubebuilder:validation:XValidation:rule="!has(self.status) || !has(self.status.hostingCluster) || !has(self.spec.hostingCluster) || self.spec.hostingCluster == self.status.hostingCluster",messageExpression="'spec.hostingCluster is ' + self.spec.hostingCluster + ' but the hosted cluster is scheduled to ' + self.status.hostingCluster + ': scheduling is permanent, so spec.hostingCluster can only name that cluster (delete and recreate the HostedClusterDeployment to move it)'"
type HostedClusterDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the hosted cluster asked for and where it may run.
	// +required
	Spec HostedClusterDeploymentSpec `json:"spec"`

	// status is what the hub observed.
	// +optional
	Status HostedClusterDeploymentStatus `json:"status,omitempty"`
}

// HostedClusterDeploymentList is a list of HostedClusterDeployments.
//
// +kubebuilder:object:root=true
type HostedClusterDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HostedClusterDeployment `json:"items"`
}

func init() {
	SchemeBuilder.Register(&HostedClusterDeployment{}, &HostedClusterDeploymentList{})
}
