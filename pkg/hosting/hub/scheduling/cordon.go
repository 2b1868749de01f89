package scheduling

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
)

// A cordon is OCM's own taint, hosting.TaintUnschedulable, on the
// ManagedCluster. OCM's placement controller keeps Placements that do not
// tolerate it from selecting the cluster (effect NoSelect); the scheduler
// adds what OCM cannot see: a HostedClusterDeployment pinned with
// spec.hostingCluster, or one whose Placement a tenant wrote to tolerate the
// taint, is not bound there either, unless the fleet admin's TenantPolicy
// allows the toleration (spec.allowCordonToleration). The cordon only stops
// new bindings: bound HostedClusterDeployments are never looked at again by
// the scheduler, so nothing is rescheduled and no status is rewritten.

// Cordoned says whether mc carries the cordon taint, whatever its effect or
// value (`kubectl hcpfleet cordon` sets NoSelect; an admin who wrote
// PreferNoSelect or NoSelectIfNew by hand still meant a cordon).
func Cordoned(mc *clusterv1.ManagedCluster) bool {
	return mc != nil && slices.ContainsFunc(mc.Spec.Taints, func(t clusterv1.Taint) bool {
		return t.Key == hosting.TaintUnschedulable
	})
}

// TolerationOf says whether tolerations tolerate the cordon taint, by OCM's
// rules for a taint of that key and any value: operator Exists with its key
// or no key (every taint), and effect empty (every effect) or NoSelect.
func TolerationOf(tolerations []clusterv1beta1.Toleration) bool {
	return Tolerates(tolerations, hosting.TaintUnschedulable)
}

// Tolerates says whether tolerations tolerate a NoSelect taint of key
// (any value), by OCM's rules: see TolerationOf. TolerationSeconds is not
// read: a toleration with it tolerates for that long.
func Tolerates(tolerations []clusterv1beta1.Toleration, key string) bool {
	return slices.ContainsFunc(tolerations, func(t clusterv1beta1.Toleration) bool {
		keyMatches := t.Key == key || (t.Key == "" && t.Operator == clusterv1beta1.TolerationOpExists)
		opMatches := t.Operator == clusterv1beta1.TolerationOpExists || (t.Operator == clusterv1beta1.TolerationOpEqual || t.Operator == "") && t.Value == ""
		effectMatches := t.Effect == "" || t.Effect == clusterv1.TaintEffectNoSelect
		return keyMatches && opMatches && effectMatches
	})
}

// AvailabilityTaints are the taints OCM's registration puts on a
// ManagedCluster whose Available condition is False or Unknown
// (registration hub/taint/controller.go), effect NoSelect: a Placement that
// does not tolerate them drops the cluster from its decisions at once, so
// the scheduler stops seeing a cluster that only flapped, before
// --host-unavailable-grace (docs/hosting.md).
var AvailabilityTaints = []string{clusterv1.ManagedClusterTaintUnavailable, clusterv1.ManagedClusterTaintUnreachable}

// UntoleratedAvailabilityTaints are the AvailabilityTaints tolerations do
// not tolerate.
func UntoleratedAvailabilityTaints(tolerations []clusterv1beta1.Toleration) []string {
	var keys []string
	for _, k := range AvailabilityTaints {
		if !Tolerates(tolerations, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// toleratesCordon says whether hcd may go to a cordoned cluster: its
// Placement (the tenant's opt-in, per HostedClusterDeployment) tolerates
// the taint and the TenantPolicy of its namespace (the admin's) allows it.
// A pinned HostedClusterDeployment without a Placement never does.
func (in Inputs) toleratesCordon(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) (bool, error) {
	if hcd.Spec.Placement == "" {
		return false, nil
	}
	placement := &clusterv1beta1.Placement{}
	if err := in.Client.Get(ctx, types.NamespacedName{Namespace: hcd.Namespace, Name: hcd.Spec.Placement}, placement); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	if !TolerationOf(placement.Spec.Tolerations) {
		return false, nil
	}
	policy, err := (&tenancy.Resolver{Reader: in.Client}).For(ctx, hcd.Namespace)
	if err != nil {
		return false, err
	}
	return policy.AllowsCordonToleration(), nil
}
