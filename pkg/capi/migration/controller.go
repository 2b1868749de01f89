package migration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// Options configure the migration controller.
type Options struct {
	// Proxy is the API proxy sidecar added to SwitchSidecar workloads.
	// Proxy.Image is required.
	Proxy ProxySidecar
	// Workloads are the CAPI workload Deployments of a hosted control-plane
	// namespace (default DefaultWorkloads()).
	Workloads []Workload
	// ScaleDownTimeout bounds StepWaitScaledDown (default 5m, the enhancement's).
	ScaleDownTimeout time.Duration
	// HealthTimeout bounds StepHealthCheck (default 10m, the enhancement's).
	HealthTimeout time.Duration
	// PollInterval is how often waiting steps and pending clusters are looked
	// at again (default 10s).
	PollInterval time.Duration
	// OnProgress, if set, is called with every progress change (for example
	// (*Tracker).Record).
	OnProgress func(Progress)
	// OnForget, if set, is called when a HostedCluster is no longer the
	// controller's concern: deleted, or its annotations no longer ask for
	// anything (for example (*Tracker).Forget).
	OnForget func(types.NamespacedName)
}

func (o Options) withDefaults() (Options, error) {
	if o.Proxy.Image == "" {
		return o, errors.New("migration: Options.Proxy.Image is required")
	}
	if o.Workloads == nil {
		o.Workloads = DefaultWorkloads()
	}
	if o.ScaleDownTimeout == 0 {
		o.ScaleDownTimeout = 5 * time.Minute
	}
	if o.HealthTimeout == 0 {
		o.HealthTimeout = 10 * time.Minute
	}
	if o.PollInterval == 0 {
		o.PollInterval = 10 * time.Second
	}
	return o, nil
}

// Setup registers the migration controller with mgr.
//
// What it expects:
//   - CRDs: the HyperShift HostedCluster CRD, the standard CAPI CRDs the
//     hosted clusters use and their private forms (crds.Build(ModePrivate)),
//     serving the same versions. Provider CRDs outside `*.cluster.x-k8s.io`
//     (the Agent provider) are not copied; their objects stay and only their
//     ownerReferences move to the private copies.
//   - Clients: mgr's client for writes and mgr's API reader for every read
//     (migration decisions are never taken on a cache); the cache only
//     watches HostedCluster metadata. Discovery from mgr's rest config.
//   - RBAC (cluster-wide): HostedClusters get/list/watch/patch; in control-plane
//     namespaces: the standard and private CAPI groups (all verbs, status
//     subresources), Deployments get/list/update/patch, Pods list,
//     ConfigMaps get/create/update/delete, and list/patch on the referrer
//     kinds (IsReferrerResource: Secrets, ConfigMaps, the Agent provider's
//     group) — never list on every resource.
//   - One instance (leader election) and one worker: migrations run one
//     hosted cluster at a time.
//
// The agent should register it only in Private CAPI mode.
func Setup(mgr ctrl.Manager, opts Options) error {
	r, err := newReconciler(mgr, opts)
	if err != nil {
		return err
	}
	return r.setupWithManager(mgr)
}

type reconciler struct {
	client client.Client // writes
	reader client.Reader // reads, uncached
	// binder gives the agent its grants in a control-plane namespace
	// (addon.AgentCAPINamespaceRole) while a migration works there.
	binder *kubeutil.Binder
	disco  discovery.DiscoveryInterface
	opts   Options
	now    func() time.Time
	// beforeStep is the tests' failure-injection seam: an error fails the
	// step before it runs.
	beforeStep func(hc types.NamespacedName, step Step) error
}

func newReconciler(mgr ctrl.Manager, opts Options) (*reconciler, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return nil, err
	}
	// Cached: every step needs the kinds; preflight refreshes the cache so
	// each migration starts from what the apiserver serves now.
	binder := &kubeutil.Binder{Client: mgr.GetClient(), ClusterRole: addon.AgentCAPINamespaceRole,
		Probe: authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods"}}
	return &reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), binder: binder, disco: memory.NewMemCacheClient(dc), opts: opts, now: time.Now}, nil
}

