package scheduling

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// The scheduler stays the only writer of status.hostingCluster, also when
// a hosted cluster moves: the relocation controller (pkg/hosting/hub/
// relocation) records status.switched on its HostedClusterRelocation once
// the destination runs the hosted cluster, and the scheduler, seeing that,
// moves the binding in one status write, with the Scheduled condition's
// reason Relocated (the only binding change the API's rule admits).

// RelocationTarget is where a relocation of hcd that switched moves its
// binding: the destination of the one HostedClusterRelocation in hcd's
// namespace that names it, is Switching with status.switched, and was
// started from the cluster hcd is bound to. "" when none. Pure.
func RelocationTarget(hcd *v1alpha1.HostedClusterDeployment, relocations []v1alpha1.HostedClusterRelocation) (destination, relocation string) {
	for i := range relocations {
		hcr := &relocations[i]
		st := hcr.Status
		if hcr.Spec.HostedClusterDeployment != hcd.Name || !st.Switched || st.Phase != v1alpha1.RelocationPhaseSwitching ||
			st.Source == "" || st.Source != hcd.Status.HostingCluster || st.Destination == "" || st.Destination == st.Source {
			continue
		}
		return st.Destination, hcr.Name
	}
	return "", ""
}

// rebind moves a bound hcd's binding to a switched relocation's
// destination; nothing when there is none.
func (r *Reconciler) rebind(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) error {
	var list v1alpha1.HostedClusterRelocationList
	if err := r.client.List(ctx, &list, client.InNamespace(hcd.Namespace)); err != nil {
		return err
	}
	destination, name := RelocationTarget(hcd, list.Items)
	if destination == "" {
		return nil
	}
	cond := metav1.Condition{Type: v1alpha1.ConditionScheduled, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonRelocated,
		Message: fmt.Sprintf("moved from management cluster %s to %s by HostedClusterRelocation %s", hcd.Status.HostingCluster, destination, name)}
	return r.writeBinding(ctx, hcd, destination, cond)
}

// relocatedHCD maps a HostedClusterRelocation to its HostedClusterDeployment.
func relocatedHCD(_ context.Context, o client.Object) []reconcile.Request {
	hcr, ok := o.(*v1alpha1.HostedClusterRelocation)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: hcr.Namespace, Name: hcr.Spec.HostedClusterDeployment}}}
}

// switchedRelocation passes the relocation events that may move a binding.
var switchedRelocation = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return switched(e.Object) },
	UpdateFunc:  func(e event.UpdateEvent) bool { return switched(e.ObjectNew) },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func switched(o client.Object) bool {
	hcr, ok := o.(*v1alpha1.HostedClusterRelocation)
	return ok && hcr.Status.Switched && hcr.Status.Phase == v1alpha1.RelocationPhaseSwitching
}

// endedRelocation passes the relocation events that free a slot: a move
// that ends (Done frees the source, Failed and RolledBack the destination
// it was counted on, MovingInto) or is deleted before it ended. Those
// retry every unscheduled HostedClusterDeployment at once, not at the
// periodic retry.
var endedRelocation = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	UpdateFunc:  func(e event.UpdateEvent) bool { return !ended(e.ObjectOld) && ended(e.ObjectNew) },
	DeleteFunc:  func(e event.DeleteEvent) bool { return !ended(e.Object) },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// ended says whether o is a relocation in a final phase.
func ended(o client.Object) bool {
	hcr, ok := o.(*v1alpha1.HostedClusterRelocation)
	return ok && v1alpha1.RelocationEnded(hcr.Status.Phase)
}

// MovingInto are the HostedClusterDeployments that relocations move onto
// cluster: decided there (status.destination) and not ended. Until the
// binding moves they are bound elsewhere, so the scheduler counts them on
// cluster as it counts its assumed bindings (Inputs.Moving): a drain and
// new HostedClusterDeployments do not both take its last free slot. Once
// bound there they are counted once (by UID). Pure.
func MovingInto(relocations []v1alpha1.HostedClusterRelocation, cluster string) []types.NamespacedName {
	var out []types.NamespacedName
	for i := range relocations {
		hcr := &relocations[i]
		if hcr.Status.Phase == "" || v1alpha1.RelocationEnded(hcr.Status.Phase) {
			continue
		}
		if hcr.Status.Destination == cluster {
			out = append(out, types.NamespacedName{Namespace: hcr.Namespace, Name: hcr.Spec.HostedClusterDeployment})
		}
	}
	return out
}

// MovingFrom is an Inputs.Moving reading through c: the relocations
// (listed with opts) and what each HostedClusterDeployment they move onto
// a cluster occupies (Occupying). The scheduler reads its cache, and only
// reads: client.UnsafeDisableDeepCopy, as it is called for every
// candidate of every decision.
func MovingFrom(c client.Reader, opts ...client.ListOption) func(context.Context, string) (map[types.UID][]string, error) {
	return func(ctx context.Context, cluster string) (map[types.UID][]string, error) {
		var list v1alpha1.HostedClusterRelocationList
		if err := c.List(ctx, &list, opts...); err != nil {
			return nil, err
		}
		return Occupying(ctx, c, list.Items, cluster)
	}
}

// Occupying is what the HostedClusterDeployments relocations move onto
// cluster (MovingInto) occupy there, by UID, read through c: nil when none.
// A deployment gone meanwhile occupies nothing.
func Occupying(ctx context.Context, c client.Reader, relocations []v1alpha1.HostedClusterRelocation, cluster string) (map[types.UID][]string, error) {
	var out map[types.UID][]string
	for _, key := range MovingInto(relocations, cluster) {
		hcd := &v1alpha1.HostedClusterDeployment{}
		if err := c.Get(ctx, key, hcd); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		if out == nil {
			out = map[types.UID][]string{}
		}
		out[hcd.UID] = Occupies(hcd)
	}
	return out, nil
}
