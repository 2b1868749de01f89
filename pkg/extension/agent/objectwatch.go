package agent

import (
	"context"
	"encoding/hex"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// appliedWatches watch what the engine applied, so that a change of an
// applied object — a probe that starts failing after the release was
// available, a deletion, a drift — reaches the release's reconcile within
// seconds rather than at the next resync. As PKO's ObjectSet controllers
// watch the objects they own.
//
// One metadata informer per (release, API server, resource), listing and
// watching only objects labelled with the extension's UID, in the
// control-plane namespace on the management cluster (where the agent's
// grant is) and cluster-wide in the hosted cluster: the cache holds object
// metadata only (no specs or status), of the extension's own objects only.
// A metadata watch still sends every change, status included, which is all
// the engine needs: it reads the object itself when it probes.
type appliedWatches struct {
	config *rest.Config // the management cluster, as the agent
	events chan event.GenericEvent

	mu       sync.Mutex
	ctx      context.Context // the manager's; nil until it starts
	releases map[types.NamespacedName]map[string]context.CancelFunc
}

func newAppliedWatches(cfg *rest.Config) *appliedWatches {
	return &appliedWatches{config: cfg, events: make(chan event.GenericEvent, 256),
		releases: map[types.NamespacedName]map[string]context.CancelFunc{}}
}

func (w *appliedWatches) start(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctx = ctx
}

// watchSpec is one informer: a resource on an API server, in a namespace
// ("" for all).
type watchSpec struct {
	config    *rest.Config
	resource  schema.GroupVersionResource
	namespace string
}

// watchApplied makes the watches of release cm match the applied objects:
// one per resource and place, the ones no applied object needs stopped.
func (e *Engine) watchApplied(ctx context.Context, cm *corev1.ConfigMap, uid string, applied []extension.ObjectRef) {
	if e.watches == nil || uid == "" {
		return
	}
	want := map[string]watchSpec{}
	for _, r := range applied {
		var cfg *rest.Config
		var mapper meta.RESTMapper
		scope, ns := "management", cm.Namespace
		if r.Class == v1alpha1.PhaseClassControlPlane {
			cfg, mapper = e.watches.config, e.mapper
		} else {
			g, ok := e.guests.current(cm.Namespace)
			if !ok {
				continue // the guest is not reached yet; the next pass watches it
			}
			cfg, mapper, ns = g.watchConfig, g.mapper, ""
			scope = "guest-" + hex.EncodeToString(g.sum[:8]) // a new kubeconfig, new watches
		}
		m, err := mapper.RESTMapping(schema.GroupKind{Group: r.Group, Kind: r.Kind}, r.Version)
		if err != nil {
			continue // an unknown kind failed its apply already
		}
		want[uid+"|"+scope+"|"+m.Resource.String()+"|"+ns] = watchSpec{config: cfg, resource: m.Resource, namespace: ns}
	}
	e.watches.ensure(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}, uid, want)
}

// stopWatching ends the watches of a release whose teardown is done.
func (e *Engine) stopWatching(cm *corev1.ConfigMap) {
	if e.watches == nil {
		return
	}
	e.watches.ensure(context.Background(), types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}, "", nil)
}

func (w *appliedWatches) ensure(ctx context.Context, release types.NamespacedName, uid string, want map[string]watchSpec) {
	w.mu.Lock()
	defer w.mu.Unlock()
	have := w.releases[release]
	for key, cancel := range have {
		if _, ok := want[key]; !ok {
			cancel()
			delete(have, key)
		}
	}
	if len(want) == 0 {
		delete(w.releases, release)
		return
	}
	if w.ctx == nil {
		return // the manager is starting; the next pass watches
	}
	if have == nil {
		have = map[string]context.CancelFunc{}
		w.releases[release] = have
	}
	for key, spec := range want {
		if _, ok := have[key]; ok {
			continue
		}
		client, err := metadata.NewForConfig(spec.config)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "watching an extension's objects", "release", release.String(), "resource", spec.resource.String())
			continue
		}
		selector := extension.LabelExtensionUID + "=" + uid
		informer := metadatainformer.NewFilteredMetadataInformer(client, spec.resource, spec.namespace, 0, cache.Indexers{},
			func(o *metav1.ListOptions) { o.LabelSelector = selector }).Informer()
		wctx, cancel := context.WithCancel(w.ctx)
		stub := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: release.Namespace, Name: release.Name}}
		notify := func() {
			select {
			case w.events <- event.GenericEvent{Object: stub}:
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
