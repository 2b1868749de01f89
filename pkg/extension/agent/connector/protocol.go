// Package connector is the extension connector: a small component the
// agent's extension engine deploys into every hosted control-plane
// namespace that runs extensions with hosted-cluster phases, next to the
// control plane, as Package Operator's HyperShift integration deploys its
// remote-phase manager there. It reaches the hosted cluster exactly as
// HyperShift means components of that namespace to: through the kubeconfig
// of Secret service-network-admin-kubeconfig (mounted, as upstream
// components mount it), whose address, https://kube-apiserver:6443, is the
// kube-apiserver Service of that namespace and resolves nowhere else.
//
// The engine keeps the order of an extension's phases across both sides:
// for each hosted-cluster phase it writes a phase request (a ConfigMap of
// the namespace, one per release and phase, playing PKO's ObjectSetPhase)
// and waits for the connector's report in the same ConfigMap before the
// next phase starts. The connector applies the requested objects to the
// hosted cluster (server-side apply under the engine's own field manager,
// so objects the engine applied itself before connectors existed are taken
// over in place, never re-created), probes them, deletes what the request
// lists for deletion, and reports every object's state — or, when the
// hosted cluster cannot be reached, a phase-level reason and message.
//
// This file is the protocol both sides share; connector.go the program.
package connector

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// Command is the agent subcommand that runs the connector (the agent's
// image is the connector's).
const Command = "extension-connector"

// Name names the connector's Deployment, ServiceAccount, Role and
// RoleBinding in a control-plane namespace.
const Name = "hcp-fleet-extension-connector"

// FieldManager is the connector's field manager for its report keys.
const FieldManager = "hcp-fleet-extension-connector"

// Labels of a phase request ConfigMap.
const (
	// LabelPhaseRequest marks a phase request ("true"); the connector
	// watches only ConfigMaps so labelled.
	LabelPhaseRequest = "hcpfleet.io/extension-phase-request"
	// LabelRelease is the name of the release ConfigMap it belongs to.
	LabelRelease = "hcpfleet.io/extension-release-name"
)

// Keys of a phase request ConfigMap: KeyRequest and KeyDelete are the
// engine's, KeyReport the connector's.
const (
	KeyRequest = "request"
	KeyDelete  = "delete"
	KeyReport  = "report"
)

// MountPath is where the connector's Deployment mounts the guest
// kubeconfig Secret.
const MountPath = "/etc/hcp-fleet/guest"

// RequestName is the phase request ConfigMap of phase in the release
// ConfigMap release.
func RequestName(release, phase string) string {
	return hosting.BoundedName(release + ".phase." + phase)
}

// Request is what the engine asks of the connector for one phase: apply
// Phase's objects (none on teardown) with the extension's labels, and
// probe them.
type Request struct {
	Extension          string                       `json:"extension"` // namespace/name on the hub
	UID                string                       `json:"uid"`
	Revision           int64                        `json:"revision"`
	Phase              v1alpha1.ExtensionPhase      `json:"phase"`
	AvailabilityProbes []v1alpha1.ExtensionProbeSet `json:"availabilityProbes,omitempty"`
}

// Report is the connector's answer to the request (and delete list) whose
// hash it carries.
type Report struct {
	RequestHash string `json:"requestHash"`
	// Reason and Message, when set, say why the phase could not be worked
	// on at all (extension.ReasonHostedClusterUnreachable).
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Objects are the requested objects in order, as placed in the hosted
	// cluster (namespace defaulted, or cleared for cluster-scoped kinds).
	Objects []ObjectReport `json:"objects,omitempty"`
	// Deleted are the objects of the delete list that are gone (or were
	// never the extension's).
	Deleted []extension.ObjectRef `json:"deleted,omitempty"`
}

// ObjectReport is one object's state.
type ObjectReport struct {
	Ref     extension.ObjectRef           `json:"ref"`
	State   v1alpha1.ExtensionObjectState `json:"state"`
	Reason  string                        `json:"reason,omitempty"`
	Message string                        `json:"message,omitempty"`
}

// Hash identifies a request and delete list as written (the ConfigMap's
// values), so a report answers exactly them.
func Hash(request, deleteList string) string {
	sum := sha256.Sum256([]byte(request + "\x00" + deleteList))
	return hex.EncodeToString(sum[:16])
}

// Marshal is json.Marshal for the protocol's values; they always encode.
func Marshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
