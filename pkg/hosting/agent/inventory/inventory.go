// Package inventory is the agent feature that reports every HostedCluster
// on its management cluster to the hub, in the one HostedClusterInventory
// (v1alpha1.InventoryName) of the cluster's namespace there:
//
//   - a HostedCluster hcp-fleet delivered, with the HostedClusterDeployment
//     its labels (hosting.LabelHCDNamespace, -Name, -UID) name. The hub
//     recovers a binding it lost together with the ManifestWork from these
//     (docs/operations.md); nothing else of it is reported, so its
//     condition changes (which the delivery reads from ManifestWork
//     feedback) cost no write here;
//   - an unmanaged one (created by `hcp`, MCE or by hand, or left behind by
//     deletionPolicy Orphan without labels), with its release, platform,
//     infraID and Available, for `kubectl hcpfleet status`, the console and
//     adoption.
//
// Each entry says whether its HostedCluster is being deleted: the hub's
// delivery waits for one on its way out and deletes one a ManifestWork
// left behind (pkg/hosting/hub/delivery, leftover.go).
//
// Why a kind of its own, written by the agent in its cluster namespace: the
// agent may write nothing outside that namespace (docs/security.md), the
// console and the hub read a typed, validated object, and the agent's
// grant names that one object. One object per management cluster rather
// than one per HostedCluster: a management cluster runs up to some hundred
// hosted clusters, and the hub's cache and the agent's writes stay one
// object per cluster.
//
// What it reads on the management cluster: HostedClusters' metadata from
// the manager's metadata-only cache (shared with the hosting report), and
// the unmanaged ones in full, uncached, one by one (usually none).
// Level-triggered: any HostedCluster event recomputes the list, and it is
// written only when it differs from what the hub holds.
package inventory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// resyncPeriod is the safety net for a missed event; HostedCluster events
// drive the report.
const resyncPeriod = 5 * time.Minute

// hubScheme is the scheme of the agent's hub client here: the
// HostedClusterInventory kind only.
var hubScheme = runtime.NewScheme()

func init() { utilruntime.Must(v1alpha1.AddToScheme(hubScheme)) }

// Feature is the inventory as an agent feature.
func Feature() agent.Feature {
	return agent.Feature{Name: "hosted-cluster-inventory", Setup: setup, Cleanup: Cleanup}
}

type reconciler struct {
	cache  client.Reader // HostedCluster metadata
	reader client.Reader // uncached: unmanaged HostedClusters in full
	mapper meta.RESTMapper
	env    *agent.Env
	hub    client.Client // uncached, the agent's hub identity
}

var inventoryKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "hosted-cluster-inventory"}}

func setup(mgr ctrl.Manager, env *agent.Env) error {
	hub, err := client.New(env.Hub, client.Options{Scheme: hubScheme})
	if err != nil {
		return err
	}
	r := &reconciler{cache: mgr.GetClient(), reader: mgr.GetAPIReader(), mapper: mgr.GetRESTMapper(), env: env, hub: hub}
	report := agent.NewSingleRequest(inventoryKey)
	report.Requeue() // an empty inventory before HyperShift's CRDs exist
	return report.Controller(mgr, "hosted-cluster-inventory").
		WatchesRawSource(agent.WatchMetadataWhenServed(mgr, hosting.HostedClusterGVK, func(client.Object) []reconcile.Request {
			return []reconcile.Request{inventoryKey}
		})).
		Complete(r)
}

// Reconcile computes the list and writes it where it changed.
func (r *reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	if r.env.AddonDeleting(ctx) {
		return reconcile.Result{}, nil // the cleanup removes the inventory
	}
	entries, err := r.hostedClusters(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.publish(ctx, Status(entries)); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: resyncPeriod}, nil
}

