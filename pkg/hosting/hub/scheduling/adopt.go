package scheduling

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// An adopted HostedClusterDeployment (pkg/hosting/hub/adoption) describes a
// HostedCluster that already runs: the scheduler binds it where the
// annotation hcdstatus.AnnotationAdoptedFrom says, and nowhere else, with
// the Scheduled condition's reason Adopted. No filter runs: the adoption's
// checks (the hosting namespace, the names, the infraID) came first, and
// the hosted cluster already takes its place on that cluster. Its tenant
// policy still does (Reconcile asks it before).

// ReasonAdoptionMismatch: the adoption annotation names another cluster,
// namespace or name than the deployment's spec.
const ReasonAdoptionMismatch = "AdoptionMismatch"

// AdoptedTarget is where an adopted hcd is bound: the annotation's cluster
// when it agrees with hcd's spec (spec.hostingCluster, spec.hostingNamespace
// and the name), else "" and why. adopted is false for a deployment that
// was not adopted. Pure.
func AdoptedTarget(hcd *v1alpha1.HostedClusterDeployment) (cluster, mismatch string, adopted bool) {
	if _, ok := hcd.Annotations[hcdstatus.AnnotationAdoptedFrom]; !ok {
		return "", "", false
	}
	c, ns, name, ok := hcdstatus.AdoptedFrom(hcd)
	hostingNamespace := hcd.Spec.HostingNamespace
	if hostingNamespace == "" {
		hostingNamespace = v1alpha1.DefaultHostingNamespace
	}
	if !ok || c != hcd.Spec.HostingCluster || ns != hostingNamespace || name != hcd.Name {
		return "", fmt.Sprintf("annotation %s is %q, which does not name the HostedCluster %s/%s on spec.hostingCluster %s: the hub binds an adopted deployment only where it runs",
			hcdstatus.AnnotationAdoptedFrom, hcd.Annotations[hcdstatus.AnnotationAdoptedFrom], hostingNamespace, hcd.Name, hcd.Spec.HostingCluster), true
	}
	return c, "", true
}

// bindAdopted binds an adopted hcd where it runs, or says why not; done is
// false for a deployment that was not adopted.
func (r *Reconciler) bindAdopted(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) (res ctrl.Result, done bool, err error) {
	cluster, mismatch, adopted := AdoptedTarget(hcd)
	if !adopted {
		return ctrl.Result{}, false, nil
	}
	if cluster == "" {
		return ctrl.Result{}, true, r.setUnscheduled(ctx, hcd, ReasonAdoptionMismatch, mismatch)
	}
	key := client.ObjectKeyFromObject(hcd)
	// Counted as any binding is, so that the next decisions see it.
	r.decide.Lock()
	r.assumed.assume(key, hcd.UID, cluster, Occupies(hcd))
	r.decide.Unlock()
	cond := metav1.Condition{Type: v1alpha1.ConditionScheduled, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonAdopted,
		Message: fmt.Sprintf("bound to management cluster %s, where its HostedCluster ran before a fleet admin adopted it (not decided)", cluster)}
	if err := r.writeBinding(ctx, hcd, cluster, cond); err != nil {
		r.assumed.forget(key, hcd.UID)
		return ctrl.Result{}, true, client.IgnoreNotFound(err)
	}
	bindings.Inc()
	return ctrl.Result{}, true, nil
}
