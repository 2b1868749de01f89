package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ReleaseRollout kind and resource names.
const (
	// ReleaseRolloutKind is the kind of ReleaseRollout objects.
	ReleaseRolloutKind = "ReleaseRollout"
	// ReleaseRolloutResource is the plural resource name of ReleaseRollouts.
	ReleaseRolloutResource = "releaserollouts"
)

// LabelFleetAdminRollout set to "true" on a ReleaseRollout marks a fleet
// admin's rollout: it wins over the other rollouts of the namespace (a
// tenant's) that select the same HostedClusterDeployment, whatever their
// ages. Only who may write ReleaseRollout status may set it (the
// ValidatingAdmissionPolicy hcp-fleet-admin-rollout).
const LabelFleetAdminRollout = "hcpfleet.io/fleet-admin"

// NodePoolUpgradePolicy says which node pools follow the control plane to the
// target release. The names follow ACM's ClusterCurator, whose upgrade takes
// nodePoolNames.
// +kubebuilder:validation:Enum=All;None;Named
type NodePoolUpgradePolicy string

const (
	// NodePoolUpgradeAll moves every node pool once the control plane is at
	// the target release.
	NodePoolUpgradeAll NodePoolUpgradePolicy = "All"
	// NodePoolUpgradeNone moves the control plane only.
	NodePoolUpgradeNone NodePoolUpgradePolicy = "None"
	// NodePoolUpgradeNamed moves the node pools listed in names.
	NodePoolUpgradeNamed NodePoolUpgradePolicy = "Named"
)

// ReleaseRolloutSpec moves the selected HostedClusterDeployments of this
// namespace to one OpenShift release, wave by wave: canaries first, then
// waves of waveSize, the next wave only once the previous one is healthy at
// the target release (and has soaked).
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.abort) || !oldSelf.abort || (has(self.abort) && self.abort)",message="spec.abort cannot be undone: an aborted rollout stays where it stopped; create a new ReleaseRollout to go on"
// +kubebuilder:validation:XValidation:rule="self.release == oldSelf.release",message="spec.release is immutable: a rollout moves to one release; create a new ReleaseRollout for another"
// +kubebuilder:validation:XValidation:rule="!has(self.maintenanceWindow) || !has(self.maintenanceWindows)",message="spec.maintenanceWindow and spec.maintenanceWindows exclude each other: one window for the whole rollout, or windows per label selector"
// +kubebuilder:validation:XValidation:rule="!has(self.nodePools) || !has(self.nodePools.policy) || self.nodePools.policy != 'Named' || (has(self.nodePools.names) && size(self.nodePools.names) > 0)",message="spec.nodePools.names must list at least one node pool when spec.nodePools.policy is Named"
type ReleaseRolloutSpec struct {
	// hostedClusterSelector selects the HostedClusterDeployments of this
	// namespace, by their labels, that move to the release. An empty
	// selector selects all of them.
	// +required
	HostedClusterSelector metav1.LabelSelector `json:"hostedClusterSelector"`

	// release is the OpenShift release the selected hosted clusters move to.
	// +required
	Release RolloutRelease `json:"release"`

	// canarySelector selects, among the selected HostedClusterDeployments,
	// the canaries: they form the first wave, and the other waves start only
	// once every canary is healthy at the release.
	// +optional
	CanarySelector *metav1.LabelSelector `json:"canarySelector,omitempty"`

	// waveSize is how many hosted clusters a wave (after the canaries) holds;
	// hosted clusters are put into waves in name order.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	WaveSize int32 `json:"waveSize,omitempty"`

	// maxUnavailable is how many selected hosted clusters may be upgrading
	// (moved to the release and not yet healthy at it) at once: a number, or
	// a percentage of the selected hosted clusters rounded down (at least 1).
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^[1-9][0-9]?%$|^100%$')",message="spec.maxUnavailable must be a number of at least 1 or a percentage from 1% to 100%"
	MaxUnavailable intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// soakSeconds is how long a finished wave stays healthy before the next
	// one starts, counted from when the controller saw it finish
	// (status.waveStartTime).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=604800
	SoakSeconds int32 `json:"soakSeconds,omitempty"`

	// nodePools says which node pools follow once a hosted cluster's control
	// plane is at the release; by default all of them.
	// +optional
	NodePools RolloutNodePools `json:"nodePools,omitempty"`

	// acceptRisks names the update risks (status.version.conditionalUpdates
	// [].risks[].name of the HostedClusterDeployments) this rollout accepts:
	// a hosted cluster for which the release is only a conditional update
	// that is not recommended is skipped as Blocked, naming the risks,
	// unless every risk of that update is listed here. Conditional updates
	// are never taken silently.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=256
	AcceptRisks []string `json:"acceptRisks,omitempty"`

	// maintenanceWindow, when set, is the weekly time the rollout may move
	// hosted clusters in: outside it no further hosted cluster is moved
	// (those already moving finish, node pools included).
	// +optional
	MaintenanceWindow *MaintenanceWindow `json:"maintenanceWindow,omitempty"`

	// maintenanceWindows, instead of maintenanceWindow, are weekly windows
	// per group of hosted clusters: each applies to the hosted clusters its
	// hostedClusterSelector selects (all of them without one). A hosted
	// cluster is moved only while a window that applies to it is open;
	// one no window applies to is skipped as Blocked (NoMaintenanceWindow).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	MaintenanceWindows []SelectedMaintenanceWindow `json:"maintenanceWindows,omitempty"`

	// paused keeps the rollout where it is: hosted clusters already moved
	// finish their upgrade, no other one is moved until paused is unset.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// abort stops the rollout for good: hosted clusters already moved keep
	// the release (there is no downgrade), no other one is moved.
	// +optional
	Abort bool `json:"abort,omitempty"`
}

