package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hubindex"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
	olmhub "github.com/hcp-fleet/hcp-fleet/pkg/olm/hub"
)

// Finalizer keeps a delivered HostedClusterDeployment until its
// HostedCluster is gone from (or released on) the hosting cluster.
const Finalizer = "hcpfleet.io/delivery"

// AbandonAnnotation, set to "true" on a HostedClusterDeployment whose
// deletion timed out because its hosting cluster is unavailable or gone,
// finishes the deletion without confirmation from that cluster: the
// HostedCluster may keep running there.
const AbandonAnnotation = "hcpfleet.io/abandon-hosted-cluster"

// indexReferences indexes HostedClusterDeployments by the Secrets and
// ConfigMaps they refer to ("Secret/name").
const indexReferences = "delivery.references"

var (
	workWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hcpfleet_hub_manifestwork_writes_total", Help: "ManifestWork creates and updates by the HostedCluster delivery."}, []string{"verb"})
	// reason is a Delivered condition reason: a fixed set (docs/troubleshooting.md).
	deliveryProblems = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hcpfleet_hub_delivery_problems_total", Help: "Deliveries held back or failed on the hub, by the Delivered condition's reason."}, []string{"reason"})
)

func init() { metrics.Registry.MustRegister(workWrites, deliveryProblems) }

// DefaultWorkers is how many HostedClusterDeployments the delivery
// reconciles at once by default: as many as the scheduler binds at once
// (scheduling.DefaultWorkers), so that a burst's deliveries keep up with its
// bindings; each delivery waits mostly on the hub API server's writes, which
// it accepts many times faster in parallel.
const DefaultWorkers = scheduling.DefaultWorkers

// Options configure the delivery.
type Options struct {
	// LostHostTimeout is how long deletion waits for an unavailable hosting
	// cluster before it says so and offers AbandonAnnotation.
	LostHostTimeout time.Duration
	// MaxConcurrentReconciles bounds parallel reconciles.
	MaxConcurrentReconciles int
	// Annotations decides which annotations of spec.hostedCluster reach the
	// HostedCluster (ParseAnnotationPolicy; the zero value: none of a
	// restricted domain).
	Annotations AnnotationPolicy
	// ConfigNamespaces are where a hosting cluster's HostingConfig (its
	// hosting-namespace policy) may come from.
	ConfigNamespaces hostmodel.ConfigNamespaces
	// RefreshInterval bounds how often a ManifestWork is rewritten because
	// only a referenced Secret or ConfigMap changed (DefaultRefreshInterval
	// when 0).
	RefreshInterval time.Duration
	// UnavailableGrace is how long a hosting cluster or its add-on may
	// report itself unavailable before HostingClusterAvailable and
	// Available say so (hostmodel.HeldAvailable); 0: at once.
	UnavailableGrace time.Duration
	// UpgradeReportMaxAge bounds the age of the agent's upgrade report the
	// upgrade gate decides on (olmhub.Upgrade.ReportMaxAge; nil or 0:
	// olmhub.DefaultReportMaxAge). A func, read at each decision, so that a
	// test can change it while the hub runs.
	UpgradeReportMaxAge func() time.Duration
}

// Reconciler delivers scheduled HostedClusterDeployments to their hosting
// clusters and maps what comes back into their status.
type Reconciler struct {
	client   client.Client
	reader   client.Reader // live reads of referenced objects' contents
	opts     Options
	recorder record.EventRecorder
	tenancy  *tenancy.Resolver
	// created remembers the ManifestWorks this replica created and its cache
	// does not show yet (by HostedClusterDeployment, with its UID and the
	// time), as the kube-controller-manager's expectations do: the
	// reconcile that follows at once (the finalizer's event) would otherwise
	// create it again and be refused.
	created sync.Map
	// written remembers the status each HostedClusterDeployment was last
	// written with and the copy it was computed from: a reconcile that
	// reads that same copy again before the cache shows the write (the work
	// agent reports twice in a row, say) would send the same write again.
	written sync.Map
	// refreshes coalesces reference-only rewrites (coalesce.go).
	refreshes *refreshLimiter
	// deletions remembers, per HostedClusterDeployment being deleted, what
	// the finalizer saw of its ManifestWork (workSeen, leftover.go).
	deletions sync.Map
}

// createdWork is an entry of Reconciler.created.
type createdWork struct {
	uid types.UID
	at  time.Time
}

// createdExpiry is how long a created ManifestWork is expected to show up
// in the cache; after it, the delivery creates it again (it was deleted
// meanwhile, or its event was lost).
const createdExpiry = 30 * time.Second

// awaitingCache reports whether hcd's ManifestWork was created moments ago
// by this replica and the cache does not show it yet.
func (r *Reconciler) awaitingCache(hcd *v1alpha1.HostedClusterDeployment) bool {
	v, ok := r.created.Load(client.ObjectKeyFromObject(hcd))
	if !ok {
		return false
	}
	c := v.(createdWork)
	return c.uid == hcd.UID && time.Since(c.at) < createdExpiry
}

