package namespacegc

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// DefaultGracePeriod is how long a labelled namespace must stay empty
// before the janitor deletes it (--namespace-gc-grace): a new delivery into
// it creates its objects within seconds.
const DefaultGracePeriod = 30 * time.Second

// resyncPeriod: how soon a labelled namespace that is not empty is looked at
// again. HostedClusters, NodePools, AppliedManifestWorks and the namespace
// itself are watched; Secrets and ConfigMaps are not (caching every Secret of
// a management cluster would cost more than this poll).
const resyncPeriod = time.Minute

// pageSize bounds the live lists of Secrets and ConfigMaps in a namespace; a
// namespace with more keeps them all (see Contents.Truncated).
const pageSize = 100

var deletedTotal = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "hcpfleet_agent_namespaces_deleted_total",
	Help: "Empty hosting namespaces created by hcp-fleet that the agent deleted.",
})

func init() {
	metrics.Registry.MustRegister(deletedTotal)
	utilruntime.Must(workv1.Install(agent.Scheme))
}

var (
	hostedClusterGVK = hosting.HostedClusterGVK
	nodePoolGVK      = hosting.NodePoolGVK
	configMapGVK     = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	secretGVK        = corev1.SchemeGroupVersion.WithKind("Secret")
)

// createdSelector selects the namespaces hcp-fleet created: the only ones the
// janitor ever looks at.
var createdSelector = labels.SelectorFromSet(labels.Set{hosting.LabelCreatedNamespace: "true"})

// Feature is the namespace janitor as an agent feature.
func Feature() agent.Feature {
	grace := DefaultGracePeriod
	return agent.Feature{Name: "namespace-janitor", ConfigureCache: configureCache,
		Flags: func(fs *flag.FlagSet) {
			fs.DurationVar(&grace, "namespace-gc-grace", grace,
				"How long a hosting namespace hcp-fleet created must stay empty before the agent deletes it.")
		},
		Setup:   func(mgr ctrl.Manager, env *agent.Env) error { return setup(mgr, env, grace) },
		Cleanup: func(ctx context.Context, env *agent.Env) error { return Cleanup(ctx, env, grace) }}
}

// configureCache: the agent caches only the namespaces hcp-fleet created.
func configureCache(opts *cache.Options) {
	if opts.ByObject == nil {
		opts.ByObject = map[client.Object]cache.ByObject{}
	}
	opts.ByObject[&corev1.Namespace{}] = cache.ByObject{Label: createdSelector}
}

type reconciler struct {
	cached client.Reader // labelled Namespaces, AppliedManifestWorks, HostedCluster/NodePool metadata
	live   client.Reader // right before deleting, and Secrets/ConfigMaps always
	writer client.Client
	// allowed says whether the HostingConfig allows hosted clusters in a
	// namespace; nil: any. The agent's RBAC lets it delete only those
	// (manifests/agent/02-clusterrole-hosting-namespace-deletion.yaml).
	allowed func(ns string) bool
	grace   time.Duration
	now     func() time.Time

	mu         sync.Mutex
	emptySince map[string]emptyMark // by namespace name
}

// emptyMark is when a namespace (this incarnation of its name) was first
// seen empty.
type emptyMark struct {
	uid   types.UID
	since time.Time
}

func setup(mgr ctrl.Manager, env *agent.Env, grace time.Duration) error {
	r := &reconciler{cached: mgr.GetClient(), live: boundReader{Reader: mgr.GetAPIReader(), binder: HostingNamespaceBinder(mgr.GetClient())},
		writer: mgr.GetClient(), allowed: hostingNamespaceAllowed(env), grace: grace, now: time.Now, emptySince: map[string]emptyMark{}}
	byNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		w, ok := o.(*workv1.AppliedManifestWork)
		if !ok {
			return nil
		}
		var reqs []reconcile.Request
		for _, ns := range namespacesOf(w) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: ns}})
		}
		return reqs
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("namespace-janitor").
		For(&corev1.Namespace{}).
		Watches(&workv1.AppliedManifestWork{}, byNamespace).
		WatchesRawSource(hyperShiftObjects(mgr, hostedClusterGVK)).
		WatchesRawSource(hyperShiftObjects(mgr, nodePoolGVK)).
		Complete(r)
}

