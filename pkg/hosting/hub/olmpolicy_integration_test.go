//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// setOLMPolicy sets spec.olm of the default HostingConfig every management
// cluster runs with (nil removes it); the test's end removes it.
func setOLMPolicy(t *testing.T, policy *v1alpha1.OLMConfig) {
	t.Helper()
	ctx := context.Background()
	hc := &v1alpha1.HostingConfig{}
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: "hcp-fleet", Name: "default"}, hc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(hc.DeepCopy())
	hc.Spec.OLM = policy
	if err := hubc.Patch(ctx, hc, patch); err != nil {
		t.Fatal(err)
	}
}

func catalogDigest(c string) string { return "@sha256:" + strings.Repeat(c, 64) }

// TestFleetCatalogPolicy: the OLM catalog policy of a HostingConfig lands
// on the running HostedClusters of its management clusters as HyperShift's
// annotations (catalog images only where the catalogs run on the management
// side), a change of the policy reaches them, a change that does not concern
// a hosted cluster leaves its ManifestWork alone, and removing the policy
// removes the annotations. (HostedClusterDeployments' own annotations
// winning is covered by the unit tests: this hub lets none of them through.)
func TestFleetCatalogPolicy(t *testing.T) {
	ctx := context.Background()
	ns := "olm-policy"
	tenant(t, ns)
	t.Cleanup(func() {
		restore := []byte(`{"spec":{"olm":null}}`)
		hc := &v1alpha1.HostingConfig{}
		hc.SetNamespace("hcp-fleet")
		hc.SetName("default")
		if err := hubc.Patch(context.Background(), hc, client.RawPatch(types.MergePatchType, restore)); err != nil {
			t.Error(err)
		}
	})
	for name, placement := range map[string]string{"cat-mgmt": "", "cat-guest": olm.PlacementGuest} {
		u := hcd(ns, name, func(spec map[string]any) {
			delete(spec, "nodePools")
			if placement != "" {
				spec["hostedCluster"].(map[string]any)["spec"].(map[string]any)["olmCatalogPlacement"] = placement
			}
		})
		if err := hubc.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	hostOf := map[string]string{}
	for _, name := range []string{"cat-mgmt", "cat-guest"} {
		hostOf[name] = waitCondition(t, ns, name, v1alpha1.ConditionDelivered, metav1.ConditionTrue, 2*time.Minute).Status.HostingCluster
	}
	// waitAnnotations waits until the HostedCluster on its host carries
	// exactly want of HyperShift's OLM annotations.
	olmKeys := append([]string{olm.AnnotationCatalogRegistryOverrides}, olm.CatalogImageAnnotations...)
	waitAnnotations := func(name string, want map[string]string) {
		t.Helper()
		env.Eventually(t, 2*time.Minute, name+"'s HostedCluster OLM annotations", func(ctx context.Context) error {
			hc, err := hosts[hostOf[name]].Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			got := map[string]string{}
			for _, k := range olmKeys {
				if v, ok := hc.GetAnnotations()[k]; ok {
					got[k] = v
				}
			}
			if !maps.Equal(got, want) {
				return fmt.Errorf("annotations %v, want %v", got, want)
			}
			return nil
		})
	}
	workGeneration := func(name string) int64 {
		t.Helper()
		w := &workv1.ManifestWork{}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: hostOf[name], Name: hosting.WorkName(ns, name)}, w); err != nil {
			t.Fatal(err)
		}
		return w.Generation
	}

	catalogs := func(c string) v1alpha1.OLMCatalogImages {
		return v1alpha1.OLMCatalogImages{OpenShiftVersion: "4.18",
			RedHatOperators:    "registry.redhat.io/redhat/redhat-operator-index" + catalogDigest(c),
			CertifiedOperators: "registry.redhat.io/redhat/certified-operator-index" + catalogDigest(c),
			CommunityOperators: "registry.redhat.io/redhat/community-operator-index" + catalogDigest(c),
			RedHatMarketplace:  "registry.redhat.io/redhat/redhat-marketplace-index" + catalogDigest(c)}
	}
	annotations := func(c string) map[string]string {
		cs := catalogs(c)
		return map[string]string{
			olm.AnnotationRedHatOperatorsCatalogImage:    cs.RedHatOperators,
			olm.AnnotationCertifiedOperatorsCatalogImage: cs.CertifiedOperators,
			olm.AnnotationCommunityOperatorsCatalogImage: cs.CommunityOperators,
			olm.AnnotationRedHatMarketplaceCatalogImage:  cs.RedHatMarketplace,
		}
	}
	const overrides = "registry.redhat.io/redhat=mirror.example.com/redhat"
	policy := &v1alpha1.OLMConfig{
		Catalogs: []v1alpha1.OLMCatalogImages{catalogs("a"),
			{OpenShiftVersion: "4.17", RedHatOperators: "r/ro" + catalogDigest("1"), CertifiedOperators: "r/co" + catalogDigest("1"),
				CommunityOperators: "r/cm" + catalogDigest("1"), RedHatMarketplace: "r/rm" + catalogDigest("1")}},
		RegistryOverrides: []v1alpha1.RegistryOverride{{Source: "registry.redhat.io/redhat", Mirrors: []string{"mirror.example.com/redhat"}}},
	}
	setOLMPolicy(t, policy)
	want := annotations("a")
	want[olm.AnnotationCatalogRegistryOverrides] = overrides
	waitAnnotations("cat-mgmt", want)
	waitAnnotations("cat-guest", map[string]string{olm.AnnotationCatalogRegistryOverrides: overrides})
	guestGeneration := workGeneration("cat-guest")

	// New digests for 4.18: the management-placed hosted cluster moves; the
	// guest-placed one is not concerned, and its ManifestWork is not
	// rewritten (checked after the positive signal of the first).
	policy.Catalogs[0] = catalogs("b")
	setOLMPolicy(t, policy)
	want = annotations("b")
	want[olm.AnnotationCatalogRegistryOverrides] = overrides
	waitAnnotations("cat-mgmt", want)
	if g := workGeneration("cat-guest"); g != guestGeneration {
		t.Errorf("a 4.18 catalog change rewrote the guest-placed hosted cluster's ManifestWork (generation %d → %d)", guestGeneration, g)
	}

	// No policy: HyperShift's annotations leave both HostedClusters.
	setOLMPolicy(t, nil)
	waitAnnotations("cat-mgmt", map[string]string{})
	waitAnnotations("cat-guest", map[string]string{})
}
