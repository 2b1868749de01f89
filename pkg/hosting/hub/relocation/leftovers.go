package relocation

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hubindex"
)

// A hub restored from a backup taken in the middle of a move.
//
// ACM's backup takes what carries hosting.LabelBackup: the
// HostedClusterDeployment, the delivery's ManifestWork on the source, the
// relocation's copy on the destination (DestinationWork keeps the
// delivery's labels) and the pause work (PauseWork), but not the
// HostedClusterRelocation. Its status, the only record of the phase, the
// destination decided and the snapshot, would come back empty, and a
// status-less request would start a move over while a copy may already run
// on another cluster. So the restored hub does not resume such a move; it
// undoes what is left of it, level-triggered, from what it finds:
//
//   - the scheduler binds the HostedClusterDeployment where its
//     hcdstatus.AnnotationBoundTo says, the relocation's ManifestWorks
//     elsewhere notwithstanding (scheduling/recover.go, acrossMove);
//   - then, with no relocation of it running, every ManifestWork of the move
//     outside the binding is removed without destroying the cloud
//     resources the bound side uses (MarkKeepCloud first): the copy on a
//     destination never switched to, or the paused source of a move that
//     switched (its pause work removed first, orphaning, as CleaningSource
//     does);
//   - then the bound source, when paused, resumes (pausedUntil "false",
//     then the pause work removed once it reconciles again), as a
//     rollback does.
//
// The HostedClusterDeployment shows it as Relocating, reason
// RestoredMidMove. The admin asks for the move again if it still wants it.

// ReasonRestoredMidMove: a hub restored from a backup taken mid-move
// undoes what is left of the move.
const ReasonRestoredMidMove = "RestoredMidMove"

// The steps of undoing a move left behind (Leftovers).
const (
	// LeftoverNone: nothing of a move is left.
	LeftoverNone = ""
	// LeftoverWait: a ManifestWork of the move is being deleted.
	LeftoverWait = "Wait"
	// LeftoverUpdate: write Work (marked to keep the cloud resources).
	LeftoverUpdate = "Update"
	// LeftoverDelete: delete Work.
	LeftoverDelete = "Delete"
	// LeftoverResume: the pause work Work applies pausedUntil "false".
	LeftoverResume = "Resume"
)

// LeftoverStep is one step of undoing a move left behind.
type LeftoverStep struct {
	Action string
	Work   *workv1.ManifestWork
	// Message says why, for the condition and the Event.
	Message string
}

// Leftovers is the next step of undoing what a move left of the
// HostedClusterDeployment whose ManifestWorks (the delivery's, workName,
// and the pause works, pauseName, in any cluster's namespace) are works,
// bound to bound, whose hosting namespace is hostingNamespace; lost says
// whether a cluster's ManagedCluster is unavailable (its work agent
// removes nothing until it reports again). Only a relocation's own
// ManifestWorks are touched: a copy (hosting.AnnotationRelocationCopy), a
// paused source (a pause work next to it) or one already marked to keep
// the cloud resources; any other is left alone. Pure.
func Leftovers(bound, hostingNamespace, workName, pauseName string, works []workv1.ManifestWork, lost func(cluster string) bool) (LeftoverStep, error) {
	pauses, delivered := map[string]*workv1.ManifestWork{}, map[string]bool{}
	for i := range works {
		switch w := &works[i]; w.Name {
		case pauseName:
			pauses[w.Namespace] = w
		case workName:
			delivered[w.Namespace] = true
		}
	}
	for i := range works {
		w := &works[i]
		if w.Name != workName || w.Namespace == bound {
			continue
		}
		if w.DeletionTimestamp != nil {
			if lost(w.Namespace) {
				// Asked for: its agent removes it when it reports again
				// (the copy was never bound; destinationReleased).
				continue
			}
			return LeftoverStep{Action: LeftoverWait, Work: w}, nil
		}
		marked, changed, err := MarkKeepCloud(w, hostingNamespace)
		if err != nil {
			return LeftoverStep{}, err
		}
		pause := pauses[w.Namespace]
		if w.Annotations[hosting.AnnotationRelocationCopy] == "" && pause == nil && changed {
			continue // not a relocation's
		}
		what := fmt.Sprintf("the ManifestWork %s/%s left by a move", w.Namespace, w.Name)
		switch {
		case changed:
			return LeftoverStep{Action: LeftoverUpdate, Work: marked, Message: what + " is marked to keep the cloud resources " + bound + " uses, then removed"}, nil
		case pause != nil && pause.DeletionTimestamp == nil:
			// First, or it would create the HostedCluster again once the
			// ManifestWork deleted it. Orphaning: the copy stays paused.
			return LeftoverStep{Action: LeftoverDelete, Work: pause, Message: "the pause work of " + what + " is removed first"}, nil
		case pause != nil:
			return LeftoverStep{Action: LeftoverWait, Work: pause}, nil
		case !lost(w.Namespace) && !Applied(w):
			return LeftoverStep{Action: LeftoverWait, Work: w}, nil
		}
		return LeftoverStep{Action: LeftoverDelete, Work: w, Message: what + " is removed, keeping the cloud resources " + bound + " uses"}, nil
	}
	for cluster, pause := range pauses {
		if cluster != bound && !delivered[cluster] && pause.DeletionTimestamp == nil {
			return LeftoverStep{Action: LeftoverDelete, Work: pause, Message: "the pause work left in " + cluster + " by a move is removed"}, nil
		}
	}
	pause := pauses[bound]
	switch {
	case pause == nil:
		return LeftoverStep{}, nil
	case pause.DeletionTimestamp != nil:
		return LeftoverStep{Action: LeftoverWait, Work: pause}, nil
	case !Observe(pause).Running:
		return LeftoverStep{Action: LeftoverResume, Work: pause, Message: "the source on " + bound + ", paused by a move, resumes"}, nil
	}
	return LeftoverStep{Action: LeftoverDelete, Work: pause, Message: "the source on " + bound + " reconciles again: its pause work is removed"}, nil
}