// hyperShiftObjects enqueues the namespace of every HostedCluster (NodePool)
// event, from a metadata-only informer created once the HyperShift CRDs exist
// (the operator feature installs them after the agent starts).
func hyperShiftObjects(mgr ctrl.Manager, gvk schema.GroupVersionKind) source.Source {
	return agent.WatchMetadataWhenServed(mgr, gvk, func(o client.Object) []reconcile.Request {
		if o.GetNamespace() == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
	})
}

// Reconcile deletes the namespace once it has stayed empty for the grace
// period and a live re-check agrees.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	ns := &corev1.Namespace{}
	if err := r.cached.Get(ctx, req.NamespacedName, ns); err != nil {
		if apierrors.IsNotFound(err) { // gone, or not labelled (the cache holds only labelled ones)
			r.forget(req.Name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if !createdSelector.Matches(labels.Set(ns.Labels)) || ns.DeletionTimestamp != nil {
		r.forget(req.Name)
		return reconcile.Result{}, nil
	}
	if r.allowed != nil && !r.allowed(ns.Name) {
		r.forget(req.Name)
		log.V(1).Info("keeping namespace: not a hosting namespace of this cluster's HostingConfig")
		return reconcile.Result{RequeueAfter: resyncPeriod}, nil
	}
	d, err := inspect(ctx, r.cached, r.live, ns, r.now(), r.grace)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !d.Delete {
		r.forget(req.Name)
		log.V(1).Info("keeping namespace", "reasons", d.String())
		return reconcile.Result{RequeueAfter: resyncPeriod}, nil
	}
	since := r.markEmpty(ns)
	if wait := since.Add(r.grace).Sub(r.now()); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}

	// Empty for the whole grace period as far as the cache saw: check again
	// from the API server, then delete exactly what was checked.
	live := &corev1.Namespace{}
	if err := r.live.Get(ctx, req.NamespacedName, live); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.Name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if live.UID != ns.UID {
		r.forget(req.Name) // a new namespace of the same name: start over
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	d, err = inspect(ctx, r.live, r.live, live, r.now(), r.grace)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !d.Delete {
		r.forget(req.Name)
		log.V(1).Info("keeping namespace", "reasons", d.String())
		return reconcile.Result{RequeueAfter: resyncPeriod}, nil
	}
	if err := deleteNamespace(ctx, r.writer, live); err != nil {
		r.forget(req.Name) // changed under us: wait a full grace period again
		switch {
		case apierrors.IsConflict(err):
			return reconcile.Result{RequeueAfter: time.Second}, nil
		case apierrors.IsForbidden(err):
			// Not a hosting namespace the hub rendered into the agent's RBAC
			// (yet): leave it.
			log.Info("keeping namespace: the agent may not delete it", "error", err.Error())
			return reconcile.Result{RequeueAfter: resyncPeriod}, nil
		}
		return reconcile.Result{}, err
	}
	r.forget(req.Name)
	log.Info("deleted empty hosting namespace created by hcp-fleet", "emptyFor", r.now().Sub(since).Round(time.Millisecond))
	return reconcile.Result{}, nil
}

// markEmpty returns since when ns has been seen empty, starting now.
func (r *reconciler) markEmpty(ns *corev1.Namespace) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.emptySince[ns.Name]
	if !ok || m.uid != ns.UID {
		m = emptyMark{uid: ns.UID, since: r.now()}
		r.emptySince[ns.Name] = m
	}
	return m.since
}

func (r *reconciler) forget(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.emptySince, name)
}

