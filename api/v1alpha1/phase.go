package v1alpha1

import "k8s.io/apimachinery/pkg/api/meta"

// Phases of a HostedClusterDeployment: one word for where it is in its life,
// derived from its conditions (Phase). The fleet view shows it and the hub's
// hcpfleet_hub_hostedclusterdeployments metric counts by it; it is not
// stored in status.
const (
	PhasePending     = "Pending"
	PhaseDelivering  = "Delivering"
	PhaseProgressing = "Progressing"
	PhaseAvailable   = "Available"
	PhaseUpgrading   = "Upgrading"
	PhaseDegraded    = "Degraded"
	PhaseDeleting    = "Deleting"
	PhaseOrphaning   = "Orphaning"
)

// Phases lists every phase Phase returns.
var Phases = []string{PhasePending, PhaseDelivering, PhaseProgressing, PhaseAvailable, PhaseUpgrading, PhaseDegraded, PhaseDeleting, PhaseOrphaning}

// Phase is one word for where the HostedClusterDeployment is in its life.
func (h *HostedClusterDeployment) Phase() string {
	conds := h.Status.Conditions
	is := func(t string) bool { return meta.IsStatusConditionTrue(conds, t) }
	switch {
	case h.DeletionTimestamp != nil:
		if h.Spec.DeletionPolicy == DeletionPolicyOrphan {
			return PhaseOrphaning
		}
		return PhaseDeleting
	case h.Status.HostingCluster == "":
		return PhasePending
	case !is(ConditionDelivered):
		return PhaseDelivering
	case is(ConditionDegraded):
		return PhaseDegraded
	case is(ConditionAvailable) && is(ConditionProgressing):
		return PhaseUpgrading
	case is(ConditionAvailable):
		return PhaseAvailable
	default:
		return PhaseProgressing
	}
}
