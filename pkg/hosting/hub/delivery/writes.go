package delivery

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// statusWrites counts the delivery's status writes by what each changed, so
// that a write storm names its cause (a condition that flaps, a field that
// churns). One write counts once under every part it changed. part is a
// condition type the delivery writes or one of the status fields below: a
// fixed set.
var statusWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "hcpfleet_hub_hcd_status_writes_total",
	Help: "HostedClusterDeployment status writes by the delivery, by the part of the status each changed (a condition type, or observedGeneration, manifestWork, version, controlPlaneEndpoint, nodePools).",
}, []string{"part"})

func init() { metrics.Registry.MustRegister(statusWrites) }

// Status parts other than conditions, as statusWrites names them.
const (
	partObservedGeneration   = "observedGeneration"
	partManifestWork         = "manifestWork"
	partVersion              = "version"
	partControlPlaneEndpoint = "controlPlaneEndpoint"
	partNodePools            = "nodePools"
)

// changedParts names what a write of s (with the conditions statusApply
// computed) changes in hcd's status: the condition types whose status,
// reason, message or observedGeneration differ, appear or go away, and the
// other fields that differ. Pure.
func changedParts(hcd *v1alpha1.HostedClusterDeployment, s Status, conditions []metav1.Condition) []string {
	var parts []string
	live := hcd.Status.Conditions
	for _, c := range conditions {
		old := meta.FindStatusCondition(live, c.Type)
		if old == nil || old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message || old.ObservedGeneration != c.ObservedGeneration {
			parts = append(parts, c.Type)
		}
	}
	for _, t := range []string{v1alpha1.ConditionUpgradeBlocked, v1alpha1.ConditionSubscriptionDefaultsApplied, v1alpha1.ConditionCatalogsReady} {
		if meta.FindStatusCondition(live, t) != nil && meta.FindStatusCondition(conditions, t) == nil {
			parts = append(parts, t)
		}
	}
	if hcd.Status.ObservedGeneration != s.ObservedGeneration {
		parts = append(parts, partObservedGeneration)
	}
	if hcd.Status.ManifestWork != s.ManifestWork {
		parts = append(parts, partManifestWork)
	}
	if !equality.Semantic.DeepEqual(hcd.Status.Version, s.Version) {
		parts = append(parts, partVersion)
	}
	if !equality.Semantic.DeepEqual(hcd.Status.ControlPlaneEndpoint, s.ControlPlaneEndpoint) {
		parts = append(parts, partControlPlaneEndpoint)
	}
	if !equality.Semantic.DeepEqual(hcd.Status.NodePools, s.NodePools) {
		parts = append(parts, partNodePools)
	}
	return parts
}

// countWrite records one status write in statusWrites.
func countWrite(parts []string) {
	for _, p := range parts {
		statusWrites.WithLabelValues(p).Inc()
	}
}