// Weekday is a day of the week.
// +kubebuilder:validation:Enum=Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
type Weekday string

// MaintenanceWindow is a weekly window: on each of days, from start, for
// durationMinutes, in timeZone.
type MaintenanceWindow struct {
	// days are the days the window opens on.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=7
	Days []Weekday `json:"days"`

	// start is when the window opens, as HH:MM (24 hours).
	// +required
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	Start string `json:"start"`

	// durationMinutes is how long the window stays open, at most a week.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10080
	DurationMinutes int32 `json:"durationMinutes"`

	// timeZone is the IANA time zone of start ("Europe/Berlin"); UTC by
	// default. A name the hub does not know makes the rollout invalid.
	// +optional
	// +kubebuilder:default=UTC
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`
}

// SelectedMaintenanceWindow is a weekly window for the hosted clusters a
// label selector selects.
type SelectedMaintenanceWindow struct {
	// hostedClusterSelector selects, among the rollout's hosted clusters,
	// those this window applies to, by their labels; without it, all.
	// +optional
	HostedClusterSelector *metav1.LabelSelector `json:"hostedClusterSelector,omitempty"`

	MaintenanceWindow `json:",inline"`
}

// RolloutRelease names the release of a rollout: one image for all, or
// the latest z-stream of each hosted cluster's current minor.
// +kubebuilder:validation:XValidation:rule="has(self.image) != (has(self.latestZStream) && self.latestZStream)",message="spec.release names either an image or latestZStream: true, not both"
type RolloutRelease struct {
	// image is the release image pull spec, written into the moved hosted
	// clusters' spec.hostedCluster.spec.release.image (and their node
	// pools'). It must be the spec.releaseImage of a ClusterImageSet on the
	// hub, which names its version.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// latestZStream moves each selected hosted cluster to the newest
	// release of the minor it runs that a ClusterImageSet publishes (and
	// its TenantPolicy allows), among the updates the hosted cluster
	// reports when it reports any. A hosted cluster already at that
	// release is done as it is.
	// +optional
	LatestZStream bool `json:"latestZStream,omitempty"`
}

// RolloutNodePools says which node pools follow the control plane.
type RolloutNodePools struct {
	// policy is All, None or Named; by default All.
	// +optional
	// +kubebuilder:default=All
	Policy NodePoolUpgradePolicy `json:"policy,omitempty"`

	// names are the node pools (spec.nodePools[].name) that follow when policy
	// is Named; pools not named keep their release.
	// +optional
	// +kubebuilder:validation:MaxItems=30
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=253
	Names []string `json:"names,omitempty"`
}

// RolloutState is where a rollout stands on one hosted cluster.
type RolloutState string

const (
	// RolloutStatePending: not moved yet (its wave has not started, or the
	// budget of maxUnavailable is used).
	RolloutStatePending RolloutState = "Pending"
	// RolloutStateUpgrading: moved to the release, not yet healthy at it.
	RolloutStateUpgrading RolloutState = "Upgrading"
	// RolloutStateDone: control plane and the following node pools are
	// healthy at the release.
	RolloutStateDone RolloutState = "Done"
	// RolloutStateBlocked: skipped, never forced: the upgrade gate holds it
	// (UpgradeBlocked), or it cannot be moved; the reason says why.
	RolloutStateBlocked RolloutState = "Blocked"
	// RolloutStateFailed: moved, and the upgrade failed; the rollout stops.
	RolloutStateFailed RolloutState = "Failed"
)

// Condition types and reasons of ReleaseRollout status.conditions.
const (
	// ConditionRolloutProgressing is True while the rollout moves hosted
	// clusters or waits for them; False when it completed, is paused,
	// aborted or stopped.
	ConditionRolloutProgressing = "RolloutProgressing"
	// ConditionRolloutCompleted is True once every selected hosted cluster is
	// done or skipped as blocked; it stays True from then on (see
	// status.completionTime).
	ConditionRolloutCompleted = "RolloutCompleted"

	// ReasonRolloutPaused: spec.paused is set.
	ReasonRolloutPaused = "Paused"
	// ReasonRolloutAborted: spec.abort is set.
	ReasonRolloutAborted = "Aborted"
	// ReasonRolloutWaveFailed: a hosted cluster's upgrade failed, so no
	// further wave starts.
	ReasonRolloutWaveFailed = "WaveFailed"
	// ReasonRolloutInvalid: the spec cannot be rolled out (the message says why).
	ReasonRolloutInvalid = "InvalidRollout"
	// ReasonRolloutInProgress: a wave is being rolled out, or soaking.
	ReasonRolloutInProgress = "WaveInProgress"
	// ReasonRolloutCompleted: every selected hosted cluster is done or blocked.
	ReasonRolloutCompleted = "Completed"
)

// ReleaseRolloutStatus is where the rollout stands.
type ReleaseRolloutStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: RolloutProgressing and RolloutCompleted.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// wave is the wave being rolled out (0 is the canaries' wave, when there
	// are canaries).
	// +optional
	Wave int32 `json:"wave,omitempty"`
	// waves is how many waves the rollout has.
	// +optional
	Waves int32 `json:"waves,omitempty"`
	// waveStartTime is when the controller saw status.wave become the
	// current wave (the wave before it finished), by the hub's clock: the
	// soak (spec.soakSeconds) counts from it. Only the controller writes
	// it, so a soak is never shortened by a version history, a wave's
	// members or a cache that changes afterwards.
	// +optional
	WaveStartTime *metav1.Time `json:"waveStartTime,omitempty"`
	// completionTime is when the controller first saw every selected hosted
	// cluster Done or Blocked (none of them Blocked only for not being
	// ready, HostedClusterNotReady). Completion is sticky: from then on the
	// rollout claims no hosted cluster, moves nothing and its status stays
	// as it was (a record of what it did), whatever later happens to the
	// hosted clusters (a newer rollout moving them, say). Its spec can no
	// longer change (CEL); a rollout with spec.release.latestZStream, a
	// standing one, restarts (this field cleared) when a newer release is
	// published for a hosted cluster at rest.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// selected counts the selected hosted clusters.
	// +optional
	Selected int32 `json:"selected,omitempty"`
	// pending counts the hosted clusters not moved yet.
	// +optional
	Pending int32 `json:"pending,omitempty"`
	// upgrading counts the hosted clusters moved and not yet healthy at the release.
	// +optional
	Upgrading int32 `json:"upgrading,omitempty"`
	// done counts the hosted clusters healthy at the release.
	// +optional
	Done int32 `json:"done,omitempty"`
	// blocked counts the hosted clusters skipped because they are held.
	// +optional
	Blocked int32 `json:"blocked,omitempty"`
	// failed counts the hosted clusters whose upgrade failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// hostedClusters is each selected HostedClusterDeployment's state and
	// the reason for it.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=10000
	HostedClusters []RolloutHostedClusterStatus `json:"hostedClusters,omitempty"`
}

// RolloutHostedClusterStatus is the rollout's state on one hosted cluster.
type RolloutHostedClusterStatus struct {
	// name is the HostedClusterDeployment's name.
	// +required
	Name string `json:"name"`
	// wave is the wave it belongs to.
	// +optional
	Wave int32 `json:"wave"`
	// state is Pending, Upgrading, Done, Blocked or Failed.
	// +required
	State RolloutState `json:"state"`
	// reason is a CamelCase word for state (for Blocked, the reason of the
	// hold, such as the UpgradeBlocked condition's).
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says it in words.
	// +optional
	Message string `json:"message,omitempty"`
}

// ReleaseRollout moves the HostedClusterDeployments of its namespace that
// its selector selects to one OpenShift release, in waves with health gates
// between them: canaries first, at most maxUnavailable upgrading at once,
// control plane first and node pools after, skipping (never forcing) the
// hosted clusters the upgrade gate holds, and stopping when one fails.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=releaserollouts,singular=releaserollout,shortName=rro,scope=Namespaced
// +kubebuilder:printcolumn:name="Release",type="string",JSONPath=".spec.release.image"
// +kubebuilder:printcolumn:name="Z-Stream",type="boolean",JSONPath=".spec.release.latestZStream",priority=1
// +kubebuilder:printcolumn:name="Wave",type="integer",JSONPath=".status.wave"
// +kubebuilder:printcolumn:name="Done",type="integer",JSONPath=".status.done"
// +kubebuilder:printcolumn:name="Upgrading",type="integer",JSONPath=".status.upgrading"
// +kubebuilder:printcolumn:name="Blocked",type="integer",JSONPath=".status.blocked"
// +kubebuilder:printcolumn:name="Failed",type="integer",JSONPath=".status.failed"
// +kubebuilder:printcolumn:name="Progressing",type="string",JSONPath=".status.conditions[?(@.type==\"RolloutProgressing\")].reason"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.completionTime) || self.spec == oldSelf.spec || (has(self.spec.release.latestZStream) && self.spec.release.latestZStream)",message="a completed ReleaseRollout cannot change: it has done its work and moves nothing more; create a new ReleaseRollout"
type ReleaseRollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the release and how to roll it out.
	// +required
	Spec ReleaseRolloutSpec `json:"spec"`

	// status is where the rollout stands.
	// +optional
	Status ReleaseRolloutStatus `json:"status,omitempty"`
}

// ReleaseRolloutList is a list of ReleaseRollouts.
//
// +kubebuilder:object:root=true
type ReleaseRolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ReleaseRollout `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ReleaseRollout{}, &ReleaseRolloutList{})
}
