package scheduling

import (
	"context"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// Binding recovery from what the agents report. When a HostedClusterDeployment
// lost its status and its ManifestWork is gone as well (a hub restored from a
// backup without them), the HostedCluster still runs on its management
// cluster, labelled with the deployment's namespace and name; that cluster's
// agent lists it in its HostedClusterInventory (pkg/hosting/agent/inventory).
// Matched by namespace and name, never by UID, as the ManifestWorks are.
// Only asked for a deployment annotated hcdstatus.AnnotationBoundTo: a new
// deployment named like one left behind by deletionPolicy Orphan is decided
// as new, and the delivery then refuses to take the orphan over.

// runningOn lists the management clusters whose agents report a
// HostedCluster labelled with hcd's namespace and name.
func runningOn(ctx context.Context, c client.Reader, hcd *v1alpha1.HostedClusterDeployment) ([]string, error) {
	var list v1alpha1.HostedClusterInventoryList
	if err := c.List(ctx, &list); err != nil {
		return nil, err
	}
	var clusters []string
	for i := range list.Items {
		inv := &list.Items[i]
		if inv.Name != v1alpha1.InventoryName || inv.DeletionTimestamp != nil {
			continue
		}
		for _, e := range inv.Status.HostedClusters {
			if d := e.Deployment; d != nil && d.Namespace == hcd.Namespace && d.Name == hcd.Name {
				clusters = append(clusters, inv.Namespace)
				break
			}
		}
	}
	slices.Sort(clusters)
	return clusters, nil
}

// hcdsOfInventory maps an inventory to the deployments it names that wait
// unbound (a bound one has nothing to recover): a report is what a lost
// binding may be waiting for.
func (r *Reconciler) hcdsOfInventory(ctx context.Context, o client.Object) []reconcile.Request {
	inv, ok := o.(*v1alpha1.HostedClusterInventory)
	if !ok || inv.Name != v1alpha1.InventoryName {
		return nil
	}
	var reqs []reconcile.Request
	for _, e := range inv.Status.HostedClusters {
		if e.Deployment == nil {
			continue
		}
		key := client.ObjectKey{Namespace: e.Deployment.Namespace, Name: e.Deployment.Name}
		hcd := &v1alpha1.HostedClusterDeployment{}
		if err := r.client.Get(ctx, key, hcd); err != nil || hcd.Status.HostingCluster != "" {
			continue // none (yet), or bound: nothing to recover
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: key})
	}
	return reqs
}
