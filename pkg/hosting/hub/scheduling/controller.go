package scheduling

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	hcdac "github.com/hcp-fleet/hcp-fleet/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hubindex"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
)

// FieldManager owns status.hostingCluster and the Scheduled condition,
// shared with the delivery (hcdstatus.FieldManager).
const FieldManager = hcdstatus.FieldManager

// StrategyAnnotation on a Placement selects the Strategy for the
// HostedClusterDeployments that name it, overriding the hub's default.
const StrategyAnnotation = "hcpfleet.io/scheduling-strategy"

var (
	attempts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hcpfleet_hub_scheduler_attempts_total", Help: "Scheduling decisions made for unbound HostedClusterDeployments (bound or not)."})
	bindings = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hcpfleet_hub_scheduler_bindings_total", Help: "HostedClusterDeployments bound to a management cluster."})
	// reason is a Scheduled condition reason: a fixed set (docs/troubleshooting.md).
	unschedulable = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hcpfleet_hub_scheduler_unschedulable_total", Help: "Scheduling attempts that found no management cluster, by the Scheduled condition's reason."},
		[]string{"reason"})
	recovered = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hcpfleet_hub_scheduler_recovered_bindings_total", Help: "Bindings recovered from a ManifestWork for HostedClusterDeployments that had lost their status (as after a backup restore)."})
	conflicts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hcpfleet_hub_scheduler_binding_conflicts_total", Help: "Bindings refused because the HostedClusterDeployment changed since the decision (retried on the new copy)."})
	bindingLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "hcpfleet_hub_scheduler_binding_latency_seconds",
		Help: "Time from a HostedClusterDeployment's creation to its binding to a management cluster.",
		// 0.25 s to about 68 min: a burst binds in seconds, an HCD waiting
		// for capacity in minutes.
		Buckets: prometheus.ExponentialBuckets(0.25, 2, 15)})
	// What a burst's bindings wait for, split as kube-scheduler splits its
	// own (scheduling algorithm, binding): the decision holds the lock
	// every other decision waits on; the write runs beside the others.
	decisionDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "hcpfleet_hub_scheduler_decision_duration_seconds",
		Help: "Time one scheduling decision takes: reading its inputs from the cache and choosing a cluster (decisions are made one at a time).",
		// 0.1 ms to about 3.3 s.
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)})
	bindingWriteDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "hcpfleet_hub_scheduler_binding_write_duration_seconds",
		Help: "Time one binding's status write to the hub API server takes (client-side rate limiting included).",
		// 1 ms to about 33 s.
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)})
)

func init() {
	metrics.Registry.MustRegister(attempts, bindings, recovered, conflicts, unschedulable, bindingLatency, decisionDuration, bindingWriteDuration)
}

// Options configure the scheduler.
type Options struct {
	// Strategy is the default Strategy.
	Strategy Strategy
	// RetryInterval re-tries unschedulable HostedClusterDeployments even when
	// no watched object changed (a safety net; changes trigger retries).
	RetryInterval time.Duration
	// ConfigNamespaces are where a cluster's HostingConfig may come from.
	ConfigNamespaces hostmodel.ConfigNamespaces
	// Workers is how many HostedClusterDeployments are scheduled at once
	// (DefaultWorkers when 0). Decisions stay one at a time; the binding
	// writes, which take most of the time, overlap.
	Workers int
	// BindingStatus, when set, is the status a binding is written with
	// (delivery.BindingStatus); without it, the binding alone.
	BindingStatus BindingStatus
	// UnknownReferences, when set, lists the reference-shaped fields of an
	// unstructured HostedClusterDeployment that the hub would not copy
	// (delivery.UnknownReferencesOf), which every tenant policy refuses.
	// Without it the delivery still refuses them, after the binding.
	UnknownReferences func(*unstructured.Unstructured) []string
	// UnavailableGrace is how long a management cluster that reports itself
	// unavailable stays a candidate (availability.go); 0: none.
	UnavailableGrace time.Duration
}

