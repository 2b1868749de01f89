package agent

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// SingleRequest is the trigger of a controller that reconciles one fixed
// request (an install, the cluster's report): every event it watches only
// means "look again", and a pending reconcile covers any number of them.
type SingleRequest struct {
	// Request is the one request the controller reconciles.
	Request reconcile.Request
	events  chan event.GenericEvent
}

// NewSingleRequest is the trigger of a controller that reconciles req only.
func NewSingleRequest(req reconcile.Request) *SingleRequest {
	return &SingleRequest{Request: req, events: make(chan event.GenericEvent, 1)}
}

// Requeue asks for a reconcile; it never blocks (one pending is enough).
func (s *SingleRequest) Requeue() {
	select {
	case s.events <- event.GenericEvent{Object: &metav1.PartialObjectMetadata{}}:
	default:
	}
}

// Events is the channel that requeues the request, for senders such as
// HostingConfigSource.Subscribe.
func (s *SingleRequest) Events() chan<- event.GenericEvent { return s.events }

// Handler maps every event to the request, for the controller's watches.
func (s *SingleRequest) Handler() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{s.Request}
	})
}

// Controller starts building the controller named name with mgr, fed by
// Requeue and Events; add watches with Handler, then Complete it.
func (s *SingleRequest) Controller(mgr ctrl.Manager, name string) *builder.Builder {
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WatchesRawSource(source.Channel(s.events, s.Handler()))
}

// crdPollPeriod is how often a watch waiting for its kind's CRD checks
// whether it is served yet.
const crdPollPeriod = 5 * time.Second

// WatchWhenServed is a source that calls start, with the controller's
// context and queue, once the API server serves gvk: the kind's CRD may be
// installed after the agent starts (the operator feature installs
// HyperShift's). A start that fails is logged and tried again.
func WatchWhenServed(mapper meta.RESTMapper, gvk schema.GroupVersionKind,
	start func(context.Context, workqueue.TypedRateLimitingInterface[reconcile.Request]) error) source.Source {
	return source.Func(func(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		log := ctrl.Log.WithName("watch").WithValues("kind", gvk.Kind)
		go func() {
			_ = kubeutil.WhenServed(ctx, mapper, gvk, crdPollPeriod, func(ctx context.Context) error {
				err := start(ctx, queue)
				if err != nil {
					log.Error(err, "watching")
				}
				return err
			})
		}()
		return nil
	})
}

// WatchMetadataWhenServed is a source of the events of kind gvk, from a
// metadata-only informer of mgr's cache created once the kind is served
// (see WatchWhenServed); toRequests maps each object to what it enqueues.
func WatchMetadataWhenServed(mgr ctrl.Manager, gvk schema.GroupVersionKind, toRequests func(client.Object) []reconcile.Request) source.Source {
	return WatchWhenServed(mgr.GetRESTMapper(), gvk, func(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		probe := &metav1.PartialObjectMetadata{}
		probe.SetGroupVersionKind(gvk)
		informer, err := mgr.GetCache().GetInformer(ctx, probe)
		if err != nil {
			return err
		}
		_, err = informer.AddEventHandler(EnqueueFor(queue, toRequests))
		return err
	})
}

// EnqueueFor is an informer event handler that adds toRequests(object) to
// queue for every event (deleted objects included).
func EnqueueFor(queue workqueue.TypedRateLimitingInterface[reconcile.Request], toRequests func(client.Object) []reconcile.Request) toolscache.ResourceEventHandler {
	enqueue := func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if o, ok := obj.(client.Object); ok {
			for _, req := range toRequests(o) {
				queue.Add(req)
			}
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, n any) { enqueue(n) }, DeleteFunc: enqueue,
	}
}
