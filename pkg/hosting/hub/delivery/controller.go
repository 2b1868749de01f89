package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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
	hcdac "github.com/hcp-fleet/hcp-fleet/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/importer"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
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
	ConfigNamespaces scheduling.ConfigNamespaces
	// RefreshInterval bounds how often a ManifestWork is rewritten because
	// only a referenced Secret or ConfigMap changed (DefaultRefreshInterval
	// when 0).
	RefreshInterval time.Duration
	// UnavailableGrace is how long a hosting cluster or its add-on may
	// report itself unavailable before HostingClusterAvailable and
	// Available say so (scheduling.HeldAvailable); 0: at once.
	UnavailableGrace time.Duration
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

// Setup registers the delivery with mgr; scheduling.AddIndexes must have run.
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
		if err := r.client.List(ctx, &list, client.MatchingFields{scheduling.IndexHostingCluster: cluster(o)}, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing HostedClusterDeployments bound to a cluster", "cluster", cluster(o))
			return nil
		}
		return requests(list.Items)
	}
}

// configuredBy maps a HostingConfig to every HostedClusterDeployment bound
// to a management cluster whose add-on runs with it.
func (r *Reconciler) configuredBy(ctx context.Context, o client.Object) []reconcile.Request {
	var mcas addonv1alpha1.ManagedClusterAddOnList
	if err := r.client.List(ctx, &mcas, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ManagedClusterAddOns")
		return nil
	}
	var out []reconcile.Request
	for i := range mcas.Items {
		mca := &mcas.Items[i]
		if key, ok := scheduling.HostingConfigKey(mca); ok && mca.Name == addon.Name && key == client.ObjectKeyFromObject(o) {
			out = append(out, r.boundTo(func(client.Object) string { return mca.Namespace })(ctx, o)...)
		}
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
	// Before anything reaches the host, so deletion always cleans up; with
	// the marks that keep the binding through a backup restore (restore.go).
	if err := r.mark(ctx, hcd, cluster); err != nil {
		return ctrl.Result{}, err
	}
	observed := Observed{Generation: hcd.Generation, UID: hcd.UID, Work: work, Host: host}
	observed.ImportStarted, observed.Imported = importOf(hcd)
	for _, np := range hcd.Spec.NodePools {
		observed.NodePools = append(observed.NodePools, np.Name)
	}
	config, err := r.hostingConfig(ctx, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	problem := uidMismatch(hcd, work)
	if problem == nil && work == nil {
		if problem, err = r.reportedMismatch(ctx, hcd, cluster); err != nil {
			return ctrl.Result{}, err
		}
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
	retry := host.Recheck
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
	upgrade, current := upgradeDecision(hcd, work, sets, policy.UpgradeOverride(hcd.Namespace, hcd.Name), time.Now())
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

// deliver creates or updates the ManifestWork when its input changed.
// u is hcd as read, with every field of its spec.
// olmPolicy is the OLM catalog policy of the host's HostingConfig (nil:
// none); upgrade is the upgrade gate's decision about what existing
// delivers now (current).
func (r *Reconciler) deliver(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, u *unstructured.Unstructured, cluster string, existing *workv1.ManifestWork,
	olmPolicy *v1alpha1.OLMConfig, policy *tenancy.Policy, upgrade olmhub.Decision, current delivered, sets []unstructured.Unstructured) (*workv1.ManifestWork, []string, *Problem, error) {
	spec, err := SpecFrom(u)
	if err != nil {
		// Reported in status; the next change of the spec retries.
		return nil, nil, &Problem{Reason: v1alpha1.ReasonApplyFailed, Message: err.Error()}, nil //nolint:nilerr // see above
	}
	spec.Annotations = r.opts.Annotations
	spec.Forced = policy.Forced()
	spec.KeepDelivered(existing)
	release := hcd.Spec.HostedCluster.Spec.Release.Image
	if upgrade.Hold {
		spec.hold(hcd, sets, current)
		release = spec.HeldRelease
	}
	spec.setOLMAnnotations(hcd, sets, olmPolicy, release, upgrade)
	dropped := spec.DroppedAnnotations()
	refs := spec.References()
	versions := make(map[string]string, len(refs))
	var missing []string
	for _, ref := range refs {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(ref.Kind))
		if err := r.client.Get(ctx, types.NamespacedName{Namespace: hcd.Namespace, Name: ref.Name}, m); err != nil {
			if apierrors.IsNotFound(err) {
				missing = append(missing, fmt.Sprintf("%s %s/%s (%s)", ref.Kind, hcd.Namespace, ref.Name, ref.Field))
				continue
			}
			return nil, nil, nil, err
		}
		versions[ref.Kind+"/"+ref.Name] = m.ResourceVersion
	}
	if len(missing) > 0 {
		return nil, nil, &Problem{Reason: v1alpha1.ReasonReferencedObjectNotFound,
			Message: "not delivered: " + strings.Join(missing, ", ") + " not found; it is delivered as soon as it exists"}, nil
	}
	hash, err := InputHash(spec, cluster, versions)
	if err != nil {
		return nil, nil, nil, err
	}
	specHash, err := InputHash(spec, cluster, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	key := client.ObjectKeyFromObject(hcd)
	refsOnly := false
	if existing != nil {
		r.created.Delete(key)
		if existing.Annotations[AnnotationInputHash] == hash {
			return nil, dropped, nil, nil
		}
		if existing.Annotations[AnnotationSpecHash] == specHash {
			// Only referenced objects changed: at most once per interval.
			refsOnly = true
			if wait := r.refreshes.wait(key, hcd.UID, specHash); wait > 0 {
				referenceRefreshesDelayed.WithLabelValues(hcd.Namespace).Inc()
				return nil, nil, nil, refreshLater{after: wait}
			}
		}
	} else if r.awaitingCache(hcd) {
		return nil, nil, nil, errCacheBehind
	}
	referenced := make(map[string]*unstructured.Unstructured, len(refs))
	for _, ref := range refs {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(ref.Kind))
		if err := r.reader.Get(ctx, types.NamespacedName{Namespace: hcd.Namespace, Name: ref.Name}, obj); err != nil {
			return nil, nil, nil, err
		}
		referenced[ref.Kind+"/"+ref.Name] = obj
	}
	if p := tooLarge(referenced, refs, hcd.Namespace, policy); p != nil {
		return nil, nil, p, nil
	}
	desired, err := Render(spec, cluster, referenced, hash)
	if desired != nil {
		desired.Annotations[AnnotationSpecHash] = specHash
	}
	if err != nil {
		// Reported in status; the next change of the spec retries.
		return nil, nil, &Problem{Reason: v1alpha1.ReasonApplyFailed, Message: err.Error()}, nil //nolint:nilerr // see above
	}
	if existing == nil {
		if err := r.client.Create(ctx, desired); err != nil {
			if apierrors.IsAlreadyExists(err) && r.ours(ctx, desired) {
				// Created moments ago (by the reconcile before this one) and
				// not in the cache yet: its event comes, and nothing is
				// reported meanwhile.
				return nil, nil, nil, errCacheBehind
			}
			err = fmt.Errorf("creating ManifestWork %s/%s: %w", desired.Namespace, desired.Name, err)
			return nil, nil, &Problem{Reason: v1alpha1.ReasonApplyFailed, Message: err.Error()}, err
		}
		workWrites.WithLabelValues("create").Inc()
		r.refreshes.wrote(key, hcd.UID, specHash, false)
		r.created.Store(client.ObjectKeyFromObject(hcd), createdWork{uid: hcd.UID, at: time.Now()})
		return desired, dropped, nil, nil
	}
	updated := existing.DeepCopy()
	updated.Labels = desired.Labels
	updated.Annotations = desired.Annotations
	updated.Spec = desired.Spec
	if err := r.client.Update(ctx, updated); err != nil {
		err = fmt.Errorf("updating ManifestWork %s/%s: %w", updated.Namespace, updated.Name, err)
		if apierrors.IsConflict(err) {
			return nil, nil, nil, err
		}
		return nil, nil, &Problem{Reason: v1alpha1.ReasonApplyFailed, Message: err.Error()}, err
	}
	workWrites.WithLabelValues("update").Inc()
	r.refreshes.wrote(key, hcd.UID, specHash, refsOnly)
	return updated, dropped, nil, nil
}

// refreshLater: a reference-only rewrite held back until after.
type refreshLater struct{ after time.Duration }

func (e refreshLater) Error() string {
	return fmt.Sprintf("a referenced object changed; the ManifestWork is rewritten in %s", e.after)
}

// errCacheBehind: a ManifestWork the cache does not show yet exists.
var errCacheBehind = errors.New("the ManifestWork exists but is not in the cache yet")

// cacheBehindRetry is when a reconcile that found errCacheBehind runs again
// at the latest (the ManifestWork's event normally comes first).
const cacheBehindRetry = time.Second

// ours reads the ManifestWork named like desired from the API server and
// reports whether it is the delivery's for the same HostedClusterDeployment.
func (r *Reconciler) ours(ctx context.Context, desired *workv1.ManifestWork) bool {
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(workv1.SchemeGroupVersion.WithKind("ManifestWork"))
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(desired), live); err != nil {
		return false
	}
	owner := workOwnerOf(live)
	return owner.Name != "" && owner == workOwnerOf(desired)
}

// hostConfig is the HostingConfig a hosting cluster's add-on runs with.
type hostConfig struct {
	// spec is nil for the built-in default (no HostingConfig resolved).
	spec *v1alpha1.HostingConfigSpec
	name string
	// found: the cluster has a ManagedClusterAddOn, so there is a policy
	// to read.
	found bool
}

func (c hostConfig) olm() *v1alpha1.OLMConfig {
	if c.spec == nil {
		return nil
	}
	return c.spec.OLM
}

// hostingConfig reads the HostingConfig the hosting cluster's add-on runs
// with.
func (r *Reconciler) hostingConfig(ctx context.Context, cluster string) (hostConfig, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: cluster, Name: addon.Name}, mca); err != nil {
		return hostConfig{}, client.IgnoreNotFound(err)
	}
	hc, err := scheduling.HostingConfigOf(ctx, r.client, mca, r.opts.ConfigNamespaces)
	if err != nil {
		return hostConfig{}, err
	}
	if hc == nil {
		return hostConfig{name: "the default HostingConfig", found: true}, nil
	}
	return hostConfig{spec: &hc.Spec, name: "HostingConfig " + hc.Namespace + "/" + hc.Name, found: true}, nil
}