func (r *reconciler) setupWithManager(mgr ctrl.Manager) error {
	hc := &metav1.PartialObjectMetadata{}
	hc.SetGroupVersionKind(HostedClusterGVK)
	return ctrl.NewControllerManagedBy(mgr).
		Named("capi-migration").
		For(hc, builder.OnlyMetadata).
		Complete(r)
}

func (r *reconciler) report(hc types.NamespacedName, phase Phase, step Step, reason string) {
	if r.opts.OnProgress != nil {
		r.opts.OnProgress(Progress{HostedCluster: hc, Phase: phase, Step: step, Reason: reason, Since: r.now()})
	}
}

func (r *reconciler) forget(hc types.NamespacedName) {
	if r.opts.OnForget != nil {
		r.opts.OnForget(hc)
	}
}

// Reconcile takes one HostedCluster one step further.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	hc := &metav1.PartialObjectMetadata{}
	hc.SetGroupVersionKind(HostedClusterGVK)
	if err := r.reader.Get(ctx, req.NamespacedName, hc); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ns := ControlPlaneNamespace(hc.Namespace, hc.Name)
	switch Classify(hc.Annotations, hc.DeletionTimestamp != nil) {
	case Ignore:
		r.forget(req.NamespacedName)
	case Migrated:
		r.report(req.NamespacedName, PhaseMigrated, "", "")
		return ctrl.Result{}, r.deleteIfExists(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: stateConfigMapName, Namespace: ns}})
	case Failed:
		r.report(req.NamespacedName, PhaseFailed, "", hc.Annotations[AnnotationMigrationFailed])
		// The rollback's last write; a crash before it leaves the state behind.
		return ctrl.Result{}, r.deleteIfExists(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: stateConfigMapName, Namespace: ns}})
	case Eligible:
		return r.begin(ctx, hc, ns)
	case InProgress:
		// The grants were bound when the migration began; an agent that
		// restarted binds again (idempotent) before the next step.
		if err := r.binder.Ensure(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		return r.advance(ctx, hc, ns)
	}
	return ctrl.Result{}, nil
}

// begin takes the lock when no other hosted cluster holds it.
func (r *reconciler) begin(ctx context.Context, hc *metav1.PartialObjectMetadata, ns string) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(hc)
	all := &metav1.PartialObjectMetadataList{}
	all.SetGroupVersionKind(HostedClusterGVK.GroupVersion().WithKind("HostedClusterList"))
	if err := r.reader.List(ctx, all); err != nil {
		return ctrl.Result{}, err
	}
	for _, other := range all.Items {
		if other.Annotations[AnnotationMigrationInProgress] == "true" && client.ObjectKeyFromObject(&other) != key {
			r.report(key, PhasePending, "", "waiting for the migration of "+other.Namespace+"/"+other.Name)
			return ctrl.Result{RequeueAfter: r.opts.PollInterval}, nil
		}
	}
	// A state left from an earlier, finished migration attempt is stale.
	if err := r.deleteIfExists(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: stateConfigMapName, Namespace: ns}}); err != nil {
		return ctrl.Result{}, err
	}
	// The agent's grants in the control-plane namespace, before the lock: a
	// step that failed for want of them would roll the migration back.
	// Without the namespace there is nothing to bind in; preflight fails the
	// migration and says why.
	switch err := r.reader.Get(ctx, types.NamespacedName{Name: ns}, &corev1.Namespace{}); {
	case err == nil:
		if err := r.binder.Ensure(ctx, ns); err != nil {
			return ctrl.Result{}, err
		}
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, err
	}
	if err := r.patchAnnotations(ctx, hc, map[string]any{AnnotationMigrationInProgress: "true"}, true); err != nil {
		return ctrl.Result{}, err
	}
	log.FromContext(ctx).Info("CAPI migration started", "controlPlaneNamespace", ns)
	r.report(key, PhaseMigrating, StepPreflight, "")
	return ctrl.Result{Requeue: true}, nil
}

