//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// A management cluster whose klusterlet stops reporting: its hosted cluster
// says so (HostingClusterAvailable=False, HostingClusterUnavailable), keeps
// its binding and its ManifestWork (never rescheduled silently), new
// HostedClusterDeployments go elsewhere, and everything recovers once the
// cluster is back.
func TestLostHost(t *testing.T) {
	ctx := context.Background()
	ns := "lost"
	lost := "cluster-3"
	tenant(t, ns)
	if err := hubc.Create(ctx, hcd(ns, "stranded", func(spec map[string]any) { spec["hostingCluster"] = lost })); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ns, "stranded", v1alpha1.ConditionAvailable, metav1.ConditionTrue, 2*time.Minute)
	waitCondition(t, ns, "stranded", v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionTrue, time.Minute)

	// A short lease lets the hub notice the silence in seconds (it waits
	// five lease durations; 3s leaves a loaded machine room for a late
	// renewal before the disconnect). Wait until the registration agent renews at the
	// new pace, so that what the hub notices below is the agent stopping,
	// not the change of pace.
	setLeaseDuration(t, lost, 3)
	var last time.Time
	env.Eventually(t, time.Minute, lost+"'s registration agent renewing its lease every 3s", func(ctx context.Context) error {
		lease := &coordinationv1.Lease{}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: lost, Name: "managed-cluster-lease"}, lease); err != nil {
			return err
		}
		if lease.Spec.RenewTime == nil {
			return fmt.Errorf("lease not renewed yet")
		}
		renewed := lease.Spec.RenewTime.Time
		prev := last
		last = renewed
		if prev.IsZero() || !renewed.After(prev) || renewed.Sub(prev) > 4500*time.Millisecond {
			return fmt.Errorf("renewed at %s, before at %s", renewed.Format(time.StampMilli), prev.Format(time.StampMilli))
		}
		return nil
	})
	mc := &clusterv1.ManagedCluster{}
	if err := hubc.Get(ctx, types.NamespacedName{Name: lost}, mc); err != nil || !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
		t.Fatalf("%s not Available before it is disconnected (%v): %+v", lost, err, mc.Status.Conditions)
	}
	if err := env.Fleet.Disconnect(lost); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	env.Eventually(t, 3*time.Minute, lost+" unavailable on the hub", func(ctx context.Context) error {
		mc := &clusterv1.ManagedCluster{}
		if err := hubc.Get(ctx, types.NamespacedName{Name: lost}, mc); err != nil {
			return err
		}
		if meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
			return fmt.Errorf("%s still Available", lost)
		}
		return nil
	})
	h := waitCondition(t, ns, "stranded", v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionFalse, time.Minute)
	c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionHostingClusterAvailable)
	t.Logf("disconnected; %s after %s: %s: %s", v1alpha1.ConditionHostingClusterAvailable, time.Since(start).Round(time.Second), c.Reason, c.Message)
	if c.Reason != v1alpha1.ReasonHostingClusterUnavailable {
		t.Errorf("reason %s, want %s", c.Reason, v1alpha1.ReasonHostingClusterUnavailable)
	}
	if h.Status.HostingCluster != lost {
		t.Errorf("the stranded hosted cluster moved to %q", h.Status.HostingCluster)
	}

	// A new hosted cluster is scheduled, but not onto the lost cluster.
	if err := hubc.Create(ctx, hcd(ns, "newcomer")); err != nil {
		t.Fatal(err)
	}
	newcomer := waitCondition(t, ns, "newcomer", v1alpha1.ConditionScheduled, metav1.ConditionTrue, time.Minute)
	if newcomer.Status.HostingCluster == lost {
		t.Errorf("newcomer was scheduled onto %s, which is unavailable", lost)
	}
	// The stranded one is still bound where it was, with its one
	// ManifestWork there and nowhere else.
	var works workv1.ManifestWorkList
	if err := hubc.List(ctx, &works, client.MatchingLabels{hosting.LabelHCDNamespace: ns, hosting.LabelHCDName: "stranded"}); err != nil {
		t.Fatal(err)
	}
	if len(works.Items) != 1 || works.Items[0].Namespace != lost {
		var where []string
		for _, w := range works.Items {
			where = append(where, w.Namespace+"/"+w.Name)
		}
		t.Errorf("ManifestWorks of the stranded hosted cluster: %v; want one, in %s", where, lost)
	}
	if h, err := getHCD(ctx, ns, "stranded"); err != nil || h.Status.HostingCluster != lost {
		t.Errorf("stranded: hostingCluster %q (%v)", h.Status.HostingCluster, err)
	}

	// Back: the cluster is available again, and so is the hosting.
	setLeaseDuration(t, lost, 60)
	if err := env.Fleet.Reconnect(ctx, lost); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ns, "stranded", v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionTrue, 2*time.Minute)
	deleteAndWait(t, ns, "stranded")
	deleteAndWait(t, ns, "newcomer")
}

func setLeaseDuration(t *testing.T, cluster string, seconds int32) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"spec":{"leaseDurationSeconds":%d}}`, seconds))
	mc := &clusterv1.ManagedCluster{}
	mc.SetName(cluster)
	if err := hubc.Patch(context.Background(), mc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}
