//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/kubectlhcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// setCordon taints (or untaints) a ManagedCluster with `kubectl hcpfleet
// cordon`'s own code (its test is the plugin's).
func setCordon(t *testing.T, cluster string, cordon bool) {
	t.Helper()
	if err := kubectlhcpfleet.Cordon(context.Background(), hubc, io.Discard, cluster, cordon); err != nil {
		t.Fatal(err)
	}
}

// scheduledReason waits until namespace/name's Scheduled condition has
// status and reason.
func scheduledReason(t *testing.T, namespace, name string, status metav1.ConditionStatus, reason string, timeout time.Duration) *v1alpha1.HostedClusterDeployment {
	t.Helper()
	var h *v1alpha1.HostedClusterDeployment
	env.Eventually(t, timeout, fmt.Sprintf("%s/%s Scheduled=%s %s", namespace, name, status, reason), func(ctx context.Context) error {
		var err error
		if h, err = getHCD(ctx, namespace, name); err != nil {
			return err
		}
		c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionScheduled)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("Scheduled is %+v", c)
		}
		return nil
	})
	return h
}

// TestCordon: a cordoned management cluster takes no new hosted cluster —
// not through a tenant's Placement (OCM drops it), not pinned, not through
// a Placement a tenant wrote to tolerate the taint — unless the admin's
// TenantPolicy allows the toleration; what runs there keeps running with
// its binding and status untouched, the add-on stays, and uncordon lets the
// waiting ones in.
func TestCordon(t *testing.T) {
	ctx := context.Background()
	ns := "cordon"
	tenant(t, ns)
	const cordoned = "cluster-3"
	pin := func(placement string) func(map[string]any) {
		return func(spec map[string]any) {
			spec["hostingCluster"] = cordoned
			if placement == "" {
				delete(spec, "placement")
			} else {
				spec["placement"] = placement
			}
		}
	}
	if err := hubc.Create(ctx, hcd(ns, "before", pin("hosts"))); err != nil {
		t.Fatal(err)
	}
	before := waitCondition(t, ns, "before", v1alpha1.ConditionDelivered, metav1.ConditionTrue, 2*time.Minute)
	scheduledBefore := meta.FindStatusCondition(before.Status.Conditions, v1alpha1.ConditionScheduled)
	hcBefore, err := hosts[cordoned].Resource(hcGVR).Namespace("clusters").Get(ctx, "before", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	setCordon(t, cordoned, true)
	t.Cleanup(func() { setCordon(t, cordoned, false) })
	// OCM saw the taint: the tenant's Placement no longer selects it.
	clusters := clusterclient.NewForConfigOrDie(env.Fleet.Hub.Config())
	env.Eventually(t, time.Minute, "Placement hosts drops the cordoned cluster", func(ctx context.Context) error {
		decided, err := localfleet.DecidedClusters(ctx, clusters, ns, "hosts")
		if err == nil && slices.Contains(decided, cordoned) {
			err = fmt.Errorf("still decided: %v", decided)
		}
		return err
	})
	// A Placement tolerating the cordon, as a tenant may write one.
	tolerant := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "tolerant", Namespace: ns}, Spec: clusterv1beta1.PlacementSpec{
		ClusterSets: []string{"global"},
		Tolerations: []clusterv1beta1.Toleration{{Key: hosting.TaintUnschedulable, Operator: clusterv1beta1.TolerationOpExists}},
	}}
	if err := hubc.Create(ctx, tolerant); err != nil {
		t.Fatal(err)
	}
	for name, placement := range map[string]string{"pinned": "", "via-hosts": "hosts", "tolerant": "tolerant"} {
		if err := hubc.Create(ctx, hcd(ns, name, pin(placement))); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"pinned", "via-hosts", "tolerant"} {
		h := scheduledReason(t, ns, name, metav1.ConditionFalse, v1alpha1.ReasonHostingClusterCordoned, time.Minute)
		if h.Status.HostingCluster != "" {
			t.Errorf("%s bound to %s on a cordoned cluster", name, h.Status.HostingCluster)
		}
	}

	// The scheduler has acted on the cordon (above): what ran there is as
	// it was — bound, its Scheduled condition not rewritten, its HostedCluster
	// the same object, the add-on still installed and available.
	now, err := getHCD(ctx, ns, "before")
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(now.Status.Conditions, v1alpha1.ConditionScheduled); now.Status.HostingCluster != cordoned || c == nil ||
		c.Reason != scheduledBefore.Reason || !c.LastTransitionTime.Equal(&scheduledBefore.LastTransitionTime) || c.ObservedGeneration != scheduledBefore.ObservedGeneration {
		t.Errorf("the bound HCD changed with the cordon: hostingCluster %q, Scheduled %+v (was %+v)", now.Status.HostingCluster, c, scheduledBefore)
	}
	hcNow, err := hosts[cordoned].Resource(hcGVR).Namespace("clusters").Get(ctx, "before", metav1.GetOptions{})
	if err != nil || hcNow.GetUID() != hcBefore.GetUID() || hcNow.GetDeletionTimestamp() != nil {
		t.Errorf("the HostedCluster on the cordoned cluster was replaced or is going: %v", err)
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: cordoned, Name: addon.Name}, mca); err != nil || mca.DeletionTimestamp != nil ||
		!meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable) {
		t.Errorf("the add-on on the cordoned cluster should stay installed and available: %v %+v", err, mca.Status.Conditions)
	}
	if got := fleettest.Metric(t, "hcpfleet_hub_management_cluster_cordoned", map[string]string{"cluster": cordoned}); got != 1 {
		t.Errorf("hcpfleet_hub_management_cluster_cordoned{cluster=%s} = %v, want 1", cordoned, got)
	}

	// The admin allows the toleration: the HCD whose Placement tolerates
	// the taint is bound; the others still wait.
	if err := fleettest.SetTenantPolicy(ctx, hubc, ns, func(s *v1alpha1.TenantPolicySpec) { s.AllowCordonToleration = true }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = hubc.Delete(context.Background(), &v1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "tenant-" + ns}})
	})
	if h := scheduledReason(t, ns, "tolerant", metav1.ConditionTrue, v1alpha1.ReasonScheduled, time.Minute); h.Status.HostingCluster != cordoned {
		t.Errorf("tolerant bound to %q, want %s", h.Status.HostingCluster, cordoned)
	}
	if h, err := getHCD(ctx, ns, "pinned"); err != nil || h.Status.HostingCluster != "" {
		t.Errorf("pinned without a tolerating Placement must still wait: %v %q", err, h.Status.HostingCluster)
	}

	// Uncordoned: the pinned ones go where they are pinned.
	setCordon(t, cordoned, false)
	for _, name := range []string{"pinned", "via-hosts"} {
		if h := scheduledReason(t, ns, name, metav1.ConditionTrue, v1alpha1.ReasonScheduled, time.Minute); h.Status.HostingCluster != cordoned {
			t.Errorf("%s bound to %q after uncordon, want %s", name, h.Status.HostingCluster, cordoned)
		}
	}
	for _, name := range []string{"before", "pinned", "via-hosts", "tolerant"} {
		deleteAndWait(t, ns, name)
	}
}
