package hcdstatus

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// EventSource is the component name of the hub's Events.
const EventSource = "hcp-fleet-hub"

// progressReasons are unhealthy-looking states expected on the way to
// healthy: their events are Normal, not Warnings.
var progressReasons = []string{
	v1alpha1.ReasonWaitingForApply, v1alpha1.ReasonWaitingForAvailable, v1alpha1.ReasonWaitingForKubeconfig,
	v1alpha1.ReasonRollingOut, v1alpha1.ReasonDeleting, v1alpha1.ReasonOrphaning, v1alpha1.ReasonStatusUnknown,
	v1alpha1.ReasonHostedClusterNotAvailable, v1alpha1.ReasonNodePoolsNotReady,
}

// RecordTransitions records an Event on hcd for each condition of applied
// whose status or reason differs from live (kubeutil.RecordConditionTransitions):
// Scheduled, unschedulable and why, Delivered, Available, Imported, deletion
// waiting or timed out, and so on. Call it after the apply succeeded, with
// the conditions the controller read and the ones it applied. Each event
// names the hosting cluster once there is one (cluster names are the fleet
// admin's, not secret).
func RecordTransitions(recorder record.EventRecorder, hcd *v1alpha1.HostedClusterDeployment, hostingCluster string, live, applied []metav1.Condition) {
	detail := ""
	if hostingCluster != "" {
		detail = "management cluster " + hostingCluster
	}
	kubeutil.RecordConditionTransitions(recorder, hcd, live, applied, kubeutil.TrueIsHealthy,
		func(reason string) bool { return slices.Contains(progressReasons, reason) }, detail)
}
