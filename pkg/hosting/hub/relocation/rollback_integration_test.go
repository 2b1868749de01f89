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
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/relocation"
)

// TestRelocationCancelledRollsBack: a second relocation of an HCD that is
// being moved is refused (RelocationInProgress); the first, deleted before
// the binding moved, rolls back: the destination's ManifestWork and the
// pause work go, the source runs again with its data, the HCD stays bound
// there (Relocating=False, RolledBack), and the relocation is gone.
func TestRelocationCancelledRollsBack(t *testing.T) {
	ctx := context.Background()
	// Named apart from TestRelocationMovesAHostedClusterWithItsData's: a
	// HostedCluster clusters/app may run on either management cluster.
	const ns, name = "team-back", "back"
	hcd := availableHCD(t, ns, name)
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

	first := &v1alpha1.HostedClusterRelocation{ObjectMeta: metav1.ObjectMeta{Name: "first", Namespace: ns},
		Spec: v1alpha1.HostedClusterRelocationSpec{HostedClusterDeployment: name, Destination: destination}}
	second := &v1alpha1.HostedClusterRelocation{ObjectMeta: metav1.ObjectMeta{Name: "second", Namespace: ns},
		Spec: v1alpha1.HostedClusterRelocationSpec{HostedClusterDeployment: name}}
	for _, hcr := range []*v1alpha1.HostedClusterRelocation{first, second} {
		if err := hubc.Create(ctx, hcr); err != nil {
			t.Fatal(err)
		}
	}
	env.Eventually(t, time.Minute, "the second refused", func(ctx context.Context) error {
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(second), second); err != nil {
			return err
		}
		if second.Status.Phase != string(relocation.PhaseFailed) {
			return fmt.Errorf("phase %q", second.Status.Phase)
		}
		return nil
	})
	if c := meta.FindStatusCondition(second.Status.Conditions, v1alpha1.ConditionRelocationProgressing); c == nil || c.Reason != relocation.ReasonRelocationInProgress {
		t.Fatalf("the second relocation ended %+v, want %s", c, relocation.ReasonRelocationInProgress)
	}

	// Cancelled once the source is paused: long before the destination
	// can be Available (its guest is not even restored yet).
	env.Eventually(t, 2*time.Minute, "the first past Pausing", func(ctx context.Context) error {
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(first), first); err != nil {
			return err
		}
		switch relocation.Phase(first.Status.Phase) {
		case relocation.PhaseBackingUp, relocation.PhaseRestoring, relocation.PhaseVerifying:
			return nil
		case relocation.PhasePausing, "":
			return fmt.Errorf("phase %q", first.Status.Phase)
		}
		t.Fatalf("the first relocation is %s before it was cancelled: %v", first.Status.Phase, first.Status.Conditions)
		return nil
	})
	if err := hubc.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 3*time.Minute, "the first rolled back and gone", func(ctx context.Context) error {
		err := hubc.Get(ctx, client.ObjectKeyFromObject(first), first)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil && first.Status.Switched {
			t.Fatalf("the relocation switched after it was deleted: %+v", first.Status)
		}
		return fmt.Errorf("phase %q (%v)", first.Status.Phase, err)
	})
	if err := hubc.Get(ctx, key, hcd); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionRelocating); c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(relocation.PhaseRolledBack) {
		t.Errorf("Relocating %+v, want False, RolledBack", c)
	}
	if hcd.Status.HostingCluster != source {
		t.Errorf("bound to %s after the rollback, want %s", hcd.Status.HostingCluster, source)
	}
	for _, w := range []types.NamespacedName{{Namespace: destination, Name: hosting.WorkName(ns, name)}, {Namespace: source, Name: relocation.PauseWorkName(ns, name)}} {
		if err := hubc.Get(ctx, w, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
			t.Errorf("ManifestWork %s after the rollback: %v", w, err)
		}
	}
	env.Eventually(t, 2*time.Minute, "the source Available again", func(ctx context.Context) error {
		if err := hubc.Get(ctx, key, hcd); err != nil {
			return err
		}
		if !conditionTrue(hcd, v1alpha1.ConditionAvailable) {
			return fmt.Errorf("conditions %v", hcd.Status.Conditions)
		}
		return nil
	})
	got, err := guestClient(t, source, name).CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
	if err != nil || got.Data["answer"] != "42" {
		t.Fatalf("the ConfigMap on the source after the rollback: %v, %v", got, err)
	}
}
