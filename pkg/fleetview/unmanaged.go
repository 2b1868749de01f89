package fleetview

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// Unmanaged is a HostedCluster running on a management cluster that no
// HostedClusterDeployment delivered, as the cluster's agent reports it
// (HostedClusterInventory): a candidate for adoption.
type Unmanaged struct {
	// Cluster is the management cluster it runs on.
	Cluster   string `json:"managementCluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Release   string `json:"release,omitempty"`
	Platform  string `json:"platform,omitempty"`
	InfraID   string `json:"infraID,omitempty"`
	Available string `json:"available,omitempty"`
}

// collectUnmanaged lists the unmanaged HostedClusters the agents report;
// none for a reader who may not list the inventories (a tenant) or a hub
// without the kind.
func collectUnmanaged(ctx context.Context, c client.Reader) ([]Unmanaged, error) {
	list := &v1alpha1.HostedClusterInventoryList{}
	if err := c.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			return nil, nil
		}
		return nil, ReadError(err, "list", "hostedclusterinventories.hcpfleet.io", "")
	}
	var out []Unmanaged
	for i := range list.Items {
		inv := &list.Items[i]
		if inv.Name != v1alpha1.InventoryName {
			continue
		}
		for _, e := range inv.Status.HostedClusters {
			if e.Managed() {
				continue
			}
			out = append(out, Unmanaged{Cluster: inv.Namespace, Namespace: e.Namespace, Name: e.Name,
				Release: e.Release, Platform: e.Platform, InfraID: e.InfraID, Available: string(e.Available)})
		}
	}
	slices.SortFunc(out, func(a, b Unmanaged) int {
		return strings.Compare(a.Cluster+"/"+a.Namespace+"/"+a.Name, b.Cluster+"/"+b.Namespace+"/"+b.Name)
	})
	return out, nil
}

func renderUnmanaged(b *strings.Builder, hcs []Unmanaged) error {
	fmt.Fprintf(b, "\nUNMANAGED HOSTED CLUSTERS (%d: no HostedClusterDeployment delivered them)\n", len(hcs))
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "  CLUSTER/NAMESPACE/NAME\tAVAILABLE\tPLATFORM\tINFRA ID\tRELEASE")
	for _, h := range hcs {
		_, _ = fmt.Fprintf(tw, "  %s/%s/%s\t%s\t%s\t%s\t%s\n", h.Cluster, h.Namespace, h.Name, dash(h.Available), dash(h.Platform),
			dash(h.InfraID), truncate(dash(h.Release), 80))
	}
	return tw.Flush()
}
