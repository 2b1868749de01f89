package connector

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

type builderOption = builder.ForOption

func withPredicates(p predicate.Predicate) builderOption { return builder.WithPredicates(p) }

// requestChanged passes creations and changes of the engine's keys: a
// ConfigMap has no generation, and the connector's own report writes must
// not wake it (it looks again on its own schedule).
type requestChanged struct{ predicate.Funcs }

func (requestChanged) Create(event.CreateEvent) bool { return true }

func (requestChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*corev1.ConfigMap)
	n, ok2 := e.ObjectNew.(*corev1.ConfigMap)
	if !ok1 || !ok2 {
		return true
	}
	return o.Data[KeyRequest] != n.Data[KeyRequest] || o.Data[KeyDelete] != n.Data[KeyDelete]
}
