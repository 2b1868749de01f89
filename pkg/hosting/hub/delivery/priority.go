package delivery

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/workqueue"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The delivery's queue is controller-runtime's priority queue. In a burst,
// every hosted cluster rolling out feeds status back again and again, and
// a change of a management cluster or its add-on concerns every hosted
// cluster there; each puts HostedClusterDeployments back in the queue.
// Without priorities a binding made in the burst waited for its
// ManifestWork behind them (minutes with 20 management clusters,
// docs/performance.md). The first delivery goes first; refreshes follow.
// In a fleet at rest the queue is short and the order does not matter.
const (
	// priorityDelivery: a HostedClusterDeployment's own change (its
	// binding, spec or deletion, the For watch) and what its ManifestWork
	// goes through to deliver it (created, applied by the work agent, a
	// new generation, deleted).
	priorityDelivery = 0
	// priorityRefresh: status the work agent feeds back once more, and a
	// change fanned out to every HostedClusterDeployment it concerns (a
	// management cluster, its add-on or HostingConfig, a referenced
	// Secret or ConfigMap).
	priorityRefresh = handler.LowPriority
)

// workPriority is the priority of a ManifestWork update: a delivery's step
// (priorityDelivery) or more status feedback (priorityRefresh).
func workPriority(old, new *workv1.ManifestWork) int {
	if old.Generation != new.Generation || (old.DeletionTimestamp == nil) != (new.DeletionTimestamp == nil) {
		return priorityDelivery
	}
	was, is := meta.FindStatusCondition(old.Status.Conditions, workv1.WorkApplied), meta.FindStatusCondition(new.Status.Conditions, workv1.WorkApplied)
	if (was == nil) != (is == nil) || (was != nil && (was.Status != is.Status || was.ObservedGeneration != is.ObservedGeneration)) {
		return priorityDelivery
	}
	return priorityRefresh
}

// prioritized enqueues what mapper maps an object to with the priority
// priority gives an update (old, new); creates, deletes and generic events
// get created's. On a queue without priorities it adds them plainly.
type prioritized struct {
	mapper   handler.MapFunc
	created  int
	priority func(old, new client.Object) int
}

var _ handler.EventHandler = prioritized{}

// refresh maps with mapper, every event at priorityRefresh.
func refresh(mapper handler.MapFunc) prioritized {
	return prioritized{mapper: mapper, created: priorityRefresh,
		priority: func(client.Object, client.Object) int { return priorityRefresh }}
}

// workEvents maps a ManifestWork to its HostedClusterDeployment, at
// workPriority.
func workEvents() prioritized {
	return prioritized{mapper: workOwner, created: priorityDelivery, priority: func(old, new client.Object) int {
		o, ok1 := old.(*workv1.ManifestWork)
		n, ok2 := new.(*workv1.ManifestWork)
		if !ok1 || !ok2 {
			return priorityDelivery
		}
		return workPriority(o, n)
	}}
}

func (p prioritized) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	p.add(q, p.created, p.mapper(ctx, e.Object))
}

func (p prioritized) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	prio := p.priority(e.ObjectOld, e.ObjectNew)
	p.add(q, prio, append(p.mapper(ctx, e.ObjectOld), p.mapper(ctx, e.ObjectNew)...))
}

func (p prioritized) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	p.add(q, p.created, p.mapper(ctx, e.Object))
}

func (p prioritized) Generic(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	p.add(q, p.created, p.mapper(ctx, e.Object))
}

func (prioritized) add(q workqueue.TypedRateLimitingInterface[reconcile.Request], priority int, reqs []reconcile.Request) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, reqs...)
		return
	}
	for _, r := range reqs {
		q.Add(r)
	}
}
