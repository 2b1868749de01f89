package hostmodel

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// ClustersConfiguredBy lists the management clusters whose hcp-fleet
// add-on runs with the HostingConfig key, as the add-on's status resolves
// it: the clusters a change of that HostingConfig concerns.
func ClustersConfiguredBy(ctx context.Context, c client.Reader, key types.NamespacedName) ([]string, error) {
	var mcas addonv1alpha1.ManagedClusterAddOnList
	if err := c.List(ctx, &mcas, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	var clusters []string
	for i := range mcas.Items {
		mca := &mcas.Items[i]
		if k, ok := HostingConfigKey(mca); ok && mca.Name == addon.Name && k == key {
			clusters = append(clusters, mca.Namespace)
		}
	}
	return clusters, nil
}
