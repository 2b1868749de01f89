package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// A ManifestWork gone is not always its HostedCluster gone. The work agent
// (open-cluster-management v1.2, ManifestWorkFinalizeController) deletes a
// ManifestWork's AppliedManifestWork, which deletes what it applied, and
// removes its finalizer from the ManifestWork once its informer no longer
// shows that AppliedManifestWork. Deleted seconds after its first apply,
// on a loaded agent whose informer does not show the AppliedManifestWork
// it has just created, the finalizer goes at once and nothing is deleted:
// the HostedCluster runs on, unowned, until the agent evicts the orphaned
// AppliedManifestWork (--appliedmanifestwork-eviction-grace-period, 60 min
// by default), and a HostedClusterDeployment created again under the same
// name meanwhile meets it as another identity's (reportedMismatch). So the
// finalizer also asks the management cluster's inventory, and deletes what
// is left through a ManifestWork of the same name: the work agent finds
// the AppliedManifestWork it kept under that name and deletes what it
// recorded when that ManifestWork is deleted.

// AnnotationLeftoverCleanup marks the ManifestWork the finalizer writes
// only to have the work agent delete a HostedCluster left behind.
const AnnotationLeftoverCleanup = "hcpfleet.io/leftover-cleanup"

// leftoverRecheck is how often the finalizer looks at the inventory again
// while a HostedCluster of the deployment is still reported: the delivery
// does not watch the inventories (one event per HostedCluster change of a
// whole management cluster), and the wait is short.
const leftoverRecheck = 5 * time.Second

// leftoverSettle is how long after its deletion began a deployment whose
// ManifestWork went without the work agent ever saying it deletes (its
// Deleting condition) waits before it trusts an inventory that lists
// nothing of it: a HostedCluster applied moments before may not be
// reported yet. Deletions the agent carried out as usual do not wait.
const leftoverSettle = 10 * time.Second

// workSeen is what the finalizer saw of a deployment's ManifestWork while
// the deployment was being deleted (Reconciler.deletions).
type workSeen struct {
	uid types.UID
	// agentDeleting: the work agent set its Deleting condition, which it
	// does only when it deletes the AppliedManifestWork, and so what it
	// applied, before it lets the ManifestWork go.
	agentDeleting bool
}

// sawWork records work as seen by the finalizer of hcd.
func (r *Reconciler) sawWork(hcd *v1alpha1.HostedClusterDeployment, work *workv1.ManifestWork) {
	key := types.NamespacedName{Namespace: hcd.Namespace, Name: hcd.Name}
	seen := workSeen{uid: hcd.UID}
	if v, ok := r.deletions.Load(key); ok && v.(workSeen).uid == hcd.UID {
		seen = v.(workSeen)
	}
	if meta.IsStatusConditionTrue(work.Status.Conditions, workv1.WorkDeleting) {
		seen.agentDeleting = true
	}
	r.deletions.Store(key, seen)
}

// settling is how much longer hcd, its ManifestWork gone, waits before it
// trusts its host's inventory (leftoverSettle): none when this replica
// never saw the ManifestWork during the deletion (never delivered, or seen
// by a replica before a restart) or saw the work agent delete it.
func (r *Reconciler) settling(hcd *v1alpha1.HostedClusterDeployment, now time.Time) time.Duration {
	v, ok := r.deletions.Load(types.NamespacedName{Namespace: hcd.Namespace, Name: hcd.Name})
	if !ok || v.(workSeen).uid != hcd.UID || v.(workSeen).agentDeleting || hcd.DeletionTimestamp == nil {
		return 0
	}
	return max(0, hcd.DeletionTimestamp.Add(leftoverSettle).Sub(now))
}

// leftOnHost is the entry of cluster's HostedClusterInventory for a
// HostedCluster delivered for hcd (its namespace, name and
// hcdstatus.IdentityUID), or nil. A HostedCluster of another identity
// (a deployment deleted and created again since, a restored hub's) is not
// hcd's to delete.
func (r *Reconciler) leftOnHost(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, cluster string) (*v1alpha1.InventoryHostedCluster, error) {
	inv, err := r.hostInventory(ctx, cluster)
	if inv == nil || err != nil {
		return nil, err
	}
	return leftover(inv, hcd.Namespace, hcd.Name, hcdstatus.IdentityUID(hcd)), nil
}

