package agent

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestSingleRequestRequeueCoalesces(t *testing.T) {
	s := NewSingleRequest(reconcile.Request{NamespacedName: types.NamespacedName{Name: "one"}})
	s.Requeue()
	s.Requeue() // must not block: one pending is enough
	select {
	case s.Events() <- event.GenericEvent{}:
		t.Fatal("the channel took a second event: requeues do not coalesce")
	default:
	}
	<-s.events
	select {
	case <-s.events:
		t.Fatal("two events pending")
	default:
	}
}

func TestSingleRequestHandlerEnqueuesTheRequest(t *testing.T) {
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "install"}}
	s := NewSingleRequest(req)
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer queue.ShutDown()
	s.Handler().Generic(context.Background(), event.GenericEvent{Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}}}, queue)
	s.Handler().Generic(context.Background(), event.GenericEvent{Object: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "another"}}}, queue)
	if queue.Len() != 1 {
		t.Fatalf("queue holds %d requests, want 1", queue.Len())
	}
	if got, _ := queue.Get(); got != req {
		t.Fatalf("queued %v, want %v", got, req)
	}
}

func TestEnqueueFor(t *testing.T) {
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer queue.ShutDown()
	byNamespace := func(o client.Object) []reconcile.Request {
		if o.GetNamespace() == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
	}
	h := EnqueueFor(queue, byNamespace)
	obj := func(ns, name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	h.OnAdd(obj("a", "x"), false)
	h.OnUpdate(obj("b", "x"), obj("b", "x"))
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "c/x", Obj: obj("c", "x")})
	h.OnAdd(obj("", "cluster-scoped"), false)
	h.OnAdd("not an object", false)
	var got []string
	for queue.Len() > 0 {
		req, _ := queue.Get()
		got = append(got, req.Name)
		queue.Done(req)
	}
	if len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c" {
		t.Fatalf("enqueued %v, want [a b c]", got)
	}
}
