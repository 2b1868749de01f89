package hypershiftsim

import (
	"context"
	"slices"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	registryclient "github.com/operator-framework/operator-registry/pkg/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// TestCatalogServer: operator-registry's server over the test catalog
// serves its packages and is READY; stopped it is TRANSIENT_FAILURE;
// started again it is READY on the same address.
func TestCatalogServer(t *testing.T) {
	ctx := context.Background()
	s := newCatalogServers()
	t.Cleanup(s.stop)
	uid := types.UID("hc-1")
	addr, state, err := s.ensure(ctx, uid, "redhat-operators", true)
	if err != nil || state != olm.StateReady {
		t.Fatalf("started: %s %s %v", addr, state, err)
	}
	c, err := registryclient.NewClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pkg, err := c.GetPackage(ctx, "example-db")
	if err != nil || pkg.GetDefaultChannelName() != "stable" || len(pkg.GetChannels()) != 1 || pkg.GetChannels()[0].GetCsvName() != "example-db.v1.1.0" {
		t.Fatalf("package example-db: %v, %v", pkg, err)
	}

	// The stand-in checks again on every pass, as catalog-operator
	// watches the connection: the state settles within a few.
	waitState := func(running bool, want string) {
		t.Helper()
		var state string
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			again, got, err := s.ensure(ctx, uid, "redhat-operators", running)
			if err != nil {
				return false, err
			}
			if again != addr {
				t.Errorf("server on %s, was %s", again, addr)
			}
			state = got
			return state == want, nil
		})
		if err != nil {
			t.Fatalf("running %v: state %s, want %s: %v", running, state, want, err)
		}
	}
	waitState(false, "TRANSIENT_FAILURE")
	waitState(true, olm.StateReady)
	s.remove(uid)
	if len(s.servers) != 0 {
		t.Errorf("servers left after remove: %v", s.servers)
	}
}

func TestHCCOCatalogSources(t *testing.T) {
	hc := &hyperv1.HostedCluster{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		olm.AnnotationCatalogRegistryOverrides: "quay.io/x=mirror.example.com/x,registry.redhat.io/redhat=mirror.example.com/rh,registry.redhat.io/redhat=second.example.com/rh",
		AnnotationCatalogsDown:                 " redhat-marketplace, ,community-operators",
	}}}
	hc.Status.Version = &hyperv1.ClusterVersionStatus{Desired: configv1.Release{Version: "4.18.5"}}
	if got := guestCatalogImage(hc, "redhat-operator-index"); got != "mirror.example.com/rh/redhat-operator-index:v4.18" {
		t.Errorf("guest catalog image %s", got)
	}
	if got := catalogsDown(hc.Annotations); len(got) != 2 || got[0] != "redhat-marketplace" || got[1] != "community-operators" {
		t.Errorf("catalogs down %q", got)
	}
	for _, dc := range defaultCatalogs {
		if !slices.Contains(olm.DefaultCatalogs, dc.name) {
			t.Errorf("catalog %s is not one of olm.DefaultCatalogs", dc.name)
		}
	}
}
