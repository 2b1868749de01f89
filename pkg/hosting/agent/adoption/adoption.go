package adoption

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// FieldManager is the agent's field manager on an adoption's status: it
// owns status.observed and the Observed condition, the hub the rest.
const FieldManager = "hcp-fleet-agent"

// Reasons of the Observed condition.
const (
	// ReasonObserved: status.observed holds what the agent sees.
	ReasonObserved = "Observed"
	// ReasonNotFound: no such HostedCluster on the management cluster (or
	// HyperShift is not installed there).
	ReasonNotFound = "NotFound"
	// ReasonTooManyNodePools: more NodePools than status.observed holds.
	ReasonTooManyNodePools = "TooManyNodePools"
)

// hubScheme is the scheme of the agent's hub cache: the hcp-fleet kinds.
var hubScheme = runtime.NewScheme()

func init() { utilruntime.Must(v1alpha1.AddToScheme(hubScheme)) }

// Feature is the adoption answer as an agent feature. It has no cleanup:
// the adoptions are the admin's, and the agent wrote only their status.
func Feature() agent.Feature {
	return agent.Feature{Name: "hosted-cluster-adoption", Setup: setup}
}

type reconciler struct {
	hub    client.Client // the hub cache (its cluster namespace) for reads, the agent's hub identity for writes
	reader client.Reader // uncached reads of HostedClusters and NodePools
	mapper meta.RESTMapper
	env    *agent.Env
}

