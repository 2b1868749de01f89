//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
)

// TestLateHostKeepsItsShare: a management cluster under load renews its
// leases late and its klusterlet reports its own API server down for a
// probe (OCM registration spoke/managedcluster/resource_reconcile.go writes
// Available=False, ManagedClusterKubeAPIServerUnavailable). Within the
// hub's --host-unavailable-grace it stays a candidate, so a burst spreads
// over it as over the others, and the hosted cluster it hosts sees no
// status write; once the grace passed, each hosted cluster there gets one
// write that says so.
func TestLateHostKeepsItsShare(t *testing.T) {
	ctx := context.Background()
	// The burst in one namespace, the hosted cluster already on the late
	// cluster in another (bindings counts a namespace's).
	ns, home := "latehost", "latehost-home"
	late := "cluster-2"
	tenant(t, ns)
	tenant(t, home)
	placementDecidesAll(t, ns)
	if err := hubc.Create(ctx, hcd(home, "resident", func(spec map[string]any) {
		delete(spec, "nodePools")
		spec["hostingCluster"] = late
	})); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, home, "resident", v1alpha1.ConditionAvailable, metav1.ConditionTrue, 2*time.Minute)
	// Imported too: the import writes nothing more after that.
	waitCondition(t, home, "resident", v1alpha1.ConditionImported, metav1.ConditionTrue, time.Minute)
	resident := waitCondition(t, home, "resident", v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionTrue, time.Minute)

	// The registration agent stops renewing the cluster's lease (late, but
	// far inside OCM's grace of five 60s lease durations) and the work
	// agent stops reporting; what the klusterlet reported last is a failed
	// probe.
	if err := env.Fleet.Disconnect(late); err != nil {
		t.Fatal(err)
	}
	reconnected := false
	t.Cleanup(func() {
		if !reconnected {
			_ = env.Fleet.Reconnect(context.Background(), late)
		}
	})
	mc := &clusterv1.ManagedCluster{}
	if err := hubc.Get(ctx, types.NamespacedName{Name: late}, mc); err != nil {
		t.Fatal(err)
	}
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
		Status: metav1.ConditionFalse, Reason: "ManagedClusterKubeAPIServerUnavailable",
		Message: "The kube-apiserver is not ok, status code: 0, context deadline exceeded"})
	heldBySchedulerBefore := heldReads(t, hostmodel.HeldByScheduler)
	heldByDeliveryBefore := heldReads(t, hostmodel.HeldByDelivery)
	if err := hubc.Status().Update(ctx, mc); err != nil {
		t.Fatal(err)
	}

	// A burst while the cluster is held: it gets its share.
	names := createBurst(t, ns, "l", 6)
	perCluster := bindings(t, ns, names)
	burstOnLate := perCluster[late]
	perCluster[late]++ // the resident
	lo, hi := spread(perCluster)
	t.Logf("6 hosted clusters over 3 management clusters, one of them held (and 1 already on it): %v", perCluster)
	if burstOnLate == 0 || hi-lo > 1 {
		t.Errorf("%s got %d of the burst; per cluster %v, want a spread within 1\n%s", late, burstOnLate, perCluster, scheduledMessages(t, ns))
	}
	// The hub saw the flap (both the scheduler and the delivery read the
	// cluster as held) and wrote nothing on the resident for it.
	env.Eventually(t, time.Minute, "the scheduler and the delivery read "+late+" as held", func(context.Context) error {
		s, d := heldReads(t, hostmodel.HeldByScheduler)-heldBySchedulerBefore, heldReads(t, hostmodel.HeldByDelivery)-heldByDeliveryBefore
		if s == 0 || d == 0 {
			return fmt.Errorf("held reads: scheduler %v, delivery %v", s, d)
		}
		return nil
	})
	now, err := getHCD(ctx, home, "resident")
	if err != nil {
		t.Fatal(err)
	}
	if now.ResourceVersion != resident.ResourceVersion {
		t.Errorf("the resident was written while its host was held: resourceVersion %s -> %s, conditions %v",
			resident.ResourceVersion, now.ResourceVersion, now.Status.Conditions)
	}

	// Past the grace: one write per hosted cluster there, which says so.
	watcher, err := client.NewWithWatch(env.Fleet.Hub.Config(), client.Options{Scheme: hub.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := watcher.Watch(ctx, &v1alpha1.HostedClusterDeploymentList{}, client.InNamespace(home),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: now.ResourceVersion, FieldSelector: "metadata.name=resident"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	writesBefore := fleettest.Metric(t, "hcpfleet_hub_hcd_status_writes_total", map[string]string{"part": v1alpha1.ConditionHostingClusterAvailable})
	onLate := []types.NamespacedName{{Namespace: home, Name: "resident"}}
	for _, name := range names {
		if h, err := getHCD(ctx, ns, name); err == nil && h.Status.HostingCluster == late {
			onLate = append(onLate, types.NamespacedName{Namespace: ns, Name: name})
		}
	}
	for _, name := range onLate {
		h := waitCondition(t, name.Namespace, name.Name, v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionFalse, unavailableGrace+time.Minute)
		if c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionHostingClusterAvailable); c.Reason != v1alpha1.ReasonHostingClusterUnavailable {
			t.Errorf("%s: HostingClusterAvailable reason %s, want %s", name, c.Reason, v1alpha1.ReasonHostingClusterUnavailable)
		}
	}
	if got := fleettest.Metric(t, "hcpfleet_hub_hcd_status_writes_total", map[string]string{"part": v1alpha1.ConditionHostingClusterAvailable}) - writesBefore; int(got) != len(onLate) {
		t.Errorf("%v HostingClusterAvailable writes for %d hosted clusters on %s, want one each", got, len(onLate), late)
	}
	// The resident's writes since the positive signal: only the one.
	writes := 0
	for done := false; !done; {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Modified {
				continue
			}
			writes++
			h := ev.Object.(*v1alpha1.HostedClusterDeployment)
			done = condition(h, v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionFalse) == nil
		case <-time.After(time.Minute):
			t.Fatal("the resident's watch ended before its HostingClusterAvailable=False")
		}
	}
	if writes != 1 {
		t.Errorf("the resident was written %d times until HostingClusterAvailable=False, want once", writes)
	}

	reconnected = true
	if err := env.Fleet.Reconnect(ctx, late); err != nil {
		t.Fatal(err)
	}
	for _, name := range onLate {
		waitCondition(t, name.Namespace, name.Name, v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionTrue, 2*time.Minute)
	}
	deleteAll(t, ns)
	deleteAll(t, home)
}

// heldReads is hcpfleet_hub_host_unavailability_held_total{by}.
func heldReads(t *testing.T, by string) float64 {
	t.Helper()
	return fleettest.Metric(t, "hcpfleet_hub_host_unavailability_held_total", map[string]string{"by": by})
}
