package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// HostedClusterExtension kind and resource names.
const (
	// HostedClusterExtensionKind is the kind of HostedClusterExtension objects.
	HostedClusterExtensionKind = "HostedClusterExtension"
	// HostedClusterExtensionResource is the plural resource name of HostedClusterExtensions.
	HostedClusterExtensionResource = "hostedclusterextensions"
)

// PhaseClass says where the objects of an extension phase go. The names are
// Package Operator's, so users of its HyperShift integration recognise them.
// +kubebuilder:validation:Enum="";hosted-cluster
type PhaseClass string

const (
	// PhaseClassControlPlane (no class) puts a phase's objects into the
	// hosted cluster's control-plane namespace on its management cluster.
	PhaseClassControlPlane PhaseClass = ""
	// PhaseClassHostedCluster sends a phase's objects to the hosted cluster's
	// own API server.
	PhaseClassHostedCluster PhaseClass = "hosted-cluster"
)

// ExtensionStrategyType is how a new revision of an extension reaches the
// selected hosted clusters.
// +kubebuilder:validation:Enum=Instant;RollingUpgrade
type ExtensionStrategyType string

const (
	// ExtensionStrategyInstant delivers a new revision to every selected
	// hosted cluster at once.
	ExtensionStrategyInstant ExtensionStrategyType = "Instant"
	// ExtensionStrategyRollingUpgrade delivers a new revision to at most
	// maxUnavailable hosted clusters that are not yet available with it, and
	// stops going to more when one of them fails.
	ExtensionStrategyRollingUpgrade ExtensionStrategyType = "RollingUpgrade"
)

// CollisionProtection says whether the extension engine may take over an
// object that exists and that this extension did not create. The names and
// meanings are Package Operator's (ObjectSet objects' collisionProtection);
// PKO's None (take over objects other controllers own) is left out.
// +kubebuilder:validation:Enum=Prevent;IfNoController
type CollisionProtection string

const (
	// CollisionProtectionPrevent (the default): only objects this extension
	// created are written or deleted; an existing object that is not its own
	// is refused (ObjectRefused) and left alone.
	CollisionProtectionPrevent CollisionProtection = "Prevent"
	// CollisionProtectionIfNoController adopts an existing object that has
	// no controller owner reference and belongs to no other extension; from
	// then on it is the extension's (updated, and deleted on removal).
	// Hosted-cluster phases only: the control-plane namespace holds
	// HyperShift's objects, which an extension never takes over.
	CollisionProtectionIfNoController CollisionProtection = "IfNoController"
)

// HostedClusterExtensionSpec is an ordered set of phases of objects rolled out
// to every selected hosted cluster: into its control-plane namespace on the
// management cluster and into the hosted cluster itself.
type HostedClusterExtensionSpec struct {
	// hostedClusterSelector selects the HostedClusterDeployments in this
	// namespace, by their labels, that get the extension. An empty selector
	// selects all of them.
	// +required
	HostedClusterSelector metav1.LabelSelector `json:"hostedClusterSelector"`

	// phases are applied in order on each hosted cluster: a phase starts
	// once every object of the phases before it exists and passes its
	// availability probes. Removal goes in reverse order.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	Phases []ExtensionPhase `json:"phases"`

	// availabilityProbes decide when an object is available; an object no
	// probe selects is available once it is applied.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	AvailabilityProbes []ExtensionProbeSet `json:"availabilityProbes,omitempty"`

	// strategy is how a new revision is rolled out over the selected hosted
	// clusters; by default all at once (Instant).
	// +optional
	Strategy ExtensionRolloutStrategy `json:"strategy,omitempty"`

	// revisionHistoryLimit is how many archived revisions (those no hosted
	// cluster runs any more) are kept for a rollback, as Package Operator's
	// ObjectDeployment keeps archived ObjectSets; the oldest go first.
	// Revisions a hosted cluster still runs, and the one rollbackTo names,
	// are always kept.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// rollbackTo, while set, rolls out the phases and probes of an earlier
	// revision (status.revision or one in status.archivedRevisions) instead
	// of those in this spec: as a new revision, under the strategy, like
	// any other change. spec.phases and spec.availabilityProbes are ignored
	// meanwhile; unset it to roll spec's out again.
	// +optional
	RollbackTo *ExtensionRollback `json:"rollbackTo,omitempty"`
}

// ExtensionRollback names the revision to roll back to.
type ExtensionRollback struct {
	// revision is the number of a kept revision.
	// +required
	// +kubebuilder:validation:Minimum=1
	Revision int64 `json:"revision"`
}

