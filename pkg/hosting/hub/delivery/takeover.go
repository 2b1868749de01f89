package delivery

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
)

// takingOver says whether an adopted HostedCluster is still to be taken
// over by a forced apply (docs/operations.md, "The takeover delivery"):
// while there is no ManifestWork yet, or while the forced generation of
// the existing one is not applied. The ManifestWork records where the
// takeover is. The HCD's Delivered condition cannot: the render without
// force that follows the takeover turns it False until the work agent
// applies that generation, which would turn force on again, and so on.
func takingOver(existing *workv1.ManifestWork) bool {
	if existing == nil {
		return true
	}
	forced := false
	for _, c := range existing.Spec.ManifestConfigs {
		if c.ResourceIdentifier.Resource == "hostedclusters" && c.UpdateStrategy != nil &&
			c.UpdateStrategy.ServerSideApply != nil && c.UpdateStrategy.ServerSideApply.Force {
			forced = true
		}
	}
	if !forced {
		return false
	}
	applied := meta.FindStatusCondition(existing.Status.Conditions, workv1.WorkApplied)
	return applied == nil || applied.Status != metav1.ConditionTrue || applied.ObservedGeneration != existing.Generation
}
