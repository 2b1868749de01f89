package relocation

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hubindex"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// Finalizer holds a HostedClusterRelocation deleted mid-move until the move
// rolled back (before the switch) or finished (after it).
const Finalizer = "hcpfleet.io/relocation"

// EventSource is the component the relocation's Events come from.
const EventSource = "hcp-fleet-relocation"

// Options configure the relocation controller.
type Options struct {
	// MaxActive bounds the relocations that run at once, fleet-wide
	// (DefaultMaxActive when 0); the others wait, Queued.
	MaxActive int
	// Timeout bounds how long the destination may take to be Applied and
	// then Available before the move rolls back (DefaultTimeout when 0).
	Timeout time.Duration
	// PauseTimeout bounds how long the source may take to report itself
	// paused, and then its etcd snapshot, before the move rolls back
	// (DefaultPauseTimeout when 0).
	PauseTimeout time.Duration
	// PollInterval is how often a running relocation looks again when no
	// watched object changed (DefaultPollInterval when 0): a ManagedCluster's
	// availability, the timeout.
	PollInterval time.Duration
	// The scheduler's settings, so a destination is chosen as it would be.
	Strategy         scheduling.Strategy
	ConfigNamespaces hostmodel.ConfigNamespaces
	UnavailableGrace time.Duration
}

// Defaults of Options.
const (
	DefaultMaxActive    = 2
	DefaultTimeout      = 30 * time.Minute
	DefaultPauseTimeout = 15 * time.Minute
	DefaultPollInterval = 15 * time.Second
)

// Reconciler drives HostedClusterRelocations.
type Reconciler struct {
	client client.Client
	// reader reads the API server itself, not the cache: deciding whether
	// a relocation may start must see the ones started just before.
	reader   client.Reader
	opts     Options
	recorder record.EventRecorder
}

// Setup registers the relocation controller with mgr (after
// hubindex.AddIndexes, whose index it reads). One worker: decisions on
// how many run at once and on destinations must see each other; each
// reconcile only writes and returns.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.MaxActive <= 0 {
		opts.MaxActive = DefaultMaxActive
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.PauseTimeout <= 0 {
		opts.PauseTimeout = DefaultPauseTimeout
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	r := &Reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), opts: opts, recorder: mgr.GetEventRecorderFor(EventSource)}
	if err := setupLeftovers(mgr, r); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("hcd-relocation").
		For(&v1alpha1.HostedClusterRelocation{}).
		// The HCD's binding (the scheduler's rebind) and the works' feedback
		// are what the phases wait for.
		Watches(&v1alpha1.HostedClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(r.relocationsOf(func(o client.Object) types.NamespacedName {
			return client.ObjectKeyFromObject(o)
		}))).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(r.relocationsOf(func(o client.Object) types.NamespacedName {
			return types.NamespacedName{Namespace: o.GetLabels()[hosting.LabelHCDNamespace], Name: o.GetLabels()[hosting.LabelHCDName]}
		}))).
		// A relocation that ends, or goes, frees a place under the bound:
		// the queued ones look again at once, not at their next poll.
		Watches(&v1alpha1.HostedClusterRelocation{}, handler.EnqueueRequestsFromMapFunc(r.queued), builder.WithPredicates(ended)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(r)
}

// ended passes the relocation events that free a place under the bound.
var ended = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*v1alpha1.HostedClusterRelocation)
		after, ok2 := e.ObjectNew.(*v1alpha1.HostedClusterRelocation)
		return ok1 && ok2 && Phase(after.Status.Phase).Final() && !Phase(before.Status.Phase).Final()
	},
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// queued maps an ended relocation to the relocations not started yet.
func (r *Reconciler) queued(ctx context.Context, _ client.Object) []reconcile.Request {
	var list v1alpha1.HostedClusterRelocationList
	if err := r.client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing HostedClusterRelocations")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Status.Phase == "" {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// relocationsOf maps an object to the relocations of the
// HostedClusterDeployment hcd names.
func (r *Reconciler) relocationsOf(hcd func(client.Object) types.NamespacedName) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		key := hcd(o)
		if key.Name == "" {
			return nil
		}
		var list v1alpha1.HostedClusterRelocationList
		if err := r.client.List(ctx, &list, client.InNamespace(key.Namespace)); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing HostedClusterRelocations", "namespace", key.Namespace)
			return nil
		}
		var out []reconcile.Request
		for i := range list.Items {
			if list.Items[i].Spec.HostedClusterDeployment == key.Name {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
		return out
	}
}

