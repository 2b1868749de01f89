//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/delivery"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// TestRestoreTakesOver plays the ACM backup restore of TestRestoreKeepsBinding
// with a HostedClusterDeployment that carries the identity it was first
// delivered with (hcdstatus.AnnotationIdentityUID, written by the delivery,
// restored with the rest of its metadata) under its new UID. The hub must
// take the hosted cluster back: Delivered=True at the restored object's
// generation, a spec change made after the restore reaching the
// HostedCluster, and everything on the management cluster the same objects
// as before (HostedCluster, NodePool, Secret copies: same names, UIDs and
// creation times; the same infraID). Both with the ManifestWork restored
// with the deployment, and with it lost for good (not backed up): then the
// delivery writes it again from the agent's report, the same as the lost
// one, which the work agent still holds the applied objects of.
func TestRestoreTakesOver(t *testing.T) {
	ns := "restore-uid"
	tenant(t, ns)
	t.Run("ManifestWorkRestored", func(t *testing.T) { restoreTakesOver(t, ns, "taken", true) })
	t.Run("ManifestWorkLost", func(t *testing.T) { restoreTakesOver(t, ns, "taken-lost", false) })
}

func restoreTakesOver(t *testing.T, ns, name string, restoreWork bool) {
	ctx := context.Background()
	// Delivered with the identity recorded beside the other marks.
	h, workKey, saved := deliveredForBackup(t, ns, name)
	host, firstUID := h.Status.HostingCluster, h.UID
	hcBefore, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	infraID, _, _ := unstructured.NestedString(hcBefore.Object, "spec", "infraID")
	before := hostIdentities(t, host, ns, name)
	pullCopy := "clusters/" + delivery.CopyName(ns, name, firstUID, delivery.KindSecret, "pull-secret")
	if _, ok := before[pullCopy]; !ok || infraID == "" {
		t.Fatalf("before the restore: infraID %q, objects %v (want the pull secret's copy %s)", infraID, before, pullCopy)
	}

	backup := veleroBackup(t, ns, name)
	// The disaster, as in TestRestoreKeepsBinding.
	restartHub := loseHub(t, ns, name, workKey)
	if err := hubc.Create(ctx, backup); err != nil {
		t.Fatal(err)
	}
	if restoreWork {
		// ACM restores the generic resources together: the ManifestWork
		// as Velero writes it, before hcp-fleet is back.
		restored := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: saved.Namespace, Name: saved.Name, Labels: saved.Labels, Annotations: saved.Annotations},
			Spec: *saved.Spec.DeepCopy()}
		if err := hubc.Create(ctx, restored); err != nil {
			t.Fatal(err)
		}
	} else {
		// Recovered from the agent's report (no ManifestWork): wait until
		// the agent's inventory is what the recovery reads.
		inventoryEntry(t, host, v1alpha1.DefaultHostingNamespace, name, func(e v1alpha1.InventoryHostedCluster) error {
			if e.Deployment == nil || e.Deployment.UID != string(firstUID) {
				return fmt.Errorf("entry %+v", e)
			}
			return nil
		})
	}
	restartHub()

	h = scheduledReason(t, ns, name, metav1.ConditionTrue, v1alpha1.ReasonBindingRecovered, time.Minute)
	if h.Status.HostingCluster != host || h.UID == firstUID {
		t.Fatalf("restored as UID %s bound to %q, want a new UID bound to %s", h.UID, h.Status.HostingCluster, host)
	}
	h = deliveredAt(t, ns, name, 0)
	if h.Annotations[hcdstatus.AnnotationIdentityUID] != string(firstUID) {
		t.Errorf("identity %q after the restore, want %s kept", h.Annotations[hcdstatus.AnnotationIdentityUID], firstUID)
	}
	work := &workv1.ManifestWork{}
	if err := hubc.Get(ctx, workKey, work); err != nil {
		t.Fatal(err)
	}
	if delivery.WorkUID(work) != firstUID || !equality.Semantic.DeepEqual(work.Spec.Workload, saved.Spec.Workload) {
		t.Errorf("the ManifestWork after the restore delivers UID %s (want %s) or other manifests than before", delivery.WorkUID(work), firstUID)
	}

	// A spec change after the restore reaches the HostedCluster.
	patch := []byte(`{"spec":{"hostedCluster":{"labels":{"phase":"restored"}}}}`)
	if err := hubc.Patch(ctx, hcd(ns, name), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, time.Minute, "the change on the HostedCluster", func(ctx context.Context) error {
		hc, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if hc.GetLabels()["phase"] != "restored" {
			return fmt.Errorf("labels %v", hc.GetLabels())
		}
		return nil
	})
	deliveredAt(t, ns, name, h.Generation+1)

	// The same objects on the management cluster: none deleted, created
	// again or renamed; the same infraID; nothing elsewhere.
	hcNow, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id, _, _ := unstructured.NestedString(hcNow.Object, "spec", "infraID"); id != infraID {
		t.Errorf("infraID %q after the restore, was %q", id, infraID)
	}
	if after := hostIdentities(t, host, ns, name); !equality.Semantic.DeepEqual(after, before) {
		t.Errorf("objects on %s after the restore:\n%v\nwere:\n%v", host, after, before)
	}
	for cluster := range hosts {
		if cluster == host {
			continue
		}
		if _, err := hosts[cluster].Resource(hcGVR).Namespace("clusters").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a HostedCluster %s on %s too (%v)", name, cluster, err)
		}
	}
	deleteAndWait(t, ns, name)
}

// deliveredAt waits for Delivered=True at the HostedClusterDeployment's
// generation, at least generation.
func deliveredAt(t *testing.T, ns, name string, generation int64) *v1alpha1.HostedClusterDeployment {
	t.Helper()
	var h *v1alpha1.HostedClusterDeployment
	env.Eventually(t, 2*time.Minute, fmt.Sprintf("Delivered=True at generation %d", generation), func(ctx context.Context) error {
		var err error
		if h, err = getHCD(ctx, ns, name); err != nil {
			return err
		}
		if err := condition(h, v1alpha1.ConditionDelivered, metav1.ConditionTrue); err != nil {
			return err
		}
		if c := findCondition(h, v1alpha1.ConditionDelivered); c.ObservedGeneration != h.Generation || h.Generation < generation {
			return fmt.Errorf("Delivered at generation %d, object at %d", c.ObservedGeneration, h.Generation)
		}
		return nil
	})
	return h
}

// hostIdentities are the HostedCluster, NodePools and Secrets on cluster
// that hcp-fleet delivered for namespace/name, "namespace/name" →
// "kind uid creationTimestamp": an object deleted and created again, or
// renamed, changes it.
func hostIdentities(t *testing.T, cluster, namespace, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, gvr := range []schema.GroupVersionResource{hcGVR, npGVR, scGVR} {
		for _, o := range hostDelivered(t, cluster, gvr, namespace, name) {
			out[o.GetNamespace()+"/"+o.GetName()] = fmt.Sprintf("%s %s %s", o.GetKind(), o.GetUID(), o.GetCreationTimestamp().UTC().Format(time.RFC3339))
		}
	}
	return out
}
