package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	// HostedClusterAdoptionKind is the kind of HostedClusterAdoption.
	HostedClusterAdoptionKind = "HostedClusterAdoption"
	// HostedClusterAdoptionResource is its resource.
	HostedClusterAdoptionResource = "hostedclusteradoptions"
)

// Conditions of a HostedClusterAdoption.
const (
	// ConditionObserved is True once the management cluster's agent wrote
	// what it sees of the HostedCluster into status.observed; False with a
	// reason when it cannot (NotFound). Written by the agent only.
	ConditionObserved = "Observed"
	// ConditionAdopted is True once the HostedClusterDeployment the
	// adoption created is Delivered with the same HostedCluster UID; False
	// with the reason it is not (yet). Written by the hub only.
	ConditionAdopted = "Adopted"
)

// MaxAdoptionNodePools bounds status.observed.nodePools, as an HCD's
// spec.nodePools is bounded by what one object holds.
const MaxAdoptionNodePools = 50

// AdoptionHostedCluster names a HostedCluster on the management cluster.
type AdoptionHostedCluster struct {
	// namespace of the HostedCluster on the management cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message="spec.hostedCluster.namespace must be a namespace name: a lowercase RFC 1123 label"
	Namespace string `json:"namespace"`
	// name of the HostedCluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message="spec.hostedCluster.name must be a lowercase RFC 1123 label, as a HostedClusterDeployment's name"
	Name string `json:"name"`
}

// AdoptionInto names the HostedClusterDeployment to create on the hub.
type AdoptionInto struct {
	// namespace of the HostedClusterDeployment (a tenant's namespace).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message="spec.into.namespace must be a namespace name: a lowercase RFC 1123 label"
	Namespace string `json:"namespace"`
	// name of the HostedClusterDeployment; empty: the HostedCluster's
	// (another name is refused, NameMismatch: the delivery names the
	// HostedCluster after its deployment).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message="spec.into.name must be a lowercase RFC 1123 label"
	Name string `json:"name,omitempty"`
}

// HostedClusterAdoptionSpec is a fleet admin's request to bring a
// HostedCluster that runs outside hcp-fleet on the management cluster of
// this object's namespace under a new HostedClusterDeployment, without
// restarting its control plane (docs/operations.md, "Adopt a HostedCluster
// that already runs"). It is immutable: another request is another object.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: delete the HostedClusterAdoption and create another"
type HostedClusterAdoptionSpec struct {
	// hostedCluster names the HostedCluster on the management cluster whose
	// namespace on the hub this object is in.
	// +required
	HostedCluster AdoptionHostedCluster `json:"hostedCluster"`

	// into names the HostedClusterDeployment to create.
	// +required
	Into AdoptionInto `json:"into"`

	// deletionPolicy of the HostedClusterDeployment created: Orphan (the
	// default for an adopted cluster: deleting the deployment leaves the
	// HostedCluster running, unmanaged again) or Delete.
	// +optional
	// +kubebuilder:default=Orphan
	// +kubebuilder:validation:Enum=Orphan;Delete
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// AdoptionNodePool is one NodePool of the HostedCluster as the agent saw
// it.
type AdoptionNodePool struct {
	// name of the NodePool.
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// labels, annotations and spec of the NodePool, unfiltered: the hub
	// filters them (tenant input from now on).
	// +kubebuilder:pruning:PreserveUnknownFields
	Object runtime.RawExtension `json:"object"`
}

// AdoptionObserved is what the management cluster's agent saw of the
// HostedCluster: enough for the hub to create the deployment, never a
// Secret's value. The Secrets its spec refers to are named in the spec;
// the hub finds them there with the delivery's own reference list rather
// than trusting a list the agent would make.
type AdoptionObserved struct {
	// uid of the HostedCluster; the hub adopts only this one.
	// +kubebuilder:validation:MaxLength=64
	UID string `json:"uid"`
	// deleting is true when the HostedCluster is being deleted.
	// +optional
	Deleting bool `json:"deleting,omitempty"`
	// hostedCluster holds its labels, annotations and spec (kept as they
	// are: the schema of HyperShift's spec is the HostedClusterDeployment's,
	// which validates them when the hub creates it).
	// +kubebuilder:pruning:PreserveUnknownFields
	HostedCluster runtime.RawExtension `json:"hostedCluster"`
	// nodePools are the NodePools of its namespace whose spec.clusterName
	// is its name.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	NodePools []AdoptionNodePool `json:"nodePools,omitempty"`
}

// HostedClusterAdoptionStatus is the durable record of an adoption.
// observed and the Observed condition are written by the management
// cluster's agent, the rest by the hub's adoption controller.
type HostedClusterAdoptionStatus struct {
	// observed is the agent's answer.
	// +optional
	Observed *AdoptionObserved `json:"observed,omitempty"`

	// hostedClusterDeployment is the namespace/name of the deployment the
	// hub created, once it did.
	// +optional
	// +kubebuilder:validation:MaxLength=127
	HostedClusterDeployment string `json:"hostedClusterDeployment,omitempty"`

	// adoptedUID is the UID of the HostedCluster the hub adopted (the
	// agent's observed.uid when the deployment was created): Adopted is
	// True only while the agent still reports that one.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	AdoptedUID string `json:"adoptedUID,omitempty"`

	// conditions: Observed (the agent), Adopted (the hub).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// HostedClusterAdoption brings a HostedCluster that runs on a management
// cluster outside hcp-fleet under a HostedClusterDeployment, keeping its
// control plane running. It lives in the management cluster's namespace on
// the hub, where tenants get no verb: only fleet admins adopt (ClusterRole
// hcp-fleet:adopt). That cluster's agent answers it with the
// HostedCluster's and NodePools' specs; the hub checks, creates the
// deployment and takes the HostedCluster over.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=hostedclusteradoptions,singular=hostedclusteradoption,shortName=hca,scope=Namespaced
// +kubebuilder:printcolumn:name="HostedCluster",type="string",JSONPath=".spec.hostedCluster.name"
// +kubebuilder:printcolumn:name="Into",type="string",JSONPath=".spec.into.namespace"
// +kubebuilder:printcolumn:name="Adopted",type="string",JSONPath=".status.conditions[?(@.type==\"Adopted\")].status"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type==\"Adopted\")].reason"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Message",type="string",JSONPath=".status.conditions[?(@.type==\"Adopted\")].message",priority=1
type HostedClusterAdoption struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec HostedClusterAdoptionSpec `json:"spec"`
	// +optional
	Status HostedClusterAdoptionStatus `json:"status,omitempty"`
}

// HostedClusterAdoptionList is a list of HostedClusterAdoptions.
//
// +kubebuilder:object:root=true
type HostedClusterAdoptionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HostedClusterAdoption `json:"items"`
}

func init() {
	SchemeBuilder.Register(&HostedClusterAdoption{}, &HostedClusterAdoptionList{})
}