// hostingNamespaceNotAllowed is a Problem when the HostingConfig the hosting
// cluster's add-on runs with does not allow hcd's hosting namespace (any
// more: the scheduler bound it where it was allowed). The ManifestWork is
// then neither written nor deleted: the hosted cluster keeps running as
// last delivered, because a policy change must not tear it down. Without a
// ManagedClusterAddOn there is no policy to read, and nothing is held back.
func hostingNamespaceNotAllowed(hcd *v1alpha1.HostedClusterDeployment, cluster string, config hostConfig) *Problem {
	if !config.found {
		return nil
	}
	ns := scheduling.RequestFor(hcd).HostingNamespace
	if config.spec.AllowsHostingNamespace(ns) {
		return nil
	}
	return &Problem{Reason: v1alpha1.ReasonHostingNamespaceNotAllowed,
		Message: fmt.Sprintf("not delivered: hosting namespace %s is not allowed on management cluster %s by %s (allows %s); "+
			"what was delivered before is left running as it is, and changes are delivered once the HostingConfig's spec.hostingNamespaces lists %s again",
			ns, cluster, config.name, strings.Join(config.spec.AllowedHostingNamespaces(), ", "), ns)}
}

// host reads what the hub knows about the hosting cluster.
func (r *Reconciler) host(ctx context.Context, cluster string) (Host, error) {
	h, err := hostOf(ctx, r.client, cluster, r.opts.UnavailableGrace, time.Now())
	scheduling.CountHeld(scheduling.HeldByDelivery, h.Recheck)
	return h, err
}

