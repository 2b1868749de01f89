//go:build integration

package relocation_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/relocation"
)

// TestRestoredMidMoveUndone plays an ACM backup restore of the hub taken
// while a move waited for its destination (Verifying: the copy restored
// there never becomes Available, by the stand-in's
// restored-never-available): with hcp-fleet stopped, every hub object of
// the hosted cluster goes, and what carries ACM's backup label comes back as
// Velero restores it (metadata and spec; no status, no finalizers, new
// UIDs); the HostedClusterRelocation, which carries none, does not. The
// restored hub must bind the HCD to its source (not ambiguous for the
// relocation's copy), remove the copy from the destination and resume the
// paused source, which keeps its data: one control plane runs, the
// source's.
func TestRestoredMidMoveUndone(t *testing.T) {
	ctx := context.Background()
	const ns, name = "team-restore", "mid"
	hcd := availableHCD(t, ns, name, func(spec map[string]any) {
		spec["hostedCluster"].(map[string]any)["annotations"] = map[string]any{hypershiftsim.AnnotationRestoredNeverAvailable: ""}
	})
	key := types.NamespacedName{Namespace: ns, Name: name}
	source := hcd.Status.HostingCluster
	destination := "cluster-1"
	if source == destination {
		destination = "cluster-2"
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "default"}, Data: map[string]string{"answer": "42"}}
	if _, err := guestClient(t, source, name).CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hcr := &v1alpha1.HostedClusterRelocation{ObjectMeta: metav1.ObjectMeta{Name: "mid-away", Namespace: ns},
		Spec: v1alpha1.HostedClusterRelocationSpec{HostedClusterDeployment: name, Destination: destination}}
	if err := hubc.Create(ctx, hcr); err != nil {
		t.Fatal(err)
	}
	copyKey := types.NamespacedName{Namespace: destination, Name: hosting.WorkName(ns, name)}
	env.Eventually(t, 3*time.Minute, "the move waiting for its destination", func(ctx context.Context) error {
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(hcr), hcr); err != nil {
			return err
		}
		if p := relocation.Phase(hcr.Status.Phase); p != relocation.PhaseVerifying {
			if p.Final() || hcr.Status.Switched {
				t.Fatalf("the relocation is %s (switched %v) before the backup: %v", p, hcr.Status.Switched, hcr.Status.Conditions)
			}
			return fmt.Errorf("phase %q", p)
		}
		return hubc.Get(ctx, copyKey, &workv1.ManifestWork{})
	})
	if hcr.Labels[hosting.LabelBackup] != "" {
		t.Fatalf("the relocation carries the backup label: a restore would bring it back without its status")
	}

	// The backup: what ACM takes, the hub objects of this hosted cluster
	// carrying its label.
	var works workv1.ManifestWorkList
	if err := hubc.List(ctx, &works, client.MatchingLabels{hosting.LabelHCDNamespace: ns, hosting.LabelHCDName: name}); err != nil {
		t.Fatal(err)
	}
	var backed []workv1.ManifestWork
	for _, w := range works.Items {
		if w.Labels[hosting.LabelBackup] != "" {
			backed = append(backed, w)
		}
	}
	pauseKey := types.NamespacedName{Namespace: source, Name: relocation.PauseWorkName(ns, name)}
	want := map[types.NamespacedName]bool{pauseKey: false, copyKey: false, {Namespace: source, Name: hosting.WorkName(ns, name)}: false}
	for _, w := range backed {
		want[client.ObjectKeyFromObject(&w)] = true
	}
	for k, ok := range want {
		if !ok {
			t.Fatalf("ManifestWork %s is not labelled for backup (labelled: %d of %d)", k, len(backed), len(works.Items))
		}
	}
	saved := &unstructured.Unstructured{}
	saved.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("HostedClusterDeployment"))
	if err := hubc.Get(ctx, key, saved); err != nil {
		t.Fatal(err)
	}

	// The disaster: hcp-fleet stops, its hub objects go without their
	// finalizers running.
	env.Product.StopHubs()
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			env.Product.StartHub()
		}
	})
	removeWithoutFinalizers(t, &v1alpha1.HostedClusterRelocation{}, client.ObjectKeyFromObject(hcr))
	for i := range works.Items {
		removeWithoutFinalizers(t, &workv1.ManifestWork{}, client.ObjectKeyFromObject(&works.Items[i]))
	}
	removeWithoutFinalizers(t, &v1alpha1.HostedClusterDeployment{}, key)

	// The restore, as Velero writes it, then hcp-fleet back.
	restoredHCD := &unstructured.Unstructured{Object: map[string]any{"apiVersion": saved.GetAPIVersion(), "kind": saved.GetKind(), "spec": saved.Object["spec"]}}
	restoredHCD.SetNamespace(ns)
	restoredHCD.SetName(name)
	restoredHCD.SetLabels(saved.GetLabels())
	restoredHCD.SetAnnotations(saved.GetAnnotations())
	if err := hubc.Create(ctx, restoredHCD); err != nil {
		t.Fatal(err)
	}
	for _, w := range backed {
		restored := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, Labels: w.Labels, Annotations: w.Annotations},
			Spec: *w.Spec.DeepCopy()}
		if err := hubc.Create(ctx, restored); err != nil {
			t.Fatal(err)
		}
	}
	env.Product.StartHub()
	restarted = true

	env.Eventually(t, 2*time.Minute, "bound to the source, the move undone", func(ctx context.Context) error {
		if err := hubc.Get(ctx, key, hcd); err != nil {
			return err
		}
		c := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionScheduled)
		if hcd.Status.HostingCluster != source || c == nil || c.Reason != v1alpha1.ReasonBindingRecovered {
			return fmt.Errorf("bound to %q, Scheduled %+v", hcd.Status.HostingCluster, c)
		}
		if c := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionRelocating); c == nil || c.Status != metav1.ConditionFalse || c.Reason != relocation.ReasonRestoredMidMove {
			return fmt.Errorf("Relocating %+v, want False, %s", c, relocation.ReasonRestoredMidMove)
		}
		return nil
	})
	for _, k := range []types.NamespacedName{copyKey, pauseKey} {
		if err := hubc.Get(ctx, k, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
			t.Errorf("ManifestWork %s after the move was undone: %v", k, err)
		}
	}
	// One control plane: the source's, reconciling again with its data;
	// the copy on the destination removed by its work agent.
	hc := &unstructured.Unstructured{}
	hc.SetGroupVersionKind(hostedClusterGVK)
	env.Eventually(t, 2*time.Minute, "the copy on "+destination+" gone", func(ctx context.Context) error {
		err := managementClient(t, destination).Get(ctx, types.NamespacedName{Namespace: v1alpha1.DefaultHostingNamespace, Name: name}, hc)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
	env.Eventually(t, time.Minute, "the source reconciling again", func(ctx context.Context) error {
		if err := managementClient(t, source).Get(ctx, types.NamespacedName{Namespace: v1alpha1.DefaultHostingNamespace, Name: name}, hc); err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(hc.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "ReconciliationActive" {
				if m["status"] != "True" {
					return fmt.Errorf("ReconciliationActive %v", m)
				}
				return nil
			}
		}
		return fmt.Errorf("no ReconciliationActive condition")
	})
	got, err := guestClient(t, source, name).CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
	if err != nil || got.Data["answer"] != "42" {
		t.Fatalf("the ConfigMap on the source after the move was undone: %v, %v", got, err)
	}
}

// removeWithoutFinalizers deletes obj as a lost hub loses it: its
// finalizers are not run.
func removeWithoutFinalizers(t *testing.T, obj client.Object, key types.NamespacedName) {
	t.Helper()
	env.Eventually(t, time.Minute, "removing "+key.String()+" without its finalizers", func(ctx context.Context) error {
		if err := hubc.Get(ctx, key, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		if len(obj.GetFinalizers()) > 0 {
			obj.SetFinalizers(nil)
			if err := hubc.Update(ctx, obj); err != nil {
				return err
			}
		}
		if err := hubc.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return fmt.Errorf("deleted; checking it is gone")
	})
}