// leftovers undoes, for each HostedClusterDeployment, what a move left
// behind with no HostedClusterRelocation running it (Leftovers).
type leftovers struct{ *Reconciler }

// setupLeftovers registers the leftovers' controller: per
// HostedClusterDeployment, woken by its ManifestWorks (feedback included:
// the resumed source's ReconciliationActive).
func setupLeftovers(mgr ctrl.Manager, r *Reconciler) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("hcd-relocation-leftovers").
		For(&v1alpha1.HostedClusterDeployment{}).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			l := o.GetLabels()
			if l[hosting.LabelHCDNamespace] == "" || l[hosting.LabelHCDName] == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: l[hosting.LabelHCDNamespace], Name: l[hosting.LabelHCDName]}}}
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(&leftovers{r})
}

// Reconcile makes one step of undoing what a move left of one
// HostedClusterDeployment; it writes nothing when nothing is left.
func (l *leftovers) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	hcd := &v1alpha1.HostedClusterDeployment{}
	if err := l.client.Get(ctx, req.NamespacedName, hcd); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	bound := hcd.Status.HostingCluster
	if bound == "" || hcd.DeletionTimestamp != nil {
		// Unbound: the scheduler recovers the binding first (its write
		// wakes this). Being deleted: the delivery's finalizer's.
		return ctrl.Result{}, nil
	}
	var works workv1.ManifestWorkList
	if err := l.client.List(ctx, &works, client.MatchingFields{hubindex.WorkHCD: hubindex.WorkHCDKey(req.Namespace, req.Name)}); err != nil {
		return ctrl.Result{}, err
	}
	step, err := Leftovers(bound, hostingNamespace(hcd), hosting.WorkName(hcd.Namespace, hcd.Name), PauseWorkName(hcd.Namespace, hcd.Name), works.Items,
		func(cluster string) bool { return l.clusterLost(ctx, cluster) })
	if err != nil {
		return ctrl.Result{}, err
	}
	if step.Action == LeftoverNone {
		return ctrl.Result{}, l.settled(ctx, hcd)
	}
	// A move that runs owns its ManifestWorks. From the API server: one
	// started a moment ago may not be in the cache, its pause work may.
	var hcrs v1alpha1.HostedClusterRelocationList
	if err := l.reader.List(ctx, &hcrs, client.InNamespace(hcd.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	for i := range hcrs.Items {
		if hcrs.Items[i].Spec.HostedClusterDeployment == hcd.Name && !Phase(hcrs.Items[i].Status.Phase).Final() {
			return ctrl.Result{}, nil
		}
	}
	if step.Action == LeftoverWait {
		return ctrl.Result{RequeueAfter: l.opts.PollInterval}, nil
	}
	if err := l.setRelocating(ctx, hcd, metav1.ConditionTrue, ReasonRestoredMidMove,
		"a move of this hosted cluster was caught by a backup restore, and the restored hub has no record of it: it is undone ("+step.Message+"); ask for it again if it is still wanted"); err != nil {
		return ctrl.Result{}, err
	}
	l.recorder.Event(hcd, corev1.EventTypeWarning, ReasonRestoredMidMove, step.Message)
	switch step.Action {
	case LeftoverUpdate:
		err = l.client.Update(ctx, step.Work)
	case LeftoverDelete:
		err = l.remove(ctx, step.Work)
	case LeftoverResume:
		err = l.applyPause(ctx, step.Work.Namespace, hcd, step.Work, false)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: l.opts.PollInterval}, nil
}

// settled ends the Relocating condition RestoredMidMove once nothing of
// the move is left.
func (l *leftovers) settled(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) error {
	c := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionRelocating)
	if c == nil || c.Reason != ReasonRestoredMidMove || c.Status != metav1.ConditionTrue {
		return nil
	}
	return l.setRelocating(ctx, hcd, metav1.ConditionFalse, ReasonRestoredMidMove,
		"nothing is left of the move a backup restore interrupted: the hosted cluster runs on "+hcd.Status.HostingCluster+", where it is bound")
}