// hostOf reads what the hub knows about cluster; its Available and
// AddOnAvailable hold for grace (scheduling.HeldAvailable).
func hostOf(ctx context.Context, c client.Reader, cluster string, grace time.Duration, now time.Time) (Host, error) {
	h := Host{Cluster: cluster}
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, types.NamespacedName{Name: cluster}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return h, nil
		}
		return h, err
	}
	h.Exists = mc.DeletionTimestamp == nil
	var recheck time.Duration
	h.Available, h.Recheck = scheduling.ClusterAvailable(mc, grace, now)
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: cluster, Name: addon.Name}, mca); err == nil {
		h.AddOnAvailable, recheck = scheduling.AddOnAvailable(mca, grace, now)
		h.Recheck = minPositive(h.Recheck, recheck)
	} else if !apierrors.IsNotFound(err) {
		return h, err
	}
	return h, nil
}

// minPositive is the smaller of two durations, 0 standing for none.
func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// finalize deletes (or, for Orphan, releases) what was delivered and lets
// the HostedClusterDeployment go once the ManifestWork is gone: the work
// agent removes the ManifestWork only after the objects it deleted are
// really gone on the host.
func (r *Reconciler) finalize(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, host Host, work *workv1.ManifestWork) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(hcd, Finalizer) {
		return ctrl.Result{}, nil
	}
	if work == nil {
		// The cache may not show a ManifestWork created moments ago; only
		// the API server can say it is gone, and letting the HCD go while its
		// work lives on would leave the hosted cluster running unowned.
		live := &workv1.ManifestWork{}
		err := r.reader.Get(ctx, types.NamespacedName{Namespace: host.Cluster, Name: hosting.WorkName(hcd.Namespace, hcd.Name)}, live)
		switch {
		case err == nil:
			work = live
		case !apierrors.IsNotFound(err):
			return ctrl.Result{}, err
		}
	}
	if work == nil {
		if err := r.deleteExport(ctx, hcd); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.removeFinalizer(ctx, hcd)
	}
	orphan := work.Spec.DeleteOption != nil && work.Spec.DeleteOption.PropagationPolicy == workv1.DeletePropagationPolicyTypeOrphan
	if work.DeletionTimestamp == nil {
		if err := r.client.Delete(ctx, work); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	observed := Observed{Generation: hcd.Generation, UID: hcd.UID, Work: work, Host: host, Deleting: true, DeletionReason: v1alpha1.ReasonDeleting,
		DeletionMessage: fmt.Sprintf("deleting the HostedCluster and its NodePools on management cluster %s; waiting until they are gone", host.Cluster)}
	for _, np := range hcd.Spec.NodePools {
		observed.NodePools = append(observed.NodePools, np.Name)
	}
	if orphan {
		observed.DeletionReason = v1alpha1.ReasonOrphaning
		observed.DeletionMessage = fmt.Sprintf("releasing the HostedCluster on management cluster %s (deletionPolicy Orphan: it keeps running there)", host.Cluster)
	}
	var requeue time.Duration
	if !host.Exists || !host.Available {
		since := hcd.DeletionTimestamp.Time
		if c := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionHostingClusterAvailable); c != nil &&
			c.Status == metav1.ConditionFalse && c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime.Time
		}
		waited := time.Since(since)
		if waited < r.opts.LostHostTimeout {
			requeue = r.opts.LostHostTimeout - waited
			observed.DeletionMessage += fmt.Sprintf("; management cluster %s is unavailable, waiting up to %s for it to come back", host.Cluster, r.opts.LostHostTimeout.Round(time.Second))
		} else if hcd.Annotations[AbandonAnnotation] == "true" {
			// The user gave up on the hosted cluster: let the ManifestWork go
			// without the host's confirmation.
			if err := r.dropWorkFinalizers(ctx, work); err != nil {
				return ctrl.Result{}, err
			}
			observed.DeletionMessage = fmt.Sprintf("abandoning the HostedCluster on unavailable management cluster %s as annotated (%s); it may still run there", host.Cluster, AbandonAnnotation)
		} else {
			observed.DeletionReason = v1alpha1.ReasonDeletionTimedOut
			observed.DeletionMessage = fmt.Sprintf("management cluster %s has been unavailable for %s, so the HostedCluster cannot be confirmed deleted and may still run there; "+
				"bring the cluster back, or give the hosted cluster up with: kubectl annotate hostedclusterdeployment -n %s %s %s=true",
				host.Cluster, waited.Round(time.Second), hcd.Namespace, hcd.Name, AbandonAnnotation)
		}
	}
	return ctrl.Result{RequeueAfter: requeue}, r.applyStatus(ctx, hcd, ComputeStatus(observed))
}