// Setup registers the delivery with mgr; hubindex.AddIndexes and
// scheduling.AddIndexes must have run.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.LostHostTimeout == 0 {
		opts.LostHostTimeout = 10 * time.Minute
	}
	if opts.MaxConcurrentReconciles == 0 {
		opts.MaxConcurrentReconciles = DefaultWorkers
	}
	if opts.RefreshInterval == 0 {
		opts.RefreshInterval = DefaultRefreshInterval
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.HostedClusterDeployment{}, indexReferences,
		func(o client.Object) []string {
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
			if err != nil {
				return nil
			}
			s, err := SpecFrom(&unstructured.Unstructured{Object: u})
			if err != nil {
				return nil
			}
			var keys []string
			for _, r := range s.References() {
				keys = append(keys, r.Kind+"/"+r.Name)
			}
			return keys
		}); err != nil {
		return err
	}
	r := &Reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), opts: opts, recorder: mgr.GetEventRecorderFor(hcdstatus.EventSource),
		tenancy: &tenancy.Resolver{Reader: mgr.GetClient()}, refreshes: &refreshLimiter{interval: opts.RefreshInterval, now: time.Now}}
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	configMap := &metav1.PartialObjectMetadata{}
	configMap.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	// Reconcile reads HostedClusterDeployments unstructured; its events
	// must come from that same informer. Events from the typed one can run
	// ahead of it: a binding seen there but not yet in the unstructured
	// cache was read as unbound and, with nothing else changing, never
	// delivered.
	hcd := &unstructured.Unstructured{}
	hcd.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("HostedClusterDeployment"))
	return ctrl.NewControllerManagedBy(mgr).
		Named("hcd-delivery").
		For(hcd).
		Watches(&workv1.ManifestWork{}, workEvents()).
		Watches(&clusterv1.ManagedCluster{}, refresh(r.boundTo(func(o client.Object) string { return o.GetName() }))).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, refresh(r.boundTo(func(o client.Object) string { return o.GetNamespace() })),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == addon.Name }))).
		// A HostingConfig's spec.hostingNamespaces may stop allowing what
		// was delivered, and its spec.olm changes the HostedClusters'
		// catalog annotations.
		Watches(&v1alpha1.HostingConfig{}, refresh(r.configuredBy)).
		WatchesMetadata(secret, refresh(r.referencing(KindSecret))).
		// What tenants may set (a tightened policy holds further changes).
		Watches(&v1alpha1.TenantPolicy{}, refresh(tenancy.Governed(mgr.GetClient())), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesMetadata(tenancy.NamespaceMetadata(), refresh(tenancy.Governed(mgr.GetClient())), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		WatchesMetadata(configMap, refresh(r.referencing(KindConfigMap))).
		// First deliveries ahead of refreshes (priority.go).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, UsePriorityQueue: ptr.To(true)}).
		Complete(r)
}

// workOwner maps a ManifestWork to its HostedClusterDeployment by labels;
// the works of extensions (pkg/extension/hub) carry the same labels and are
// not the delivery's.
func workOwner(_ context.Context, o client.Object) []reconcile.Request {
	owner := workOwnerOf(o)
	if owner.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: owner}}
}

// workOwnerOf names the HostedClusterDeployment a ManifestWork delivers
// (empty when it is not the delivery's).
func workOwnerOf(o client.Object) types.NamespacedName {
	ns, name := o.GetLabels()[hosting.LabelHCDNamespace], o.GetLabels()[hosting.LabelHCDName]
	if ns == "" || name == "" || o.GetLabels()[extension.LabelExtension] != "" {
		return types.NamespacedName{}
	}
	return types.NamespacedName{Namespace: ns, Name: name}
}

// boundTo maps a cluster-level object to every HostedClusterDeployment bound
// to that cluster.
func (r *Reconciler) boundTo(cluster func(client.Object) string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var list v1alpha1.HostedClusterDeploymentList
		if err := r.client.List(ctx, &list, client.MatchingFields{hubindex.HostingCluster: cluster(o)}, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing HostedClusterDeployments bound to a cluster", "cluster", cluster(o))
			return nil
		}
		return requests(list.Items)
	}
}

// configuredBy maps a HostingConfig to every HostedClusterDeployment bound
// to a management cluster whose add-on runs with it.
func (r *Reconciler) configuredBy(ctx context.Context, o client.Object) []reconcile.Request {
	clusters, err := hostmodel.ClustersConfiguredBy(ctx, r.client, client.ObjectKeyFromObject(o))
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ManagedClusterAddOns")
		return nil
	}
	var out []reconcile.Request
	for _, cluster := range clusters {
		out = append(out, r.boundTo(func(client.Object) string { return cluster })(ctx, o)...)
	}
	return out
}

// referencing maps a Secret or ConfigMap to the HostedClusterDeployments in
// its namespace that refer to it.
func (r *Reconciler) referencing(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var list v1alpha1.HostedClusterDeploymentList
		if err := r.client.List(ctx, &list, client.InNamespace(o.GetNamespace()),
			client.MatchingFields{indexReferences: kind + "/" + o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing HostedClusterDeployments referencing a "+kind, "namespace", o.GetNamespace())
			return nil
		}
		return requests(list.Items)
	}
}

