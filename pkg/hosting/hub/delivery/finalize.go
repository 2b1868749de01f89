package delivery

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// finalize deletes (or, for Orphan, releases) what was delivered and lets
// the HostedClusterDeployment go once the ManifestWork is gone: the work
// agent removes the ManifestWork only after the objects it deleted are
// really gone on the host, and the host's inventory reports no
// HostedCluster of the deployment left (leftover.go).
func (r *Reconciler) finalize(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, host Host, work *workv1.ManifestWork) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(hcd, Finalizer) {
		return ctrl.Result{}, nil
	}
	if work == nil {
		// The cache may not show a ManifestWork created moments ago; only
		// the API server can say it is gone, and letting the HCD go while its
		// work lives on would leave the hosted cluster running unowned.
		live := &workv1.ManifestWork{}
		err := r.reader.Get(ctx, types.NamespacedName{Namespace: host.Cluster, Name: hosting.WorkName(hcd.Namespace, hcd.Name)}, live)
		switch {
		case err == nil:
			work = live
		case !apierrors.IsNotFound(err):
			return ctrl.Result{}, err
		}
	}
	if work == nil {
		// Gone with it, as a rule; but the work agent may have let it go
		// with the HostedCluster still there (leftover.go). Orphan leaves
		// it there on purpose, and an abandoned one cannot be asked.
		if hcd.Spec.DeletionPolicy != v1alpha1.DeletionPolicyOrphan && hcd.Annotations[AbandonAnnotation] != "true" {
			if wait := r.settling(hcd, time.Now()); wait > 0 {
				return ctrl.Result{RequeueAfter: wait}, nil
			}
			left, err := r.leftOnHost(ctx, hcd, host.Cluster)
			if err != nil {
				return ctrl.Result{}, err
			}
			if left != nil {
				return r.removeLeftover(ctx, hcd, host, left)
			}
		}
		if err := r.deleteExport(ctx, hcd); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.removeFinalizer(ctx, hcd)
	}
	r.sawWork(hcd, work)
	orphan := work.Spec.DeleteOption != nil && work.Spec.DeleteOption.PropagationPolicy == workv1.DeletePropagationPolicyTypeOrphan
	if work.DeletionTimestamp == nil && !awaitingAgent(work) {
		if err := r.client.Delete(ctx, work); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	observed := deletionObserved(hcd, host, work)
	if orphan {
		observed.DeletionReason = v1alpha1.ReasonOrphaning
		observed.DeletionMessage = fmt.Sprintf("releasing the HostedCluster on management cluster %s (deletionPolicy Orphan: it keeps running there)", host.Cluster)
	}
	var requeue time.Duration
	if !host.Exists || !host.Available {
		since := hcd.DeletionTimestamp.Time
		if c := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionHostingClusterAvailable); c != nil &&
			c.Status == metav1.ConditionFalse && c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime.Time
		}
		waited := time.Since(since)
		if waited < r.opts.LostHostTimeout {
			requeue = r.opts.LostHostTimeout - waited
			observed.DeletionMessage += fmt.Sprintf("; management cluster %s is unavailable, waiting up to %s for it to come back", host.Cluster, r.opts.LostHostTimeout.Round(time.Second))
		} else if hcd.Annotations[AbandonAnnotation] == "true" {
			// The user gave up on the hosted cluster: let the ManifestWork go
			// without the host's confirmation.
			if err := r.dropWorkFinalizers(ctx, work); err != nil {
				return ctrl.Result{}, err
			}
			observed.DeletionMessage = fmt.Sprintf("abandoning the HostedCluster on unavailable management cluster %s as annotated (%s); it may still run there", host.Cluster, AbandonAnnotation)
		} else {
			observed.DeletionReason = v1alpha1.ReasonDeletionTimedOut
			observed.DeletionMessage = fmt.Sprintf("management cluster %s has been unavailable for %s, so the HostedCluster cannot be confirmed deleted and may still run there; "+
				"bring the cluster back, or give the hosted cluster up with: kubectl annotate hostedclusterdeployment -n %s %s %s=true",
				host.Cluster, waited.Round(time.Second), hcd.Namespace, hcd.Name, AbandonAnnotation)
		}
	}
	return ctrl.Result{RequeueAfter: requeue}, r.applyStatus(ctx, hcd, ComputeStatus(observed))
}

// deletionObserved is what the status of hcd, being deleted with work on
// host, is computed from.
func deletionObserved(hcd *v1alpha1.HostedClusterDeployment, host Host, work *workv1.ManifestWork) Observed {
	observed := Observed{Generation: hcd.Generation, UID: hcdstatus.IdentityUID(hcd), Work: work, Host: host, Deleting: true, DeletionReason: v1alpha1.ReasonDeleting,
		DeletionMessage: fmt.Sprintf("deleting the HostedCluster and its NodePools on management cluster %s; waiting until they are gone", host.Cluster)}
	if work != nil && work.Annotations[AnnotationLeftoverCleanup] == "true" {
		observed.DeletionMessage = fmt.Sprintf("the HostedCluster stayed on management cluster %s after its ManifestWork was gone; "+
			"deleting it and its NodePools through ManifestWork %s, waiting until they are gone", host.Cluster, work.Name)
	}
	for _, np := range hcd.Spec.NodePools {
		observed.NodePools = append(observed.NodePools, np.Name)
	}
	return observed
}

// deleteExport deletes the admin kubeconfig the host's agent exported for
// hcd into the host's namespace: the agent may write it only while the HCD
// is bound there (pkg/hosting/hub/exportaccess) and cannot list what it
// left behind. Only a Secret carrying this HCD's labels is deleted.
func (r *Reconciler) deleteExport(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) error {
	if hcd.Status.HostingCluster == "" {
		return nil
	}
	export := &metav1.PartialObjectMetadata{}
	export.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	key := types.NamespacedName{Namespace: hcd.Status.HostingCluster, Name: hosting.ExportedKubeconfigName(hcd.Namespace, hcd.Name)}
	if err := r.reader.Get(ctx, key, export); err != nil {
		return client.IgnoreNotFound(err)
	}
	if l := export.GetLabels(); l[hosting.LabelHCDNamespace] != hcd.Namespace || l[hosting.LabelHCDName] != hcd.Name || l[hosting.LabelAdminKubeconfig] != "true" {
		return nil
	}
	err := r.client.Delete(ctx, export, client.Preconditions{UID: ptr.To(export.GetUID())})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the exported kubeconfig %s: %w", key, err)
	}
	return nil
}

func (r *Reconciler) dropWorkFinalizers(ctx context.Context, work *workv1.ManifestWork) error {
	if len(work.Finalizers) == 0 {
		return nil
	}
	return client.IgnoreNotFound(kubeutil.SetFinalizers(ctx, r.client, work, nil))
}

func (r *Reconciler) removeFinalizer(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) error {
	return client.IgnoreNotFound(kubeutil.RemoveFinalizer(ctx, r.client, hcd, Finalizer))
}
