package scheduling

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	hcdac "github.com/hcp-fleet/hcp-fleet/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hubindex"
)

// A restore-safe binding. A backup restore (ACM's cluster backup, Velero)
// brings a HostedClusterDeployment back without its status, so without
// status.hostingCluster, while its hosted cluster still runs on a
// management cluster. Deciding again could start a second control plane
// for the same cluster elsewhere. So before deciding, the scheduler looks
// for what the management cluster side holds for the HostedClusterDeployment:
// the ManifestWork named hosting.WorkName(namespace, name), labelled with
// its namespace and name, in a management cluster's namespace (the
// delivery's, kept by the work agent's report; ManifestWorks are backed up
// with the ACM backup label). Matched by namespace and name, never by UID:
// a restore gives the HostedClusterDeployment a new one (the delivery then
// takes the ManifestWork back when it delivers the identity the restored
// object carries, hcdstatus.AnnotationIdentityUID, and otherwise leaves it
// unchanged and says UIDMismatch).
//
//   - one management cluster holds it: bound there (BindingRecovered);
//   - several do, or one is being deleted: Scheduled=False, nothing decided;
//   - none, but the HostedClusterDeployment carries the delivery's
//     hcdstatus.AnnotationBoundTo (it was bound before; metadata survives a
//     restore; tenants cannot forge or remove it, an admission policy
//     refuses them): the HostedClusters the agents report running
//     (HostedClusterInventory, inventory.go), by the labels naming the
//     deployment. One management cluster runs it: bound there; several:
//     nothing decided; none: Scheduled=False BindingUnknown until a
//     ManifestWork or a report shows up — never decided anew;
//   - none and no annotation: a new HostedClusterDeployment, decided as usual.

// recovery is what recoverBinding found.
type recovery struct {
	// cluster is where to bind; "" when nothing is to be bound.
	cluster string
	// reason and message, when set, are the Scheduled=False condition to
	// write instead of deciding.
	reason, message string
	// reported: cluster comes from the agents' inventories, not from a
	// ManifestWork.
	reported bool
	// moved names the other clusters whose ManifestWork is a relocation's
	// (acrossMove).
	moved []string
}

// found reports whether the scheduler must not decide hcd as new.
func (rc recovery) found() bool { return rc.cluster != "" || rc.reason != "" }

// RecoverBinding says, for an unbound hcd, whether its binding is to be
// recovered rather than decided; c reads ManifestWorks (the hub's cache
// holds those labelled hosting.LabelHCDName). `kubectl hcpfleet explain`
// shows the same.
func RecoverBinding(ctx context.Context, c client.Reader, hcd *v1alpha1.HostedClusterDeployment) (cluster, reason, message string, err error) {
	rc, err := recoverBinding(ctx, c, hcd, false)
	return rc.cluster, rc.reason, rc.message, err
}

