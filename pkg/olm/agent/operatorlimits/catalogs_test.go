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

// TestReadCatalogs: the CatalogSources of openshift-marketplace only, each
// by its last observed state; a hosted cluster without OLM has none.
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
	).Build()
	h, err := ReadCatalogs(context.Background(), guest)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"total":3,"notReady":[{"name":"redhat-marketplace","state":"TRANSIENT_FAILURE"},{"name":"mirror"}]}`
	if got := h.Encode(); got != want {
		t.Errorf("report %s, want %s", got, want)
	}

	// No OLM CRDs: the API server does not know the kind.
	noOLM := fake.NewClientBuilder().WithScheme(guestScheme).WithRESTMapper(meta.NewDefaultRESTMapper(nil)).Build()
	if h, err := ReadCatalogs(context.Background(), noOLM); err != nil || h.Encode() != `{"total":0}` {
		t.Errorf("without OLM: %s, %v", h.Encode(), err)
	}
}
