package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// HostedClusterRelocationKind is the kind of HostedClusterRelocation.
	HostedClusterRelocationKind = "HostedClusterRelocation"
	// HostedClusterRelocationResource is its resource.
	HostedClusterRelocationResource = "hostedclusterrelocations"
)

// ConditionRelocationProgressing is the HostedClusterRelocation's own
// condition: True while it runs (reason: the phase), False once it ended
// (reason Done, Failed's reason, or RolledBack's).
const ConditionRelocationProgressing = "RelocationProgressing"

// HostedClusterRelocationSpec is an admin's request to move one
// HostedClusterDeployment's hosted cluster, with its data, to another
// management cluster (docs/operations.md, "Relocate and drain"). It is
// immutable: a different request is a different relocation.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: delete the HostedClusterRelocation (which rolls the move back while the binding has not moved) and create another"
type HostedClusterRelocationSpec struct {
	// hostedClusterDeployment names the HostedClusterDeployment to move, in
	// this HostedClusterRelocation's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message="spec.hostedClusterDeployment must be the name of a HostedClusterDeployment: a lowercase RFC 1123 label"
	HostedClusterDeployment string `json:"hostedClusterDeployment"`

	// destination names the management cluster (ManagedCluster) to move to.
	// Empty: the scheduler's filters pick one, never the source and never a
	// cordoned one.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message="spec.destination must be the name of a ManagedCluster: a lowercase RFC 1123 label"
	Destination string `json:"destination,omitempty"`
}

// The relocation phases (status.phase), in order; docs/operations.md has
// the table of what each writes and waits for.
const (
	RelocationPhasePausing        = "Pausing"
	RelocationPhaseBackingUp      = "BackingUp"
	RelocationPhaseRestoring      = "Restoring"
	RelocationPhaseVerifying      = "Verifying"
	RelocationPhaseSwitching      = "Switching"
	RelocationPhaseCleaningSource = "CleaningSource"
	RelocationPhaseRollingBack    = "RollingBack"
	RelocationPhaseDone           = "Done"
	RelocationPhaseFailed         = "Failed"
	RelocationPhaseRolledBack     = "RolledBack"
)

// RelocationEnded says whether nothing follows phase: Done, Failed or
// RolledBack. The relocation controller and the scheduler (which counts a
// move on its destination until it ends) read it alike.
func RelocationEnded(phase string) bool {
	return phase == RelocationPhaseDone || phase == RelocationPhaseFailed || phase == RelocationPhaseRolledBack
}

// HostedClusterRelocationStatus is the durable record of a move: a hub
// restarted (or restored) mid-move continues from it, never from memory.
// Written by the relocation controller only.
type HostedClusterRelocationStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase is where the move is: Pausing, BackingUp, Restoring, Verifying,
	// Switching, CleaningSource or RollingBack while it runs; Done, Failed or
	// RolledBack at the end. Empty until the request was checked.
	// +optional
	// +kubebuilder:validation:Enum=Pausing;BackingUp;Restoring;Verifying;Switching;CleaningSource;RollingBack;Done;Failed;RolledBack
	Phase string `json:"phase,omitempty"`

	// phaseTransitionTime is when phase last changed (the timeout of a move
	// that does not become Available counts from it).
	// +optional
	PhaseTransitionTime *metav1.Time `json:"phaseTransitionTime,omitempty"`

	// source is the management cluster the hosted cluster ran on when the
	// move began.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Source string `json:"source,omitempty"`

	// destination is the management cluster it moves to, decided once.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Destination string `json:"destination,omitempty"`

	// snapshotURL is where the source's etcd snapshot, taken while paused,
	// was uploaded; the destination restores it.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	SnapshotURL string `json:"snapshotURL,omitempty"`

	// infraID and clusterID are the identity the source reported; the
	// destination must report the same before the binding moves.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	InfraID string `json:"infraID,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ClusterID string `json:"clusterID,omitempty"`

	// switched records that the binding moves to destination. It is written
	// before the scheduler rebinds the HostedClusterDeployment, and once it
	// is true the move only goes forward.
	// +optional
	Switched bool `json:"switched,omitempty"`

	// conditions: RelocationProgressing.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// HostedClusterRelocation moves one HostedClusterDeployment's hosted cluster,
// with its etcd data and identity, to another management cluster by
// HyperShift's documented procedure (pause, etcd snapshot, restore on the
// destination, verify, switch the binding once, remove the source). It is
// an admin's kind: tenants get no verb on it (ClusterRole
// hcp-fleet:relocate).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=hostedclusterrelocations,singular=hostedclusterrelocation,shortName=hcr,scope=Namespaced
// +kubebuilder:printcolumn:name="HCD",type="string",JSONPath=".spec.hostedClusterDeployment"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Source",type="string",JSONPath=".status.source"
// +kubebuilder:printcolumn:name="Destination",type="string",JSONPath=".status.destination"
// +kubebuilder:printcolumn:name="Switched",type="boolean",JSONPath=".status.switched"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Message",type="string",JSONPath=".status.conditions[?(@.type==\"RelocationProgressing\")].message",priority=1
type HostedClusterRelocation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec HostedClusterRelocationSpec `json:"spec"`
	// +optional
	Status HostedClusterRelocationStatus `json:"status,omitempty"`
}

// HostedClusterRelocationList is a list of HostedClusterRelocations.
//
// +kubebuilder:object:root=true
type HostedClusterRelocationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HostedClusterRelocation `json:"items"`
}

func init() {
	SchemeBuilder.Register(&HostedClusterRelocation{}, &HostedClusterRelocationList{})
}