// deleteExport deletes the admin kubeconfig the host's agent exported for
// hcd into the host's namespace: the agent may write it only while the HCD
// is bound there (pkg/hosting/hub/exportaccess) and cannot list what it
// left behind. Only a Secret carrying this HCD's labels is deleted.
func (r *Reconciler) deleteExport(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) error {
	if hcd.Status.HostingCluster == "" {
		return nil
	}
	export := &metav1.PartialObjectMetadata{}
	export.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	key := types.NamespacedName{Namespace: hcd.Status.HostingCluster, Name: hosting.ExportedKubeconfigName(hcd.Namespace, hcd.Name)}
	if err := r.reader.Get(ctx, key, export); err != nil {
		return client.IgnoreNotFound(err)
	}
	if l := export.GetLabels(); l[hosting.LabelHCDNamespace] != hcd.Namespace || l[hosting.LabelHCDName] != hcd.Name || l[hosting.LabelAdminKubeconfig] != "true" {
		return nil
	}
	err := r.client.Delete(ctx, export, client.Preconditions{UID: ptr.To(export.GetUID())})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the exported kubeconfig %s: %w", key, err)
	}
	return nil
}

func (r *Reconciler) dropWorkFinalizers(ctx context.Context, work *workv1.ManifestWork) error {
	if len(work.Finalizers) == 0 {
		return nil
	}
	return client.IgnoreNotFound(kubeutil.SetFinalizers(ctx, r.client, work, nil))
}

