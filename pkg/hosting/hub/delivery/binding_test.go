package delivery

import (
	"context"
	"testing"
	"time"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	hcdac "github.com/hcp-fleet/hcp-fleet/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// stored is hcd with the status fields apply writes, as the API server
// stores them.
func stored(hcd *v1alpha1.HostedClusterDeployment, apply *hcdac.HostedClusterDeploymentApplyConfiguration, conds []metav1.Condition) *v1alpha1.HostedClusterDeployment {
	out := hcd.DeepCopy()
	st := apply.Status
	out.Status.Conditions = conds
	out.Status.HostingCluster = *st.HostingCluster
	out.Status.ObservedGeneration = *st.ObservedGeneration
	out.Status.ManifestWork = *st.ManifestWork
	out.Status.NodePools = nil
	for _, np := range st.NodePools {
		out.Status.NodePools = append(out.Status.NodePools, v1alpha1.NodePoolStatus{Name: *np.Name, Replicas: *np.Replicas, ReadyReplicas: *np.ReadyReplicas})
	}
	return out
}

// TestBindingStatus: the scheduler writes a binding with the status the
// delivery writes right after the ManifestWork, so the delivery finds
// nothing to change then; its later writes carry the binding as it is.
func TestBindingStatus(t *testing.T) {
	scheme := testScheme()
	now := metav1.Now()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-1"}}
	mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "Up", LastTransitionTime: now}}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: addon.Name, Namespace: "cluster-1"}}
	mca.Status.Conditions = []metav1.Condition{{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionTrue, Reason: "Up", LastTransitionTime: now}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(mc, mca).Build()

	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "hcd-ns", Generation: 3}}
	hcd.Spec.HostedCluster.Spec.Release = hyperv1.Release{Image: "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"}
	hcd.Spec.NodePools = []v1alpha1.NodePoolTemplate{{Name: "x-workers"}}
	scheduled := metav1.Condition{Type: v1alpha1.ConditionScheduled, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonScheduled,
		Message: "scheduled onto management cluster cluster-1", ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour).Truncate(time.Second))}
	bound := hcd.DeepCopy()
	bound.Status.HostingCluster = "cluster-1"
	bound.Status.Conditions = []metav1.Condition{scheduled}

	apply, conds, err := BindingStatus(c, 0)(context.Background(), bound)
	if err != nil {
		t.Fatal(err)
	}
	if got := apply.Status.HostingCluster; got == nil || *got != "cluster-1" {
		t.Fatalf("the binding's apply does not set status.hostingCluster: %v", got)
	}
	if got := meta.FindStatusCondition(conds, v1alpha1.ConditionScheduled); got == nil || !equality.Semantic.DeepEqual(*got, scheduled) {
		t.Fatalf("Scheduled %+v, want %+v", got, scheduled)
	}
	if got := meta.FindStatusCondition(conds, v1alpha1.ConditionDelivered); got == nil || got.Reason != v1alpha1.ReasonWaitingForApply {
		t.Fatalf("Delivered %+v, want WaitingForApply", got)
	}
	// The import's first state too, so the import has nothing to write.
	if got, want := meta.FindStatusCondition(conds, v1alpha1.ConditionImported), hcdstatus.WaitingForAvailable("cluster-1"); got == nil ||
		got.Status != want.Status || got.Reason != want.Reason || got.Message != want.Message || got.ObservedGeneration != 3 {
		t.Fatalf("Imported %+v, want %+v", got, want)
	}
	if len(apply.Status.Conditions) != len(conds) {
		t.Fatalf("%d conditions applied, %d returned", len(apply.Status.Conditions), len(conds))
	}
	afterBind := stored(bound, apply, conds)

	// Right after it created the ManifestWork, the delivery has nothing to
	// write.
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: hosting.WorkName("hcd-ns", "x"), Generation: 1}}
	observed := Observed{Generation: 3, Work: work, Host: upHost, NodePools: []string{"x-workers"}}
	upgrade, _ := upgradeDecision(afterBind, nil, nil, "", time.Now(), 0)
	observed.Upgrade = &upgrade
	if _, _, changed := statusApply(afterBind, ComputeStatus(observed), metav1.Now()); changed {
		t.Errorf("the delivery would write again right after the ManifestWork: %+v", ComputeStatus(observed))
	}

	// Once the work agent applied it, Delivered=True, with the binding kept.
	work.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "Applied"}}
	next, nextConds, changed := statusApply(afterBind, ComputeStatus(observed), metav1.Now())
	if !changed {
		t.Fatal("Delivered=True not written")
	}
	if got := next.Status.HostingCluster; got == nil || *got != "cluster-1" {
		t.Errorf("the delivery's apply does not carry status.hostingCluster: %v", got)
	}
	if got := meta.FindStatusCondition(nextConds, v1alpha1.ConditionScheduled); got == nil || !equality.Semantic.DeepEqual(*got, scheduled) {
		t.Errorf("the delivery's apply carries Scheduled %+v, want it as it is: %+v", got, scheduled)
	}
	if got := meta.FindStatusCondition(nextConds, v1alpha1.ConditionDelivered); got == nil || got.Status != metav1.ConditionTrue {
		t.Errorf("Delivered %+v", got)
	}
}
