package scheduling_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	hcdac "github.com/hcp-fleet/hcp-fleet/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// floorWorkers is how many parallel writers measure the floor: enough that
// the API server, not the client, is the limit.
const floorWorkers = 16

// floor measures the hub API server's own limit for the writes hcp-fleet
// makes per hosted cluster, with parallel writers and nothing to decide:
// bind is one status apply per HostedClusterDeployment (the binding), and
// deliver adds the ManifestWork's creation and the status apply that
// records it. The HostedClusterDeployments are pinned to a cluster that
// does not exist, so the hub writes them once (Scheduled=False) before the
// measurement and not during it; the ManifestWorks go to a namespace no
// work agent serves, with the size of a real delivery's.
func floor(b *testing.B, env *fleettest.Env, hubc client.WithWatch, n int) (bind, deliver time.Duration) {
	ctx := context.Background()
	ns := "floor"
	tenant(b, hubc, ns)
	parallel(n, floorWorkers, func(i int) {
		h := benchHCD(ns, fmt.Sprintf("f-%04d", i))
		h.Object["spec"].(map[string]any)["hostingCluster"] = "no-such-cluster"
		delete(h.Object["spec"].(map[string]any), "placement")
		if err := hubc.Create(ctx, h); err != nil {
			b.Error(err)
		}
	})
	env.Eventually(b, 10*time.Minute, "the hub reports every floor HostedClusterDeployment unschedulable", func(ctx context.Context) error {
		var list v1alpha1.HostedClusterDeploymentList
		if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		waiting := 0
		for _, h := range list.Items {
			if meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionScheduled) == nil {
				waiting++
			}
		}
		if waiting > 0 || len(list.Items) != n {
			return fmt.Errorf("%d of %d not reported yet", waiting, len(list.Items))
		}
		return nil
	})
	statusApply := func(i int, reason string) {
		cond := metav1.Condition{Type: "BenchFloor", Status: metav1.ConditionTrue, Reason: reason,
			Message: "a status write of the size of a binding", LastTransitionTime: metav1.Now()}
		apply := hcdac.HostedClusterDeployment(fmt.Sprintf("f-%04d", i), ns).
			WithStatus(hcdac.HostedClusterDeploymentStatus().WithConditions(hcdstatus.ApplyConditions([]metav1.Condition{cond})...))
		if err := hcdstatus.Apply(ctx, hubc, apply, "bench-floor"); err != nil {
			b.Error(err)
		}
	}
	start := time.Now()
	parallel(n, floorWorkers, func(i int) { statusApply(i, "Bound") })
	bind = time.Since(start)
	payload := hostedCluster("payload")
	start = time.Now()
	parallel(n, floorWorkers, func(i int) {
		work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("f-%04d", i), Namespace: ns},
			Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				{RawExtension: runtime.RawExtension{Object: &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "clusters"}}}},
				{RawExtension: runtime.RawExtension{Object: payload}},
			}}}}
		if err := hubc.Create(ctx, work); err != nil {
			b.Error(err)
		}
		statusApply(i, "Delivered")
	})
	deliver = bind + time.Since(start)
	// Out of the way of what is measured next.
	if err := hubc.DeleteAllOf(ctx, &workv1.ManifestWork{}, client.InNamespace(ns)); err != nil {
		b.Error(err)
	}
	if err := hubc.DeleteAllOf(ctx, &v1alpha1.HostedClusterDeployment{}, client.InNamespace(ns)); err != nil {
		b.Error(err)
	}
	env.Eventually(b, 10*time.Minute, "the floor's objects deleted", func(ctx context.Context) error {
		var list v1alpha1.HostedClusterDeploymentList
		if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d left", len(list.Items))
		}
		return nil
	})
	return bind, deliver
}