func (r *reconciler) advance(ctx context.Context, hc *metav1.PartialObjectMetadata, ns string) (ctrl.Result, error) {
	st, err := r.loadState(ctx, ns)
	if err != nil {
		return ctrl.Result{}, err
	}
	committed := hc.Annotations[AnnotationPrivateCAPITypes] == "true"
	switch {
	case st == nil && committed:
		// Cleanup finished and removed the state; only the lock is left.
		if err := r.patchAnnotations(ctx, hc, map[string]any{AnnotationMigrationInProgress: nil}, false); err != nil {
			return ctrl.Result{}, err
		}
		r.report(client.ObjectKeyFromObject(hc), PhaseMigrated, "", "")
		return ctrl.Result{}, nil
	case st == nil:
		return r.runStep(ctx, hc, ns, nil, StepPreflight)
	case st.RollingBack:
		return r.rollback(ctx, hc, ns, st)
	default:
		return r.runStep(ctx, hc, ns, st, st.Step)
	}
}

// stepFunc does (or continues) one step. A non-empty wait means "not done
// yet, look again later"; st may be replaced (preflight creates it).
type stepFunc func(ctx context.Context, hc *metav1.PartialObjectMetadata, ns string, st *state) (next *state, wait string, err error)

func (r *reconciler) stepFuncs() map[Step]stepFunc {
	return map[Step]stepFunc{
		StepPreflight:      r.preflight,
		StepPause:          r.pause,
		StepWaitScaledDown: r.waitScaledDown,
		StepCopy:           r.copyObjects,
		StepSwitch:         r.switchWorkloads,
		StepHealthCheck:    r.healthCheck,
		StepCommit:         r.commit,
		StepCleanup:        r.cleanup,
	}
}

func (r *reconciler) runStep(ctx context.Context, hc *metav1.PartialObjectMetadata, ns string, st *state, step Step) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(hc)
	fn, ok := r.stepFuncs()[step]
	if !ok {
		return r.fail(ctx, hc, ns, st, step, fmt.Errorf("unknown step %q in the migration state", step))
	}
	r.report(key, PhaseMigrating, step, "")
	var (
		next = st
		wait string
		err  error
	)
	if r.beforeStep != nil {
		err = r.beforeStep(key, step)
	}
	if err == nil {
		next, wait, err = fn(ctx, hc, ns, st)
	}
	if err != nil {
		if step == StepCleanup {
			// Committed: the private objects are the live ones now. Retry.
			r.report(key, PhaseMigrating, step, err.Error())
			return ctrl.Result{}, err
		}
		return r.fail(ctx, hc, ns, st, step, err)
	}
	if step == StepCleanup {
		log.FromContext(ctx).Info("CAPI migration done", "controlPlaneNamespace", ns)
		r.report(key, PhaseMigrated, "", "")
		return ctrl.Result{}, nil
	}
	if wait != "" {
		timeout := r.opts.HealthTimeout
		if step == StepWaitScaledDown {
			timeout = r.opts.ScaleDownTimeout
		}
		if r.now().Sub(next.StepStarted.Time) > timeout {
			return r.fail(ctx, hc, ns, next, step, fmt.Errorf("timed out after %s: %s", timeout, wait))
		}
		r.report(key, PhaseMigrating, step, wait)
		return ctrl.Result{RequeueAfter: r.opts.PollInterval}, nil
	}
	next.Step = step.next()
	next.StepStarted = metav1.NewTime(r.now())
	if err := r.saveState(ctx, ns, next); err != nil {
		return ctrl.Result{}, err
	}
	r.report(key, PhaseMigrating, next.Step, "")
	return ctrl.Result{Requeue: true}, nil
}

