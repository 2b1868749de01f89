// Package exportaccess gives each management cluster's agent on the hub
// the right to write exactly the exported admin kubeconfigs of the
// HostedClusterDeployments bound to that cluster, and nothing else among the
// Secrets of its cluster namespace (where OCM and ACM keep the cluster's
// import and bootstrap Secrets).
//
// For every cluster namespace with an hcp-fleet ManagedClusterAddOn it keeps
// a Role and RoleBinding named RoleName: get, create, patch and delete of
// Secrets, limited by resourceNames to hosting.ExportedKubeconfigName of each
// HostedClusterDeployment whose status.hostingCluster is that cluster, bound
// to the cluster's agent group only. With no such HostedClusterDeployment
// there is no Role (an empty resourceNames would mean every name). Both are
// owned by the ManagedClusterAddOn, so they go with the add-on. It runs in
// the hub program, on the leader only; it reads HostedClusterDeployments
// and ManagedClusterAddOns from the hub's cache and its own Roles and
// RoleBindings through a cache limited to their name.
package exportaccess

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"open-cluster-management.io/addon-framework/pkg/agent"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hubindex"
)

// RoleName names the Role and the RoleBinding in each cluster namespace.
const RoleName = "open-cluster-management:" + addon.Name + ":agent-kubeconfigs"

// FieldManager owns them.
const FieldManager = "hcp-fleet-export-access"

// Verbs the agent has on its exports: read one, apply it (server-side apply,
// which creates by name), delete it.
var Verbs = []string{"get", "create", "patch", "delete"}

// DesiredRole is the Role for cluster given the HostedClusterDeployments
// bound to it, or nil when none is.
func DesiredRole(cluster string, bound []v1alpha1.HostedClusterDeployment) *rbacv1.Role {
	var names []string
	for i := range bound {
		if bound[i].Status.HostingCluster == cluster {
			names = append(names, hosting.ExportedKubeconfigName(bound[i].Namespace, bound[i].Name))
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: RoleName},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"},
			ResourceNames: slices.Compact(names), Verbs: Verbs}},
	}
}

// DesiredBinding binds RoleName in cluster's namespace to that cluster's
// agent group only.
func DesiredBinding(cluster string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: RoleName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: RoleName},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind,
			Name: agent.DefaultGroups(cluster, addon.Name)[0]}},
	}
}

// Reconciler keeps one cluster namespace's Role and RoleBinding; the
// request's Name is the cluster.
type Reconciler struct {
	client client.Client
}

// Setup registers the controller with the hub manager (after
// hubindex.AddIndexes). The manager's cache must hold Roles and
// RoleBindings named RoleName (CacheSelector).
func Setup(mgr ctrl.Manager) error {
	r := &Reconciler{client: mgr.GetClient()}
	byNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("kubeconfig-export-access").
		Watches(&v1alpha1.HostedClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if host := o.(*v1alpha1.HostedClusterDeployment).Status.HostingCluster; host != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: host}}}
			}
			return nil
		})).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, byNamespace).
		// Drift: an edited or deleted Role or RoleBinding is put back.
		Watches(&rbacv1.Role{}, byNamespace).
		Watches(&rbacv1.RoleBinding{}, byNamespace).
		Complete(r)
}

// Reconcile makes the cluster's Role and RoleBinding match the bound
// HostedClusterDeployments; it writes only what differs.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster := req.Name
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	err := r.client.Get(ctx, types.NamespacedName{Namespace: cluster, Name: addon.Name}, mca)
	if client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	}
	var role *rbacv1.Role
	if err == nil { // no add-on, no agent: nothing to grant (and the owner GC removes what was)
		var bound v1alpha1.HostedClusterDeploymentList
		if err := r.client.List(ctx, &bound, client.MatchingFields{hubindex.HostingCluster: cluster}); err != nil {
			return reconcile.Result{}, err
		}
		role = DesiredRole(cluster, bound.Items)
	}
	if role == nil {
		return reconcile.Result{}, r.remove(ctx, cluster)
	}
	owner := metav1.NewControllerRef(mca, schema.GroupVersionKind{Group: addonv1alpha1.GroupName, Version: "v1alpha1", Kind: "ManagedClusterAddOn"})
	binding := DesiredBinding(cluster)
	role.OwnerReferences = []metav1.OwnerReference{*owner}
	binding.OwnerReferences = []metav1.OwnerReference{*owner}

	liveRole := &rbacv1.Role{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(role), liveRole); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	} else if err != nil || !equality.Semantic.DeepEqual(liveRole.Rules, role.Rules) || !ownedBy(liveRole, owner) {
		if err := r.apply(ctx, role); err != nil {
			return reconcile.Result{}, fmt.Errorf("applying the Role %s/%s: %w", cluster, RoleName, err)
		}
	}
	liveBinding := &rbacv1.RoleBinding{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(binding), liveBinding); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	} else if err != nil || !equality.Semantic.DeepEqual(liveBinding.Subjects, binding.Subjects) || !ownedBy(liveBinding, owner) {
		if err == nil && liveBinding.RoleRef != binding.RoleRef {
			// A roleRef cannot change: make the binding anew.
			if err := r.client.Delete(ctx, liveBinding); client.IgnoreNotFound(err) != nil {
				return reconcile.Result{}, err
			}
		}
		if err := r.apply(ctx, binding); err != nil {
			return reconcile.Result{}, fmt.Errorf("applying the RoleBinding %s/%s: %w", cluster, RoleName, err)
		}
	}
	return reconcile.Result{}, nil
}

// ownedBy reports whether o's controller is owner.
func ownedBy(o metav1.Object, owner *metav1.OwnerReference) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.UID == owner.UID
}

// apply server-side applies obj (typed objects carry their TypeMeta).
func (r *Reconciler) apply(ctx context.Context, obj client.Object) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	target := obj.DeepCopyObject().(client.Object)
	return r.client.Patch(ctx, target, client.RawPatch(types.ApplyPatchType, data), client.FieldOwner(FieldManager), client.ForceOwnership)
}

// remove deletes the Role and RoleBinding, if any.
func (r *Reconciler) remove(ctx context.Context, cluster string) error {
	for _, obj := range []client.Object{
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: RoleName}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: RoleName}},
	} {
		if err := r.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if err := r.client.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())}); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
