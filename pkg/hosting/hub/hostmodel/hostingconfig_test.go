package hostmodel

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// A ManagedClusterAddOn (which a tenant may be able to edit) naming a
// HostingConfig outside the hub's namespaces does not set the cluster's
// capacity or hosting namespaces: the API defaults apply, as in the agent's
// render.
func TestHostingConfigOfHonoursConfigNamespaces(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	generous := int32(500)
	config := func(ns string) *v1alpha1.HostingConfig {
		return &v1alpha1.HostingConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "big"},
			Spec: v1alpha1.HostingConfigSpec{Capacity: &v1alpha1.CapacityConfig{MaxHostedClusters: generous}, HostingNamespaces: []v1alpha1.HostingNamespaceName{"tenant-x"}}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(config("hcp-fleet"), config("tenant"), config("admins")).Build()
	mcaNaming := func(ns string) *addonv1alpha1.ManagedClusterAddOn {
		return &addonv1alpha1.ManagedClusterAddOn{Status: addonv1alpha1.ManagedClusterAddOnStatus{ConfigReferences: []addonv1alpha1.ConfigReference{{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "hostingconfigs"},
			DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: ns, Name: "big"}},
		}}}}
	}
	namespaces := ConfigNamespaces{Allowed: []string{"admins"}}
	for _, tc := range []struct {
		ns       string
		taken    bool
		capacity int32
	}{
		{"hcp-fleet", true, generous},
		{"admins", true, generous},
		{"tenant", false, v1alpha1.DefaultMaxHostedClusters},
	} {
		hc, err := HostingConfigOf(context.Background(), c, mcaNaming(tc.ns), namespaces)
		if err != nil {
			t.Fatal(err)
		}
		if (hc != nil) != tc.taken {
			t.Errorf("HostingConfig in %s: taken=%v, want %v", tc.ns, hc != nil, tc.taken)
		}
		capacity, err := Capacity(context.Background(), c, nil, mcaNaming(tc.ns), namespaces)
		if err != nil || capacity != tc.capacity {
			t.Errorf("HostingConfig in %s: capacity %d (%v), want %d", tc.ns, capacity, err, tc.capacity)
		}
	}
}

func TestEffectiveCapacity(t *testing.T) {
	for _, tc := range []struct {
		claim string // "" for none
		want  int32
	}{
		{"", 80}, {"none", 80}, {"12", 12}, {"0", 0}, {"200", 80}, {"-3", 80}, {"many", 80}, {"99999999999", 80},
	} {
		claims := map[string]string{}
		if tc.claim != "" {
			claims[hosting.ClaimResourceSlots] = tc.claim
		}
		if got := EffectiveCapacity(80, claims); got != tc.want {
			t.Errorf("EffectiveCapacity(80, claim %q) = %d, want %d", tc.claim, got, tc.want)
		}
	}
}
