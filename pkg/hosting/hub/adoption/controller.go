package adoption

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/delivery"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// FieldManager is the hub's field manager on an adoption's status: it owns
// the Adopted condition, hostedClusterDeployment and adoptedUID; the agent
// owns observed and Observed.
const FieldManager = "hcp-fleet-adoption"

// Options configure the adoption controller.
type Options struct {
	// ConfigNamespaces are where HostingConfigs count from (as for the
	// scheduler): the hosting namespaces a cluster allows.
	ConfigNamespaces hostmodel.ConfigNamespaces
}

// Reconciler is the hub's adoption controller: it checks an adoption the
// agent answered, creates its HostedClusterDeployment, and follows the
// takeover until Adopted. The scheduler binds the deployment (reason
// Adopted) and the delivery takes the HostedCluster over; this controller
// writes only the deployment, once, and the adoption's status.
type Reconciler struct {
	client  client.Client
	opts    Options
	tenancy *tenancy.Resolver
}

// Setup registers the controller with mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	r := &Reconciler{client: mgr.GetClient(), opts: opts, tenancy: &tenancy.Resolver{Reader: mgr.GetClient()}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("hcd-adoption").
		For(&v1alpha1.HostedClusterAdoption{}).
		// The deployment's binding and delivery, and the inventory's
		// labels, are what the takeover waits for.
		Watches(&v1alpha1.HostedClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(r.adoptionsOfDeployment)).
		Watches(&v1alpha1.HostedClusterInventory{}, handler.EnqueueRequestsFromMapFunc(r.adoptionsIn)).
		Complete(r)
}

// adoptionsOfDeployment maps an adopted deployment to the adoptions of
// the cluster it was adopted from.
func (r *Reconciler) adoptionsOfDeployment(ctx context.Context, o client.Object) []reconcile.Request {
	cluster, _, _, ok := hcdstatus.AdoptedFrom(&v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Annotations: o.GetAnnotations()}})
	if !ok {
		return nil
	}
	return r.adoptionsIn(ctx, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: cluster}})
}

// adoptionsIn maps an object to the adoptions of its namespace (a
// management cluster's).
func (r *Reconciler) adoptionsIn(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.HostedClusterAdoptionList
	if err := r.client.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing HostedClusterAdoptions", "namespace", o.GetNamespace())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// status is the hub's part of an adoption's status.
type status struct {
	deployment, uid string
	adopted         metav1.Condition
}

// Reconcile moves one adoption on, writing only what changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	hca := &v1alpha1.HostedClusterAdoption{}
	if err := r.client.Get(ctx, req.NamespacedName, hca); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !hca.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	st, err := r.next(ctx, hca)
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.write(ctx, hca, st)
}

