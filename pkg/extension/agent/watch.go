package agent

import (
	"context"
	"flag"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	addonagent "github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/connector"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// Feature is the extension engine as an agent feature.
func Feature(opts Options) addonagent.Feature {
	// The flags write into this copy; Setup and Cleanup read it after the
	// command line is parsed.
	o := opts.withDefaults()
	return addonagent.Feature{Name: "extensions",
		Flags: func(fs *flag.FlagSet) {
			fs.DurationVar(&o.GuestTeardownTimeout, "extension-guest-teardown-timeout", o.GuestTeardownTimeout,
				"How long a hosted cluster's API server may not answer during an extension's removal before its hosted-cluster objects are left behind. "+
					"A guest that answers is waited for however long its objects take.")
		},
		Setup: func(mgr ctrl.Manager, env *addonagent.Env) error {
			o := o
			if o.AgentNamespace == "" {
				o.AgentNamespace = env.Options.AddonNamespace
			}
			return Setup(mgr, o)
		},
		// The connector the engine deploys into control-plane namespaces
		// runs the agent's image with this subcommand.
		Commands: []addonagent.Command{{Name: connector.Command,
			Summary: "run hosted-cluster extension phases from a hosted control-plane namespace (deployed there by the agent)",
			Main:    connector.Main}},
		Cleanup: func(ctx context.Context, env *addonagent.Env) error {
			c, err := client.New(env.Managed, client.Options{Scheme: addonagent.Scheme})
			if err != nil {
				return err
			}
			return cleanup(ctx, c, o.GuestTeardownTimeout+time.Minute, 2*time.Second)
		}}
}

// namespaces runs one release-ConfigMap watch per hosted control-plane
// namespace the engine works in: the agent may read ConfigMaps only there
// (its grant is bound per namespace), never cluster-wide.
type namespaces struct {
	mgr  ctrl.Manager
	ctrl controller.Controller

	mu       sync.Mutex
	ctx      context.Context
	watching map[string]context.CancelFunc
}

// Setup registers the engine: HostedClusters hcp-fleet delivered lead to
// watches of their control-plane namespaces, whose release ConfigMaps the
// engine reconciles.
func Setup(mgr ctrl.Manager, opts Options) error {
	e := NewEngine(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetRESTMapper(), opts)
	e.watches = newAppliedWatches(mgr.GetConfig())
	ns := &namespaces{mgr: mgr, watching: map[string]context.CancelFunc{}}
	r := &router{engine: e, namespaces: ns}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("extension-engine").
		WatchesRawSource(addonagent.WatchMetadataWhenServed(mgr, hostedClusterGVK, controlPlaneNamespace)).
		// Changes of applied objects, from the watches the engine keeps on
		// them (objectwatch.go), as requests of their release.
		WatchesRawSource(source.Channel(e.watches.Events, &handler.EnqueueRequestForObject{})).
		Build(r)
	if err != nil {
		return err
	}
	ns.ctrl = c
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		ns.mu.Lock()
		ns.ctx = ctx
		ns.mu.Unlock()
		e.watches.Start(ctx)
		<-ctx.Done()
		return nil
	}))
}

// hostedClusterPrefix marks a request for the control-plane namespace of a
// HostedCluster: its name is the prefix and the HostedCluster's
// namespace/name, which no ConfigMap name can be (':' and '/').
const hostedClusterPrefix = "hostedcluster:"

// controlPlaneNamespace maps a delivered HostedCluster to the request of
// its control-plane namespace.
func controlPlaneNamespace(o client.Object) []reconcile.Request {
	if o.GetLabels()[hosting.LabelHCDName] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: extension.ControlPlaneNamespace(o.GetNamespace(), o.GetName()),
		Name: hostedClusterPrefix + o.GetNamespace() + "/" + o.GetName()}}}
}

// router sends namespace requests to the watches and ConfigMap requests to
// the engine.
type router struct {
	engine     *Engine
	namespaces *namespaces
}

func (r *router) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	hc, isHostedCluster := strings.CutPrefix(req.Name, hostedClusterPrefix)
	if !isHostedCluster {
		return r.engine.Reconcile(ctx, req)
	}
	hcNS, hcName, _ := strings.Cut(hc, "/")
	return r.namespaces.ensure(ctx, r.engine, req.Namespace, types.NamespacedName{Namespace: hcNS, Name: hcName})
}

// ensure watches ns, the control-plane namespace of HostedCluster hc,
// while it exists.
func (n *namespaces) ensure(ctx context.Context, e *Engine, ns string, hc types.NamespacedName) (reconcile.Result, error) {
	nsObj := &corev1.Namespace{}
	err := e.reader.Get(ctx, types.NamespacedName{Name: ns}, nsObj)
	n.mu.Lock()
	defer n.mu.Unlock()
	cancel, watching := n.watching[ns]
	switch {
	case apierrors.IsNotFound(err):
		if watching {
			cancel()
			delete(n.watching, ns)
		}
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(hostedClusterGVK)
		if err := e.reader.Get(ctx, hc, m); err != nil || m.DeletionTimestamp != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		// HyperShift creates the namespace after the HostedCluster.
		return reconcile.Result{RequeueAfter: 2 * time.Second}, nil
	case err != nil:
		return reconcile.Result{}, err
	case watching && nsObj.DeletionTimestamp != nil:
		// Look again until it is gone, then stop watching it.
		return reconcile.Result{RequeueAfter: 5 * time.Second}, nil
	case watching:
		return reconcile.Result{}, nil
	case n.ctx == nil:
		return reconcile.Result{RequeueAfter: time.Second}, nil // the manager is starting
	}
	if err := e.binder.Ensure(ctx, ns); err != nil {
		return reconcile.Result{}, err
	}
	wctx, stop := context.WithCancel(n.ctx)
	// Release ConfigMaps, and the phase requests, whose reports the
	// connector writes: a report wakes its release at once (no polling
	// while the connector works). Two label selectors, two caches.
	for _, w := range []struct {
		selector labels.Set
		handler  handler.TypedEventHandler[*corev1.ConfigMap, reconcile.Request]
	}{
		{labels.Set{extension.LabelRelease: "true"}, &handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{}},
		{labels.Set{connector.LabelPhaseRequest: "true"}, handler.TypedEnqueueRequestsFromMapFunc(releaseOfRequest)},
	} {
		c, err := cache.New(n.mgr.GetConfig(), cache.Options{Scheme: n.mgr.GetScheme(), Mapper: n.mgr.GetRESTMapper(),
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			ByObject:          map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(w.selector)}}})
		if err != nil {
			stop()
			return reconcile.Result{}, err
		}
		go func() {
			if err := c.Start(wctx); err != nil {
				ctrl.Log.WithName("extension-engine").Error(err, "watching ConfigMaps", "namespace", ns, "selector", w.selector.String())
			}
		}()
		if err := n.ctrl.Watch(source.Kind(c, &corev1.ConfigMap{}, w.handler)); err != nil {
			stop()
			return reconcile.Result{}, err
		}
	}
	n.watching[ns] = stop
	return reconcile.Result{}, nil
}

// releaseOfRequest maps a phase request to its release ConfigMap.
func releaseOfRequest(_ context.Context, cm *corev1.ConfigMap) []reconcile.Request {
	name := cm.Labels[connector.LabelRelease]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: cm.Namespace, Name: name}}}
}