func (r *Reconciler) removeFinalizer(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) error {
	return client.IgnoreNotFound(kubeutil.RemoveFinalizer(ctx, r.client, hcd, Finalizer))
}

// applyStatus server-side applies the delivery's status fields when they
// differ from what the HostedClusterDeployment shows.
func (r *Reconciler) applyStatus(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, s Status) error {
	apply, conditions, changed := statusApply(hcd, s, metav1.Now())
	if !changed {
		return nil
	}
	key := client.ObjectKeyFromObject(hcd)
	sum, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if v, ok := r.written.Load(key); ok {
		if w := v.(writtenStatus); w.uid == hcd.UID && w.from == hcd.ResourceVersion && w.status == string(sum) {
			// Written already, from this same copy: the cache does not
			// show it yet, and its event comes.
			return nil
		}
	}
	if err := hcdstatus.Apply(ctx, r.client, apply, FieldManager); err != nil {
		if apierrors.IsConflict(err) {
			// A compare-and-swap (statusApply) on a copy the object has
			// moved past: the newer copy's event reconciles it again.
			ctrl.LoggerFrom(ctx).V(1).Info("status not written: the HostedClusterDeployment changed since it was read")
			return nil
		}
		return client.IgnoreNotFound(err)
	}
	r.written.Store(key, writtenStatus{uid: hcd.UID, from: hcd.ResourceVersion, status: string(sum)})
	countWrite(changedParts(hcd, s, conditions))
	hcdstatus.RecordTransitions(r.recorder, hcd, hcd.Status.HostingCluster, hcd.Status.Conditions, conditions)
	return nil
}

// writtenStatus is an entry of Reconciler.written: the status last written
// for a HostedClusterDeployment (its UID), computed from the copy at
// resourceVersion from.
type writtenStatus struct {
	uid    types.UID
	from   string
	status string
}

