//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// inventoryEntry waits until the agent of cluster reports
// namespace/name in its HostedClusterInventory on the hub and ok accepts
// the entry; it returns the entry.
func inventoryEntry(t *testing.T, cluster, namespace, name string, ok func(v1alpha1.InventoryHostedCluster) error) v1alpha1.InventoryHostedCluster {
	t.Helper()
	var got v1alpha1.InventoryHostedCluster
	env.Eventually(t, 2*time.Minute, fmt.Sprintf("%s reports HostedCluster %s/%s", cluster, namespace, name), func(ctx context.Context) error {
		inv := &v1alpha1.HostedClusterInventory{}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: cluster, Name: v1alpha1.InventoryName}, inv); err != nil {
			return err
		}
		for _, e := range inv.Status.HostedClusters {
			if e.Namespace == namespace && e.Name == name {
				got = e
				return ok(e)
			}
		}
		return fmt.Errorf("not listed among %d", len(inv.Status.HostedClusters))
	})
	return got
}

// TestInventoryListsHostedClusters: each agent reports, in its cluster's
// namespace on the hub, a HostedCluster created on its management cluster
// outside hcp-fleet (unmanaged: release, platform, infraID, Available) and
// one hcp-fleet delivered (the HostedClusterDeployment its labels name),
// and drops a HostedCluster that goes.
func TestInventoryListsHostedClusters(t *testing.T) {
	ctx := context.Background()
	host := env.Fleet.Managed[1].Name
	wildNS, wild := "wild", "unmanaged-1"
	hcs := hosts[host].Resource(hcGVR).Namespace(wildNS)
	if _, err := hosts[host].Resource(nsGVR).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": wildNS}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	hc := fleettest.HostedCluster(wildNS, wild)
	if err := unstructured.SetNestedField(hc.Object, "wild-infra", "spec", "infraID"); err != nil {
		t.Fatal(err)
	}
	if _, err := hcs.Create(ctx, hc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hcs.Delete(context.Background(), wild, metav1.DeleteOptions{}) })
	release, _, _ := unstructured.NestedString(hc.Object, "spec", "release", "image")
	inventoryEntry(t, host, wildNS, wild, func(e v1alpha1.InventoryHostedCluster) error {
		if e.Managed() || e.Release != release || e.Platform != "None" || e.InfraID != "wild-infra" || e.Available == "" {
			return fmt.Errorf("entry %+v", e)
		}
		return nil
	})

	// One hcp-fleet delivered there, by its labels.
	ns, name := "inventory", "listed"
	tenant(t, ns)
	createHCD(t, hcd(ns, name, func(spec map[string]any) { delete(spec, "placement"); spec["hostingCluster"] = host }))
	t.Cleanup(func() { deleteAndWait(t, ns, name) })
	h := waitCondition(t, ns, name, v1alpha1.ConditionDelivered, metav1.ConditionTrue, 2*time.Minute)
	inventoryEntry(t, host, v1alpha1.DefaultHostingNamespace, name, func(e v1alpha1.InventoryHostedCluster) error {
		if d := e.Deployment; d == nil || d.Namespace != ns || d.Name != name || d.UID != string(h.UID) || e.Release != "" {
			return fmt.Errorf("entry %+v (deployment %+v)", e, e.Deployment)
		}
		return nil
	})

	// `kubectl hcpfleet status` (the fleet view, read as the admin) lists
	// the unmanaged one, and not the delivered one.
	view, err := fleetview.Collect(ctx, hubc, "")
	if err != nil {
		t.Fatal(err)
	}
	var listed, delivered bool
	for _, u := range view.Unmanaged {
		listed = listed || u == fleetview.Unmanaged{Cluster: host, Namespace: wildNS, Name: wild, Release: release, Platform: "None", InfraID: "wild-infra", Available: u.Available}
		delivered = delivered || u.Name == name
	}
	if !listed || delivered {
		t.Errorf("the fleet view's unmanaged HostedClusters %+v: want %s/%s/%s and not %s", view.Unmanaged, host, wildNS, wild, name)
	}

	// The unmanaged one goes: so does its entry.
	if err := hcs.Delete(ctx, wild, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 2*time.Minute, "the deleted HostedCluster leaves the inventory", func(ctx context.Context) error {
		inv := &v1alpha1.HostedClusterInventory{}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: host, Name: v1alpha1.InventoryName}, inv); err != nil {
			return err
		}
		for _, e := range inv.Status.HostedClusters {
			if e.Namespace == wildNS && e.Name == wild {
				return fmt.Errorf("still listed")
			}
		}
		return nil
	})
}

