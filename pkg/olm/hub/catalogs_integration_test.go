//go:build integration

package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	registryclient "github.com/operator-framework/operator-registry/pkg/client"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

var catalogSourceGVR = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "catalogsources"}

// TestCatalogHealth: with management placement the HyperShift stand-in
// serves the four default catalogs with operator-registry's server and
// writes their CatalogSources into the guest with the connection state of
// a real gRPC health check; the agent reports them and the HCD says
// CatalogsReady=True. A catalog server that dies is named in
// CatalogsReady=False, and recovers. CatalogSources the HostingConfig names
// outside openshift-marketplace count: missing, then serving, then failing.
// With guest placement the CatalogSources carry index images, which the
// guest's OLM (played by the stand-in) runs and connects to: READY.
func TestCatalogHealth(t *testing.T) {
	ctx := context.Background()
	ns := "olm-catalogs"
	if err := fleettest.Tenant(ctx, hubc, ns); err != nil {
		t.Fatal(err)
	}
	// Both hosted clusters at once: their guests start together.
	for name, placement := range map[string]string{"catalogs": "", "guest-catalogs": olm.PlacementGuest} {
		spec := fleettest.HostedCluster(v1alpha1.DefaultHostingNamespace, name).Object["spec"].(map[string]any)
		spec["release"] = map[string]any{"image": rel4175}
		if placement != "" {
			spec["olmCatalogPlacement"] = placement
		}
		hcd := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"placement": "hosts", "hostedCluster": map[string]any{"spec": spec}}}}
		hcd.SetAPIVersion(v1alpha1.GroupVersion.String())
		hcd.SetKind("HostedClusterDeployment")
		hcd.SetNamespace(ns)
		hcd.SetName(name)
		if err := hubc.Create(ctx, hcd); err != nil {
			t.Fatal(err)
		}
	}
	// waitCatalogsReady waits for CatalogsReady with status and reason, and
	// a message saying each of says.
	waitCatalogsReady := func(name string, status metav1.ConditionStatus, reason string, says ...string) *metav1.Condition {
		t.Helper()
		var c *metav1.Condition
		env.Eventually(t, 2*time.Minute, fmt.Sprintf("%s CatalogsReady=%s %s %q", name, status, reason, says), func(ctx context.Context) error {
			h := &v1alpha1.HostedClusterDeployment{}
			if err := hubc.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, h); err != nil {
				return err
			}
			c = meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionCatalogsReady)
			if c == nil || c.Status != status || c.Reason != reason {
				return fmt.Errorf("CatalogsReady %+v", c)
			}
			for _, s := range says {
				if !strings.Contains(c.Message, s) {
					return fmt.Errorf("CatalogsReady message %q", c.Message)
				}
			}
			return nil
		})
		return c
	}

	// Management placement: four catalogs, all READY through real servers.
	waitCatalogsReady("catalogs", metav1.ConditionTrue, v1alpha1.ReasonAsExpected, "all 4 catalogs")
	guest := guestOf(t, v1alpha1.DefaultHostingNamespace, "catalogs")
	list, err := guest.Resource(catalogSourceGVR).Namespace(olm.CatalogNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != len(olm.DefaultCatalogs) {
		t.Fatalf("%d CatalogSources in the guest, want %v", len(list.Items), olm.DefaultCatalogs)
	}
	for _, cs := range list.Items {
		address, _, _ := unstructured.NestedString(cs.Object, "spec", "address")
		state, _, _ := unstructured.NestedString(cs.Object, "status", "connectionState", "lastObservedState")
		dialed, _, _ := unstructured.NestedString(cs.Object, "status", "connectionState", "address")
		if address != cs.GetName()+":50051" || state != "READY" {
			t.Errorf("CatalogSource %s: address %q, state %q", cs.GetName(), address, state)
		}
		// The server behind it is operator-registry's, serving the test
		// catalog.
		rc, err := registryclient.NewClient(dialed)
		if err != nil {
			t.Fatal(err)
		}
		pkg, err := rc.GetPackage(ctx, "example-db")
		_ = rc.Close()
		if err != nil || pkg.GetDefaultChannelName() != "stable" {
			t.Errorf("catalog %s at %s: package example-db %v, %v", cs.GetName(), dialed, pkg, err)
		}
	}

	// A catalog server dies: named, with its state; then it comes back.
	setDown := func(value any) {
		t.Helper()
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{hypershiftsim.AnnotationCatalogsDown: value}}})
		if _, err := host.Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace).Patch(ctx, "catalogs", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setDown("redhat-marketplace")
	waitCatalogsReady("catalogs", metav1.ConditionFalse, v1alpha1.ReasonCatalogsNotReady, "1 of 4", "redhat-marketplace (TRANSIENT_FAILURE)")
	setDown(nil)
	waitCatalogsReady("catalogs", metav1.ConditionTrue, v1alpha1.ReasonAsExpected)

	// The fleet names catalogs outside openshift-marketplace: missing ones
	// do not serve; created (one by image, run by the guest's OLM, one by
	// address, a server that already runs), they are observed READY.
	setCatalogSources := func(patch string) {
		t.Helper()
		hc := &v1alpha1.HostingConfig{}
		hc.SetNamespace("hcp-fleet")
		hc.SetName("default")
		if err := hubc.Patch(context.Background(), hc, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	setCatalogSources(`{"spec":{"olm":{"catalogSources":[{"namespace":"team-a","name":"private"},{"namespace":"team-b","name":"by-address"}]}}}`)
	t.Cleanup(func() { setCatalogSources(`{"spec":{"olm":null}}`) })
	waitCatalogsReady("catalogs", metav1.ConditionFalse, v1alpha1.ReasonCatalogsNotReady,
		"2 of 6 catalogs (4 in openshift-marketplace, 2 named by the HostingConfig's spec.olm.catalogSources) do not serve: team-a/private (MISSING), team-b/by-address (MISSING)")
	dialed, _, _ := unstructured.NestedString(list.Items[0].Object, "status", "connectionState", "address")
	for ns, spec := range map[string]map[string]any{
		"team-a": {"sourceType": "grpc", "image": "registry.example.com/team-a/index:v1"},
		"team-b": {"sourceType": "grpc", "address": dialed},
	} {
		name := map[string]string{"team-a": "private", "team-b": "by-address"}[ns]
		create(t, guest, nsGVR, namespace(ns))
		create(t, guest, catalogSourceGVR, map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
			"metadata": map[string]any{"namespace": ns, "name": name}, "spec": spec})
	}
	waitCatalogsReady("catalogs", metav1.ConditionTrue, v1alpha1.ReasonAsExpected, "all 6 catalogs (4 in openshift-marketplace, 2 named")
	// The image one's server stops, as if its pod crashed: named.
	setDown("team-a/private")
	waitCatalogsReady("catalogs", metav1.ConditionFalse, v1alpha1.ReasonCatalogsNotReady, "team-a/private (TRANSIENT_FAILURE)")
	setDown(nil)
	waitCatalogsReady("catalogs", metav1.ConditionTrue, v1alpha1.ReasonAsExpected, "all 6 catalogs")
	// Named no more: only openshift-marketplace counts again.
	setCatalogSources(`{"spec":{"olm":null}}`)
	waitCatalogsReady("catalogs", metav1.ConditionTrue, v1alpha1.ReasonAsExpected, "all 4 catalogs in openshift-marketplace serve")

	// The hosted cluster's OperatorHub disables the default sources: HCCO
	// deletes the CatalogSources, and there is nothing left to serve.
	patch := `{"spec":{"hostedCluster":{"spec":{"configuration":{"operatorhub":{"disableAllDefaultSources":true}}}}}}`
	if err := hubc.Patch(ctx, &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "catalogs"}},
		client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	waitCatalogsReady("catalogs", metav1.ConditionTrue, v1alpha1.ReasonNoCatalogs)

	// Guest placement: index images of the release's minor, no address;
	// the guest's OLM runs them (the stand-in plays it) and connects.
	waitCatalogsReady("guest-catalogs", metav1.ConditionTrue, v1alpha1.ReasonAsExpected, "all 4 catalogs")
	guest = guestOf(t, v1alpha1.DefaultHostingNamespace, "guest-catalogs")
	cs, err := guest.Resource(catalogSourceGVR).Namespace(olm.CatalogNamespace).Get(ctx, "redhat-operators", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	image, _, _ := unstructured.NestedString(cs.Object, "spec", "image")
	address, _, _ := unstructured.NestedString(cs.Object, "spec", "address")
	if image != "registry.redhat.io/redhat/redhat-operator-index:v4.17" || address != "" {
		t.Errorf("guest-placement CatalogSource: image %q, address %q", image, address)
	}
	// What was observed READY serves the catalog.
	dialed, _, _ = unstructured.NestedString(cs.Object, "status", "connectionState", "address")
	rc, err := registryclient.NewClient(dialed)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if pkg, err := rc.GetPackage(ctx, "example-db"); err != nil || pkg.GetDefaultChannelName() != "stable" {
		t.Errorf("guest-placement catalog at %s: package example-db %v, %v", dialed, pkg, err)
	}
}