// DefaultRevisionHistoryLimit is revisionHistoryLimit's default, Package
// Operator's.
const DefaultRevisionHistoryLimit = 10

// ExtensionPhase is a named group of objects applied together.
// +kubebuilder:validation:XValidation:rule="has(self.class) && self.class == 'hosted-cluster' || self.objects.all(o, !has(o.collisionProtection) || o.collisionProtection == 'Prevent')",message="spec.phases[].objects[].collisionProtection IfNoController is allowed in hosted-cluster phases only: an extension never adopts objects in the control-plane namespace"
type ExtensionPhase struct {
	// name identifies the phase in status.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message="spec.phases[].name must be a lowercase RFC 1123 label"
	Name string `json:"name"`

	// class says where the objects go: none for the hosted cluster's
	// control-plane namespace on its management cluster, hosted-cluster for
	// the hosted cluster's own API server.
	// +optional
	Class PhaseClass `json:"class,omitempty"`

	// objects are applied with server-side apply.
	// +required
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Objects []ExtensionObject `json:"objects"`
}

// ExtensionObject is one object of a phase. What it may be is checked by the
// hub before delivery and again by the agent before it applies anything
// (pkg/extension.Validate), not by CEL here: apiVersion and kind of an
// embedded object have no length bound the CEL cost estimator could use.
type ExtensionObject struct {
	// object is the complete object (apiVersion, kind, metadata, and the
	// rest). Status is not applied.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:EmbeddedResource
	Object runtime.RawExtension `json:"object"`

	// collisionProtection is what happens when the object exists and this
	// extension did not create it: Prevent (the default) refuses it,
	// IfNoController adopts it when no controller owns it (hosted-cluster
	// phases only). Unset is Prevent.
	// +optional
	CollisionProtection CollisionProtection `json:"collisionProtection,omitempty"`
}

// ExtensionProbeSet applies probes to the objects its selector selects.
type ExtensionProbeSet struct {
	// selector selects the objects the probes apply to.
	// +required
	Selector ExtensionProbeSelector `json:"selector"`

	// probes must all pass for a selected object to be available.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	Probes []ExtensionProbe `json:"probes"`
}