// BindingStatus returns the status apply configuration a binding is written
// with, given the HostedClusterDeployment as bound (status.hostingCluster and
// the Scheduled condition set, as the apply must carry them), and the
// conditions it applies. The delivery's adds what it would write right after
// it wrote the ManifestWork, so that a binding and its delivery write the
// status once instead of twice.
type BindingStatus func(ctx context.Context, bound *v1alpha1.HostedClusterDeployment) (*hcdac.HostedClusterDeploymentApplyConfiguration, []metav1.Condition, error)

// bindTimeout bounds one binding write.
const bindTimeout = 30 * time.Second

// snapshotSyncWait is how long a decision waits for the bound snapshot's
// initial sync before it looks again.
const snapshotSyncWait = 200 * time.Millisecond

// DefaultWorkers: see Options.Workers. Writes to the hub's API server are
// what a burst waits for, and it accepts parallel writes many times faster
// than serial ones.
const DefaultWorkers = 8

// Reconciler binds HostedClusterDeployments to management clusters.
type Reconciler struct {
	client   client.Client
	opts     Options
	assumed  *assumeCache
	snapshot *BoundSnapshot
	inputs   Inputs
	recorder record.EventRecorder
	tenancy  *tenancy.Resolver
	// snapshotSynced reports whether the snapshot has seen every object
	// the informer listed at start: the manager waits for its caches, not
	// for this handler, and a decision on a partial snapshot would
	// undercount (after a takeover, say).
	snapshotSynced func() bool
	// decide serializes decisions and their assumptions, so that each
	// decision sees every binding decided before it, written or not; the
	// writes run outside it, in parallel.
	decide sync.Mutex
}

// AddIndexes registers the cache indexes this package's reads need
// besides the hub's shared ones (hubindex.AddIndexes, which must run too):
// IndexInfraID and IndexNamespaces, which the delivery reads through
// InfraIDTaken and ControlPlaneConflict, and the tenant policy's. Call it
// once, before the scheduler's and the delivery's Setup.
func AddIndexes(mgr ctrl.Manager) error {
	for _, name := range []string{IndexInfraID, IndexNamespaces} {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.HostedClusterDeployment{}, name, indexFuncs[name]); err != nil {
			return err
		}
	}
	// The tenant policy's fleet-wide checks (hostnames), which the
	// scheduler and the delivery both make.
	return tenancy.AddIndexes(mgr)
}