// fail records the failure and rolls back. Before the state exists
// (preflight) nothing was changed, so only the annotations are written.
func (r *reconciler) fail(ctx context.Context, hc *metav1.PartialObjectMetadata, ns string, st *state, step Step, cause error) (ctrl.Result, error) {
	reason := string(step) + ": " + cause.Error()
	if len(reason) > 1024 {
		reason = reason[:1024]
	}
	log.FromContext(ctx).Error(cause, "CAPI migration failed; rolling back", "step", step, "controlPlaneNamespace", ns)
	if st == nil {
		if err := r.patchAnnotations(ctx, hc, map[string]any{AnnotationMigrationFailed: reason, AnnotationMigrationInProgress: nil}, false); err != nil {
			return ctrl.Result{}, err
		}
		r.report(client.ObjectKeyFromObject(hc), PhaseFailed, step, reason)
		return ctrl.Result{}, nil
	}
	st.RollingBack, st.FailedStep, st.Reason = true, step, reason
	if err := r.saveState(ctx, ns, st); err != nil {
		return ctrl.Result{}, err
	}
	return r.rollback(ctx, hc, ns, st)
}

func (r *reconciler) loadState(ctx context.Context, ns string) (*state, error) {
	cm := &corev1.ConfigMap{}
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: stateConfigMapName}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return stateFrom(cm)
}

func (r *reconciler) saveState(ctx context.Context, ns string, st *state) error {
	want, err := st.toConfigMap(ns)
	if err != nil {
		return err
	}
	cur := &corev1.ConfigMap{}
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(want), cur); err != nil {
		if !apierrors.IsNotFound(err) {
			return err
		}
		return r.client.Create(ctx, want)
	}
	cur.Data = want.Data
	return r.client.Update(ctx, cur)
}

// patchAnnotations merge-patches HostedCluster annotations (nil removes one).
// optimistic makes it conditional on the resourceVersion read, for the lock.
func (r *reconciler) patchAnnotations(ctx context.Context, hc *metav1.PartialObjectMetadata, ann map[string]any, optimistic bool) error {
	meta := map[string]any{"annotations": ann}
	if optimistic {
		meta["resourceVersion"] = hc.ResourceVersion
	}
	b, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	obj := hc.DeepCopy()
	return r.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, b))
}

func (r *reconciler) deleteIfExists(ctx context.Context, obj client.Object) error {
	return client.IgnoreNotFound(r.client.Delete(ctx, obj))
}

// ---- steps ----

func (r *reconciler) preflight(ctx context.Context, hc *metav1.PartialObjectMetadata, ns string, _ *state) (*state, string, error) {
	if err := r.reader.Get(ctx, types.NamespacedName{Name: ns}, &corev1.Namespace{}); err != nil {
		return nil, "", fmt.Errorf("control-plane namespace %s: %w", ns, err)
	}
	if c, ok := r.disco.(discovery.CachedDiscoveryInterface); ok {
		c.Invalidate()
	}
	k, err := discoverKinds(r.disco)
	if err != nil {
		return nil, "", err
	}
	std, err := listAll(ctx, r.reader, ns, k.standard)
	if err != nil {
		return nil, "", err
	}
	priv, err := listAll(ctx, r.reader, ns, k.private)
	if err != nil {
		return nil, "", err
	}
	if len(priv) > 0 {
		return nil, "", fmt.Errorf("private CAPI objects already exist in %s (first: %s); remove them or finish that migration by hand", ns, keyOf(priv[0]))
	}
	st := &state{HostedCluster: hc.Namespace + "/" + hc.Name, Started: metav1.NewTime(r.now())}
	for _, o := range std {
		if _, ok := k.privateOf[o.GroupVersionKind()]; !ok {
			return nil, "", fmt.Errorf("no private CRD serves %s (needed for %s)", o.GroupVersionKind(), keyOf(o))
		}
		if o.GetKind() == "Cluster" && o.GroupVersionKind().Group == "cluster.x-k8s.io" {
			if st.Cluster != "" {
				return nil, "", fmt.Errorf("more than one CAPI Cluster in %s (%s, %s)", ns, st.Cluster, o.GetName())
			}
			st.Cluster = o.GetName()
			if v, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "paused"); ok {
				st.ClusterPaused, _ = json.Marshal(v)
			}
		}
	}
	for _, w := range r.opts.Workloads {
		d := &appsv1.Deployment{}
		if err := r.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: w.Name}, d); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, "", err
		}
		st.Workloads = append(st.Workloads, workloadSnapshot{Name: w.Name, Switch: w.Switch, Spec: d.Spec})
	}
	return st, "", nil
}