// ExtensionProbeSelector selects objects by group and kind and, optionally,
// by labels.
type ExtensionProbeSelector struct {
	// kind selects objects of this group and kind.
	// +required
	Kind ExtensionGroupKind `json:"kind"`

	// selector further restricts the objects by their labels.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ExtensionGroupKind is an API group ("" for the core group) and a kind.
type ExtensionGroupKind struct {
	// group is the API group; empty for the core group.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group"`
	// kind is the object kind.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
}

// ExtensionProbe is one availability check; exactly one of its fields is set.
// +kubebuilder:validation:XValidation:rule="[has(self.condition), has(self.fieldsEqual), has(self.cel)].filter(x, x).size() == 1",message="spec.availabilityProbes[].probes[]: set exactly one of condition, fieldsEqual and cel"
type ExtensionProbe struct {
	// condition passes when the object has a status condition of this type
	// with this status, observed for its current generation.
	// +optional
	Condition *ConditionProbe `json:"condition,omitempty"`

	// fieldsEqual passes when the two fields exist and are equal.
	// +optional
	FieldsEqual *FieldsEqualProbe `json:"fieldsEqual,omitempty"`

	// cel passes when the CEL expression, with the object as self, is true.
	// +optional
	CEL *CELProbe `json:"cel,omitempty"`
}

// ConditionProbe checks a status condition.
type ConditionProbe struct {
	// type is the condition type.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	Type string `json:"type"`
	// status is the status the condition must have ("True", "False" or
	// "Unknown").
	// +required
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status string `json:"status"`
}

// FieldsEqualProbe compares two fields of the object, each named by a
// JSONPath-like dotted path (".status.updatedReplicas").
type FieldsEqualProbe struct {
	// fieldA is the first field.
	// +required
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule=`self.startsWith('.')`,message="fieldsEqual paths start with '.' (.status.replicas)"
	FieldA string `json:"fieldA"`
	// fieldB is the second field.
	// +required
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule=`self.startsWith('.')`,message="fieldsEqual paths start with '.' (.status.replicas)"
	FieldB string `json:"fieldB"`
}

// CELProbe evaluates a CEL expression against the object.
type CELProbe struct {
	// rule is a CEL expression over self, the object, that yields a bool,
	// with the Kubernetes CEL libraries the API server offers.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Rule string `json:"rule"`
	// message is reported when the rule is false.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Message string `json:"message"`
}

// ExtensionRolloutStrategy is how a new revision reaches the selected hosted
// clusters.
// +kubebuilder:validation:XValidation:rule="self.type == 'RollingUpgrade' ? has(self.rollingUpgrade) : !has(self.rollingUpgrade)",message="spec.strategy.rollingUpgrade is required with type RollingUpgrade and not allowed otherwise"
type ExtensionRolloutStrategy struct {
	// type is Instant (the default) or RollingUpgrade.
	// +optional
	// +kubebuilder:default=Instant
	Type ExtensionStrategyType `json:"type,omitempty"`

	// rollingUpgrade bounds how many hosted clusters roll a new revision out
	// at a time.
	// +optional
	RollingUpgrade *RollingUpgradeStrategy `json:"rollingUpgrade,omitempty"`

	// paused stops the rollout where it is: hosted clusters that have the
	// current revision keep it (and are still reconciled), no other hosted
	// cluster gets it, nor a newly selected one any revision, until paused
	// is unset. Progressing reports Paused.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// RollingUpgradeStrategy bounds a rolling rollout.
type RollingUpgradeStrategy struct {
	// maxUnavailable is how many selected hosted clusters may be without an
	// available current revision at a time: a number, or a percentage of the
	// selected hosted clusters rounded down (at least 1).
	// +required
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^[1-9][0-9]?%$|^100%$')",message="spec.strategy.rollingUpgrade.maxUnavailable must be a number of at least 1 or a percentage from 1% to 100%"
	MaxUnavailable intstr.IntOrString `json:"maxUnavailable"`
}

// ExtensionState is where an extension stands on one hosted cluster.
type ExtensionState string

const (
	// ExtensionStatePending: selected, not delivered yet (the hosted cluster
	// is not available, or a rolling rollout has not reached it).
	ExtensionStatePending ExtensionState = "Pending"
	// ExtensionStateProgressing: its phases are being applied.
	ExtensionStateProgressing ExtensionState = "Progressing"
	// ExtensionStateAvailable: every phase of the revision is applied and
	// available.
	ExtensionStateAvailable ExtensionState = "Available"
	// ExtensionStateFailed: a probe failed or an object was refused; the
	// rollout stopped at status.failure's phase.
	ExtensionStateFailed ExtensionState = "Failed"
	// ExtensionStateRemoving: its objects are being removed in reverse phase
	// order.
	ExtensionStateRemoving ExtensionState = "Removing"
)

// HostedClusterExtensionStatus is the rollout's state over the fleet and on
// each selected hosted cluster.
type HostedClusterExtensionStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// revision is the revision being rolled out. A revision is made when
	// the phases or probes to roll out change (by an edit of spec or by
	// rollbackTo), and numbered with the metadata.generation that made it;
	// other edits (selector, strategy) keep it. Each is kept on the hub as
	// a ControllerRevision owned by the extension, named in
	// status.controllerRevision.
	// +optional
	Revision int64 `json:"revision,omitempty"`

	// controllerRevision is the ControllerRevision holding revision.
	// +optional
	ControllerRevision string `json:"controllerRevision,omitempty"`

	// archivedRevisions are the earlier revisions kept (no newer than
	// revision), newest first: those hosted clusters still run while a
	// rolling rollout proceeds, and up to spec.revisionHistoryLimit others
	// for spec.rollbackTo.
	// +optional
	// +listType=map
	// +listMapKey=revision
	// +kubebuilder:validation:MaxItems=1100
	ArchivedRevisions []ExtensionRevision `json:"archivedRevisions,omitempty"`

	// conditions: Progressing (a revision is being rolled out), Available
	// (every selected hosted cluster runs the current revision) and Degraded
	// (a hosted cluster failed, with the first failure's message).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// selected, updated, available and failed count the selected hosted
	// clusters, those delivered the current revision, those where it is
	// available and those where it failed.
	// +optional
	Selected int32 `json:"selected,omitempty"`
	// +optional
	Updated int32 `json:"updated,omitempty"`
	// +optional
	Available int32 `json:"available,omitempty"`
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// hostedClusters is the extension's state on each selected hosted
	// cluster (and on those it is being removed from).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=1000
	HostedClusters []ExtensionHostedClusterStatus `json:"hostedClusters,omitempty"`
}

// ExtensionRevision is one kept revision of an extension.
type ExtensionRevision struct {
	// revision is its number.
	Revision int64 `json:"revision"`
	// controllerRevision is the ControllerRevision holding its phases and
	// probes, in the extension's namespace.
	ControllerRevision string `json:"controllerRevision"`
	// hostedClusters is how many selected hosted clusters still run it.
	// +optional
	HostedClusters int32 `json:"hostedClusters,omitempty"`
}

// ExtensionHostedClusterStatus is the extension's state on one hosted cluster.
type ExtensionHostedClusterStatus struct {
	// name is the HostedClusterDeployment's name.
	// +required
	Name string `json:"name"`
	// hostingCluster is the management cluster it runs on.
	// +optional
	HostingCluster string `json:"hostingCluster,omitempty"`
	// manifestWork is the ManifestWork, in hostingCluster's namespace, that
	// carries the extension to it.
	// +optional
	ManifestWork string `json:"manifestWork,omitempty"`
	// revision is the revision delivered to it.
	// +optional
	Revision int64 `json:"revision,omitempty"`
	// observedRevision is the revision the agent reports on.
	// +optional
	ObservedRevision int64 `json:"observedRevision,omitempty"`
	// state is Pending, Progressing, Available, Failed or Removing.
	// +optional
	State ExtensionState `json:"state,omitempty"`
	// paused: the agent has seen the rollout paused and applies and
	// deletes nothing there; state and objects are what it finds.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// currentPhase is the phase being applied (or, when failed, the phase
	// that failed).
	// +optional
	CurrentPhase string `json:"currentPhase,omitempty"`
	// objects are the objects of the delivered revision up to the current
	// phase, with their state.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=512
	Objects []ExtensionObjectStatus `json:"objects,omitempty"`
	// failure is the first failure, with the probe's or the API server's
	// message.
	// +optional
	Failure *ExtensionFailure `json:"failure,omitempty"`
	// lastTransitionTime is when state last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ExtensionObjectState is the state of one object of an extension.
type ExtensionObjectState string

const (
	// ObjectStateAvailable: applied, and its probes pass.
	ObjectStateAvailable ExtensionObjectState = "Available"
	// ObjectStateUnavailable: applied, but a probe fails.
	ObjectStateUnavailable ExtensionObjectState = "Unavailable"
	// ObjectStateRefused: not applied, because the object may not be
	// written there or belongs to someone else.
	ObjectStateRefused ExtensionObjectState = "Refused"
	// ObjectStateFailed: the API server refused the apply.
	ObjectStateFailed ExtensionObjectState = "Failed"
	// ObjectStatePending: in a phase not reached yet.
	ObjectStatePending ExtensionObjectState = "Pending"
)

// ExtensionObjectStatus is one object's state on one hosted cluster.
type ExtensionObjectStatus struct {
	// phase is the phase the object belongs to.
	Phase string `json:"phase"`
	// group, kind, namespace and name identify the object.
	// +optional
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// state is Available, Unavailable, Refused, Failed or Pending.
	State ExtensionObjectState `json:"state"`
}

// ExtensionFailure is why a rollout stopped on one hosted cluster.
type ExtensionFailure struct {
	// phase is the phase that failed.
	// +optional
	Phase string `json:"phase,omitempty"`
	// object is the object that failed ("Kind namespace/name").
	// +optional
	Object string `json:"object,omitempty"`
	// reason is ProbeFailure, ObjectRefused, ApplyFailed or
	// HostedClusterUnreachable.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message is the probe's message or the error.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// HostedClusterExtension rolls out ordered phases of objects to the selected
// hosted clusters of its namespace: each phase either into the hosted
// cluster's control-plane namespace on its management cluster or into the
// hosted cluster itself (class hosted-cluster), phase after phase as the
// availability probes pass, torn down in reverse order.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=hostedclusterextensions,singular=hostedclusterextension,shortName=hce,scope=Namespaced
// +kubebuilder:printcolumn:name="Selected",type="integer",JSONPath=".status.selected"
// +kubebuilder:printcolumn:name="Available",type="integer",JSONPath=".status.available"
// +kubebuilder:printcolumn:name="Failed",type="integer",JSONPath=".status.failed"
// +kubebuilder:printcolumn:name="Revision",type="integer",JSONPath=".status.revision"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Message",type="string",JSONPath=".status.conditions[?(@.type==\"Degraded\")].message",priority=1
// +kubebuilder:validation:XValidation:rule=`self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 63`,message="metadata.name must be a lowercase RFC 1123 label of at most 63 characters: it names the extension's objects on management clusters"
type HostedClusterExtension struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the extension.
	// +required
	Spec HostedClusterExtensionSpec `json:"spec"`

	// status is the rollout's state.
	// +optional
	Status HostedClusterExtensionStatus `json:"status,omitempty"`
}

// HostedClusterExtensionList is a list of HostedClusterExtensions.
//
// +kubebuilder:object:root=true
type HostedClusterExtensionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HostedClusterExtension `json:"items"`
}

func init() {
	SchemeBuilder.Register(&HostedClusterExtension{}, &HostedClusterExtensionList{})
}
