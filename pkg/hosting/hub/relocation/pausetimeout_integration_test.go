//go:build integration

package relocation_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/relocation"
)

// TestRelocationWithoutSnapshotRollsBack: a source that pauses but never
// reports its etcd snapshot (the stand-in's no-snapshot) is waited for at
// most --relocation-pause-timeout (short here), then the move rolls back
// with reason SnapshotTimedOut: the source reconciles again, the HCD stays
// bound to it, nothing was ever written on the destination, and the
// relocation ends RolledBack saying why.
func TestRelocationWithoutSnapshotRollsBack(t *testing.T) {
	ctx := context.Background()
	const ns, name = "team-stuck", "stuck"
	hcd := availableHCD(t, ns, name, func(spec map[string]any) {
		spec["hostedCluster"].(map[string]any)["annotations"] = map[string]any{hypershiftsim.AnnotationNoSnapshot: ""}
	})
	key := types.NamespacedName{Namespace: ns, Name: name}
	source := hcd.Status.HostingCluster

	// A hub with a short pause timeout; the package's default hub again
	// after the test.
	pauseTimeout.Store(int64(45 * time.Second))
	env.Product.StopHubs()
	env.Product.StartHub()
	t.Cleanup(func() {
		pauseTimeout.Store(0)
		env.Product.StopHubs()
		env.Product.StartHub()
	})

	hcr := &v1alpha1.HostedClusterRelocation{ObjectMeta: metav1.ObjectMeta{Name: "stuck-away", Namespace: ns},
		Spec: v1alpha1.HostedClusterRelocationSpec{HostedClusterDeployment: name}}
	if err := hubc.Create(ctx, hcr); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 3*time.Minute, "the relocation rolled back", func(ctx context.Context) error {
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(hcr), hcr); err != nil {
			return err
		}
		p := relocation.Phase(hcr.Status.Phase)
		if order(p) > order(relocation.PhaseBackingUp) || p == relocation.PhaseDone || hcr.Status.SnapshotURL != "" {
			t.Fatalf("the relocation went on without a snapshot: %+v", hcr.Status)
		}
		if p.Final() && p != relocation.PhaseRolledBack {
			t.Fatalf("the relocation ended %s: %v", p, hcr.Status.Conditions)
		}
		if p != relocation.PhaseRolledBack {
			return fmt.Errorf("phase %q, conditions %v", p, hcr.Status.Conditions)
		}
		return nil
	})
	c := meta.FindStatusCondition(hcr.Status.Conditions, v1alpha1.ConditionRelocationProgressing)
	if c == nil || !strings.Contains(c.Message, relocation.ReasonSnapshotTimedOut) {
		t.Errorf("the relocation ended %+v, want its message to name %s", c, relocation.ReasonSnapshotTimedOut)
	}
	if err := hubc.Get(ctx, key, hcd); err != nil {
		t.Fatal(err)
	}
	if hcd.Status.HostingCluster != source {
		t.Errorf("bound to %s after the rollback, want %s", hcd.Status.HostingCluster, source)
	}
	if rc := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionRelocating); rc == nil || rc.Status != metav1.ConditionFalse || rc.Reason != string(relocation.PhaseRolledBack) {
		t.Errorf("Relocating %+v, want False, RolledBack", rc)
	}
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: source, Name: relocation.PauseWorkName(ns, name)}, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
		t.Errorf("the pause work after the rollback: %v", err)
	}
	var works workv1.ManifestWorkList
	if err := hubc.List(ctx, &works, client.MatchingLabels{hosting.LabelHCDNamespace: ns, hosting.LabelHCDName: name}); err != nil {
		t.Fatal(err)
	}
	for _, w := range works.Items {
		if w.Namespace != source {
			t.Errorf("ManifestWork %s/%s outside the source", w.Namespace, w.Name)
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
}