func (r *reconciler) pause(ctx context.Context, _ *metav1.PartialObjectMetadata, ns string, st *state) (*state, string, error) {
	if st.Cluster != "" {
		if err := r.setClusterPaused(ctx, ns, st.Cluster, "cluster.x-k8s.io", json.RawMessage("true")); err != nil {
			return nil, "", err
		}
	}
	for _, w := range st.Workloads {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.Name}}
		if err := r.client.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":0}}`))); err != nil {
			return nil, "", fmt.Errorf("scaling down %s: %w", w.Name, err)
		}
	}
	return st, "", nil
}

// setClusterPaused merge-patches spec.paused of the Cluster in the given
// (standard or private) core group; a nil value removes the field.
func (r *reconciler) setClusterPaused(ctx context.Context, ns, name, group string, value json.RawMessage) error {
	k, err := discoverKinds(r.disco)
	if err != nil {
		return err
	}
	gvk, ok := k.find(group, "Cluster")
	if !ok {
		return fmt.Errorf("no CRD serves Cluster.%s", group)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	v := json.RawMessage("null")
	if len(value) > 0 {
		v = value
	}
	patch := fmt.Appendf(nil, `{"spec":{"paused":%s}}`, v)
	if err := r.client.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("setting spec.paused of Cluster.%s %s: %w", group, name, err)
	}
	return nil
}

func (r *reconciler) waitScaledDown(ctx context.Context, _ *metav1.PartialObjectMetadata, ns string, st *state) (*state, string, error) {
	for _, w := range st.Workloads {
		d := &appsv1.Deployment{}
		if err := r.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: w.Name}, d); err != nil {
			return nil, "", err
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
			return nil, "", fmt.Errorf("deployment %s was scaled back up during the migration", w.Name)
		}
		sel, err := metav1.LabelSelectorAsSelector(w.Spec.Selector)
		if err != nil {
			return nil, "", err
		}
		pods := &corev1.PodList{}
		if err := r.reader.List(ctx, pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, "", err
		}
		if n := len(pods.Items); n > 0 {
			return st, fmt.Sprintf("%d pod(s) of %s still exist", n, w.Name), nil
		}
	}
	return st, "", nil
}

func (r *reconciler) copyObjects(ctx context.Context, _ *metav1.PartialObjectMetadata, ns string, st *state) (*state, string, error) {
	k, err := discoverKinds(r.disco)
	if err != nil {
		return nil, "", err
	}
	std, err := listAll(ctx, r.reader, ns, k.standard)
	if err != nil {
		return nil, "", err
	}
	order, err := CreationOrder(std)
	if err != nil {
		return nil, "", err
	}
	copies := map[types.UID]types.UID{}
	for _, o := range order {
		want, err := PrivateCopy(o, copies)
		if err != nil {
			return nil, "", err
		}
		got, err := r.ensureCopy(ctx, want)
		if err != nil {
			return nil, "", fmt.Errorf("copying %s: %w", keyOf(o), err)
		}
		copies[o.GetUID()] = got.GetUID()
	}
	return st, "", r.editReferrers(ctx, ns, k, func(refs []metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
		return WithPrivateOwners(refs, copies)
	})
}

