package kubeutil

import (
	"context"
	"fmt"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// BindFieldManager is the server-side-apply field manager of the
	// RoleBindings BindSelf writes.
	BindFieldManager = "hcp-fleet-agent"
	// BindLabel marks the RoleBindings BindSelf writes (value BindLabelValue),
	// which UnbindSelf removes.
	BindLabel      = "app.kubernetes.io/managed-by"
	BindLabelValue = "hcp-fleet"
)

// selfUser caches the caller's user name per client: it does not change
// while a client lives.
var selfUser sync.Map // client.Client -> string

// Self returns the user name the API server knows c's caller by (a
// SelfSubjectReview, which every authenticated user may create).
func Self(ctx context.Context, c client.Client) (string, error) {
	if u, ok := selfUser.Load(c); ok {
		return u.(string), nil
	}
	// Unstructured, so that any client's scheme will do.
	review := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": authenticationv1.SchemeGroupVersion.String(), "kind": "SelfSubjectReview"}}
	if err := c.Create(ctx, review); err != nil {
		return "", fmt.Errorf("asking the API server who the agent is: %w", err)
	}
	name, _, _ := unstructured.NestedString(review.Object, "status", "userInfo", "username")
	if name == "" {
		return "", fmt.Errorf("the API server did not say who the agent is")
	}
	selfUser.Store(c, name)
	return name, nil
}

// BindSelf gives c's caller the namespace-scoped grants of clusterRole in
// namespace ns: it server-side applies a RoleBinding named like the
// ClusterRole, to the caller's user, and waits until the authorizer allows
// probe (up to 30 s), so that the caller's next request in ns does not race
// the authorizer's informers. The agent's RBAC allows creating exactly these
// RoleBindings (by name) and binding exactly these ClusterRoles (bind by
// name), so that rights it needs only in namespaces known at run time (CAPI
// and hosting namespaces) are held there only, not cluster-wide.
func BindSelf(ctx context.Context, c client.Client, ns, clusterRole string, probe authorizationv1.ResourceAttributes) error {
	user, err := Self(ctx, c)
	if err != nil {
		return err
	}
	rb := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": rbacv1.SchemeGroupVersion.String(), "kind": "RoleBinding",
		"metadata": map[string]any{"name": clusterRole, "namespace": ns, "labels": map[string]any{BindLabel: BindLabelValue}},
		"roleRef":  map[string]any{"apiGroup": rbacv1.GroupName, "kind": "ClusterRole", "name": clusterRole},
		"subjects": []any{map[string]any{"apiGroup": rbacv1.GroupName, "kind": rbacv1.UserKind, "name": user}},
	}}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(rb), client.FieldOwner(BindFieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("binding ClusterRole %s in namespace %s: %w", clusterRole, ns, err)
	}
	probe.Namespace = ns
	allowed := func(ctx context.Context) (bool, error) {
		attrs, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&probe)
		if err != nil {
			return false, err
		}
		review := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": authorizationv1.SchemeGroupVersion.String(), "kind": "SelfSubjectAccessReview",
			"spec": map[string]any{"resourceAttributes": attrs}}}
		if err := c.Create(ctx, review); err != nil {
			return false, err
		}
		allowed, _, _ := unstructured.NestedBool(review.Object, "status", "allowed")
		return allowed, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, allowed); err != nil {
		return fmt.Errorf("waiting for the RoleBinding %s/%s to take effect: %w", ns, clusterRole, err)
	}
	return nil
}

// UnbindSelf deletes, in every namespace, the RoleBindings BindSelf made for
// clusterRole: those of its name that bind it and carry BindLabel. It lists
// them by a metadata.name field selector, which the API server authorizes as
// a list of that name, and deletes each by name (with its UID): the agent's
// RBAC names them. For the add-on's cleanup, so that no binding outlives
// the add-on (and comes back to life with a reinstalled one).
func UnbindSelf(ctx context.Context, c client.Client, clusterRole string) error {
	bindings, err := selfBindings(ctx, c, clusterRole)
	if err != nil {
		return err
	}
	for i := range bindings {
		rb := &bindings[i]
		// A hold (HoldBinding) would keep it past the add-on: the cleanup
		// runs once its holder is done.
		if len(rb.GetFinalizers()) > 0 {
			if err := SetFinalizers(ctx, c, rb, nil); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("releasing RoleBinding %s/%s: %w", rb.GetNamespace(), rb.GetName(), err)
			}
		}
		uid := rb.GetUID()
		if err := c.Delete(ctx, rb, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting RoleBinding %s/%s: %w", rb.GetNamespace(), rb.GetName(), err)
		}
	}
	return nil
}