// hostedClusters lists the entries of every HostedCluster on the cluster;
// none while HyperShift's CRDs are not served.
func (r *reconciler) hostedClusters(ctx context.Context) ([]v1alpha1.InventoryHostedCluster, error) {
	if served, err := kubeutil.Served(r.mapper, hosting.HostedClusterGVK); !served {
		return nil, err
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(hosting.HostedClusterGVK.GroupVersion().WithKind("HostedClusterList"))
	if err := r.cache.List(ctx, list); err != nil {
		return nil, err
	}
	entries := make([]v1alpha1.InventoryHostedCluster, 0, len(list.Items))
	for i := range list.Items {
		m := &list.Items[i]
		deleting := m.DeletionTimestamp != nil
		if d := Deployment(m.Labels); d != nil {
			entries = append(entries, v1alpha1.InventoryHostedCluster{Namespace: m.Namespace, Name: m.Name, Deployment: d, Deleting: deleting})
			continue
		}
		hc := &unstructured.Unstructured{}
		hc.SetGroupVersionKind(hosting.HostedClusterGVK)
		if err := r.reader.Get(ctx, client.ObjectKeyFromObject(m), hc); err != nil {
			if apierrors.IsNotFound(err) {
				continue // gone since the cache saw it; its delete event follows
			}
			return nil, fmt.Errorf("reading HostedCluster %s/%s: %w", m.Namespace, m.Name, err)
		}
		e := Unmanaged(hc)
		e.Deleting = deleting
		entries = append(entries, e)
	}
	return entries, nil
}

// publish makes the hub's inventory hold status, creating it if missing;
// it writes nothing when the inventory already does.
func (r *reconciler) publish(ctx context.Context, status v1alpha1.HostedClusterInventoryStatus) error {
	key := types.NamespacedName{Namespace: r.env.Options.ClusterName, Name: v1alpha1.InventoryName}
	live := &v1alpha1.HostedClusterInventory{}
	err := r.hub.Get(ctx, key, live)
	if apierrors.IsNotFound(err) {
		live = &v1alpha1.HostedClusterInventory{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			// Not backed up: the agent writes it again after a restore.
			Labels: map[string]string{"app.kubernetes.io/managed-by": "hcp-fleet-agent"}}}
		err = r.hub.Create(ctx, live)
	}
	if err != nil {
		return fmt.Errorf("HostedClusterInventory %s: %w", key, err)
	}
	if equality.Semantic.DeepEqual(live.Status, status) {
		return nil
	}
	live.Status = status
	if err := r.hub.Status().Update(ctx, live); err != nil {
		return fmt.Errorf("HostedClusterInventory %s status: %w", key, err)
	}
	return nil
}

// Deployment is the HostedClusterDeployment labels name, nil when they
// name none (an unmanaged HostedCluster).
func Deployment(labels map[string]string) *v1alpha1.InventoryDeployment {
	ns, name := labels[hosting.LabelHCDNamespace], labels[hosting.LabelHCDName]
	if ns == "" || name == "" {
		return nil
	}
	return &v1alpha1.InventoryDeployment{Namespace: ns, Name: name, UID: labels[hosting.LabelHCDUID]}
}

// Unmanaged is the entry of an unmanaged HostedCluster: what an admin
// needs to decide on adopting it. Values too long for the inventory's
// schema are cut, never refused: the list must still be written.
func Unmanaged(hc *unstructured.Unstructured) v1alpha1.InventoryHostedCluster {
	release, _, _ := unstructured.NestedString(hc.Object, "spec", "release", "image")
	platform, _, _ := unstructured.NestedString(hc.Object, "spec", "platform", "type")
	infraID, _, _ := unstructured.NestedString(hc.Object, "spec", "infraID")
	return v1alpha1.InventoryHostedCluster{
		Namespace: hc.GetNamespace(), Name: hc.GetName(),
		Release: cut(release, 512), Platform: cut(platform, 64), InfraID: cut(infraID, 253),
		Available: availableOf(hc),
	}
}

// availableOf is the status of the HostedCluster's Available condition.
func availableOf(hc *unstructured.Unstructured) metav1.ConditionStatus {
	conds, _, _ := unstructured.NestedSlice(hc.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Available" {
			continue
		}
		switch s := metav1.ConditionStatus(fmt.Sprint(m["status"])); s {
		case metav1.ConditionTrue, metav1.ConditionFalse:
			return s
		}
	}
	return metav1.ConditionUnknown
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Status is the inventory's status for entries: sorted by namespace and
// name, at most v1alpha1.MaxInventoryHostedClusters.
func Status(entries []v1alpha1.InventoryHostedCluster) v1alpha1.HostedClusterInventoryStatus {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b v1alpha1.InventoryHostedCluster) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	var s v1alpha1.HostedClusterInventoryStatus
	if len(sorted) > v1alpha1.MaxInventoryHostedClusters {
		sorted, s.Truncated = sorted[:v1alpha1.MaxInventoryHostedClusters], true
	}
	if len(sorted) > 0 {
		s.HostedClusters = sorted
	}
	return s
}

// Cleanup removes the inventory from the hub.
func Cleanup(ctx context.Context, env *agent.Env) error {
	hub, err := client.New(env.Hub, client.Options{Scheme: hubScheme})
	if err != nil {
		return err
	}
	inv := &v1alpha1.HostedClusterInventory{ObjectMeta: metav1.ObjectMeta{Namespace: env.Options.ClusterName, Name: v1alpha1.InventoryName}}
	if err := hub.Delete(ctx, inv); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting HostedClusterInventory: %w", err)
	}
	return nil
}
