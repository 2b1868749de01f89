//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// TestInfraIDIsTheHubs: a HostedCluster whose HCD leaves infraID empty
// gets the hub's derived one; a tenant-set infraID another HCD has first
// is refused before binding, without naming the other, and is scheduled
// once that one is gone.
func TestInfraIDIsTheHubs(t *testing.T) {
	ctx := context.Background()
	nsA, nsB := "infra-tenant-a", "infra-tenant-b"
	tenant(t, nsA)
	tenant(t, nsB)
	// Both teams may set spec.infraID (the built-in tenant policy leaves
	// it to the hub).
	allowInfraID(t, nsA, nsB)
	infraID := func(spec map[string]any) { hcSpec(spec)["infraID"] = "shared-infra" }

	createHCD(t, hcd(nsA, "first", infraID))
	t.Cleanup(func() { deleteAndWait(t, nsA, "first") })
	createHCD(t, hcd(nsB, "derived"))
	t.Cleanup(func() { deleteAndWait(t, nsB, "derived") })
	first, _ := awaitCondition(t, nsA, "first", v1alpha1.ConditionDelivered, metav1.ConditionTrue, v1alpha1.ReasonApplied)
	derived, _ := awaitCondition(t, nsB, "derived", v1alpha1.ConditionDelivered, metav1.ConditionTrue, v1alpha1.ReasonApplied)
	for _, tc := range []struct {
		host, name, want string
	}{
		{first.Status.HostingCluster, "first", "shared-infra"},
		{derived.Status.HostingCluster, "derived", scheduling.DeriveInfraID("derived", derived.UID)},
	} {
		hc, err := hosts[tc.host].Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, tc.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if id, _, _ := unstructured.NestedString(hc.Object, "spec", "infraID"); id != tc.want {
			t.Errorf("HostedCluster %s on %s: infraID %q, want %q", tc.name, tc.host, id, tc.want)
		}
	}

	// Another tenant's HCD with the same infraID is not bound anywhere.
	createHCD(t, hcd(nsB, "second", infraID))
	t.Cleanup(func() { deleteAndWait(t, nsB, "second") })
	second, c := awaitCondition(t, nsB, "second", v1alpha1.ConditionScheduled, metav1.ConditionFalse, v1alpha1.ReasonInfraIDTaken,
		"spec.hostedCluster.spec.infraID shared-infra is the infraID of another HostedClusterDeployment")
	if strings.Contains(c.Message, nsA) || strings.Contains(c.Message, "/first") || strings.Contains(c.Message, "HostedClusterDeployment first") {
		t.Errorf("the message names the other tenant's HCD: %s", c.Message)
	}
	if second.Status.HostingCluster != "" {
		t.Errorf("bound to %s", second.Status.HostingCluster)
	}

	// Once the first is gone, the infraID is free.
	deleteAndWait(t, nsA, "first")
	env.Eventually(t, 2*time.Minute, nsB+"/second scheduled once the infraID is free", func(ctx context.Context) error {
		h, err := getHCD(ctx, nsB, "second")
		if err != nil {
			return err
		}
		if h.Status.HostingCluster == "" {
			return fmt.Errorf("not bound yet")
		}
		return condition(h, v1alpha1.ConditionScheduled, metav1.ConditionTrue)
	})
	awaitCondition(t, nsB, "second", v1alpha1.ConditionDelivered, metav1.ConditionTrue, v1alpha1.ReasonApplied)
}

// allowInfraID gives each namespace a TenantPolicy that lets its tenants
// set spec.infraID, removed when the test ends.
func allowInfraID(t *testing.T, namespaces ...string) {
	t.Helper()
	for _, ns := range namespaces {
		if err := fleettest.SetTenantPolicy(context.Background(), hubc, ns, func(s *v1alpha1.TenantPolicySpec) {
			s.Fields.HostedCluster = []string{"infraID"}
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = hubc.Delete(context.Background(), &v1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "tenant-" + ns}})
		})
	}
}
