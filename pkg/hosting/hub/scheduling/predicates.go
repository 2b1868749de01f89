package scheduling

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
)

// schedulingChanged passes creations and deletions, and updates that change
// facts(obj): what a scheduling decision reads of the object. Every event it
// passes re-enqueues every unscheduled HostedClusterDeployment, so status
// churn that decides nothing (heartbeats, other conditions, imported hosted
// clusters' updates) must not pass.
func schedulingChanged(facts func(client.Object) string) predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return facts(e.ObjectOld) != facts(e.ObjectNew) ||
			(e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
	}}
}

// schedulingClaims are the ClusterClaims Inputs.Candidate reads.
var schedulingClaims = []string{hosting.ClaimHostedClusters, hosting.ClaimUnmanagedHostedClusters,
	hosting.ClaimSupportedVersions, hosting.ClaimPlatforms, hosting.ClaimResourceSlots}

// managedClusterFacts: its labels (cluster sets select on them), whether it
// is available and cordoned (an uncordon retries what waits), and the claims
// the scheduler reads.
func managedClusterFacts(o client.Object) string {
	mc, ok := o.(*clusterv1.ManagedCluster)
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(mc.Labels)) {
		fmt.Fprintf(&b, "%s=%s;", k, mc.Labels[k])
	}
	fmt.Fprintf(&b, "|%v|%v|", meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), Cordoned(mc))
	claims := hostmodel.ClaimsMap(mc.Status.ClusterClaims)
	for _, name := range schedulingClaims {
		fmt.Fprintf(&b, "%s;", claims[name])
	}
	return b.String()
}

// addOnFacts: availability, the operator, the agent's namespace and the
// HostingConfig the add-on resolves.
func addOnFacts(o client.Object) string {
	mca, ok := o.(*addonv1alpha1.ManagedClusterAddOn)
	if !ok {
		return ""
	}
	key, _ := hostmodel.HostingConfigKey(mca)
	return fmt.Sprintf("%v|%v|%s|%s",
		meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable),
		meta.IsStatusConditionTrue(mca.Status.Conditions, addon.ConditionHyperShiftOperatorInstalled),
		mca.Status.Namespace, key)
}

// decisionFacts: the clusters a PlacementDecision selects.
func decisionFacts(o client.Object) string {
	pd, ok := o.(*clusterv1beta1.PlacementDecision)
	if !ok {
		return ""
	}
	names := make([]string, 0, len(pd.Status.Decisions))
	for _, d := range pd.Status.Decisions {
		names = append(names, d.ClusterName)
	}
	return strings.Join(names, ",")
}

// bindingFacts: the set a ManagedClusterSetBinding binds and whether it is
// bound.
func bindingFacts(o client.Object) string {
	b, ok := o.(*clusterv1beta2.ManagedClusterSetBinding)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s|%v", b.Spec.ClusterSet, meta.IsStatusConditionTrue(b.Status.Conditions, clusterv1beta2.ClusterSetBindingBoundType))
}
