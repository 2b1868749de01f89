package olm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// Subscription defaults between the hub and the agent (OCPSTRAT-112, OLM in the hosted control plane: user
// operators must run on nodes that can reach the hosted control plane).
const (
	// AnnotationSubscriptionDefaults is set by the hub on a delivered
	// HostedCluster: the effective v1alpha1.SubscriptionDefaults (the
	// HostedClusterDeployment's, else its HostingConfig's) as JSON
	// (EncodeSubscriptionDefaults). Absent: none.
	AnnotationSubscriptionDefaults = "hcpfleet.io/olm-subscription-defaults"
	// AnnotationSubscriptionDefaultsReport is written by the agent on the
	// HostedCluster: a SubscriptionDefaultsReport as JSON, read back by the
	// hub through the ManifestWork's status feedback.
	AnnotationSubscriptionDefaultsReport = "hcpfleet.io/olm-subscription-defaults-report"
	// AnnotationSubscriptionDefaulted marks a Subscription in a hosted
	// cluster whose spec.config.nodeSelector and tolerations the agent set:
	// its value is the Fingerprint of the values it set, so the agent can
	// tell later whether anyone changed them since (then they are the
	// user's, and it never touches them again).
	AnnotationSubscriptionDefaulted = "hcpfleet.io/subscription-defaults"
	// MaxReportedNames bounds the Subscriptions a report names per kind.
	MaxReportedNames = 5
)

// SubscriptionDefaultsReport is what the agent reports about one hosted
// cluster's Subscriptions after a pass.
type SubscriptionDefaultsReport struct {
	// Defaults is the Fingerprint of the defaults the pass applied ("" for
	// none), so the hub can tell a report about the defaults it delivered
	// from an older one.
	Defaults string `json:"defaults"`
	// Defaulted counts the Subscriptions that carry the defaults the agent
	// set.
	Defaulted int `json:"defaulted"`
	// Own counts the Subscriptions that set their own node selector or
	// tolerations (or changed the defaults set), left as they are; OwnNames
	// names up to MaxReportedNames of them as namespace/name.
	Own      int      `json:"own"`
	OwnNames []string `json:"ownNames,omitempty"`
	// Failed counts the Subscriptions the agent could not write (the
	// agent's log says why); FailedNames names up to MaxReportedNames.
	Failed      int      `json:"failed,omitempty"`
	FailedNames []string `json:"failedNames,omitempty"`
}

// EncodeSubscriptionDefaults is the annotation value for defaults: "" when
// they set nothing (nil or empty), else their JSON.
func EncodeSubscriptionDefaults(d *v1alpha1.SubscriptionDefaults) string {
	if d == nil || (len(d.NodeSelector) == 0 && len(d.Tolerations) == 0) {
		return ""
	}
	b, _ := json.Marshal(d) // a struct of maps and lists of strings: cannot fail
	return string(b)
}

// DecodeSubscriptionDefaults reads the annotation value; nil for "".
func DecodeSubscriptionDefaults(value string) (*v1alpha1.SubscriptionDefaults, error) {
	if value == "" {
		return nil, nil
	}
	d := &v1alpha1.SubscriptionDefaults{}
	if err := json.Unmarshal([]byte(value), d); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", AnnotationSubscriptionDefaults, err)
	}
	if len(d.NodeSelector) == 0 && len(d.Tolerations) == 0 {
		return nil, nil
	}
	return d, nil
}

// Fingerprint identifies a node selector and tolerations: equal values,
// however they were written (map order, empty vs absent), give the same
// fingerprint. "" for none.
func Fingerprint(nodeSelector map[string]string, tolerations []corev1.Toleration) string {
	if len(nodeSelector) == 0 && len(tolerations) == 0 {
		return ""
	}
	b, _ := json.Marshal(struct {
		NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
		Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	}{nodeSelector, tolerations}) // maps and lists of strings: cannot fail; map keys sorted
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// FingerprintOf is the Fingerprint of defaults (nil: none).
func FingerprintOf(d *v1alpha1.SubscriptionDefaults) string {
	return Fingerprint(d.Placement())
}