// deleteNamespace deletes exactly the version of ns that was checked: if it
// changed since (relabelled, replaced), the API server refuses.
func deleteNamespace(ctx context.Context, c client.Writer, ns *corev1.Namespace) error {
	err := c.Delete(ctx, ns, client.Preconditions{UID: &ns.UID, ResourceVersion: &ns.ResourceVersion})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		deletedTotal.Inc()
	}
	return err
}

// inspect gathers what lives in ns, kind by kind, and decides; it stops at
// the first kind that keeps the namespace, so a namespace with hosted
// clusters costs no API call when watched reads come from the cache. watched
// reads AppliedManifestWorks, HostedClusters and NodePools; live reads
// Secrets and ConfigMaps (never cached: there may be many).
func inspect(ctx context.Context, watched, live client.Reader, ns *corev1.Namespace, now time.Time, grace time.Duration) (Decision, error) {
	c := Contents{}
	stages := []func() error{
		func() error {
			works := &workv1.AppliedManifestWorkList{}
			if err := watched.List(ctx, works); err != nil {
				return fmt.Errorf("listing AppliedManifestWorks: %w", err)
			}
			c.AppliedManifestWorks = works.Items
			return nil
		},
		func() (err error) {
			c.HostedClusters, err = names(ctx, watched, hostedClusterGVK, ns.Name)
			return err
		},
		func() (err error) {
			c.NodePools, err = names(ctx, watched, nodePoolGVK, ns.Name)
			return err
		},
		func() (err error) {
			c.ConfigMaps, err = metadataPage(ctx, live, configMapGVK, ns.Name, &c.Truncated)
			return err
		},
		func() (err error) {
			c.Secrets, err = metadataPage(ctx, live, secretGVK, ns.Name, &c.Truncated)
			return err
		},
	}
	d := Decide(ns, c, now, grace)
	for _, stage := range stages {
		if !d.Delete {
			break
		}
		if err := stage(); err != nil {
			return Decision{}, err
		}
		d = Decide(ns, c, now, grace)
	}
	return d, nil
}

// names lists (at most one of) the objects of kind gvk in namespace ns; none
// when the kind does not exist on the cluster (no HyperShift CRDs: no hosted
// clusters).
func names(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, ns string) ([]string, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(ns), client.Limit(1)); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing %ss in %s: %w", gvk.Kind, ns, err)
	}
	var out []string
	for _, o := range list.Items {
		out = append(out, ns+"/"+o.Name)
	}
	return out, nil
}

// metadataPage lists one page of the metadata of kind gvk in ns, noting in
// truncated when there is more.
func metadataPage(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, ns string, truncated *[]string) ([]metav1.PartialObjectMetadata, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(ns), client.Limit(pageSize)); err != nil {
		return nil, fmt.Errorf("listing %ss in %s: %w", gvk.Kind, ns, err)
	}
	if list.Continue != "" {
		*truncated = append(*truncated, gvk.Kind+"s")
	}
	return list.Items, nil
}

// Cleanup, when the add-on is removed, deletes the labelled namespaces that
// are empty (the operator's cleanup, which runs before, has waited for the
// hosted clusters to go). Like the controller it waits a grace period and
// re-checks before deleting; namespaces that still hold something stay.
func Cleanup(ctx context.Context, env *agent.Env, grace time.Duration) error {
	c, err := client.New(env.Managed, client.Options{Scheme: agent.Scheme})
	if err != nil {
		return err
	}
	err = cleanup(ctx, boundClient{Client: c, binder: HostingNamespaceBinder(c)}, grace, func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(grace):
			return nil
		}
	})
	if err != nil {
		return err
	}
	// The hosting-namespace grants the janitor and the kubeconfig export
	// bound to the agent where they worked.
	return kubeutil.UnbindSelf(ctx, c, addon.AgentHostingNamespaceRole)
}