// Setup registers the scheduler with mgr (after AddIndexes and
// hubindex.AddIndexes). Decisions are made one at a time, each seeing every
// binding decided before it (the assume cache holds those not written or
// not yet in the cache); the bindings are written by several workers at
// once.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.Strategy == "" {
		opts.Strategy = StrategySpread
	}
	if opts.RetryInterval == 0 {
		opts.RetryInterval = time.Minute
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	r := &Reconciler{client: mgr.GetClient(), opts: opts, assumed: newAssumeCache(time.Now), recorder: mgr.GetEventRecorderFor(hcdstatus.EventSource),
		tenancy: &tenancy.Resolver{Reader: mgr.GetClient()}}
	r.snapshot = NewBoundSnapshot(r.assumed.forget)
	informer, err := mgr.GetCache().GetInformer(context.Background(), &v1alpha1.HostedClusterDeployment{})
	if err != nil {
		return err
	}
	registration, err := informer.AddEventHandler(r.snapshot.Handler())
	if err != nil {
		return err
	}
	r.snapshotSynced = registration.HasSynced
	r.inputs = Inputs{Client: r.client, Strategy: opts.Strategy, ConfigNamespaces: opts.ConfigNamespaces,
		Snapshot: r.snapshot, Assumed: r.assumed.on, Moving: MovingFrom(r.client, client.UnsafeDisableDeepCopy), UnavailableGrace: opts.UnavailableGrace}
	retryUnscheduled := handler.EnqueueRequestsFromMapFunc(r.unscheduled)
	return ctrl.NewControllerManagedBy(mgr).
		Named("hcd-scheduler").
		For(&v1alpha1.HostedClusterDeployment{}).
		// A deleted HostedClusterDeployment frees capacity, and its
		// assumed binding with it.
		Watches(&v1alpha1.HostedClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(r.deleted), builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(event.UpdateEvent) bool { return false },
			DeleteFunc: func(event.DeleteEvent) bool { return true },
		})).
		// What other objects say re-enqueues every unscheduled one, but only
		// when it changes what a decision reads (schedulingChanged): not on
		// heartbeats, not on the status churn of imported hosted clusters.
		Watches(&clusterv1.ManagedCluster{}, retryUnscheduled, builder.WithPredicates(schedulingChanged(managedClusterFacts))).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, retryUnscheduled, builder.WithPredicates(predicate.NewPredicateFuncs(
			func(o client.Object) bool { return o.GetName() == addon.Name }), schedulingChanged(addOnFacts))).
		Watches(&v1alpha1.HostingConfig{}, retryUnscheduled, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&clusterv1beta1.PlacementDecision{}, retryUnscheduled, builder.WithPredicates(schedulingChanged(decisionFacts))).
		Watches(&clusterv1beta2.ManagedClusterSetBinding{}, retryUnscheduled, builder.WithPredicates(schedulingChanged(bindingFacts))).
		// What tenants may set: the TenantPolicies and the namespace labels
		// their selectors read.
		Watches(&v1alpha1.TenantPolicy{}, retryUnscheduled, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesMetadata(tenancy.NamespaceMetadata(), retryUnscheduled, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		// A ManifestWork appearing or going is what a lost binding waits
		// for (recover.go).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(hcdOfWork), builder.WithPredicates(recoveryEvents)).
		// So is an agent's report of its HostedCluster (inventory.go).
		Watches(&v1alpha1.HostedClusterInventory{}, handler.EnqueueRequestsFromMapFunc(r.hcdsOfInventory)).
		// A relocation that switched moves its HostedClusterDeployment's
		// binding (relocate.go).
		Watches(&v1alpha1.HostedClusterRelocation{}, handler.EnqueueRequestsFromMapFunc(relocatedHCD), builder.WithPredicates(switchedRelocation)).
		// A relocation that ends frees a slot on one of its clusters.
		Watches(&v1alpha1.HostedClusterRelocation{}, retryUnscheduled, builder.WithPredicates(endedRelocation)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers}).
		Complete(r)
}

// deleted forgets what a deleted HostedClusterDeployment was assumed to
// hold and retries the unscheduled ones.
func (r *Reconciler) deleted(ctx context.Context, o client.Object) []reconcile.Request {
	r.assumed.forget(client.ObjectKeyFromObject(o), o.GetUID())
	return r.unscheduled(ctx, o)
}

