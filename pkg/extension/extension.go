// Package extension holds what the hub's HostedClusterExtension rollout and
// the agent's extension engine on a management cluster agree on, and the
// pure functions both use: validation of an extension's objects (the hub
// before delivery, the agent again before it writes anything), availability
// probes, the apply and teardown plan, and the rollout strategy.
//
// The hub delivers one ManifestWork per (extension, hosted cluster) to the
// hosted cluster's management cluster. It carries one object, the release
// ConfigMap, into the hosted control-plane namespace: the revision's phases
// and probes as JSON. The agent applies the phases and writes its progress
// into the same ConfigMap's status keys under its own field manager, which
// the work agent returns to the hub as status feedback (feedback carries
// scalars, hence strings). The semantics are Package Operator's (phases with
// class, ObjectSet probes), so users of its HyperShift integration recognise
// them.
package extension

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// Labels on the release ConfigMap (and its ManifestWork on the hub) and on
// every object the agent applies for an extension.
const (
	// LabelExtension is the extension's name.
	LabelExtension = "hcpfleet.io/extension"
	// LabelExtensionUID is the extension's UID on the hub: an object the
	// agent finds without the UID of the extension it applies for is someone
	// else's and is never taken over.
	LabelExtensionUID = "hcpfleet.io/extension-uid"
	// LabelRelease marks a release ConfigMap ("true"); the agent watches
	// only ConfigMaps so labelled.
	LabelRelease = "hcpfleet.io/extension-release"
)

// Keys of the release ConfigMap. KeyRelease is the hub's (through the work
// agent); the others are the agent's.
const (
	// KeyRelease is the Release as JSON.
	KeyRelease = "release"

	KeyObservedRevision = "observedRevision"
	KeyState            = "state"
	KeyPhase            = "phase"
	KeyReason           = "reason"
	KeyMessage          = "message"
	KeyFailedObject     = "failedObject"
	// KeyObjects is the objects' states as a JSON list of
	// v1alpha1.ExtensionObjectStatus.
	KeyObjects = "objects"
	// KeyApplied lists, as JSON, every object the agent applied and has
	// not deleted yet (ObjectRef), so objects dropped from the spec, and all
	// of them on removal, can be deleted.
	KeyApplied = "applied"
	// KeyPaused is "true" once the agent has seen a paused release and
	// stopped applying and deleting its objects.
	KeyPaused = "paused"
	// KeyGuestUnreachableSince is when a teardown first found the hosted
	// cluster's API server not answering (RFC 3339), from which its objects
	// are abandoned after the engine's GuestTeardownTimeout.
	KeyGuestUnreachableSince = "guestUnreachableSince"
)

// Failure reasons (v1alpha1.ExtensionFailure.Reason).
const (
	ReasonProbeFailure             = "ProbeFailure"
	ReasonObjectRefused            = "ObjectRefused"
	ReasonApplyFailed              = "ApplyFailed"
	ReasonHostedClusterUnreachable = "HostedClusterUnreachable"
)

// Finalizer keeps a release ConfigMap until the agent has removed the
// extension's objects in reverse phase order.
const Finalizer = "hcpfleet.io/extension-teardown"

// FieldManager is the agent's server-side apply field manager for the
// extension's objects and for the status keys of the release ConfigMap.
const FieldManager = "hcp-fleet-extension"

// GuestKubeconfigSecret is the Secret, in the hosted control-plane
// namespace, that HyperShift publishes for components running next to the
// control plane: an admin kubeconfig reaching the hosted cluster's API
// server over the management cluster's service network.
const GuestKubeconfigSecret = "service-network-admin-kubeconfig"

// Release is one revision of an extension for one hosted cluster, as the
// hub delivers it.
type Release struct {
	// Extension is the extension's namespace/name on the hub.
	Extension string `json:"extension"`
	// UID is the extension's UID.
	UID string `json:"uid"`
	// HostedCluster is the HostedClusterDeployment's namespace/name.
	HostedCluster string `json:"hostedCluster"`
	// Revision is the number of the extension's revision delivered.
	Revision int64 `json:"revision"`
	// Phases and AvailabilityProbes are that revision's.
	Phases             []v1alpha1.ExtensionPhase    `json:"phases"`
	AvailabilityProbes []v1alpha1.ExtensionProbeSet `json:"availabilityProbes,omitempty"`
	// Paused: the rollout is paused (spec.strategy.paused), so nothing is
	// applied nor deleted; the agent only reports what it finds, as Package
	// Operator does for a paused ObjectSet.
	Paused bool `json:"paused,omitempty"`
}

// ReleaseName is the name of the release ConfigMap of extension name in a
// hosted control-plane namespace: the HCD and the extension share the hub
// namespace, and one control-plane namespace belongs to one HCD, so the
// extension's name makes it unique.
func ReleaseName(extension string) string {
	return hosting.BoundedName("hcpfleet-extension-" + extension)
}

// WorkName is the name of the ManifestWork, in the hosting cluster's
// namespace on the hub, that carries extension namespace/extension to HCD
// namespace/hcd. A namespace name has no dots, extension and HCD names are
// RFC 1123 labels (no dots) by their schemas, so the name is unambiguous;
// the hash suffix keeps it so even if that ever changed.
func WorkName(namespace, extension, hcd string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + extension + "/" + hcd))
	return hosting.BoundedName(fmt.Sprintf("hce-%s.%s.%s-%s", namespace, extension, hcd, hex.EncodeToString(sum[:])[:8]))
}

// ControlPlaneNamespace is HyperShift's hosted control-plane namespace of
// the HostedCluster name in hostingNamespace.
func ControlPlaneNamespace(hostingNamespace, name string) string {
	return hostingNamespace + "-" + name
}

// ObjectRef identifies an applied object.
type ObjectRef struct {
	Phase     string              `json:"phase"`
	Class     v1alpha1.PhaseClass `json:"class,omitempty"`
	Group     string              `json:"group,omitempty"`
	Version   string              `json:"version"`
	Kind      string              `json:"kind"`
	Namespace string              `json:"namespace,omitempty"`
	Name      string              `json:"name"`
}

// GroupVersionKind of the object.
func (r ObjectRef) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// Key identifies the object regardless of phase and version.
func (r ObjectRef) Key() string {
	return string(r.Class) + "|" + r.Group + "|" + r.Kind + "|" + r.Namespace + "|" + r.Name
}

// String is how messages name the object ("Deployment ns/name").
func (r ObjectRef) String() string {
	kind := r.Kind
	if r.Group != "" {
		kind += "." + r.Group
	}
	if r.Namespace == "" {
		return kind + " " + r.Name
	}
	return kind + " " + r.Namespace + "/" + r.Name
}

// Object is one decoded object of a phase.
type Object struct {
	Ref    ObjectRef
	Object *unstructured.Unstructured
	// Collision is the object's collision protection (never empty:
	// Prevent unless it says otherwise).
	Collision v1alpha1.CollisionProtection
}

// Decode reads the object of a phase.
func Decode(phase v1alpha1.ExtensionPhase, o v1alpha1.ExtensionObject) (Object, error) {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(o.Object.Raw, &u.Object); err != nil {
		return Object{}, fmt.Errorf("phase %s: an object is not a JSON object: %w", phase.Name, err)
	}
	gvk := u.GroupVersionKind()
	collision := o.CollisionProtection
	if collision == "" {
		collision = v1alpha1.CollisionProtectionPrevent
	}
	return Object{Object: u, Collision: collision, Ref: ObjectRef{Phase: phase.Name, Class: phase.Class, Group: gvk.Group, Version: gvk.Version,
		Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}}, nil
}
