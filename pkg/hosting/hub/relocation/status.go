package relocation

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	hcdac "github.com/hcp-fleet/hcp-fleet/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// StatusFieldManager is the field manager of the HostedClusterDeployment's
// Relocating condition, the relocation controller's only write to it.
const StatusFieldManager = "hcp-fleet-relocation"

// Reasons a relocation is refused or waits, besides Ready's and
// Destination's.
const (
	ReasonHCDNotFound          = "HostedClusterDeploymentNotFound"
	ReasonRelocationInProgress = "RelocationInProgress"
	ReasonQueued               = "Queued"
)

// Competing names the other relocation of the same HostedClusterDeployment
// that goes first ("" when hcr does): one already running, else the oldest
// of those not started (by creation, then name). Pure.
func Competing(hcr *v1alpha1.HostedClusterRelocation, all []v1alpha1.HostedClusterRelocation) string {
	for i := range all {
		o := &all[i]
		if o.UID == hcr.UID || o.Namespace != hcr.Namespace || o.Spec.HostedClusterDeployment != hcr.Spec.HostedClusterDeployment {
			continue
		}
		p := Phase(o.Status.Phase)
		switch {
		case p.Final():
		case p != "":
			return o.Name
		case before(o, hcr):
			return o.Name
		}
	}
	return ""
}

// Active counts the relocations that run (started, not ended). Pure.
func Active(all []v1alpha1.HostedClusterRelocation) int {
	n := 0
	for i := range all {
		if p := Phase(all[i].Status.Phase); p != "" && !p.Final() {
			n++
		}
	}
	return n
}

// Admit says whether hcr, not started yet, may start now: fewer than bound
// relocations run, counting those not started that asked before it (first
// come, first served: two admins draining at once share the bound in the
// order their relocations were created), and if not, why. Pure.
func Admit(hcr *v1alpha1.HostedClusterRelocation, all []v1alpha1.HostedClusterRelocation, bound int) (bool, string) {
	active, ahead := Active(all), 0
	for i := range all {
		o := &all[i]
		if o.UID != hcr.UID && o.Status.Phase == "" && o.DeletionTimestamp == nil && before(o, hcr) {
			ahead++
		}
	}
	if active+ahead < bound {
		return true, ""
	}
	return false, fmt.Sprintf("%d relocations run and %d asked before it (the hub's --relocation-concurrency is %d): it starts when one ends",
		active, ahead, bound)
}

// before: a was created before b (by creation, then name).
func before(a, b *v1alpha1.HostedClusterRelocation) bool {
	return a.CreationTimestamp.Before(&b.CreationTimestamp) ||
		a.CreationTimestamp.Equal(&b.CreationTimestamp) && a.Name < b.Name
}

// setProgress sets the relocation's own condition.
func setProgress(st *v1alpha1.HostedClusterRelocationStatus, generation int64, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionRelocationProgressing, Status: status,
		Reason: reason, Message: kubeutil.ConditionMessage(message), ObservedGeneration: generation})
}

// writeStatus applies mutate to hcr's status and writes it when it changed.
func (r *Reconciler) writeStatus(ctx context.Context, hcr *v1alpha1.HostedClusterRelocation, mutate func(*v1alpha1.HostedClusterRelocationStatus)) error {
	before := hcr.DeepCopy()
	if mutate != nil {
		mutate(&hcr.Status)
	}
	hcr.Status.ObservedGeneration = hcr.Generation
	if equality.Semantic.DeepEqual(before.Status, hcr.Status) {
		return nil
	}
	return r.client.Status().Patch(ctx, hcr, client.MergeFrom(before))
}

