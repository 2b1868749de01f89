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
// olm.CatalogNamespace, and reads the ones named (namespace/name) in other
// namespaces, and summarizes their connection state, as OLM's
// catalog-operator records it (status.connectionState.lastObservedState):
// the catalog-operator connects to every CatalogSource, whichever the
// placement (management: the hosted control plane's opm servers; guest:
// registry pods in the hosted cluster; a user's: their address or pod). A
// named one that does not exist is olm.StateMissing. None when OLM's CRDs
// are not installed.
func ReadCatalogs(ctx context.Context, guest client.Reader, named [][2]string) (olm.CatalogHealth, error) {
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
	for _, ref := range named {
		if ref[0] == olm.CatalogNamespace {
			continue // listed above
		}
		key := ref[0] + "/" + ref[1]
		cs := &operatorsv1alpha1.CatalogSource{}
		switch err := guest.Get(ctx, client.ObjectKey{Namespace: ref[0], Name: ref[1]}, cs); {
		case apierrors.IsNotFound(err):
			states[key] = olm.StateMissing
		case err != nil:
			return olm.CatalogHealth{}, fmt.Errorf("reading CatalogSource %s: %w", key, err)
		case cs.Status.GRPCConnectionState != nil:
			states[key] = cs.Status.GRPCConnectionState.LastObservedState
		default:
			states[key] = ""
		}
	}
	return olm.NewCatalogHealth(states), nil
}