func requests(items []v1alpha1.HostedClusterDeployment) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(items))
	for i := range items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&items[i])})
	}
	return out
}

// Reconcile delivers one HostedClusterDeployment.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// One read, as unstructured (the spec carries HyperShift fields our Go
	// types do not know), and the typed view converted from it: two reads
	// from two informers could disagree, and observedGeneration would then
	// describe a spec other than the one rendered.
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("HostedClusterDeployment"))
	if err := r.client.Get(ctx, req.NamespacedName, u); err != nil {
		if apierrors.IsNotFound(err) {
			r.created.Delete(req.NamespacedName)
			r.written.Delete(req.NamespacedName)
			r.deletions.Delete(req.NamespacedName)
			r.refreshes.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	hcd := &v1alpha1.HostedClusterDeployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, hcd); err != nil {
		return ctrl.Result{}, fmt.Errorf("reading HostedClusterDeployment %s: %w", req.NamespacedName, err)
	}
	cluster := hcd.Status.HostingCluster
	if cluster == "" {
		if hcd.DeletionTimestamp != nil && controllerutil.ContainsFinalizer(hcd, Finalizer) {
			return ctrl.Result{}, r.removeFinalizer(ctx, hcd)
		}
		return ctrl.Result{}, nil
	}
	host, err := r.host(ctx, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	work := &workv1.ManifestWork{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: cluster, Name: hosting.WorkName(hcd.Namespace, hcd.Name)}, work); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		work = nil
	}
	if hcd.DeletionTimestamp != nil {
		return r.finalize(ctx, hcd, host, work)
	}
	// Whether the management cluster holds another identity's hosted
	// cluster, before the marks: they record hcd's identity only when not.
	problem := uidMismatch(hcd, work)
	var retry time.Duration
	if problem == nil && work == nil {
		if problem, err = r.reportedMismatch(ctx, hcd, cluster); err != nil {
			return ctrl.Result{}, err
		}
		if problem != nil {
			retry = reportedRecheck
		}
	}
	// Before anything reaches the host, so deletion always cleans up; with
	// the marks that keep the binding through a backup restore (restore.go).
	if err := r.mark(ctx, hcd, cluster, identityMark(hcd, problem != nil)); err != nil {
		return ctrl.Result{}, err
	}
	observed := Observed{Generation: hcd.Generation, UID: hcdstatus.IdentityUID(hcd), Work: work, Host: host}
	observed.ImportStarted, observed.Imported = importOf(hcd)
	for _, np := range hcd.Spec.NodePools {
		observed.NodePools = append(observed.NodePools, np.Name)
	}
	config, err := r.hostingConfig(ctx, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	if problem == nil {
		problem = hostingNamespaceNotAllowed(hcd, cluster, config)
	}
	policy, problem, err := r.policyProblem(ctx, u, work, problem)
	if err != nil {
		return ctrl.Result{}, err
	}
	// While the host's unavailability is held, look again when the hold
	// ends: nothing else changes then.
	retry = minPositive(retry, host.Recheck)
	if problem == nil {
		if problem, err = r.namesProblem(ctx, hcd, cluster, config); err != nil {
			return ctrl.Result{}, err
		}
		if problem != nil {
			// Freed when the other HostedClusterDeployment goes, which
			// this controller does not watch for.
			retry = minPositive(retry, namesRetry)
		}
	}
	sets, err := r.imageSets(ctx, hcd)
	if err != nil {
		return ctrl.Result{}, err
	}
	upgrade, current := upgradeDecision(hcd, work, sets, policy.UpgradeOverride(hcd.Namespace, hcd.Name), time.Now(), r.reportMaxAge())
	observed.Upgrade = &upgrade
	if upgrade.Recheck > 0 && (retry == 0 || upgrade.Recheck < retry) {
		// The gate's view changes with time alone (a report's bound
		// passes, a ClusterImageSet is published).
		retry = upgrade.Recheck
	}
	observed.SubscriptionDefaults = olmhub.SubscriptionDefaults(config.olm(), hcd.Spec.OLM)
	var w *workv1.ManifestWork
	if problem == nil {
		w, observed.DroppedAnnotations, problem, err = r.deliver(ctx, hcd, u, cluster, work, config.olm(), policy, upgrade, current, sets)
		if errors.Is(err, errCacheBehind) {
			return ctrl.Result{RequeueAfter: cacheBehindRetry}, nil
		}
		var later refreshLater
		if errors.As(err, &later) {
			return ctrl.Result{RequeueAfter: later.after}, nil
		}
		if err != nil && problem == nil {
			return ctrl.Result{}, err
		}
	}
	observed.Problem = problem
	if problem != nil {
		deliveryProblems.WithLabelValues(problem.Reason).Inc()
	}
	if w != nil {
		observed.Work = w
	}
	if statusErr := r.applyStatus(ctx, hcd, ComputeStatus(observed)); statusErr != nil {
		return ctrl.Result{}, statusErr
	}
	// A failed write is retried with backoff; the status says what failed.
	return ctrl.Result{RequeueAfter: retry}, err
}