// leftover is inv's entry for the HostedCluster delivered for the
// deployment namespace/name of identity uid, or nil.
func leftover(inv *v1alpha1.HostedClusterInventory, namespace, name string, uid types.UID) *v1alpha1.InventoryHostedCluster {
	for i := range inv.Status.HostedClusters {
		e := &inv.Status.HostedClusters[i]
		if d := e.Deployment; d != nil && d.Namespace == namespace && d.Name == name && d.UID != "" && types.UID(d.UID) == uid {
			return e
		}
	}
	return nil
}

// removeLeftover deals with a HostedCluster of hcd that host's agent
// reports after hcd's ManifestWork is gone: one being deleted is waited
// for; one left behind gets a cleanup ManifestWork, which the finalizer
// deletes like any other once the work agent holds it.
func (r *Reconciler) removeLeftover(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, host Host, left *v1alpha1.InventoryHostedCluster) (ctrl.Result, error) {
	if left.Deleting {
		// The status already says it waits until the HostedCluster is gone.
		return ctrl.Result{RequeueAfter: leftoverRecheck}, nil
	}
	agentNamespace, err := addon.InstallNamespaceOf(ctx, r.client, host.Cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	work, err := cleanupWork(hcd, host.Cluster, agentNamespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	switch err := r.client.Create(ctx, work); {
	case err == nil:
		workWrites.WithLabelValues("create").Inc()
	case !apierrors.IsAlreadyExists(err):
		return ctrl.Result{}, fmt.Errorf("creating ManifestWork %s/%s to delete a HostedCluster left behind: %w", work.Namespace, work.Name, err)
	}
	r.recorder.Eventf(hcd, corev1.EventTypeWarning, "HostedClusterLeftBehind",
		"the work agent of management cluster %s let ManifestWork %s go while HostedCluster %s/%s still ran; deleting it through a new ManifestWork of that name",
		host.Cluster, work.Name, left.Namespace, left.Name)
	return ctrl.Result{RequeueAfter: leftoverRecheck}, r.applyStatus(ctx, hcd, ComputeStatus(deletionObserved(hcd, host, work)))
}

// cleanupWork is a ManifestWork of hcd's name, labels, executor and delete
// option that carries only the hosting Namespace, as the delivery's do
// (create-only, and orphaned on deletion): applied, it makes the work agent
// delete what the AppliedManifestWork of that name recorded and the work no
// longer carries (the HostedCluster, its NodePools and copies), and deleted,
// the rest. It needs nothing of the hub but hcd itself: the Secrets the
// delivery copied may be gone with their namespace.
func cleanupWork(hcd *v1alpha1.HostedClusterDeployment, cluster, agentNamespace string) (*workv1.ManifestWork, error) {
	s := Spec{Namespace: hcd.Namespace, Name: hcd.Name, HostingNamespace: hcd.Spec.HostingNamespace, AgentNamespace: agentNamespace,
		DeletionPolicy: v1alpha1.DeletionPolicyDelete}
	if s.HostingNamespace == "" {
		s.HostingNamespace = v1alpha1.DefaultHostingNamespace
	}
	ns, nsConfig := hostingNamespace(s)
	raw, err := json.Marshal(ns)
	if err != nil {
		return nil, err
	}
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{
			Name: hosting.WorkName(s.Namespace, s.Name), Namespace: cluster, Labels: s.WorkLabels(),
			Annotations: map[string]string{AnnotationLeftoverCleanup: "true"},
		},
		Spec: workv1.ManifestWorkSpec{
			Executor:        addon.WorkExecutor(s.AgentNamespace, addon.ExecutorDelivery),
			DeleteOption:    deleteOption(s),
			ManifestConfigs: []workv1.ManifestConfigOption{nsConfig},
			Workload:        workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
		},
	}, nil
}

// awaitingAgent reports whether work is a cleanup ManifestWork the work
// agent does not hold yet (no finalizer of its own): deleted before, it
// would go at once, with nothing deleted, as the one before it.
func awaitingAgent(work *workv1.ManifestWork) bool {
	if work.Annotations[AnnotationLeftoverCleanup] != "true" {
		return false
	}
	for _, f := range work.Finalizers {
		if f == workv1.ManifestWorkFinalizer {
			return false
		}
	}
	return true
}