// Reconcile moves one HostedClusterRelocation on by at most one phase.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	hcr := &v1alpha1.HostedClusterRelocation{}
	if err := r.client.Get(ctx, req.NamespacedName, hcr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	phase := Phase(hcr.Status.Phase)
	if hcr.DeletionTimestamp != nil && (phase == "" || phase.Final()) {
		return ctrl.Result{}, r.removeFinalizer(ctx, hcr)
	}
	if phase.Final() {
		return ctrl.Result{}, nil
	}
	if hcr.DeletionTimestamp == nil && !controllerutil.ContainsFinalizer(hcr, Finalizer) {
		patch := client.MergeFrom(hcr.DeepCopy())
		controllerutil.AddFinalizer(hcr, Finalizer)
		if err := r.client.Patch(ctx, hcr, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	hcd := &v1alpha1.HostedClusterDeployment{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: hcr.Namespace, Name: hcr.Spec.HostedClusterDeployment}, hcd); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		hcd = nil
	}
	if phase == "" {
		return r.start(ctx, hcr, hcd)
	}
	if hcd == nil {
		// Deleted mid-move: its delivery's finalizer removes what it
		// delivered; the relocation's own works go with the move.
		return ctrl.Result{}, r.end(ctx, hcr, nil, PhaseFailed, ReasonHCDNotFound, "the HostedClusterDeployment was deleted during the move")
	}
	return r.step(ctx, hcr, hcd)
}

// start checks the request and decides the destination once, or refuses
// it (Failed, nothing written elsewhere), or queues it.
func (r *Reconciler) start(ctx context.Context, hcr *v1alpha1.HostedClusterRelocation, hcd *v1alpha1.HostedClusterDeployment) (ctrl.Result, error) {
	if hcd == nil {
		return ctrl.Result{}, r.end(ctx, hcr, nil, PhaseFailed, ReasonHCDNotFound,
			fmt.Sprintf("no HostedClusterDeployment %s in namespace %s", hcr.Spec.HostedClusterDeployment, hcr.Namespace))
	}
	// From the API server: the cache may not show yet the relocation this
	// one worker started a moment ago, and the bound below would let one
	// more start.
	var all v1alpha1.HostedClusterRelocationList
	if err := r.reader.List(ctx, &all); err != nil {
		return ctrl.Result{}, err
	}
	if other := Competing(hcr, all.Items); other != "" {
		// Said on this relocation only: the HCD's Relocating condition is
		// the running one's.
		return ctrl.Result{}, r.end(ctx, hcr, nil, PhaseFailed, ReasonRelocationInProgress,
			fmt.Sprintf("HostedClusterRelocation %s moves this HostedClusterDeployment already: one move at a time", other))
	}
	if reason, message := Ready(hcd); reason != "" {
		return ctrl.Result{}, r.end(ctx, hcr, hcd, PhaseFailed, reason, message)
	}
	if ok, why := Admit(hcr, all.Items, r.opts.MaxActive); !ok {
		return ctrl.Result{RequeueAfter: r.opts.PollInterval}, r.writeStatus(ctx, hcr, func(st *v1alpha1.HostedClusterRelocationStatus) {
			setProgress(st, hcr.Generation, metav1.ConditionFalse, ReasonQueued, why)
		})
	}
	g, err := r.gather(ctx, hcr, hcd, all.Items)
	if err != nil {
		return ctrl.Result{}, err
	}
	if g.Candidates == nil {
		return ctrl.Result{}, r.end(ctx, hcr, hcd, PhaseFailed, ReasonDestinationNotAvailable, g.Message)
	}
	source := hcd.Status.HostingCluster
	destination, reason, message := Destination(g.Request, g.Candidates, source, hcr.Spec.Destination, g.Strategy)
	reason, message = r.cordoned(ctx, hcr.Spec.Destination, reason, message)
	if destination == "" {
		return ctrl.Result{}, r.end(ctx, hcr, hcd, PhaseFailed, reason, message)
	}
	// The decision is recorded with the first phase, in one write: a
	// restarted hub never decides it again.
	return ctrl.Result{}, r.transition(ctx, hcr, hcd, PhasePausing, string(PhasePausing),
		fmt.Sprintf("moving from %s to %s: pausing the source", source, destination), func(st *v1alpha1.HostedClusterRelocationStatus) {
			st.Source, st.Destination = source, destination
		})
}

