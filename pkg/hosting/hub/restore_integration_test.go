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
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// TestRestoreKeepsBinding plays an ACM backup restore onto a hub whose
// HostedClusterDeployment lost its status, backed up by a hub that did not
// record the UID it delivered it with (hcdstatus.AnnotationIdentityUID): with hcp-fleet stopped, the HCD
// and its ManifestWork go (the work agent keeps the applied objects for its
// eviction grace period, 60 minutes by default); the HCD comes back first,
// as Velero restores it (metadata, spec, no status, no finalizers, a new
// UID), the ManifestWork later. The hub must bind the HCD where it runs
// (from the agent's report while the ManifestWork is missing), write no
// ManifestWork of its own for the new UID, and delete or rewrite nothing on
// any management cluster.
func TestRestoreKeepsBinding(t *testing.T) {
	ctx := context.Background()
	ns, name := "restore", "kept"
	tenant(t, ns)
	h, workKey, saved := deliveredForBackup(t, ns, name)
	host := h.Status.HostingCluster
	hcBefore, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secretsBefore := hostObjects(t, host, scGVR, ns, name)

	backup := veleroBackup(t, ns, name)
	// Backed up by a hub that did not record the identity it delivered
	// with (TestRestoreTakesOver has it).
	if backup.GetAnnotations()[hcdstatus.AnnotationIdentityUID] != string(h.UID) {
		t.Fatalf("annotations %v: want %s=%s", backup.GetAnnotations(), hcdstatus.AnnotationIdentityUID, h.UID)
	}
	annotations := backup.GetAnnotations()
	delete(annotations, hcdstatus.AnnotationIdentityUID)
	backup.SetAnnotations(annotations)

	// The disaster.
	restartHub := loseHub(t, ns, name, workKey)

	// The restore, HCDs first, then hcp-fleet back.
	if err := hubc.Create(ctx, backup); err != nil {
		t.Fatal(err)
	}
	restartHub()
	// Before the ManifestWork is back, the binding comes from what the
	// agent reports running there (its HostedClusterInventory), and the
	// delivery writes no ManifestWork for the new UID: the restored one
	// must find its name free, and the running hosted cluster untouched.
	h = scheduledReason(t, ns, name, metav1.ConditionTrue, v1alpha1.ReasonBindingRecovered, time.Minute)
	if h.Status.HostingCluster != host {
		t.Fatalf("bound to %q before its ManifestWork is back, want %s where its agent reports it", h.Status.HostingCluster, host)
	}
	env.Eventually(t, time.Minute, "Delivered=False UIDMismatch before the ManifestWork is back", func(ctx context.Context) error {
		var err error
		if h, err = getHCD(ctx, ns, name); err != nil {
			return err
		}
		if c := findCondition(h, v1alpha1.ConditionDelivered); c == nil || c.Reason != v1alpha1.ReasonUIDMismatch {
			return fmt.Errorf("Delivered %+v", c)
		}
		return nil
	})

	// The ManifestWorks restored later, as Velero writes them.
	restored := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: saved.Namespace, Name: saved.Name, Labels: saved.Labels, Annotations: saved.Annotations},
		Spec: *saved.Spec.DeepCopy()}
	if err := hubc.Create(ctx, restored); err != nil {
		t.Fatal(err)
	}
	h = scheduledReason(t, ns, name, metav1.ConditionTrue, v1alpha1.ReasonBindingRecovered, time.Minute)
	if h.Status.HostingCluster != host {
		t.Fatalf("bound to %q, want %s where its hosted cluster runs", h.Status.HostingCluster, host)
	}
	// The delivery has looked at it (the positive signal): it says why it
	// leaves the earlier object's ManifestWork alone, and did.
	env.Eventually(t, time.Minute, "Delivered=False UIDMismatch", func(ctx context.Context) error {
		var err error
		if h, err = getHCD(ctx, ns, name); err != nil {
			return err
		}
		if err := condition(h, v1alpha1.ConditionDelivered, metav1.ConditionFalse); err != nil {
			return err
		}
		if c := findCondition(h, v1alpha1.ConditionDelivered); c.Reason != v1alpha1.ReasonUIDMismatch || c.ObservedGeneration != h.Generation {
			return fmt.Errorf("Delivered %s: %s", c.Reason, c.Message)
		}
		return nil
	})
	work := &workv1.ManifestWork{}
	if err := hubc.Get(ctx, workKey, work); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(work.Spec, restored.Spec) || work.Generation != 1 {
		t.Errorf("the restored ManifestWork was rewritten (generation %d)", work.Generation)
	}
	// Nothing went on any management cluster: the HostedCluster is the
	// same object, the copies it uses are all there, and no other cluster
	// got the hosted cluster or a ManifestWork for it.
	hcNow, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, name, metav1.GetOptions{})
	if err != nil || hcNow.GetUID() != hcBefore.GetUID() || hcNow.GetDeletionTimestamp() != nil {
		t.Errorf("the HostedCluster on %s was replaced or is going: %v", host, err)
	}
	if got := hostObjects(t, host, scGVR, ns, name); len(got) != len(secretsBefore) {
		t.Errorf("Secret copies on %s: %v, were %v", host, got, secretsBefore)
	}
	for cluster := range hosts {
		if cluster == host {
			continue
		}
		if _, err := hosts[cluster].Resource(hcGVR).Namespace("clusters").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a HostedCluster %s on %s too (%v)", name, cluster, err)
		}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: cluster, Name: workKey.Name}, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
			t.Errorf("a ManifestWork for it in %s too (%v)", cluster, err)
		}
	}
	deleteAndWait(t, ns, name)
}