// recoverBinding: see RecoverBinding; indexed: c is the hub's cache, with
// hubindex.WorkHCD.
func recoverBinding(ctx context.Context, c client.Reader, hcd *v1alpha1.HostedClusterDeployment, indexed bool) (recovery, error) {
	var works workv1.ManifestWorkList
	var opts []client.ListOption
	if indexed {
		opts = append(opts, client.MatchingFields{hubindex.WorkHCD: hubindex.WorkHCDKey(hcd.Namespace, hcd.Name)})
	} else {
		opts = append(opts, client.MatchingLabels{hosting.LabelHCDNamespace: hcd.Namespace, hosting.LabelHCDName: hcd.Name})
	}
	if err := c.List(ctx, &works, opts...); err != nil {
		return recovery{}, err
	}
	name := hosting.WorkName(hcd.Namespace, hcd.Name)
	var clusters, deleting []string
	for i := range works.Items {
		w := &works.Items[i]
		if w.Name != name { // an extension's, not the hosted cluster's
			continue
		}
		clusters = append(clusters, w.Namespace)
		if w.DeletionTimestamp != nil {
			deleting = append(deleting, w.Namespace)
		}
	}
	slices.Sort(clusters)
	was := hcd.Annotations[hcdstatus.AnnotationBoundTo]
	switch {
	case len(clusters) > 1:
		if cluster, others := acrossMove(works.Items, name, hosting.RelocationPauseWorkName(hcd.Namespace, hcd.Name), was); cluster != "" {
			return recovery{cluster: cluster, moved: others}, nil
		}
		return recovery{reason: v1alpha1.ReasonBindingAmbiguous, message: fmt.Sprintf(
			"status.hostingCluster is empty and ManifestWork %s exists in the namespaces of several management clusters (%s): the hub binds it to none of them, and decides nothing, while a control plane may run on each; delete the stale ManifestWorks (their hosted clusters with them)",
			name, strings.Join(clusters, ", "))}, nil
	case len(deleting) == 1:
		return recovery{reason: v1alpha1.ReasonBindingUnknown, message: fmt.Sprintf(
			"status.hostingCluster is empty and ManifestWork %s/%s, which delivered a HostedClusterDeployment of this namespace and name, is being deleted: nothing is decided until it is gone", deleting[0], name)}, nil
	case len(clusters) == 1:
		return recovery{cluster: clusters[0]}, nil
	case was == "":
		return recovery{}, nil
	}
	// Bound before, and its ManifestWork is gone too: where do the agents
	// see its HostedCluster run?
	running, err := runningOn(ctx, c, hcd)
	if err != nil {
		return recovery{}, err
	}
	switch {
	case len(running) == 1 && running[0] == was:
		return recovery{cluster: running[0], reported: true}, nil
	case len(running) == 1:
		// Only where the annotation (the hub's, guarded by admission) says
		// it was bound: an agent's report alone never moves a binding, so
		// a compromised agent cannot claim a hosted cluster it does not run.
		return recovery{reason: v1alpha1.ReasonBindingUnknown, message: fmt.Sprintf(
			"status.hostingCluster is empty, no ManifestWork %s exists, and annotation %s says this HostedClusterDeployment was bound to %s, but only the agent of %s reports its HostedCluster: the hub binds it nowhere on a report from another cluster than the annotation's; "+
				"check where its control plane runs (docs/operations.md)", name, hcdstatus.AnnotationBoundTo, was, running[0])}, nil
	case len(running) == 0:
		return recovery{reason: v1alpha1.ReasonBindingUnknown, message: fmt.Sprintf(
			"status.hostingCluster is empty but annotation %s says this HostedClusterDeployment was bound to %s (its status was lost, as in a backup restore): nothing is decided while its control plane may run there; "+
				"the binding is recovered when ManifestWork %s is restored into a management cluster's namespace, or an agent reports its HostedCluster (docs/operations.md)", hcdstatus.AnnotationBoundTo, was, name)}, nil
	}
	return recovery{reason: v1alpha1.ReasonBindingAmbiguous, message: fmt.Sprintf(
		"status.hostingCluster is empty, no ManifestWork %s exists, and the agents of several management clusters (%s) report a HostedCluster labelled with this HostedClusterDeployment: the hub binds it to none of them while a control plane may run on each; delete the stale HostedClusters",
		name, strings.Join(running, ", "))}, nil
}

// acrossMove is the binding of a HostedClusterDeployment whose
// ManifestWork (name) is in several management clusters' namespaces
// because a backup caught it in the middle of a relocation: the cluster
// its hcdstatus.AnnotationBoundTo names, when every other one is that
// relocation's copy (hosting.AnnotationRelocationCopy, of that cluster)
// or the paused source of a move that switched (the pause work pauseName
// next to it); "" otherwise. The others are returned; the relocation
// controller undoes or finishes the move (relocation/leftovers.go). Pure.
func acrossMove(works []workv1.ManifestWork, name, pauseName, boundTo string) (string, []string) {
	if boundTo == "" {
		return "", nil
	}
	paused := map[string]bool{}
	for i := range works {
		if works[i].Name == pauseName {
			paused[works[i].Namespace] = true
		}
	}
	found := false
	var others []string
	for i := range works {
		w := &works[i]
		switch {
		case w.Name != name:
		case w.Namespace == boundTo:
			found = true
		case w.Annotations[hosting.AnnotationRelocationCopy] == boundTo || paused[w.Namespace]:
			others = append(others, w.Namespace)
		default:
			return "", nil
		}
	}
	if !found {
		return "", nil
	}
	slices.Sort(others)
	return boundTo, others
}

