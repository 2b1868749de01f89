package hypershiftsim

import (
	"context"
	"errors"
	"fmt"
	"slices"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	registryclient "github.com/operator-framework/operator-registry/pkg/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The stand-in also plays the guest's own OLM for every CatalogSource the
// management side does not serve: the default catalogs with guest
// placement, and CatalogSources users add anywhere in the hosted cluster.
// In OpenShift the catalog-operator runs a registry pod for a
// CatalogSource with spec.image and connects to it, or connects to
// spec.address; either way it records the gRPC connection state in
// status.connectionState. Here:
//
//   - spec.image: the stand-in runs an operator-registry server over
//     testdata/catalog in place of the pod (it pulls nothing: every image
//     serves the same small catalog) and health-checks it;
//   - spec.address: it health-checks that address as given (a test can
//     run a registry server on a loopback port and name it there);
//   - anything else (configmap catalogs): not played, no connection state.
//
// AnnotationCatalogsDown also stops these servers: a name alone for one in
// openshift-marketplace, namespace/name elsewhere.

// guestCatalogOperator records the connection state of every CatalogSource
// of hc's guest except the management-placement defaults (written by
// reconcileCatalogs).
func (r *hostedClusterReconciler) guestCatalogOperator(ctx context.Context, guest client.Client, hc *hyperv1.HostedCluster, management bool, down []string) error {
	var list operatorsv1alpha1.CatalogSourceList
	if err := guest.List(ctx, &list); err != nil {
		return fmt.Errorf("listing the guest's CatalogSources: %w", err)
	}
	var errs []error
	for i := range list.Items {
		cs := &list.Items[i]
		if management && cs.Namespace == marketplaceNamespace && isDefaultCatalog(cs.Name) {
			continue
		}
		key := cs.Namespace + "/" + cs.Name
		stopped := slices.Contains(down, key) || (cs.Namespace == marketplaceNamespace && slices.Contains(down, cs.Name))
		var addr, state string
		var err error
		switch {
		case cs.Spec.Image != "":
			addr, state, err = r.catalogs.ensure(ctx, hc.UID, key, !stopped)
		case cs.Spec.Address != "":
			addr, state, err = r.catalogs.probe(ctx, hc.UID, key, cs.Spec.Address)
		default:
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("catalog %s: %w", key, err))
			continue
		}
		if c := cs.Status.GRPCConnectionState; c != nil && c.LastObservedState == state && c.Address == addr {
			continue // write nothing when nothing changed
		}
		patch := client.MergeFrom(cs.DeepCopy())
		cs.Status.GRPCConnectionState = &operatorsv1alpha1.GRPCConnectionState{Address: addr, LastObservedState: state, LastConnectTime: metav1.Now()}
		if err := guest.Status().Patch(ctx, cs, patch); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("CatalogSource %s status: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

func isDefaultCatalog(name string) bool {
	for _, dc := range defaultCatalogs {
		if dc.name == name {
			return true
		}
	}
	return false
}

// probe health-checks the registry server at addr (one the stand-in does
// not run) for catalog key of hosted cluster uid, keeping one client per
// catalog as catalog-operator keeps one connection.
func (s *catalogServers) probe(ctx context.Context, uid types.UID, key, addr string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byName := s.servers[uid]
	if byName == nil {
		byName = map[string]*catalogServer{}
		s.servers[uid] = byName
	}
	cs := byName[key]
	if cs == nil || cs.addr != addr || cs.grpc != nil {
		if cs != nil {
			cs.close()
		}
		c, err := registryclient.NewClient(addr)
		if err != nil {
			return "", "", err
		}
		cs = &catalogServer{addr: addr, client: c}
		byName[key] = cs
	}
	return addr, cs.state(ctx), nil
}
