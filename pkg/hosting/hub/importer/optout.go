package importer

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hubindex"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// The import can be turned off in three places (ACM users and ARO-HCP run
// hosted clusters they do not want as ManagedClusters, as the MCE HyperShift
// add-on's auto-import can be turned off): for the whole hub
// (--import-hosted-clusters=false), for the hosted clusters of a management
// cluster (its HostingConfig's spec.hostedClusterImport: Disabled), and for
// one HostedClusterDeployment (spec.import: Disabled), the last only where
// the namespace's TenantPolicy sets allowImportOptOut: a cluster that is not
// imported escapes what the admin aims at ManagedClusters. Where the policy
// does not allow it the import goes ahead (the scheduler and the delivery
// refuse such a HostedClusterDeployment anyway; one delivered before the
// policy changed stays imported).
//
// Turned off, no ManagedCluster is created and the kubeconfig is still
// mirrored. As with the MCE add-on, a hosted cluster imported before stays
// imported (its ManagedCluster is kept current and deleted with the
// HostedClusterDeployment): detaching it from ACM is deleting its
// ManagedCluster, which is then not created again.

// importOff says who turned the import of hcd off, or "" when it is on.
func (r *Reconciler) importOff(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) (string, error) {
	if r.hubDisabled {
		return "the hub runs with --import-hosted-clusters=false", nil
	}
	if hcd.Status.HostingCluster != "" {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		err := r.client.Get(ctx, types.NamespacedName{Namespace: hcd.Status.HostingCluster, Name: addon.Name}, mca)
		if client.IgnoreNotFound(err) != nil {
			return "", err
		}
		if err == nil {
			hc, err := hostmodel.HostingConfigOf(ctx, r.client, mca, r.configNamespaces)
			if err != nil {
				return "", err
			}
			if hc != nil && hc.Spec.HostedClusterImport == v1alpha1.ImportDisabled {
				return fmt.Sprintf("HostingConfig %s/%s of management cluster %s sets spec.hostedClusterImport: Disabled", hc.Namespace, hc.Name, hcd.Status.HostingCluster), nil
			}
		}
	}
	if hcd.Spec.Import != v1alpha1.ImportDisabled {
		return "", nil
	}
	policy, err := r.policies.For(ctx, hcd.Namespace)
	if err != nil {
		return "", err
	}
	if !policy.AllowsImportOptOut() {
		return "", nil
	}
	return fmt.Sprintf("spec.import is Disabled, which %s allows", policy.Name), nil
}

// notImported handles a HostedClusterDeployment whose import is off (off
// says why). One imported before keeps its ManagedCluster while it exists
// (keep is true: the caller goes on as for any imported one); once that is
// deleted, the finalizer goes and the cluster is not imported again.
func (r *Reconciler) notImported(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, off string) (keep bool, res reconcile.Result, err error) {
	if controllerutil.ContainsFinalizer(hcd, Finalizer) {
		// The finalizer goes on before the ManagedCluster is created, so
		// without it there is none of ours.
		mc := &clusterv1.ManagedCluster{}
		err := r.client.Get(ctx, types.NamespacedName{Name: ClusterName(hcd, r.prefix)}, mc)
		switch {
		case err == nil && ours(mc, hcd) && mc.DeletionTimestamp == nil:
			return true, reconcile.Result{}, nil
		case err == nil && ours(mc, hcd):
			// Being detached: the registration hub finalizes it; its
			// deletion event requeues.
			return false, reconcile.Result{RequeueAfter: managedClusterGonePoll}, r.applyStatus(ctx, hcd, importStatus{managedCluster: mc.Name,
				condition: metav1.Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonImportDisabled,
					Message: fmt.Sprintf("not imported: %s; waiting for ManagedCluster %s to be deleted", off, mc.Name)}})
		case err != nil && !apierrors.IsNotFound(err):
			return false, reconcile.Result{}, err
		}
	}
	if err := kubeutil.RemoveFinalizer(ctx, r.client, hcd, Finalizer); client.IgnoreNotFound(err) != nil {
		return false, reconcile.Result{}, err
	}
	status := importStatus{condition: metav1.Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonImportDisabled}}
	mirrored := false
	if hcd.Status.HostingCluster != "" {
		if mirrored, err = r.mirrorKubeconfig(ctx, hcd, hcd.Status.HostingCluster); err != nil {
			return false, reconcile.Result{}, err
		}
	}
	if mirrored {
		status.kubeconfigSecret = hosting.AdminKubeconfigName(hcd.Name)
		status.condition.Message = fmt.Sprintf("not imported: %s, so no ManagedCluster is created; the admin kubeconfig is in Secret %s", off, status.kubeconfigSecret)
	} else {
		status.condition.Message = fmt.Sprintf("not imported: %s, so no ManagedCluster is created; waiting for the agent on %s to export the admin kubeconfig", off, hcd.Status.HostingCluster)
	}
	return false, reconcile.Result{}, r.applyStatus(ctx, hcd, status)
}

// keptNote is appended to the Imported message of a cluster imported before
// its import was turned off.
func keptNote(off string) string {
	if off == "" {
		return ""
	}
	return fmt.Sprintf("; import is now off (%s): this cluster, imported before, stays imported until its ManagedCluster is deleted", off)
}

// boundToCluster maps a ManagedClusterAddOn of hcp-fleet to the
// HostedClusterDeployments bound to its cluster: its configuration (the
// HostingConfig it resolves) may turn their import off or on.
func boundToCluster(c client.Reader) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		if o.GetName() != addon.Name {
			return nil
		}
		return bound(ctx, c, o.GetNamespace())
	}
}

// configuredBy maps a HostingConfig to the HostedClusterDeployments bound to
// a management cluster whose add-on runs with it.
func configuredBy(c client.Reader) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		clusters, err := hostmodel.ClustersConfiguredBy(ctx, c, client.ObjectKeyFromObject(o))
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing ManagedClusterAddOns")
			return nil
		}
		var out []reconcile.Request
		for _, cluster := range clusters {
			out = append(out, bound(ctx, c, cluster)...)
		}
		return out
	}
}

func bound(ctx context.Context, c client.Reader, cluster string) []reconcile.Request {
	var list v1alpha1.HostedClusterDeploymentList
	if err := c.List(ctx, &list, client.MatchingFields{hubindex.HostingCluster: cluster}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing HostedClusterDeployments bound to a cluster", "cluster", cluster)
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