// ensureCopy creates want, or brings an existing copy (from an interrupted
// run) to it, and writes its status through the status subresource.
func (r *reconciler) ensureCopy(ctx context.Context, want *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(want.GroupVersionKind())
	err := r.reader.Get(ctx, client.ObjectKeyFromObject(want), got)
	switch {
	case apierrors.IsNotFound(err):
		got = want.DeepCopy()
		if err := r.client.Create(ctx, got); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	default:
		if !equality.Semantic.DeepEqual(got.Object["spec"], want.Object["spec"]) || !sameMeta(got, want) {
			got.Object["spec"] = want.Object["spec"]
			got.SetLabels(want.GetLabels())
			got.SetAnnotations(want.GetAnnotations())
			got.SetFinalizers(want.GetFinalizers())
			got.SetOwnerReferences(want.GetOwnerReferences())
			if err := r.client.Update(ctx, got); err != nil {
				return nil, err
			}
		}
	}
	status, hasStatus := want.Object["status"]
	if hasStatus && !equality.Semantic.DeepEqual(got.Object["status"], status) {
		got.Object["status"] = status
		if err := r.client.Status().Update(ctx, got); err != nil {
			return nil, fmt.Errorf("status: %w", err)
		}
	}
	return got, nil
}

func sameMeta(a, b *unstructured.Unstructured) bool {
	return equalStringMaps(a.GetLabels(), b.GetLabels()) && equalStringMaps(a.GetAnnotations(), b.GetAnnotations()) &&
		slices.Equal(a.GetFinalizers(), b.GetFinalizers()) && equality.Semantic.DeepEqual(a.GetOwnerReferences(), b.GetOwnerReferences())
}

// editReferrers applies an ownerReference edit to every referrer in ns (the
// fixed referrer kinds, metadata only), with optimistic concurrency.
func (r *reconciler) editReferrers(ctx context.Context, ns string, k *kinds, edit func([]metav1.OwnerReference) ([]metav1.OwnerReference, bool)) error {
	objs, err := listMeta(ctx, r.reader, ns, k.referrers)
	if err != nil {
		return err
	}
	for _, o := range objs {
		refs, changed := edit(o.GetOwnerReferences())
		if !changed {
			continue
		}
		b, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": refs, "resourceVersion": o.GetResourceVersion()}})
		if err != nil {
			return err
		}
		if err := r.client.Patch(ctx, o, client.RawPatch(types.MergePatchType, b)); err != nil {
			return fmt.Errorf("ownerReferences of %s %s: %w", o.GroupVersionKind().GroupKind(), o.GetName(), err)
		}
	}
	return nil
}

func (r *reconciler) switchWorkloads(ctx context.Context, _ *metav1.PartialObjectMetadata, ns string, st *state) (*state, string, error) {
	if slices.ContainsFunc(st.Workloads, func(w workloadSnapshot) bool { return w.Switch == SwitchSidecar }) {
		cm, err := ProxyKubeconfig(ns, r.opts.Proxy)
		if err != nil {
			return nil, "", err
		}
		cur := &corev1.ConfigMap{}
		switch err := r.reader.Get(ctx, client.ObjectKeyFromObject(cm), cur); {
		case apierrors.IsNotFound(err):
			if err := r.client.Create(ctx, cm); err != nil {
				return nil, "", err
			}
		case err != nil:
			return nil, "", err
		case !equality.Semantic.DeepEqual(cur.Data, cm.Data):
			cur.Data = cm.Data
			if err := r.client.Update(ctx, cur); err != nil {
				return nil, "", err
			}
		}
	}
	for _, w := range st.Workloads {
		if err := r.setWorkloadSpec(ctx, ns, w.Name, SwitchedToProxy(w.Spec, w.Switch, r.opts.Proxy)); err != nil {
			return nil, "", fmt.Errorf("switching %s to the proxy: %w", w.Name, err)
		}
	}
	return st, "", nil
}

