package objects

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// Watches watch what was applied, so that a change of an applied object —
// a probe that starts failing after the release was available, a deletion,
// a drift — reaches the reconcile of the ConfigMap that asked for it (a
// release for the engine, a phase request for the connector) within
// seconds rather than at the next resync. As PKO's ObjectSet controllers
// watch the objects they own.
//
// One metadata informer per (ConfigMap, API server, resource, namespace),
// listing and watching only objects labelled with the extension's UID: the
// cache holds object metadata only (no specs or status), of the extension's
// own objects only. A metadata watch still sends every change, status
// included, which is all a reconcile needs: it reads the object itself when
// it probes.
type Watches struct {
	// Events are the ConfigMaps to reconcile (stubs: namespace and name).
	Events chan event.GenericEvent

	mu    sync.Mutex
	ctx   context.Context // the manager's; nil until it starts
	owner map[types.NamespacedName]map[string]context.CancelFunc
}

// NewWatches is an empty set of watches; Start hands it the context they
// run in.
func NewWatches() *Watches {
	return &Watches{Events: make(chan event.GenericEvent, 256), owner: map[types.NamespacedName]map[string]context.CancelFunc{}}
}

// Start lets Ensure start informers, which end with ctx.
func (w *Watches) Start(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctx = ctx
}

// WatchSpec is one informer: a resource on an API server (a config without
// a request timeout, which would cut every watch short), in a namespace
// ("" for all).
type WatchSpec struct {
	Config    *rest.Config
	Resource  schema.GroupVersionResource
	Namespace string
}

// Ensure makes the watches on behalf of ConfigMap owner match want (keyed
// by the caller; a key that changes is a new informer), the ones no longer
// wanted stopped; an empty want stops them all.
func (w *Watches) Ensure(ctx context.Context, owner types.NamespacedName, uid string, want map[string]WatchSpec) {
	w.mu.Lock()
	defer w.mu.Unlock()
	have := w.owner[owner]
	for key, cancel := range have {
		if _, ok := want[key]; !ok {
			cancel()
			delete(have, key)
		}
	}
	if len(want) == 0 || uid == "" {
		delete(w.owner, owner)
		return
	}
	if w.ctx == nil {
		return // the manager is starting; the next pass watches
	}
	if have == nil {
		have = map[string]context.CancelFunc{}
		w.owner[owner] = have
	}
	for key, spec := range want {
		if _, ok := have[key]; ok {
			continue
		}
		client, err := metadata.NewForConfig(spec.Config)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "watching an extension's objects", "for", owner.String(), "resource", spec.Resource.String())
			continue
		}
		selector := extension.LabelExtensionUID + "=" + uid
		informer := metadatainformer.NewFilteredMetadataInformer(client, spec.Resource, spec.Namespace, 0, cache.Indexers{},
			func(o *metav1.ListOptions) { o.LabelSelector = selector }).Informer()
		wctx, cancel := context.WithCancel(w.ctx)
		stub := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: owner.Name}}
		notify := func() {
			select {
			case w.Events <- event.GenericEvent{Object: stub}:
			case <-wctx.Done():
			}
		}
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { notify() },
			UpdateFunc: func(_, _ any) { notify() },
			DeleteFunc: func(any) { notify() },
		}); err != nil {
			cancel()
			continue
		}
		go informer.Run(wctx.Done())
		have[key] = cancel
	}
}