// gather reads the scheduler's inputs for hcd as if it were not bound, and
// counts on each management cluster the other relocations moving onto it
// as the scheduler counts its assumed bindings.
func (r *Reconciler) gather(ctx context.Context, hcr *v1alpha1.HostedClusterRelocation, hcd *v1alpha1.HostedClusterDeployment,
	all []v1alpha1.HostedClusterRelocation) (scheduling.Gathered, error) {
	inbound := map[string]map[types.UID][]string{}
	for cluster, keys := range Inbound(hcr, all) {
		for _, key := range keys {
			moving := &v1alpha1.HostedClusterDeployment{}
			if err := r.client.Get(ctx, key, moving); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return scheduling.Gathered{}, err
			}
			if inbound[cluster] == nil {
				inbound[cluster] = map[types.UID][]string{}
			}
			// By the HCD's UID: once bound there, it is counted once.
			inbound[cluster][moving.UID] = scheduling.Occupies(moving)
		}
	}
	in := scheduling.Inputs{Client: r.client, Strategy: r.opts.Strategy, ConfigNamespaces: r.opts.ConfigNamespaces,
		UnavailableGrace: r.opts.UnavailableGrace, Bound: r.bound, Without: hcd,
		Assumed: func(cluster string) map[types.UID][]string { return inbound[cluster] }}
	return in.Gather(ctx, hcd)
}

// cordoned turns DestinationNotAllowed for a named destination that is
// cordoned into DestinationCordoned: OCM drops a cordoned cluster from the
// Placement's decisions, and "not allowed" would not say why.
func (r *Reconciler) cordoned(ctx context.Context, named, reason, message string) (string, string) {
	if reason != ReasonDestinationNotAllowed || named == "" {
		return reason, message
	}
	mc := &clusterv1.ManagedCluster{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: named}, mc); err == nil && scheduling.Cordoned(mc) {
		return ReasonDestinationCordoned, named + " is cordoned: nothing is moved onto it"
	}
	return reason, message
}

// recheck decides, before the destination's ManifestWork is created,
// whether the recorded destination can still receive the hosted cluster
// (Redecide): the destination to restore on, or "" and why not.
func (r *Reconciler) recheck(ctx context.Context, hcr *v1alpha1.HostedClusterRelocation, hcd *v1alpha1.HostedClusterDeployment) (string, string, string, error) {
	var all v1alpha1.HostedClusterRelocationList
	if err := r.client.List(ctx, &all); err != nil {
		return "", "", "", err
	}
	g, err := r.gather(ctx, hcr, hcd, all.Items)
	if err != nil || g.Candidates == nil {
		return "", ReasonDestinationNotAvailable, g.Message, err
	}
	st := hcr.Status
	cluster, reason, message := Redecide(g.Request, g.Candidates, st.Source, st.Destination, hcr.Spec.Destination, g.Strategy)
	reason, message = r.cordoned(ctx, st.Destination, reason, message)
	return cluster, reason, message, nil
}