// statusApply is the status apply configuration that writes s over hcd's
// status, the conditions it applies, and whether it changes anything. It
// carries hcd's binding as it is (status.hostingCluster and the Scheduled
// condition): the scheduler and the delivery apply under one field manager
// (hcdstatus.FieldManager), so each apply holds all of their fields. Pure.
func statusApply(hcd *v1alpha1.HostedClusterDeployment, s Status, now metav1.Time) (*hcdac.HostedClusterDeploymentApplyConfiguration, []metav1.Condition, bool) {
	conditions, changed := hcdstatus.Conditions(hcd.Status.Conditions, s.Conditions, s.ObservedGeneration, now)
	// Conditions this controller sets only at times: one that goes away is a
	// change too (the apply below drops it).
	for _, t := range []string{v1alpha1.ConditionUpgradeBlocked, v1alpha1.ConditionSubscriptionDefaultsApplied, v1alpha1.ConditionCatalogsReady} {
		changed = changed || (meta.FindStatusCondition(hcd.Status.Conditions, t) != nil && meta.FindStatusCondition(s.Conditions, t) == nil)
	}
	changed = changed || hcd.Status.ObservedGeneration != s.ObservedGeneration || hcd.Status.ManifestWork != s.ManifestWork ||
		!equality.Semantic.DeepEqual(hcd.Status.Version, s.Version) ||
		!equality.Semantic.DeepEqual(hcd.Status.ControlPlaneEndpoint, s.ControlPlaneEndpoint) ||
		!equality.Semantic.DeepEqual(hcd.Status.NodePools, s.NodePools)
	if scheduled := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionScheduled); scheduled != nil {
		// As it is: its observedGeneration is the binding's.
		conditions = append(conditions, *scheduled)
		slices.SortStableFunc(conditions, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
	}
	status := hcdac.HostedClusterDeploymentStatus().
		WithObservedGeneration(s.ObservedGeneration).
		WithConditions(hcdstatus.ApplyConditions(conditions)...)
	if hcd.Status.HostingCluster != "" {
		status.WithHostingCluster(hcd.Status.HostingCluster)
	}
	if s.ManifestWork != "" {
		status.WithManifestWork(s.ManifestWork)
	}
	if v := s.Version; v != nil {
		desired := hcdac.ReleaseStatus()
		if v.Desired.Version != "" {
			desired.WithVersion(v.Desired.Version)
		}
		if v.Desired.Image != "" {
			desired.WithImage(v.Desired.Image)
		}
		version := hcdac.HostedClusterVersionStatus().WithDesired(desired)
		if v.Current != "" {
			version.WithCurrent(v.Current)
		}
		for _, h := range v.History {
			entry := hcdac.VersionHistoryEntry().WithState(h.State)
			if h.Version != "" {
				entry.WithVersion(h.Version)
			}
			if h.Image != "" {
				entry.WithImage(h.Image)
			}
			if h.StartedTime != nil {
				entry.WithStartedTime(*h.StartedTime)
			}
			if h.CompletionTime != nil {
				entry.WithCompletionTime(*h.CompletionTime)
			}
			version.WithHistory(entry)
		}
		status.WithVersion(version)
	}
	if e := s.ControlPlaneEndpoint; e != nil {
		status.WithControlPlaneEndpoint(hcdac.APIEndpoint().WithHost(e.Host).WithPort(e.Port))
	}
	for _, np := range s.NodePools {
		status.WithNodePools(hcdac.NodePoolStatus().WithName(np.Name).WithReplicas(np.Replicas).WithReadyReplicas(np.ReadyReplicas))
	}
	apply := hcdac.HostedClusterDeployment(hcd.Name, hcd.Namespace).WithStatus(status)
	if meta.FindStatusCondition(s.Conditions, v1alpha1.ConditionImported) != nil {
		// The import's WaitingForAvailable (carriesImportWaiting), decided
		// on this copy: applied only over it, so that it never takes back
		// a state the import wrote since.
		apply.WithResourceVersion(hcd.ResourceVersion)
	}
	return apply, conditions, changed
}

// BindingStatus is the scheduler's scheduling.BindingStatus: a binding is
// written with the status the delivery writes once it has written the
// ManifestWork and the work agent has not answered yet, so that the burst of
// a binding and its delivery writes the status once, not twice (the
// delivery then finds nothing to change). c is the hub's cache. What the
// delivery finds different when it gets there (a referenced Secret missing,
// a host that just went away) it writes as usual.
// grace is the delivery's Options.UnavailableGrace.
func BindingStatus(c client.Reader, grace time.Duration) scheduling.BindingStatus {
	return func(ctx context.Context, bound *v1alpha1.HostedClusterDeployment) (*hcdac.HostedClusterDeploymentApplyConfiguration, []metav1.Condition, error) {
		host, err := hostOf(ctx, c, bound.Status.HostingCluster, grace, time.Now())
		if err != nil {
			return nil, nil, err
		}
		apply, conditions, _ := statusApply(bound, ComputeStatus(written(bound, host)), metav1.Now())
		return apply, conditions, nil
	}
}

// written is what Reconcile observes right after it created hcd's
// ManifestWork on host.
func written(hcd *v1alpha1.HostedClusterDeployment, host Host) Observed {
	observed := Observed{Generation: hcd.Generation, UID: hcd.UID, Host: host,
		Work: &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: host.Cluster, Name: hosting.WorkName(hcd.Namespace, hcd.Name)}}}
	for _, np := range hcd.Spec.NodePools {
		observed.NodePools = append(observed.NodePools, np.Name)
	}
	upgrade, _ := upgradeDecision(hcd, nil, nil, "", time.Now())
	observed.Upgrade = &upgrade
	observed.ImportStarted, observed.Imported = importOf(hcd)
	return observed
}

// importOf is what the delivery's status reads of the import: whether it
// started (its finalizer is there) and the Imported condition shown.
func importOf(hcd *v1alpha1.HostedClusterDeployment) (started bool, imported *metav1.Condition) {
	return controllerutil.ContainsFinalizer(hcd, importer.Finalizer), meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionImported)
}