// next decides the adoption's status, creating the deployment when the
// checks pass.
func (r *Reconciler) next(ctx context.Context, hca *v1alpha1.HostedClusterAdoption) (status, error) {
	st := status{deployment: hca.Status.HostedClusterDeployment, uid: hca.Status.AdoptedUID}
	refuse := func(reason, format string, args ...any) (status, error) {
		st.adopted = metav1.Condition{Type: v1alpha1.ConditionAdopted, Status: metav1.ConditionFalse, Reason: reason, Message: fmt.Sprintf(format, args...)}
		return st, nil
	}
	areq := RequestOf(hca)
	if st.deployment != "" {
		// Created: follow the takeover; never checked or created again.
		hcd := &v1alpha1.HostedClusterDeployment{}
		if err := r.client.Get(ctx, types.NamespacedName{Namespace: areq.IntoNamespace, Name: areq.IntoName}, hcd); err != nil {
			if apierrors.IsNotFound(err) {
				return refuse(ReasonDeploymentGone, "HostedClusterDeployment %s was deleted", st.deployment)
			}
			return st, err
		}
		inv := &v1alpha1.HostedClusterInventory{}
		if err := r.client.Get(ctx, types.NamespacedName{Namespace: hca.Namespace, Name: v1alpha1.InventoryName}, inv); err != nil {
			if !apierrors.IsNotFound(err) {
				return st, err
			}
			inv = nil
		}
		st.adopted = TakeoverCondition(hca, hcd, inv)
		return st, nil
	}
	observed := meta.FindStatusCondition(hca.Status.Conditions, v1alpha1.ConditionObserved)
	switch {
	case observed == nil || observed.ObservedGeneration != hca.Generation:
		return refuse(ReasonWaitingForAgent, "waiting for the hcp-fleet agent of %s to report HostedCluster %s/%s", hca.Namespace, areq.Namespace, areq.Name)
	case observed.Status != metav1.ConditionTrue || hca.Status.Observed == nil:
		return refuse(ReasonNotObserved, "the agent of %s: %s: %s", hca.Namespace, observed.Reason, observed.Message)
	case hca.Status.Observed.Deleting:
		return refuse(ReasonHostedClusterChanged, "HostedCluster %s/%s is being deleted", areq.Namespace, areq.Name)
	}
	// Created before a status write that did not land: carry on with it.
	existing := &v1alpha1.HostedClusterDeployment{}
	switch err := r.client.Get(ctx, types.NamespacedName{Namespace: areq.IntoNamespace, Name: areq.IntoName}, existing); {
	case err == nil && existing.Annotations[AnnotationAdoptedFrom] == areq.Cluster+"/"+areq.Namespace+"/"+areq.Name:
		st.deployment, st.uid = areq.IntoNamespace+"/"+areq.IntoName, hca.Status.Observed.UID
		return refuse(ReasonTakingOver, "HostedClusterDeployment %s exists; the hub binds it to %s and takes HostedCluster %s/%s over", st.deployment, hca.Namespace, areq.Namespace, areq.Name)
	case client.IgnoreNotFound(err) != nil:
		return st, err
	}
	in, err := r.inputs(ctx, hca.Namespace)
	if err != nil {
		return st, err
	}
	if plan := Check(areq, in); !plan.Adoptable() {
		return refuse(plan.Reason, "%s", plan.Message)
	}
	u, err := Deployment(hca)
	if err != nil {
		return refuse(ReasonInvalidSpec, "%v", err)
	}
	// The references it has now stay where they are (the takeover keeps
	// them); the policy judges the spec as it runs.
	spec, err := delivery.SpecFrom(u)
	if err != nil {
		return refuse(ReasonInvalidSpec, "%v", err)
	}
	var kept []string
	for _, ref := range spec.References() {
		kept = append(kept, ref.Kind+"/"+ref.Name)
	}
	SetKeptReferences(u, kept)
	_, verdict, err := r.tenancy.Verdict(ctx, u, delivery.UnknownReferencesOf(u))
	if err != nil {
		return st, err
	}
	if len(verdict.List) > 0 {
		// Nothing is created: the HostedCluster runs on, unmanaged.
		return refuse(ReasonPolicyViolation, "not adopted into %s: %s", areq.IntoNamespace, verdict.Message())
	}
	if err := r.client.Create(ctx, u); err != nil {
		switch {
		case apierrors.IsAlreadyExists(err):
			return refuse(ReasonDeploymentExists, "HostedClusterDeployment %s/%s exists already", areq.IntoNamespace, areq.IntoName)
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
			return refuse(ReasonInvalidSpec, "the HostedClusterDeployment made from the agent's report was refused: %v", err)
		}
		return st, err
	}
	st.deployment, st.uid = areq.IntoNamespace+"/"+areq.IntoName, hca.Status.Observed.UID
	st.adopted = metav1.Condition{Type: v1alpha1.ConditionAdopted, Status: metav1.ConditionFalse, Reason: ReasonTakingOver,
		Message: fmt.Sprintf("created HostedClusterDeployment %s; the hub binds it to %s and takes HostedCluster %s/%s over", st.deployment, hca.Namespace, areq.Namespace, areq.Name)}
	return st, nil
}

// inputs reads what Check decides on, from the hub's cache.
func (r *Reconciler) inputs(ctx context.Context, cluster string) (Inputs, error) {
	var in Inputs
	var invs v1alpha1.HostedClusterInventoryList
	if err := r.client.List(ctx, &invs); err != nil {
		return in, err
	}
	in.Inventories = invs.Items
	var hcds v1alpha1.HostedClusterDeploymentList
	if err := r.client.List(ctx, &hcds); err != nil {
		return in, err
	}
	in.Deployments = hcds.Items
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: cluster, Name: addon.Name}, mca); err != nil {
		return in, client.IgnoreNotFound(err) // no add-on, no inventory: Check says so
	}
	cfg, err := hostmodel.HostingConfigOf(ctx, r.client, mca, r.opts.ConfigNamespaces)
	if err != nil {
		return in, err
	}
	if cfg != nil {
		in.HostingConfig, in.HostingConfigName = &cfg.Spec, cfg.Namespace+"/"+cfg.Name
	}
	return in, nil
}

// write applies the hub's status fields when they changed, keeping the
// Adopted condition's transition time while its status holds.
func (r *Reconciler) write(ctx context.Context, hca *v1alpha1.HostedClusterAdoption, st status) error {
	c := st.adopted
	c.ObservedGeneration = hca.Generation
	c.Message = kubeutil.ConditionMessage(c.Message)
	live := meta.FindStatusCondition(hca.Status.Conditions, v1alpha1.ConditionAdopted)
	if live != nil && live.Status == c.Status && live.Reason == c.Reason && live.Message == c.Message && live.ObservedGeneration == c.ObservedGeneration &&
		hca.Status.HostedClusterDeployment == st.deployment && hca.Status.AdoptedUID == st.uid {
		return nil
	}
	c.LastTransitionTime = metav1.Now()
	if live != nil && live.Status == c.Status {
		c.LastTransitionTime = live.LastTransitionTime
	}
	s := map[string]any{"conditions": []metav1.Condition{c}}
	if st.deployment != "" {
		s["hostedClusterDeployment"] = st.deployment
	}
	if st.uid != "" {
		s["adoptedUID"] = st.uid
	}
	target, patch, err := kubeutil.ApplyPatch(map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": v1alpha1.HostedClusterAdoptionKind,
		"metadata": map[string]any{"namespace": hca.Namespace, "name": hca.Name},
		"status":   s,
	})
	if err != nil {
		return err
	}
	if err := r.client.Status().Patch(ctx, target, patch, client.FieldOwner(FieldManager), client.ForceOwnership); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("HostedClusterAdoption %s/%s status: %w", hca.Namespace, hca.Name, err)
	}
	return nil
}
