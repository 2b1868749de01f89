package delivery

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

func work(hcd string, generation int64, applied *metav1.Condition, value string) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: "w-" + hcd, Generation: generation,
		Labels: map[string]string{hosting.LabelHCDNamespace: "tenant", hosting.LabelHCDName: hcd}}}
	if applied != nil {
		w.Status.Conditions = []metav1.Condition{*applied}
	}
	if value != "" {
		w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{StatusFeedbacks: feedback(map[string]string{"progress": value})}}
	}
	return w
}

func TestWorkPriority(t *testing.T) {
	applied := &metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 1}
	notApplied := &metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionFalse, ObservedGeneration: 1}
	appliedGen2 := &metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 2}
	deleting := work("a", 1, applied, "")
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name     string
		old, new *workv1.ManifestWork
		want     int
	}{
		{"first applied", work("a", 1, nil, ""), work("a", 1, applied, ""), priorityDelivery},
		{"apply failed", work("a", 1, applied, ""), work("a", 1, notApplied, ""), priorityDelivery},
		{"new generation", work("a", 1, applied, ""), work("a", 2, applied, ""), priorityDelivery},
		{"new generation applied", work("a", 2, applied, ""), work("a", 2, appliedGen2, ""), priorityDelivery},
		{"deleted", work("a", 1, applied, ""), deleting, priorityDelivery},
		{"more feedback", work("a", 1, applied, "1"), work("a", 1, applied, "2"), priorityRefresh},
		{"first feedback", work("a", 1, applied, ""), work("a", 1, applied, "1"), priorityRefresh},
	} {
		if got := workPriority(tc.old, tc.new); got != tc.want {
			t.Errorf("%s: priority %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestFirstDeliveryGoesFirst feeds the delivery's handlers into
// controller-runtime's priority queue, as its controller does: a work
// applied for the first time and a new HCD are taken before the status
// refreshes enqueued ahead of them.
func TestFirstDeliveryGoesFirst(t *testing.T) {
	ctx := context.Background()
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	applied := &metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 1}
	works := workEvents()
	// Refreshes: status fed back for a, a cluster change fanned out to b.
	works.Update(ctx, event.UpdateEvent{ObjectOld: work("a", 1, applied, "1"), ObjectNew: work("a", 1, applied, "2")}, q)
	fanOut := refresh(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "tenant", Name: "b"}}}
	})
	fanOut.Update(ctx, event.UpdateEvent{ObjectOld: &workv1.ManifestWork{}, ObjectNew: &workv1.ManifestWork{}}, q)
	// Deliveries: c's work applied for the first time, d's created.
	works.Update(ctx, event.UpdateEvent{ObjectOld: work("c", 1, nil, ""), ObjectNew: work("c", 1, applied, "")}, q)
	works.Create(ctx, event.CreateEvent{Object: work("d", 1, nil, "")}, q)
	// b's refresh again, now as its work's first apply: it moves up.
	works.Update(ctx, event.UpdateEvent{ObjectOld: work("b", 1, nil, ""), ObjectNew: work("b", 1, applied, "")}, q)

	var order []string
	for q.Len() > 0 {
		req, _, _ := q.GetWithPriority()
		order = append(order, req.Name)
		q.Done(req)
	}
	want := []string{"b", "c", "d", "a"}
	if len(order) != len(want) {
		t.Fatalf("taken %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("taken %v, want %v", order, want)
		}
	}
}