func setup(mgr ctrl.Manager, env *agent.Env) error {
	ns := env.Options.ClusterName
	hubCache, err := cache.New(env.Hub, cache.Options{Scheme: hubScheme,
		// Its own cluster namespace only: all its grant reaches.
		DefaultNamespaces: map[string]cache.Config{ns: {}},
		ByObject:          map[client.Object]cache.ByObject{&v1alpha1.HostedClusterAdoption{}: {}}})
	if err != nil {
		return err
	}
	if err := mgr.Add(hubCache); err != nil {
		return err
	}
	hub, err := client.New(env.Hub, client.Options{Scheme: hubScheme, Cache: &client.CacheOptions{Reader: hubCache}})
	if err != nil {
		return err
	}
	r := &reconciler{hub: hub, reader: mgr.GetAPIReader(), mapper: mgr.GetRESTMapper(), env: env}
	// A HostedCluster or NodePool event enqueues the adoptions of its
	// namespace (a NodePool's metadata does not say its cluster).
	byNamespace := func(o client.Object) []reconcile.Request {
		list := &v1alpha1.HostedClusterAdoptionList{}
		if err := hubCache.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for i := range list.Items {
			if list.Items[i].Spec.HostedCluster.Namespace == o.GetNamespace() {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
		return reqs
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("hosted-cluster-adoption").
		WatchesRawSource(source.Kind(hubCache, &v1alpha1.HostedClusterAdoption{},
			&handler.TypedEnqueueRequestForObject[*v1alpha1.HostedClusterAdoption]{})).
		WatchesRawSource(agent.WatchMetadataWhenServed(mgr, hosting.HostedClusterGVK, byNamespace)).
		WatchesRawSource(agent.WatchMetadataWhenServed(mgr, hosting.NodePoolGVK, byNamespace)).
		Complete(r)
}

// Reconcile answers one adoption, writing only what changed.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	hca := &v1alpha1.HostedClusterAdoption{}
	if err := r.hub.Get(ctx, req.NamespacedName, hca); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !hca.DeletionTimestamp.IsZero() || r.env.AddonDeleting(ctx) {
		return reconcile.Result{}, nil
	}
	hc, pools, err := r.read(ctx, hca.Spec.HostedCluster)
	if err != nil {
		return reconcile.Result{}, err
	}
	observed, cond := Answer(hca.Spec.HostedCluster, hc, pools)
	cond.ObservedGeneration = hca.Generation
	if Current(hca, observed, cond) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.write(ctx, hca, observed, cond)
}

// read gets the HostedCluster (nil when it does not exist, or HyperShift's
// kinds are not served) and the NodePools of its namespace, uncached: an
// adoption is rare, and the agent caches no HyperShift spec.
func (r *reconciler) read(ctx context.Context, name v1alpha1.AdoptionHostedCluster) (*unstructured.Unstructured, []unstructured.Unstructured, error) {
	if served, err := kubeutil.Served(r.mapper, hosting.HostedClusterGVK); !served {
		return nil, nil, err
	}
	hc := &unstructured.Unstructured{}
	hc.SetGroupVersionKind(hosting.HostedClusterGVK)
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: name.Namespace, Name: name.Name}, hc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("reading HostedCluster %s/%s: %w", name.Namespace, name.Name, err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(hosting.NodePoolGVK.GroupVersion().WithKind("NodePoolList"))
	if err := r.reader.List(ctx, list, client.InNamespace(name.Namespace)); err != nil {
		return nil, nil, fmt.Errorf("listing NodePools in %s: %w", name.Namespace, err)
	}
	return hc, list.Items, nil
}

// Answer is the agent's answer about hc (nil: not found) and the NodePools
// of its namespace: the observed status (nil when there is nothing to
// report) and the Observed condition. Pure.
func Answer(name v1alpha1.AdoptionHostedCluster, hc *unstructured.Unstructured, pools []unstructured.Unstructured) (*v1alpha1.AdoptionObserved, metav1.Condition) {
	cond := metav1.Condition{Type: v1alpha1.ConditionObserved}
	if hc == nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNotFound
		cond.Message = fmt.Sprintf("no HostedCluster %s/%s on this management cluster", name.Namespace, name.Name)
		return nil, cond
	}
	var mine []unstructured.Unstructured
	for i := range pools {
		if cluster, _, _ := unstructured.NestedString(pools[i].Object, "spec", "clusterName"); cluster == hc.GetName() {
			mine = append(mine, pools[i])
		}
	}
	if len(mine) > v1alpha1.MaxAdoptionNodePools {
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonTooManyNodePools
		cond.Message = fmt.Sprintf("HostedCluster %s/%s has %d NodePools; an adoption holds at most %d", hc.GetNamespace(), hc.GetName(),
			len(mine), v1alpha1.MaxAdoptionNodePools)
		return nil, cond
	}
	slices.SortFunc(mine, func(a, b unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	o := &v1alpha1.AdoptionObserved{UID: string(hc.GetUID()), Deleting: hc.GetDeletionTimestamp() != nil,
		HostedCluster: raw(hc)}
	for i := range mine {
		o.NodePools = append(o.NodePools, v1alpha1.AdoptionNodePool{Name: mine[i].GetName(), Object: raw(&mine[i])})
	}
	cond.Status, cond.Reason = metav1.ConditionTrue, ReasonObserved
	cond.Message = fmt.Sprintf("HostedCluster %s/%s and its %d NodePools observed", hc.GetNamespace(), hc.GetName(), len(o.NodePools))
	return o, cond
}

// raw is what the hub needs of a HyperShift object: labels, annotations
// and spec. Status, managed fields and the rest stay on the cluster.
func raw(o *unstructured.Unstructured) runtime.RawExtension {
	m := map[string]any{}
	if l := o.GetLabels(); len(l) > 0 {
		m["labels"] = l
	}
	if a := o.GetAnnotations(); len(a) > 0 {
		m["annotations"] = a
	}
	if spec, ok := o.Object["spec"]; ok {
		m["spec"] = spec
	}
	data, err := json.Marshal(m)
	if err != nil { // from a decoded object: cannot happen
		panic(err)
	}
	return runtime.RawExtension{Raw: data}
}

// Current reports whether hca's status already holds observed and cond
// (status, reason, message and generation).
func Current(hca *v1alpha1.HostedClusterAdoption, observed *v1alpha1.AdoptionObserved, cond metav1.Condition) bool {
	live := meta.FindStatusCondition(hca.Status.Conditions, cond.Type)
	if live == nil || live.Status != cond.Status || live.Reason != cond.Reason || live.Message != cond.Message ||
		live.ObservedGeneration != cond.ObservedGeneration {
		return false
	}
	return sameJSON(hca.Status.Observed, observed)
}

// sameJSON compares two values by their JSON: the hub returns raw fields
// re-encoded, never byte for byte as written.
func sameJSON(a, b any) bool {
	var x, y any
	for _, p := range []struct {
		v   any
		out *any
	}{{a, &x}, {b, &y}} {
		data, err := json.Marshal(p.v)
		if err != nil {
			return false
		}
		if err := json.Unmarshal(data, p.out); err != nil {
			return false
		}
	}
	return reflect.DeepEqual(x, y)
}

// write applies the agent's status fields: observed (absent when nil,
// which removes what it wrote before) and the Observed condition, keeping
// its transition time when its status did not change.
func (r *reconciler) write(ctx context.Context, hca *v1alpha1.HostedClusterAdoption, observed *v1alpha1.AdoptionObserved, cond metav1.Condition) error {
	cond.Message = kubeutil.ConditionMessage(cond.Message)
	cond.LastTransitionTime = metav1.Now()
	if live := meta.FindStatusCondition(hca.Status.Conditions, cond.Type); live != nil && live.Status == cond.Status {
		cond.LastTransitionTime = live.LastTransitionTime
	}
	status := map[string]any{"conditions": []metav1.Condition{cond}}
	if observed != nil {
		status["observed"] = observed
	}
	obj := map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": v1alpha1.HostedClusterAdoptionKind,
		"metadata": map[string]any{"namespace": hca.Namespace, "name": hca.Name},
		"status":   status,
	}
	target, patch, err := kubeutil.ApplyPatch(obj)
	if err != nil {
		return err
	}
	if err := r.hub.Status().Patch(ctx, target, patch, client.FieldOwner(FieldManager), client.ForceOwnership); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("HostedClusterAdoption %s/%s status: %w", hca.Namespace, hca.Name, err)
	}
	return nil
}