// bound lists the HostedClusterDeployments bound to cluster, from the
// scheduler's index.
func (r *Reconciler) bound(ctx context.Context, cluster string) ([]v1alpha1.HostedClusterDeployment, error) {
	var list v1alpha1.HostedClusterDeploymentList
	if err := r.client.List(ctx, &list, client.MatchingFields{hubindex.HostingCluster: cluster}); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// step observes both sides, asks Next where the move is, and makes that
// phase's one write.
func (r *Reconciler) step(ctx context.Context, hcr *v1alpha1.HostedClusterRelocation, hcd *v1alpha1.HostedClusterDeployment) (ctrl.Result, error) {
	st := hcr.Status
	cur := Phase(st.Phase)
	sides, err := r.read(ctx, hcr, hcd)
	if err != nil {
		return ctrl.Result{}, err
	}
	sides.sourceLost, sides.destinationLost = r.clusterLost(ctx, st.Source), r.clusterLost(ctx, st.Destination)
	o := sides.observed(hcr, hcd, r.overdue(hcr))
	next, reason, message := Next(st.Destination, cur, o)
	if next == PhaseRolledBack {
		// Said again at the end: why it rolled back.
		if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionRelocationProgressing); c != nil && rollbackCause(c.Reason) {
			message = fmt.Sprintf("%s (%s: %s)", message, c.Reason, c.Message)
		}
	}
	record := func(st *v1alpha1.HostedClusterRelocationStatus) {
		if sides.pauseFacts.Paused && st.SnapshotURL == "" && sides.pauseFacts.SnapshotURL != "" {
			st.SnapshotURL = sides.pauseFacts.SnapshotURL
			st.InfraID, st.ClusterID = sides.pauseFacts.Identity.InfraID, sides.pauseFacts.Identity.ClusterID
		}
		if next == PhaseSwitching {
			// Recorded with the phase, before the scheduler rebinds: a hub
			// restarted after this write finishes the switch.
			st.Switched = true
		}
	}
	if next == PhaseRestoring && sides.destination == nil {
		// Nothing is on the destination yet: check it again (a drain's
		// moves and new hosted clusters may have filled it since the
		// start); another one, or a rollback, costs nothing now.
		cluster, why, detail, err := r.recheck(ctx, hcr, hcd)
		if err != nil {
			return ctrl.Result{}, err
		}
		switch {
		case cluster == "":
			next, reason, message = PhaseRollingBack, why, fmt.Sprintf("%s can no longer receive it (%s): the source resumes", st.Destination, detail)
		case cluster != st.Destination:
			// Recorded first; the next reconcile restores there.
			return ctrl.Result{}, r.transition(ctx, hcr, hcd, PhaseRestoring, string(PhaseRestoring),
				fmt.Sprintf("snapshot taken; %s can no longer receive it (%s): restoring on %s instead", st.Destination, detail, cluster),
				func(st *v1alpha1.HostedClusterRelocationStatus) { record(st); st.Destination = cluster })
		}
	}
	if next != cur {
		if err := r.transition(ctx, hcr, hcd, next, reason, message, record); err != nil {
			return ctrl.Result{}, err
		}
	} else if err := r.hold(ctx, hcr, hcd, reason, message, record); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.act(ctx, hcr, hcd, next, sides); err != nil {
		return ctrl.Result{}, err
	}
	if next.Final() {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: r.opts.PollInterval}, nil
}

// clusterLost: a side's ManagedCluster is gone or reports itself
// unavailable, by the scheduler's rule (hostmodel.ClusterAvailable): a
// flap shorter than --host-unavailable-grace does not roll a move back.
func (r *Reconciler) clusterLost(ctx context.Context, cluster string) bool {
	mc := &clusterv1.ManagedCluster{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: cluster}, mc); err != nil {
		return apierrors.IsNotFound(err)
	}
	available, _ := hostmodel.ClusterAvailable(mc, r.opts.UnavailableGrace, time.Now())
	return !available
}

// overdue: the phase waited longer than it may (Overdue), and why.
func (r *Reconciler) overdue(hcr *v1alpha1.HostedClusterRelocation) string {
	since := hcr.Status.PhaseTransitionTime
	if since == nil {
		return ""
	}
	return Overdue(Phase(hcr.Status.Phase), since.Time, time.Now(), r.opts.PauseTimeout, r.opts.Timeout)
}

// rollbackCause: reason is the one a rollback started with, not the
// phase's own or a hold's.
func rollbackCause(reason string) bool {
	_, held := holdEnded[reason]
	return reason != string(PhaseRollingBack) && !held
}

func (r *Reconciler) removeFinalizer(ctx context.Context, hcr *v1alpha1.HostedClusterRelocation) error {
	if !controllerutil.ContainsFinalizer(hcr, Finalizer) {
		return nil
	}
	patch := client.MergeFrom(hcr.DeepCopy())
	controllerutil.RemoveFinalizer(hcr, Finalizer)
	return client.IgnoreNotFound(r.client.Patch(ctx, hcr, patch))
}