// unscheduled lists every HostedClusterDeployment waiting for a cluster.
func (r *Reconciler) unscheduled(ctx context.Context, _ client.Object) []reconcile.Request {
	var list v1alpha1.HostedClusterDeploymentList
	if err := r.client.List(ctx, &list, client.MatchingFields{hubindex.HostingCluster: ""}, client.UnsafeDisableDeepCopy); err != nil {
		// A cache read does not fail short of a broken index; the periodic
		// retry of unschedulable ones still comes.
		ctrl.LoggerFrom(ctx).Error(err, "listing unscheduled HostedClusterDeployments to retry")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// Reconcile schedules one HostedClusterDeployment.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	hcd := &v1alpha1.HostedClusterDeployment{}
	if err := r.client.Get(ctx, req.NamespacedName, hcd); err != nil {
		if apierrors.IsNotFound(err) {
			r.assumed.forget(req.NamespacedName, "")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if hcd.Status.HostingCluster != "" && hcd.DeletionTimestamp == nil {
		// Bound (the snapshot forgets our assumption when it records the
		// binding): it moves only when a relocation switched (relocate.go).
		return ctrl.Result{}, r.rebind(ctx, hcd)
	}
	if hcd.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	if r.snapshotSynced != nil && !r.snapshotSynced() {
		return ctrl.Result{RequeueAfter: snapshotSyncWait}, nil
	}
	if r.assumed.holds(req.NamespacedName, hcd.UID) {
		return ctrl.Result{}, nil // a worker is writing its binding
	}
	// A binding lost with the status is recovered, never decided anew.
	if res, done, err := r.recover(ctx, hcd); done {
		return res, err
	}
	// Refused by its tenant policy: never bound, whatever the fleet offers.
	verdict, behind, err := r.policyVerdict(ctx, hcd)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case behind:
		return ctrl.Result{RequeueAfter: tenancyCacheBehind}, nil
	case len(verdict.List) > 0:
		// Retried on its own changes, its policy's and its namespace's, and
		// periodically for what depends on the rest of the fleet (a
		// hostname another HCD gives up, a quota another frees).
		return ctrl.Result{RequeueAfter: r.opts.RetryInterval}, r.setUnscheduled(ctx, hcd, v1alpha1.ReasonPolicyViolation, "not scheduled: "+verdict.Message())
	}
	// Adopted: bound where it runs, never decided (adopt.go).
	if res, done, err := r.bindAdopted(ctx, hcd); done {
		return res, err
	}
	key := req.NamespacedName
	r.decide.Lock()
	if r.assumed.holds(key, hcd.UID) {
		r.decide.Unlock()
		return ctrl.Result{}, nil // a worker is writing its binding
	}
	decisionStart := time.Now()
	// decided ends a decision that was made (a cluster or why none).
	decided := func() {
		decisionDuration.Observe(time.Since(decisionStart).Seconds())
		r.decide.Unlock()
	}
	// Filter-before-binding: an infraID another HostedClusterDeployment has
	// first is refused wherever it would go (names.go). Who has it first is
	// decided by creation (Precedes), not by the order of decisions, so two
	// created together never both pass.
	taken, err := InfraIDTaken(ctx, r.client, hcd)
	if err != nil {
		r.decide.Unlock()
		return ctrl.Result{}, err
	}
	if taken != "" {
		attempts.Inc()
		decided()
		return ctrl.Result{RequeueAfter: r.opts.RetryInterval}, r.setUnscheduled(ctx, hcd, v1alpha1.ReasonInfraIDTaken, taken)
	}
	in, err := r.inputs.Gather(ctx, hcd)
	if err != nil {
		r.decide.Unlock()
		return ctrl.Result{}, err
	}
	attempts.Inc()
	if in.Candidates == nil {
		decided()
		return ctrl.Result{RequeueAfter: r.opts.RetryInterval}, r.setUnscheduled(ctx, hcd, in.Reason, in.Message)
	}
	candidates, strategy := in.Candidates, in.Strategy
	decision := Schedule(in.Request, candidates, strategy)
	if decision.Cluster == "" {
		decided()
		return ctrl.Result{RequeueAfter: r.opts.RetryInterval}, r.setUnscheduled(ctx, hcd, decision.Reason(), decision.Message())
	}
	var chosen Candidate
	for _, c := range candidates {
		if c.Name == decision.Cluster {
			chosen = c
		}
	}
	// Assumed before it is written, so the next decision counts it.
	r.assumed.assume(key, hcd.UID, chosen.Name, Occupies(hcd))
	decided()
	if err := r.bind(ctx, hcd, chosen, strategy); err != nil {
		r.assumed.forget(key, hcd.UID)
		if apierrors.IsConflict(err) {
			// Decided on a stale copy (the HostedClusterDeployment changed,
			// or another scheduler bound it): decide again on the new one.
			conflicts.Inc()
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// bind records the decision. The resourceVersion makes it a compare-and-swap
// on what this decision was based on; the API's own rule (status.hostingCluster
// is set once) keeps a second scheduler from ever moving it.
func (r *Reconciler) bind(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, chosen Candidate, strategy Strategy) error {
	cluster := chosen.Name
	cond := metav1.Condition{Type: v1alpha1.ConditionScheduled, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonScheduled,
		Message: fmt.Sprintf("scheduled onto management cluster %s (strategy %s; it hosted %d of %d before)", cluster, strategy, chosen.Load, chosen.Capacity)}
	if err := r.writeBinding(ctx, hcd, cluster, cond); err != nil {
		return err
	}
	bindings.Inc()
	bindingLatency.Observe(time.Since(hcd.CreationTimestamp.Time).Seconds())
	return nil
}

// writeBinding writes status.hostingCluster = cluster with the Scheduled
// condition cond (and, with Options.BindingStatus, the delivery's status),
// as a compare-and-swap on the copy it was decided on.
func (r *Reconciler) writeBinding(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, cluster string, cond metav1.Condition) error {
	conds, _ := hcdstatus.Conditions(hcd.Status.Conditions, []metav1.Condition{cond}, hcd.Generation, metav1.Now())
	var apply *hcdac.HostedClusterDeploymentApplyConfiguration
	if r.opts.BindingStatus != nil {
		bound := hcd.DeepCopy()
		bound.Status.HostingCluster = cluster
		meta.SetStatusCondition(&bound.Status.Conditions, conds[0])
		var err error
		var withDelivery []metav1.Condition
		if apply, withDelivery, err = r.opts.BindingStatus(ctx, bound); err != nil {
			// A cache read failed: the binding alone; the delivery writes
			// its status after it.
			ctrl.LoggerFrom(ctx).Error(err, "computing the delivery's status to write with the binding")
			apply = nil
		} else {
			conds = withDelivery
		}
	}
	if apply == nil {
		apply = hcdac.HostedClusterDeployment(hcd.Name, hcd.Namespace).
			WithStatus(hcdac.HostedClusterDeploymentStatus().
				WithHostingCluster(cluster).
				WithConditions(hcdstatus.ApplyConditions(conds)...))
	}
	apply.WithResourceVersion(hcd.ResourceVersion)
	// A binding decided is written even while the replica stops (it
	// finishes before the manager releases the leader lease): a write
	// abandoned mid-flight may still land, unseen by the next leader's
	// first decisions.
	writeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bindTimeout)
	defer cancel()
	writeStart := time.Now()
	err := hcdstatus.Apply(writeCtx, r.client, apply, FieldManager)
	bindingWriteDuration.Observe(time.Since(writeStart).Seconds())
	if err != nil {
		return fmt.Errorf("binding %s/%s: %w", hcd.Namespace, hcd.Name, err)
	}
	hcdstatus.RecordTransitions(r.recorder, hcd, cluster, hcd.Status.Conditions, conds)
	return nil
}

// setUnscheduled records why no cluster fits, writing only on change of the
// Scheduled condition.
func (r *Reconciler) setUnscheduled(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, reason, message string) error {
	unschedulable.WithLabelValues(reason).Inc()
	cond := metav1.Condition{Type: v1alpha1.ConditionScheduled, Status: metav1.ConditionFalse, Reason: reason, Message: message}
	conds, changed := hcdstatus.Conditions(hcd.Status.Conditions, []metav1.Condition{cond}, hcd.Generation, metav1.Now())
	if !changed {
		return nil
	}
	if err := hcdstatus.Apply(ctx, r.client, hcdac.HostedClusterDeployment(hcd.Name, hcd.Namespace).
		WithStatus(hcdac.HostedClusterDeploymentStatus().WithConditions(hcdstatus.ApplyConditions(conds)...)), FieldManager); err != nil {
		return err
	}
	hcdstatus.RecordTransitions(r.recorder, hcd, "", hcd.Status.Conditions, conds)
	return nil
}