// recover binds hcd where its ManifestWork is, or says why nothing is
// decided; done is false when hcd is to be decided as new.
func (r *Reconciler) recover(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) (res ctrl.Result, done bool, err error) {
	rc, err := recoverBinding(ctx, r.client, hcd, true)
	if err != nil || !rc.found() {
		return ctrl.Result{}, false, err
	}
	if rc.cluster == "" {
		// Retried when a ManifestWork appears or goes (recoveryEvents),
		// and periodically.
		return ctrl.Result{RequeueAfter: r.opts.RetryInterval}, true, r.setUnscheduled(ctx, hcd, rc.reason, rc.message)
	}
	cond := metav1.Condition{Type: v1alpha1.ConditionScheduled, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonBindingRecovered,
		Message: fmt.Sprintf("bound to management cluster %s, where its ManifestWork %s is (status.hostingCluster was empty: its status was lost, as in a backup restore; not decided anew)",
			rc.cluster, hosting.WorkName(hcd.Namespace, hcd.Name))}
	if len(rc.moved) > 0 {
		cond.Message = fmt.Sprintf("bound to management cluster %s, where its ManifestWork %s is and annotation %s says it was bound; its ManifestWork in %s is a relocation's, caught by a backup mid-move, which the relocation controller undoes (status.hostingCluster was empty: its status was lost, as in a backup restore; not decided anew)",
			rc.cluster, hosting.WorkName(hcd.Namespace, hcd.Name), hcdstatus.AnnotationBoundTo, strings.Join(rc.moved, ", "))
	}
	if rc.reported {
		cond.Message = fmt.Sprintf("bound to management cluster %s, whose agent reports its HostedCluster running (HostedClusterInventory; status.hostingCluster was empty and its ManifestWork was gone, as in a backup restore; not decided anew)", rc.cluster)
	}
	conds, _ := hcdstatus.Conditions(hcd.Status.Conditions, []metav1.Condition{cond}, hcd.Generation, metav1.Now())
	apply := hcdac.HostedClusterDeployment(hcd.Name, hcd.Namespace).
		WithResourceVersion(hcd.ResourceVersion).
		WithStatus(hcdac.HostedClusterDeploymentStatus().
			WithHostingCluster(rc.cluster).
			WithConditions(hcdstatus.ApplyConditions(conds)...))
	// Counted by the next decisions before the cache shows it.
	key := client.ObjectKeyFromObject(hcd)
	r.assumed.assume(key, hcd.UID, rc.cluster, Occupies(hcd))
	if err := hcdstatus.Apply(ctx, r.client, apply, FieldManager); err != nil {
		r.assumed.forget(key, hcd.UID)
		return ctrl.Result{}, true, fmt.Errorf("recovering the binding of %s: %w", key, err)
	}
	recovered.Inc()
	hcdstatus.RecordTransitions(r.recorder, hcd, rc.cluster, hcd.Status.Conditions, conds)
	return ctrl.Result{}, true, nil
}

// hcdOfWork maps a hosted cluster's ManifestWork to its HostedClusterDeployment.
func hcdOfWork(_ context.Context, o client.Object) []reconcile.Request {
	l := o.GetLabels()
	if l[hosting.LabelHCDNamespace] == "" || l[hosting.LabelHCDName] == "" || o.GetName() != hosting.WorkName(l[hosting.LabelHCDNamespace], l[hosting.LabelHCDName]) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: l[hosting.LabelHCDNamespace], Name: l[hosting.LabelHCDName]}}}
}

// recoveryEvents passes what changes recoverBinding's answer: a ManifestWork
// created, deleted or starting to be deleted; not the work agent's status
// updates, which are most of a ManifestWork's events.
var recoveryEvents = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return true },
	DeleteFunc: func(event.DeleteEvent) bool { return true },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
	},
}