func (r *reconciler) setWorkloadSpec(ctx context.Context, ns, name string, spec appsv1.DeploymentSpec) error {
	d := &appsv1.Deployment{}
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, d); err != nil {
		return err
	}
	d.Spec = spec
	return r.client.Update(ctx, d)
}

func (r *reconciler) healthCheck(ctx context.Context, _ *metav1.PartialObjectMetadata, ns string, st *state) (*state, string, error) {
	for _, w := range st.Workloads {
		d := &appsv1.Deployment{}
		if err := r.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: w.Name}, d); err != nil {
			return nil, "", err
		}
		if w.Switch == SwitchSidecar && !slices.ContainsFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool {
			return c.Name == r.opts.Proxy.withDefaults().ContainerName
		}) {
			return nil, "", fmt.Errorf("deployment %s lost the proxy sidecar", w.Name)
		}
		if p := WorkloadProblem(d); p != "" {
			return st, p, nil
		}
	}
	problems, err := r.copyProblems(ctx, ns)
	if err != nil {
		return nil, "", err
	}
	if len(problems) > 0 {
		return nil, "", fmt.Errorf("private copies differ: %s", strings.Join(problems, "; "))
	}
	return st, "", nil
}

// copyProblems compares every standard object with its private copy and
// reports extra private objects.
func (r *reconciler) copyProblems(ctx context.Context, ns string) ([]string, error) {
	k, err := discoverKinds(r.disco)
	if err != nil {
		return nil, err
	}
	std, err := listAll(ctx, r.reader, ns, k.standard)
	if err != nil {
		return nil, err
	}
	priv, err := listAll(ctx, r.reader, ns, k.private)
	if err != nil {
		return nil, err
	}
	byKey := map[objKey]*unstructured.Unstructured{}
	for _, p := range priv {
		byKey[keyOf(p)] = p
	}
	copies := map[types.UID]types.UID{}
	for _, o := range std {
		if p, ok := byKey[privateKey(keyOf(o))]; ok {
			copies[o.GetUID()] = p.GetUID()
		}
	}
	var problems []string
	for _, o := range std {
		pk := privateKey(keyOf(o))
		p, ok := byKey[pk]
		if !ok {
			problems = append(problems, "missing "+pk.String())
			continue
		}
		delete(byKey, pk)
		diffs, err := CopyDifferences(o, p, copies, o.GetKind() == "Cluster")
		if err != nil {
			return nil, err
		}
		problems = append(problems, diffs...)
	}
	for k := range byKey {
		problems = append(problems, "unexpected "+k.String())
	}
	slices.Sort(problems)
	return problems, nil
}

func (r *reconciler) commit(ctx context.Context, hc *metav1.PartialObjectMetadata, _ string, st *state) (*state, string, error) {
	return st, "", r.patchAnnotations(ctx, hc, map[string]any{AnnotationPrivateCAPITypes: "true", AnnotationScope: nil}, false)
}

func (r *reconciler) cleanup(ctx context.Context, hc *metav1.PartialObjectMetadata, ns string, st *state) (*state, string, error) {
	if st.Cluster != "" {
		if err := r.setClusterPaused(ctx, ns, st.Cluster, "cluster.hypershift.openshift.io", st.ClusterPaused); err != nil {
			return nil, "", err
		}
	}
	k, err := discoverKinds(r.disco)
	if err != nil {
		return nil, "", err
	}
	if err := r.editReferrers(ctx, ns, k, FinalOwners); err != nil {
		return nil, "", err
	}
	if err := r.removeAll(ctx, ns, k.standard); err != nil {
		return nil, "", err
	}
	if err := r.deleteIfExists(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: stateConfigMapName, Namespace: ns}}); err != nil {
		return nil, "", err
	}
	return st, "", r.patchAnnotations(ctx, hc, map[string]any{AnnotationMigrationInProgress: nil}, false)
}

