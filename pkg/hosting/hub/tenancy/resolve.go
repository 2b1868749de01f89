package tenancy

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// IndexHostnames indexes HostedClusterDeployments by the hostnames they
// publish (Hostnames).
const IndexHostnames = "tenancy.hostnames"

// AddIndexes registers the cache index Check's fleet reads. Call it once,
// before the controllers that use a Resolver are set up.
func AddIndexes(mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.HostedClusterDeployment{}, IndexHostnames,
		func(o client.Object) []string {
			hcd := o.(*v1alpha1.HostedClusterDeployment)
			hc, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&hcd.Spec.HostedCluster)
			if err != nil {
				return nil
			}
			return Hostnames(hc)
		})
}

// Resolver finds the Policy that governs a hub namespace, from the hub's
// cache: the namespace's labels (metadata only) and the TenantPolicies.
type Resolver struct {
	Reader client.Reader

	mu       sync.Mutex
	compiled map[string]compiled // by TenantPolicy name
}

type compiled struct {
	generation int64
	policy     *Policy
}

// For returns the Policy governing namespace: the one TenantPolicy whose
// namespaceSelector selects it, else the TenantPolicy "default", else the
// built-in default. Several selecting it: a Policy that refuses everything.
func (r *Resolver) For(ctx context.Context, namespace string) (*Policy, error) {
	ns := NamespaceMetadata()
	if err := r.Reader.Get(ctx, types.NamespacedName{Name: namespace}, ns); err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	var list v1alpha1.TenantPolicyList
	if err := r.Reader.List(ctx, &list); err != nil {
		return nil, err
	}
	var selecting []*v1alpha1.TenantPolicy
	var fallback *v1alpha1.TenantPolicy
	for i := range list.Items {
		tp := &list.Items[i]
		if tp.Name == v1alpha1.DefaultTenantPolicyName {
			fallback = tp
			continue
		}
		if tp.Spec.NamespaceSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(tp.Spec.NamespaceSelector)
		if err != nil {
			// A selector the API server let through but that does not
			// parse selects nothing; a namespace it was meant for falls to
			// the default, which is never broader than the built-in one
			// unless the admin made it so.
			continue
		}
		if sel.Matches(labels.Set(ns.GetLabels())) {
			selecting = append(selecting, tp)
		}
	}
	switch {
	case len(selecting) > 1:
		names := make([]string, len(selecting))
		for i, tp := range selecting {
			names[i] = tp.Name
		}
		slices.Sort(names)
		return conflicting(namespace, names), nil
	case len(selecting) == 1:
		return r.compile(selecting[0]), nil
	case fallback != nil:
		return r.compile(fallback), nil
	}
	return Builtin(), nil
}

// Verdict checks the HostedClusterDeployment u (unstructured: fields newer
// than the pinned HyperShift API count) against the Policy governing its
// namespace; unknown are its reference-shaped fields the hub would not copy
// (Deployment.UnknownReferences). The scheduler and the delivery both ask.
func (r *Resolver) Verdict(ctx context.Context, u *unstructured.Unstructured, unknown []string) (*Policy, Violations, error) {
	policy, err := r.For(ctx, u.GetNamespace())
	if err != nil {
		return nil, Violations{}, err
	}
	fleet := &CacheFleet{Ctx: ctx, Reader: r.Reader}
	d := DeploymentOf(u)
	d.UnknownReferences = unknown
	v := policy.Check(d, fleet)
	return policy, v, fleet.Err
}

// NamespaceMetadata is what the hub reads and watches of a namespace: its
// labels, which TenantPolicies select on (a metadata-only cache).
func NamespaceMetadata() *metav1.PartialObjectMetadata {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	return ns
}

// compile compiles tp once per generation.
func (r *Resolver) compile(tp *v1alpha1.TenantPolicy) *Policy {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.compiled[tp.Name]; ok && c.generation == tp.Generation && tp.Generation != 0 {
		return c.policy
	}
	p, _ := Compile("TenantPolicy "+tp.Name, tp.Spec)
	if r.compiled == nil {
		r.compiled = map[string]compiled{}
	}
	r.compiled[tp.Name] = compiled{generation: tp.Generation, policy: p}
	return p
}

// CacheFleet is the Fleet of the hub's cache (AddIndexes).
type CacheFleet struct {
	Ctx    context.Context
	Reader client.Reader
	// Err keeps the first read error: Check has no error path, and a failed
	// read must not pass as "nothing taken"; callers check it after Check.
	Err error
}

// HostnameOwners implements Fleet.
func (f *CacheFleet) HostnameOwners(hostname string) []types.NamespacedName {
	var list v1alpha1.HostedClusterDeploymentList
	if err := f.Reader.List(f.Ctx, &list, client.MatchingFields{IndexHostnames: hostname}, client.UnsafeDisableDeepCopy); err != nil {
		f.fail(err)
		return nil
	}
	out := make([]types.NamespacedName, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, client.ObjectKeyFromObject(&list.Items[i]))
	}
	return out
}

// NodePoolReplicas implements Fleet.
func (f *CacheFleet) NodePoolReplicas(namespace, except string) int64 {
	var list v1alpha1.HostedClusterDeploymentList
	if err := f.Reader.List(f.Ctx, &list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		f.fail(err)
		return 0
	}
	var total int64
	for i := range list.Items {
		hcd := &list.Items[i]
		if hcd.Name == except || hcd.DeletionTimestamp != nil {
			continue
		}
		for _, np := range hcd.Spec.NodePools {
			spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&np.Spec)
			if err != nil {
				continue
			}
			total += PoolReplicas(spec)
		}
	}
	return total
}

func (f *CacheFleet) fail(err error) {
	if f.Err == nil {
		f.Err = fmt.Errorf("reading the fleet's HostedClusterDeployments: %w", err)
	}
}

// DeploymentOf reads a Deployment from an unstructured HostedClusterDeployment.
func DeploymentOf(u *unstructured.Unstructured) Deployment {
	d := Deployment{Namespace: u.GetNamespace(), Name: u.GetName()}
	d.HostedCluster, _, _ = unstructured.NestedMap(u.Object, "spec", "hostedCluster")
	d.Import, _, _ = unstructured.NestedString(u.Object, "spec", "import")
	pools, _, _ := unstructured.NestedSlice(u.Object, "spec", "nodePools")
	for _, p := range pools {
		if m, ok := p.(map[string]any); ok {
			d.NodePools = append(d.NodePools, m)
		}
	}
	return d
}

// Governed maps a TenantPolicy or a namespace to the HostedClusterDeployments
// it may govern: every one in the namespace, or, for a TenantPolicy, every
// one (a policy change is rare, and which namespaces it selected before the
// change is not known any more).
func Governed(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var opts []client.ListOption
		if _, ok := o.(*v1alpha1.TenantPolicy); !ok {
			opts = append(opts, client.InNamespace(o.GetName()))
		}
		var list v1alpha1.HostedClusterDeploymentList
		if err := c.List(ctx, &list, append(opts, client.UnsafeDisableDeepCopy)...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing HostedClusterDeployments a tenant policy governs")
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return out
	}
}