// TestRestoreWithoutManifestWork: a hub restored from a backup that lost the
// ManifestWork for good (not labelled, not restored), of a deployment
// backed up without hcdstatus.AnnotationIdentityUID (an older hub's). The HostedCluster
// still runs on its management cluster, labelled with the deployment; the
// restored deployment (annotated hcpfleet.io/bound-to, a new UID) is bound
// where its agent reports it (BindingRecovered), and the delivery writes no
// ManifestWork for it anywhere (UIDMismatch): the work agent still holds the
// lost one's applied objects, which a new one of the same name would
// rename or delete. The HostedCluster is the same object after.
func TestRestoreWithoutManifestWork(t *testing.T) {
	ctx := context.Background()
	ns, name := "restore-lost", "lost-work"
	tenant(t, ns)
	createHCD(t, hcd(ns, name))
	h := waitCondition(t, ns, name, v1alpha1.ConditionDelivered, metav1.ConditionTrue, 2*time.Minute)
	host := h.Status.HostingCluster
	hcs := hosts[host].Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace)
	t.Cleanup(func() {
		// The test leaves the hosted cluster with no ManifestWork to
		// delete it.
		deleteAndWait(t, ns, name)
		_ = hcs.Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// What the agent reports is the recovery's input: wait for it.
	inventoryEntry(t, host, v1alpha1.DefaultHostingNamespace, name, func(e v1alpha1.InventoryHostedCluster) error {
		if e.Deployment == nil || e.Deployment.UID != string(h.UID) {
			return fmt.Errorf("entry %+v", e)
		}
		return nil
	})
	env.Eventually(t, time.Minute, "the delivery marks it bound", func(ctx context.Context) error {
		var err error
		if h, err = getHCD(ctx, ns, name); err == nil && h.Annotations["hcpfleet.io/bound-to"] != host {
			err = fmt.Errorf("annotations %v", h.Annotations)
		}
		return err
	})
	hcBefore, err := hcs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	backup := veleroBackup(t, ns, name)
	// Backed up by a hub that did not record the identity it delivered
	// with: with it, the delivery writes the ManifestWork again
	// (TestRestoreTakesOver/ManifestWorkLost).
	annotations := backup.GetAnnotations()
	delete(annotations, hcdstatus.AnnotationIdentityUID)
	backup.SetAnnotations(annotations)

	workKey := types.NamespacedName{Namespace: host, Name: hosting.WorkName(ns, name)}
	restartHub := loseHub(t, ns, name, workKey)
	if err := hubc.Create(ctx, backup); err != nil {
		t.Fatal(err)
	}
	restartHub()

	h = scheduledReason(t, ns, name, metav1.ConditionTrue, v1alpha1.ReasonBindingRecovered, 2*time.Minute)
	if h.Status.HostingCluster != host {
		t.Fatalf("bound to %q, want %s where its agent reports it", h.Status.HostingCluster, host)
	}
	// The positive signal that the delivery looked: its reason.
	env.Eventually(t, time.Minute, "Delivered=False UIDMismatch", func(ctx context.Context) error {
		var err error
		if h, err = getHCD(ctx, ns, name); err != nil {
			return err
		}
		c := findCondition(h, v1alpha1.ConditionDelivered)
		if c == nil || c.Reason != v1alpha1.ReasonUIDMismatch || c.ObservedGeneration != h.Generation {
			return fmt.Errorf("Delivered %+v", c)
		}
		return nil
	})
	for cluster := range hosts {
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: cluster, Name: workKey.Name}, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
			t.Errorf("a ManifestWork for it in %s (%v)", cluster, err)
		}
	}
	hcNow, err := hcs.Get(ctx, name, metav1.GetOptions{})
	if err != nil || hcNow.GetUID() != hcBefore.GetUID() || hcNow.GetDeletionTimestamp() != nil {
		t.Fatalf("the HostedCluster on %s was replaced or is going: %v", host, err)
	}
	if hcNow.GetGeneration() != hcBefore.GetGeneration() {
		t.Errorf("the HostedCluster's spec changed: generation %d, was %d", hcNow.GetGeneration(), hcBefore.GetGeneration())
	}
}