// removeAll deletes every object of the given CAPI kinds in ns, dependents
// first. The finalizers go first, in a patch of their own: CAPI controllers
// act on deletion (they tear down real infrastructure) only when they see a
// deletionTimestamp with their finalizer still there, and by then no
// controller is reconciling these objects (workloads stopped or switched to
// the other group, Cluster paused) — so nobody ever sees such an object, the
// delete just removes it. UID preconditions keep a delete from hitting a
// recreated object.
func (r *reconciler) removeAll(ctx context.Context, ns string, gvks []gvkInfo) error {
	objs, err := listAll(ctx, r.reader, ns, gvks)
	if err != nil {
		return err
	}
	order, err := CreationOrder(objs)
	if err != nil {
		return err
	}
	for i := len(order) - 1; i >= 0; i-- {
		o := order[i]
		if len(o.GetFinalizers()) > 0 {
			b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": nil, "resourceVersion": o.GetResourceVersion()}})
			if err := r.client.Patch(ctx, o, client.RawPatch(types.MergePatchType, b)); err != nil {
				return fmt.Errorf("removing finalizers of %s: %w", keyOf(o), client.IgnoreNotFound(err))
			}
		}
		uid := o.GetUID()
		if err := r.client.Delete(ctx, o, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s: %w", keyOf(o), err)
		}
	}
	return nil
}

// rollback undoes every step, in reverse; each action is idempotent, so an
// interrupted rollback is simply run again.
func (r *reconciler) rollback(ctx context.Context, hc *metav1.PartialObjectMetadata, ns string, st *state) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(hc)
	r.report(key, PhaseRollingBack, st.FailedStep, st.Reason)
	if hc.Annotations[AnnotationPrivateCAPITypes] == "true" {
		// Never undo a committed migration: the private objects are live.
		return ctrl.Result{}, fmt.Errorf("refusing to roll back a committed migration of %s (%s)", key, st.Reason)
	}
	// 1. Stop the workloads so that nothing acts on the objects removed next.
	for _, w := range st.Workloads {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.Name}}
		if err := client.IgnoreNotFound(r.client.Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":0}}`)))); err != nil {
			return ctrl.Result{}, err
		}
	}
	k, err := discoverKinds(r.disco)
	if err != nil {
		return ctrl.Result{}, err
	}
	// 2. Referrers lose their references to the copies, then the copies go.
	if err := r.editReferrers(ctx, ns, k, WithoutPrivateOwners); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.removeAll(ctx, ns, k.private); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.deleteIfExists(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ProxyKubeconfigName, Namespace: ns}}); err != nil {
		return ctrl.Result{}, err
	}
	// 3. Workloads get their exact previous spec (replicas included).
	for _, w := range st.Workloads {
		if err := client.IgnoreNotFound(r.setWorkloadSpec(ctx, ns, w.Name, w.Spec)); err != nil {
			return ctrl.Result{}, err
		}
	}
	// 4. The standard Cluster gets its spec.paused back.
	if st.Cluster != "" {
		if err := r.setClusterPaused(ctx, ns, st.Cluster, "cluster.x-k8s.io", st.ClusterPaused); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.patchAnnotations(ctx, hc, map[string]any{AnnotationMigrationFailed: st.Reason, AnnotationMigrationInProgress: nil}, false); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.deleteIfExists(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: stateConfigMapName, Namespace: ns}}); err != nil {
		return ctrl.Result{}, err
	}
	log.FromContext(ctx).Info("CAPI migration rolled back", "controlPlaneNamespace", ns, "reason", st.Reason)
	r.report(key, PhaseFailed, st.FailedStep, st.Reason)
	return ctrl.Result{}, nil
}
