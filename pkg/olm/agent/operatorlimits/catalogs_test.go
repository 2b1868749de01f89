package operatorlimits

import (
	"context"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// TestReadCatalogs: the CatalogSources of openshift-marketplace, and those
// named elsewhere (a missing one is MISSING), each by its last observed
// state; others are not read; a hosted cluster without OLM has none.
func TestReadCatalogs(t *testing.T) {
	catalog := func(ns, name, state string) *operatorsv1alpha1.CatalogSource {
		cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if state != "" {
			cs.Status.GRPCConnectionState = &operatorsv1alpha1.GRPCConnectionState{LastObservedState: state}
		}
		return cs
	}
	guest := fake.NewClientBuilder().WithScheme(guestScheme).WithObjects(
		catalog(olm.CatalogNamespace, "redhat-operators", "READY"),
		catalog(olm.CatalogNamespace, "redhat-marketplace", "TRANSIENT_FAILURE"),
		catalog(olm.CatalogNamespace, "mirror", ""),
		catalog("team-a", "private", "TRANSIENT_FAILURE"),
		catalog("team-b", "named", "TRANSIENT_FAILURE"),
		catalog("team-c", "serving", "READY"),
	).Build()
	h, err := ReadCatalogs(context.Background(), guest, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"total":3,"notReady":[{"name":"redhat-marketplace","state":"TRANSIENT_FAILURE"},{"name":"mirror"}]}`
	if got := h.Encode(); got != want {
		t.Errorf("report %s, want %s", got, want)
	}

	named := olm.DecodeCatalogSources(olm.EncodeCatalogSources([]string{"team-c/serving", "team-b/named", "team-d/gone", olm.CatalogNamespace + "/mirror"}))
	h, err = ReadCatalogs(context.Background(), guest, named)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"total":6,"named":3,"notReady":[{"name":"redhat-marketplace","state":"TRANSIENT_FAILURE"},{"name":"team-b/named","state":"TRANSIENT_FAILURE"},{"name":"team-d/gone","state":"MISSING"},{"name":"mirror"}]}`
	if got := h.Encode(); got != want {
		t.Errorf("report with named catalogs %s, want %s", got, want)
	}
	// No OLM CRDs: the API server does not know the kind.
	noOLM := fake.NewClientBuilder().WithScheme(guestScheme).WithRESTMapper(meta.NewDefaultRESTMapper(nil)).Build()
	if h, err := ReadCatalogs(context.Background(), noOLM, nil); err != nil || h.Encode() != `{"total":0}` {
		t.Errorf("without OLM: %s, %v", h.Encode(), err)
	}
}