// deliveredForBackup creates the HCD ns/name and waits until it is
// delivered with the marks a backup keeps (bound-to, the identity, ACM's
// backup label) and its ManifestWork is labelled for backup. It returns
// the HCD, its ManifestWork's key and the ManifestWork as it was then.
func deliveredForBackup(t *testing.T, ns, name string) (*v1alpha1.HostedClusterDeployment, types.NamespacedName, *workv1.ManifestWork) {
	t.Helper()
	if err := hubc.Create(context.Background(), hcd(ns, name)); err != nil {
		t.Fatal(err)
	}
	h := waitCondition(t, ns, name, v1alpha1.ConditionDelivered, metav1.ConditionTrue, 2*time.Minute)
	host, uid := h.Status.HostingCluster, h.UID
	env.Eventually(t, time.Minute, "the delivery marks the HCD for backup and restore", func(ctx context.Context) error {
		var err error
		if h, err = getHCD(ctx, ns, name); err != nil {
			return err
		}
		if h.Annotations[hcdstatus.AnnotationBoundTo] != host || h.Annotations[hcdstatus.AnnotationIdentityUID] != string(uid) || h.Labels[hosting.LabelBackup] == "" {
			return fmt.Errorf("annotations %v labels %v", h.Annotations, h.Labels)
		}
		return nil
	})
	workKey := types.NamespacedName{Namespace: host, Name: hosting.WorkName(ns, name)}
	saved := &workv1.ManifestWork{}
	env.Eventually(t, time.Minute, "the ManifestWork is labelled for backup", func(ctx context.Context) error {
		if err := hubc.Get(ctx, workKey, saved); err != nil {
			return err
		}
		if saved.Labels[hosting.LabelBackup] == "" {
			return fmt.Errorf("labels %v", saved.Labels)
		}
		return nil
	})
	return h, workKey, saved
}

// loseHub is the disaster of a backup restore: hcp-fleet stops, and the
// HCD ns/name and its ManifestWork (workKey) go from the hub without their
// finalizers running. It returns the hub's restart, which the test calls
// once it has restored what it restores; a test that ends before that
// restarts the hub at its cleanup.
func loseHub(t *testing.T, ns, name string, workKey types.NamespacedName) (restart func()) {
	t.Helper()
	env.Product.StopHubs()
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			env.Product.StartHub()
		}
	})
	removeWithoutFinalizers(t, &workv1.ManifestWork{}, workKey)
	removeWithoutFinalizers(t, &v1alpha1.HostedClusterDeployment{}, types.NamespacedName{Namespace: ns, Name: name})
	return func() {
		env.Product.StartHub()
		restarted = true
	}
}

// removeWithoutFinalizers removes an object from the hub at once, its
// finalizers unrun, as losing the hub does. The removal of the finalizers
// and the deletion are one step (the deletion is conditional on the
// resourceVersion without them): a controller that puts a finalizer back in
// between (the work agent's on a ManifestWork) makes it retry, never lets a
// deletion with the finalizer through.
func removeWithoutFinalizers(t *testing.T, obj client.Object, key types.NamespacedName) {
	t.Helper()
	env.Eventually(t, time.Minute, "removing "+key.String()+" without its finalizers", func(ctx context.Context) error {
		if err := hubc.Get(ctx, key, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		obj.SetFinalizers(nil)
		if err := hubc.Update(ctx, obj); err != nil {
			return err
		}
		if err := hubc.Delete(ctx, obj, client.Preconditions{ResourceVersion: ptrTo(obj.GetResourceVersion())}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return fmt.Errorf("deleted; checking it is gone")
	})
}

func ptrTo[T any](v T) *T { return &v }

// hostObjects lists the names of the objects of gvr on a management cluster
// that hcp-fleet delivered for namespace/name.
func hostObjects(t *testing.T, cluster string, gvr schema.GroupVersionResource, namespace, name string) []string {
	t.Helper()
	var names []string
	for _, o := range hostDelivered(t, cluster, gvr, namespace, name) {
		names = append(names, o.GetNamespace()+"/"+o.GetName())
	}
	return names
}

// hostDelivered are the objects of gvr on a management cluster that hcp-fleet
// delivered for namespace/name (labelled with it).
func hostDelivered(t *testing.T, cluster string, gvr schema.GroupVersionResource, namespace, name string) []unstructured.Unstructured {
	t.Helper()
	list, err := hosts[cluster].Resource(gvr).List(context.Background(), metav1.ListOptions{
		LabelSelector: hosting.LabelHCDNamespace + "=" + namespace + "," + hosting.LabelHCDName + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func findCondition(h *v1alpha1.HostedClusterDeployment, t string) *metav1.Condition {
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == t {
			return &h.Status.Conditions[i]
		}
	}
	return nil
}

// veleroBackup is what Velero keeps of the HCD ns/name: its spec, labels
// and annotations, without status, UID or finalizers.
func veleroBackup(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("HostedClusterDeployment"))
	if err := hubc.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	backup := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "spec": u.Object["spec"]}}
	backup.SetNamespace(ns)
	backup.SetName(name)
	backup.SetLabels(u.GetLabels())
	backup.SetAnnotations(u.GetAnnotations())
	return backup
}