// cleanup deletes the labelled namespaces c finds empty both before and
// after waitGrace.
func cleanup(ctx context.Context, c client.Client, grace time.Duration, waitGrace func(context.Context) error) error {
	empty := func() ([]corev1.Namespace, error) {
		list := &corev1.NamespaceList{}
		if err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: createdSelector}); err != nil {
			return nil, fmt.Errorf("listing namespaces: %w", err)
		}
		var out []corev1.Namespace
		for i := range list.Items {
			d, err := inspect(ctx, c, c, &list.Items[i], time.Now(), grace)
			if err != nil {
				return nil, err
			}
			if d.Delete {
				out = append(out, list.Items[i])
			}
		}
		return out, nil
	}
	first, err := empty()
	if err != nil || len(first) == 0 {
		return err
	}
	if err := waitGrace(ctx); err != nil {
		return err
	}
	second, err := empty()
	if err != nil {
		return err
	}
	wasEmpty := map[types.UID]bool{}
	for _, ns := range first {
		wasEmpty[ns.UID] = true
	}
	for i := range second {
		if !wasEmpty[second[i].UID] {
			continue
		}
		// Forbidden: not a hosting namespace the agent may delete; left alone.
		if err := deleteNamespace(ctx, c, &second[i]); err != nil && !apierrors.IsConflict(err) && !apierrors.IsForbidden(err) {
			return fmt.Errorf("deleting namespace %s: %w", second[i].Name, err)
		}
	}
	return nil
}

// HostingNamespaceBinder binds the agent's hosting-namespace grants
// (addon.AgentHostingNamespaceRole: list Secrets and ConfigMaps, get a
// Secret) in the namespaces it inspects or reads a kubeconfig from.
func HostingNamespaceBinder(c client.Client) *kubeutil.Binder {
	return &kubeutil.Binder{Client: c, ClusterRole: addon.AgentHostingNamespaceRole,
		Probe: authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"}}
}

// boundReader binds the agent's hosting-namespace grants in a namespace
// before it lists Secrets or ConfigMaps there: the agent holds them in the
// namespaces it inspects, not cluster-wide.
type boundReader struct {
	client.Reader
	binder *kubeutil.Binder
}

func (r boundReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := bindFor(ctx, r.binder, list, opts); err != nil {
		return err
	}
	return r.binder.Checked(listNamespace(opts), r.Reader.List(ctx, list, opts...))
}

// boundClient is boundReader for a whole client (the cleanup's).
type boundClient struct {
	client.Client
	binder *kubeutil.Binder
}

func (c boundClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := bindFor(ctx, c.binder, list, opts); err != nil {
		return err
	}
	return c.binder.Checked(listNamespace(opts), c.Client.List(ctx, list, opts...))
}

func listNamespace(opts []client.ListOption) string {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	return o.Namespace
}

// bindFor binds the grants when list is of Secrets or ConfigMaps in one
// namespace.
func bindFor(ctx context.Context, b *kubeutil.Binder, list client.ObjectList, opts []client.ListOption) error {
	ns := listNamespace(opts)
	switch gvk := list.GetObjectKind().GroupVersionKind(); {
	case ns == "" || gvk.Group != "":
		return nil
	case gvk.Kind == secretGVK.Kind+"List" || gvk.Kind == configMapGVK.Kind+"List":
		return b.Ensure(ctx, ns)
	}
	return nil
}

// hostingNamespaceAllowed says whether the HostingConfig the agent runs
// with allows hosted clusters in a namespace; before it has one, none.
func hostingNamespaceAllowed(env *agent.Env) func(string) bool {
	return func(ns string) bool {
		hc := env.HostingConfig.Current()
		if hc == nil {
			return false
		}
		spec := &v1alpha1.HostingConfigSpec{}
		if err := json.Unmarshal(hc.Spec, spec); err != nil {
			return false
		}
		return spec.AllowsHostingNamespace(ns)
	}
}
