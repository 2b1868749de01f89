package delivery

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// TestHeldHostWritesNothing: a host whose klusterlet reported its API
// server down moments ago (a loaded cluster's flap) reads as available
// until the grace passes, so the status of a hosted cluster there computes
// as before and no write follows; once the grace passed, one write changes
// HostingClusterAvailable.
func TestHeldHostWritesNothing(t *testing.T) {
	scheme := testScheme()
	// Whole seconds, as the API (and the fake client) keeps them.
	now := time.Now().Truncate(time.Second)
	up := metav1.NewTime(now.Add(-time.Hour))
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-1"}}
	mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", LastTransitionTime: up}}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: addon.Name, Namespace: "cluster-1"}}
	mca.Status.Conditions = []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAddOnLeaseUpdated", LastTransitionTime: up}}
	const grace = time.Minute
	read := func(mc *clusterv1.ManagedCluster, at time.Time) Host {
		t.Helper()
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(mc, mca).Build()
		h, err := hostOf(context.Background(), c, "cluster-1", grace, at)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "cluster-1"}}
	observed := func(h Host) Observed {
		return Observed{Generation: 1, Work: work, Host: h,
			Imported: &metav1.Condition{Type: v1alpha1.ConditionImported, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonImported}}
	}
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns", Generation: 1}}
	hcd.Status.HostingCluster = "cluster-1"
	s := ComputeStatus(observed(read(mc, now)))
	_, conds, _ := statusApply(hcd, s, metav1.NewTime(now))
	hcd.Status.Conditions, hcd.Status.ObservedGeneration, hcd.Status.ManifestWork = conds, s.ObservedGeneration, s.ManifestWork

	flapped := mc.DeepCopy()
	flapped.Status.Conditions[0] = metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionFalse,
		Reason: "ManagedClusterKubeAPIServerUnavailable", Message: "The kube-apiserver is not ok", LastTransitionTime: metav1.NewTime(now)}
	held := read(flapped, now.Add(10*time.Second))
	if !held.Available || held.Recheck != 50*time.Second {
		t.Fatalf("10s into a flap: Available %v, recheck %s; want held, 50s", held.Available, held.Recheck)
	}
	s = ComputeStatus(observed(held))
	if _, conds, changed := statusApply(hcd, s, metav1.NewTime(now.Add(10*time.Second))); changed {
		t.Errorf("a held flap changes the status: %v", changedParts(hcd, s, conds))
	}

	lost := read(flapped, now.Add(grace))
	if lost.Available || lost.Recheck != 0 {
		t.Fatalf("past the grace: Available %v, recheck %s; want unavailable", lost.Available, lost.Recheck)
	}
	s = ComputeStatus(observed(lost))
	_, conds, changed := statusApply(hcd, s, metav1.NewTime(now.Add(grace)))
	parts := changedParts(hcd, s, conds)
	// (Available stays Unknown: no HostedCluster status reported here.)
	want := []string{v1alpha1.ConditionHostingClusterAvailable}
	slices.Sort(parts)
	if !changed || !slices.Equal(parts, want) {
		t.Errorf("past the grace: changed %v, parts %v; want one write of %v", changed, parts, want)
	}
}
