//go:build integration

package importer_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/importer"
)

var kacGVR = importer.KlusterletAddonConfigGVK.GroupVersion().WithResource("klusterletaddonconfigs")

// klusterletAddonConfigCRD is ACM's KlusterletAddonConfig CRD as far as the
// import writes it (stolostron/klusterlet-addon-controller,
// deploy/agent.open-cluster-management.io_klusterletaddonconfigs_crd.yaml):
// namespaced, v1, the add-on sections required, each with enabled.
func klusterletAddonConfigCRD() *apiextensionsv1.CustomResourceDefinition {
	addonSection := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"enabled":     {Type: "boolean"},
		"proxyPolicy": {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"Disabled"`)}, {Raw: []byte(`"OCPGlobalProxy"`)}, {Raw: []byte(`"CustomProxy"`)}}},
	}}
	spec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{},
		Required: importer.KlusterletAddons}
	for _, a := range importer.KlusterletAddons {
		spec.Properties[a] = addonSection
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: kacGVR.Resource + "." + kacGVR.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: kacGVR.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: kacGVR.Resource, Singular: "klusterletaddonconfig",
				Kind: importer.KlusterletAddonConfigGVK.Kind, ListKind: importer.KlusterletAddonConfigGVK.Kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   spec,
						"status": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
					}}}}},
		},
	}
}

// TestKlusterletAddonConfig: on a hub without ACM's KlusterletAddonConfig
// the import goes on as ever; once the hub serves it, the clusters imported
// before and the ones imported after get one with the configured add-ons,
// owned by their ManagedCluster; one that is not the import's is left alone.
func TestKlusterletAddonConfig(t *testing.T) {
	ctx := context.Background()
	c := newClients()
	crds := apiextensionsclient.NewForConfigOrDie(fleet.Hub.Config())
	crd := klusterletAddonConfigCRD()
	// Registered before the importer's cleanup, so it runs after the
	// importer stopped: the other tests run on a hub without it.
	t.Cleanup(func() {
		_ = crds.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
		env.Eventually(t, time.Minute, "the KlusterletAddonConfig CRD gone", func(ctx context.Context) error {
			if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("CRD: %v", err)
			}
			return nil
		})
	})
	startImporterWith(t, importer.Options{KlusterletAddons: []string{"applicationManager", "policyController"}, KlusterletAddonConfigRecheck: time.Second})
	waitForStandIn(t, c)
	const ns = "team-kac"

	// Not served: imported, and nothing else goes wrong.
	createHCD(t, c, ns, "kac-1", nil)
	markAvailable(t, c, ns, "kac-1")
	importCondition(t, c, ns, "kac-1", v1alpha1.ReasonWaitingForKubeconfig, "ManagedCluster kac-1 exists")

	// Served from now on.
	if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantConfig := func(name string) {
		t.Helper()
		env.Eventually(t, 2*time.Minute, "KlusterletAddonConfig "+name, func(ctx context.Context) error {
			kac, err := c.hub.Resource(kacGVR).Namespace(name).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			mc, err := c.clusters.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for addon, want := range map[string]bool{"applicationManager": true, "policyController": true,
				"certPolicyController": false, "iamPolicyController": false, "searchCollector": false} {
				if got, found, _ := unstructured.NestedBool(kac.Object, "spec", addon, "enabled"); !found || got != want {
					return fmt.Errorf("spec.%s.enabled = %v (set: %v), want %v", addon, got, found, want)
				}
			}
			if owners := kac.GetOwnerReferences(); len(owners) != 1 || owners[0].UID != mc.UID || owners[0].Kind != "ManagedCluster" {
				return fmt.Errorf("owners %+v, want ManagedCluster %s (%s)", owners, name, mc.UID)
			}
			if kac.GetLabels()[hosting.LabelHCDName] != name {
				return fmt.Errorf("labels %v", kac.GetLabels())
			}
			return nil
		})
	}
	t.Run("the cluster imported before gets one", func(t *testing.T) { wantConfig("kac-1") })
	t.Run("a cluster imported now gets one", func(t *testing.T) {
		createHCD(t, c, ns, "kac-2", nil)
		markAvailable(t, c, ns, "kac-2")
		wantConfig("kac-2")
	})
	t.Run("one that is not the import's is left alone", func(t *testing.T) {
		// The admin's own, made before the import (ACM's import would).
		ensureNamespace(t, c.hubKube, "kac-3")
		if _, err := c.hubKube.CoreV1().Namespaces().Patch(ctx, "kac-3", "application/merge-patch+json",
			[]byte(`{"metadata":{"labels":{"open-cluster-management.io/cluster-name":"kac-3"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		theirs := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": kacGVR.GroupVersion().String(), "kind": importer.KlusterletAddonConfigGVK.Kind,
			"metadata": map[string]any{"name": "kac-3", "namespace": "kac-3"},
			"spec": map[string]any{"applicationManager": map[string]any{"enabled": false}, "certPolicyController": map[string]any{"enabled": true},
				"iamPolicyController": map[string]any{"enabled": false}, "policyController": map[string]any{"enabled": false}, "searchCollector": map[string]any{"enabled": false}},
		}}
		created, err := c.hub.Resource(kacGVR).Namespace("kac-3").Create(ctx, theirs, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		createHCD(t, c, ns, "kac-3", nil)
		markAvailable(t, c, ns, "kac-3")
		// Imported: the import has been through the KlusterletAddonConfig
		// step by then (it comes before the status).
		importCondition(t, c, ns, "kac-3", v1alpha1.ReasonWaitingForKubeconfig, "ManagedCluster kac-3 exists")
		got, err := c.hub.Resource(kacGVR).Namespace("kac-3").Get(ctx, "kac-3", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetResourceVersion() != created.GetResourceVersion() {
			t.Errorf("the admin's KlusterletAddonConfig was written: %v", got.Object)
		}
	})
	t.Run("it goes with its ManagedCluster", func(t *testing.T) {
		if err := c.hub.Resource(hcdGVR).Namespace(ns).Delete(ctx, "kac-2", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		env.Eventually(t, 2*time.Minute, "KlusterletAddonConfig kac-2 gone", func(ctx context.Context) error {
			if _, err := c.hub.Resource(kacGVR).Namespace("kac-2").Get(ctx, "kac-2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("KlusterletAddonConfig kac-2: %v", err)
			}
			return nil
		})
	})
}