// transition records phase next with why, on the relocation (status and an
// Event) and on the HostedClusterDeployment (its Relocating condition and
// an Event).
func (r *Reconciler) transition(ctx context.Context, hcr *v1alpha1.HostedClusterRelocation, hcd *v1alpha1.HostedClusterDeployment,
	next Phase, reason, message string, mutate func(*v1alpha1.HostedClusterRelocationStatus)) error {
	status := metav1.ConditionTrue
	if next.Final() {
		status = metav1.ConditionFalse
	}
	kind := corev1.EventTypeNormal
	if next == PhaseFailed || next == PhaseRollingBack || next == PhaseRolledBack {
		kind = corev1.EventTypeWarning
	}
	// The HCD's condition first: once the relocation records the phase,
	// nothing is left to write for it (a failed write is retried with the
	// whole transition).
	if hcd != nil {
		if err := r.setRelocating(ctx, hcd, status, reason, message); err != nil {
			return err
		}
	}
	if err := r.writeStatus(ctx, hcr, func(st *v1alpha1.HostedClusterRelocationStatus) {
		if mutate != nil {
			mutate(st)
		}
		if Phase(st.Phase) != next {
			st.Phase = string(next)
			st.PhaseTransitionTime = ptrNow()
		}
		setProgress(st, hcr.Generation, status, reason, message)
	}); err != nil {
		return err
	}
	r.recorder.Event(hcr, kind, reason, message)
	if hcd != nil {
		r.recorder.Eventf(hcd, kind, reason, "HostedClusterRelocation %s: %s", hcr.Name, message)
	}
	return nil
}

// holdEnded says, for each reason a phase holds with, what ended it.
var holdEnded = map[string]string{ReasonSourceUnavailable: "the source's management cluster reports again"}

// hold records why the phase holds (reason, message) on the relocation's
// and the HostedClusterDeployment's conditions, with Events when the
// reason changed; with reason "", it replaces a hold's reason, once it
// ended, by the phase's. record is applied to the status as step's is.
func (r *Reconciler) hold(ctx context.Context, hcr *v1alpha1.HostedClusterRelocation, hcd *v1alpha1.HostedClusterDeployment,
	reason, message string, record func(*v1alpha1.HostedClusterRelocationStatus)) error {
	cur := Phase(hcr.Status.Phase)
	// Read before writeStatus changes the condition in place.
	prev := ""
	if c := meta.FindStatusCondition(hcr.Status.Conditions, v1alpha1.ConditionRelocationProgressing); c != nil {
		prev = c.Reason
	}
	if reason == "" {
		ended, held := holdEnded[prev]
		if !held {
			return r.writeStatus(ctx, hcr, record)
		}
		reason, message = string(cur), fmt.Sprintf("%s: %s", cur, ended)
	}
	if err := r.setRelocating(ctx, hcd, metav1.ConditionTrue, reason, message); err != nil {
		return err
	}
	if err := r.writeStatus(ctx, hcr, func(st *v1alpha1.HostedClusterRelocationStatus) {
		if record != nil {
			record(st)
		}
		setProgress(st, hcr.Generation, metav1.ConditionTrue, reason, message)
	}); err != nil {
		return err
	}
	if prev != reason {
		kind := corev1.EventTypeNormal
		if _, held := holdEnded[reason]; held {
			kind = corev1.EventTypeWarning
		}
		r.recorder.Event(hcr, kind, reason, message)
		r.recorder.Eventf(hcd, kind, reason, "HostedClusterRelocation %s: %s", hcr.Name, message)
	}
	return nil
}

// end is a transition to a final phase.
func (r *Reconciler) end(ctx context.Context, hcr *v1alpha1.HostedClusterRelocation, hcd *v1alpha1.HostedClusterDeployment, final Phase, reason, message string) error {
	return r.transition(ctx, hcr, hcd, final, reason, message, nil)
}

// setRelocating applies the HostedClusterDeployment's Relocating condition
// under the relocation's own field manager, only when it changed.
func (r *Reconciler) setRelocating(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, status metav1.ConditionStatus, reason, message string) error {
	cond := metav1.Condition{Type: v1alpha1.ConditionRelocating, Status: status, Reason: reason, Message: message}
	conds, changed := hcdstatus.Conditions(hcd.Status.Conditions, []metav1.Condition{cond}, hcd.Generation, metav1.Now())
	if !changed {
		return nil
	}
	return client.IgnoreNotFound(hcdstatus.Apply(ctx, r.client, hcdac.HostedClusterDeployment(hcd.Name, hcd.Namespace).
		WithStatus(hcdac.HostedClusterDeploymentStatus().WithConditions(hcdstatus.ApplyConditions(conds)...)), StatusFieldManager))
}

func ptrNow() *metav1.Time {
	now := metav1.Now()
	return &now
}
