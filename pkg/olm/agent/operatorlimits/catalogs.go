package operatorlimits

import (
	"context"
	"fmt"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// ReadCatalogs lists the hosted cluster's CatalogSources in
// olm.CatalogNamespace and summarizes their connection state, as OLM's
// catalog-operator records it (status.connectionState.lastObservedState);
// none when OLM's CRDs are not installed.
func ReadCatalogs(ctx context.Context, guest client.Reader) (olm.CatalogHealth, error) {
	var list operatorsv1alpha1.CatalogSourceList
	if err := guest.List(ctx, &list, client.InNamespace(olm.CatalogNamespace)); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return olm.NewCatalogHealth(nil), nil
		}
		return olm.CatalogHealth{}, fmt.Errorf("listing CatalogSources in %s: %w", olm.CatalogNamespace, err)
	}
	states := make(map[string]string, len(list.Items))
	for _, cs := range list.Items {
		state := ""
		if c := cs.Status.GRPCConnectionState; c != nil {
			state = c.LastObservedState
		}
		states[cs.Name] = state
	}
	return olm.NewCatalogHealth(states), nil
}