// BoundNamespaces lists the namespaces in which BindSelf bound clusterRole
// (found as UnbindSelf finds them).
func BoundNamespaces(ctx context.Context, c client.Client, clusterRole string) ([]string, error) {
	bindings, err := selfBindings(ctx, c, clusterRole)
	if err != nil {
		return nil, err
	}
	namespaces := make([]string, 0, len(bindings))
	for _, rb := range bindings {
		namespaces = append(namespaces, rb.GetNamespace())
	}
	return namespaces, nil
}

// selfBindings are the RoleBindings BindSelf made for clusterRole, in every
// namespace: those of its name that bind it and carry BindLabel.
func selfBindings(ctx context.Context, c client.Client, clusterRole string) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("RoleBindingList"))
	if err := c.List(ctx, list, client.MatchingFields{"metadata.name": clusterRole}); err != nil {
		return nil, fmt.Errorf("listing the RoleBindings of ClusterRole %s: %w", clusterRole, err)
	}
	var out []unstructured.Unstructured
	for _, rb := range list.Items {
		kind, _, _ := unstructured.NestedString(rb.Object, "roleRef", "kind")
		name, _, _ := unstructured.NestedString(rb.Object, "roleRef", "name")
		if kind == "ClusterRole" && name == clusterRole && rb.GetLabels()[BindLabel] == BindLabelValue {
			out = append(out, rb)
		}
	}
	return out, nil
}

// HoldBinding puts finalizer f on the RoleBinding BindSelf made for
// clusterRole in ns (hold), or takes it off (!hold). A held binding outlives
// a deletion of its namespace until released, so that the caller keeps its
// grants there while it finishes its own finalizers (a namespace's deletion
// removes RoleBindings and other objects at the same time). It is a JSON
// merge patch of the finalizers alone, which the agent's RBAC allows by the
// binding's name; these bindings carry no other finalizer. Releasing a
// binding that is gone is not an error.
func HoldBinding(ctx context.Context, c client.Writer, ns, clusterRole, f string, hold bool) error {
	rb := &unstructured.Unstructured{}
	rb.SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("RoleBinding"))
	rb.SetNamespace(ns)
	rb.SetName(clusterRole)
	finalizers := []string{}
	if hold {
		finalizers = []string{f}
	}
	err := SetFinalizers(ctx, c, rb, finalizers)
	if !hold {
		err = client.IgnoreNotFound(err)
	}
	if err != nil {
		return fmt.Errorf("setting the hold on RoleBinding %s/%s: %w", ns, clusterRole, err)
	}
	return nil
}

// Binder binds one ClusterRole (BindSelf) in the namespaces a controller
// works in, once per namespace while the process lives, so that a
// controller may call Ensure on every reconcile.
type Binder struct {
	Client      client.Client
	ClusterRole string
	// Probe is a request the ClusterRole allows, asked about (in the
	// namespace) to know that the binding took effect.
	Probe authorizationv1.ResourceAttributes

	mu    sync.Mutex
	bound map[string]bool
}

// Ensure binds the ClusterRole in ns unless it did so before. A nil Binder
// binds nothing.
func (b *Binder) Ensure(ctx context.Context, ns string) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	done := b.bound[ns]
	b.mu.Unlock()
	if done {
		return nil
	}
	if err := BindSelf(ctx, b.Client, ns, b.ClusterRole, b.Probe); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bound == nil {
		b.bound = map[string]bool{}
	}
	b.bound[ns] = true
	return nil
}

// Forget makes the next Ensure in ns bind anew.
func (b *Binder) Forget(ns string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	delete(b.bound, ns)
	b.mu.Unlock()
}

// Checked returns err, forgetting ns when err is Forbidden: the binding may
// have gone with a namespace deleted and created again, and the next Ensure
// makes it anew.
func (b *Binder) Checked(ns string, err error) error {
	if apierrors.IsForbidden(err) {
		b.Forget(ns)
	}
	return err
}
