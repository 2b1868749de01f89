//go:build integration

package importer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/importer"
)

var (
	tenantPolicyGVR  = v1alpha1.GroupVersion.WithResource("tenantpolicies")
	hostingConfigGVR = v1alpha1.GroupVersion.WithResource("hostingconfigs")
)

// importCondition waits until hcd's Imported condition, for its current
// generation, has reason and a message containing each of msgs, and
// returns the HostedClusterDeployment as it then was.
func importCondition(t *testing.T, c clients, ns, name, reason string, msgs ...string) *v1alpha1.HostedClusterDeployment {
	t.Helper()
	var got *v1alpha1.HostedClusterDeployment
	env.Eventually(t, time.Minute, fmt.Sprintf("%s/%s Imported reason %s", ns, name, reason), func(ctx context.Context) error {
		hcd, err := getHCD(ctx, c, ns, name)
		if err != nil {
			return err
		}
		cond := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionImported)
		if cond == nil || cond.Reason != reason || cond.ObservedGeneration != hcd.Generation {
			return fmt.Errorf("Imported = %+v (generation %d)", cond, hcd.Generation)
		}
		for _, m := range msgs {
			if !strings.Contains(cond.Message, m) {
				return fmt.Errorf("Imported message %q lacks %q", cond.Message, m)
			}
		}
		got = hcd
		return nil
	})
	return got
}

func noManagedCluster(t *testing.T, c clients, name string) {
	t.Helper()
	if _, err := c.clusters.ClusterV1().ManagedClusters().Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ManagedCluster %s: %v (want none)", name, err)
	}
}

func setImport(t *testing.T, c clients, ns, name string, mode v1alpha1.ImportMode) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"import":%q}}`, mode)
	if _, err := c.hub.Resource(hcdGVR).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestImportOptOut: a HostedClusterDeployment's spec.import Disabled counts
// only where its TenantPolicy allows it; a management cluster's
// HostingConfig turns the import off for its hosted clusters; an opt-out
// leaves no ManagedCluster, and one imported before stays until its
// ManagedCluster is deleted, which is then not created again.
func TestImportOptOut(t *testing.T) {
	ctx := context.Background()
	c := newClients()
	startImporterWith(t, importer.Options{ConfigNamespaces: hostmodel.ConfigNamespaces{Hub: addon.DefaultHubNamespace}})
	waitForStandIn(t, c)

	// Namespace team-optout is governed by a TenantPolicy that allows the
	// opt-out; team-strict by the built-in policy, which does not.
	const allowed, strict = "team-optout", "team-strict"
	if _, err := c.hubKube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: allowed, Labels: map[string]string{"optout": "allowed"}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "TenantPolicy", "metadata": map[string]any{"name": "optout"},
		"spec": map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"optout": "allowed"}}, "allowImportOptOut": true},
	}}
	if _, err := c.hub.Resource(tenantPolicyGVR).Create(ctx, tp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.hub.Resource(tenantPolicyGVR).Delete(context.Background(), "optout", metav1.DeleteOptions{})
	})

	t.Run("where the policy allows it, no ManagedCluster", func(t *testing.T) {
		createHCD(t, c, allowed, "optout-1", nil)
		setImport(t, c, allowed, "optout-1", v1alpha1.ImportDisabled)
		markAvailable(t, c, allowed, "optout-1")
		hcd := importCondition(t, c, allowed, "optout-1", v1alpha1.ReasonImportDisabled, "spec.import is Disabled, which TenantPolicy optout allows", "no ManagedCluster is created")
		noManagedCluster(t, c, "optout-1")
		if hcd.Status.ManagedCluster != "" || hasFinalizer(hcd.Finalizers, importer.Finalizer) {
			t.Errorf("status.managedCluster %q, finalizers %v: want neither", hcd.Status.ManagedCluster, hcd.Finalizers)
		}
	})

	t.Run("where the policy does not allow it, imported all the same", func(t *testing.T) {
		createHCD(t, c, strict, "optout-2", nil)
		setImport(t, c, strict, "optout-2", v1alpha1.ImportDisabled)
		markAvailable(t, c, strict, "optout-2")
		importCondition(t, c, strict, "optout-2", v1alpha1.ReasonWaitingForKubeconfig, "ManagedCluster optout-2 exists")
		if _, err := c.clusters.ClusterV1().ManagedClusters().Get(ctx, "optout-2", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("turned off after the import, the ManagedCluster stays until it is deleted", func(t *testing.T) {
		createHCD(t, c, allowed, "optout-3", nil)
		markAvailable(t, c, allowed, "optout-3")
		importCondition(t, c, allowed, "optout-3", v1alpha1.ReasonWaitingForKubeconfig, "ManagedCluster optout-3 exists")
		setImport(t, c, allowed, "optout-3", v1alpha1.ImportDisabled)
		// The import saw the new generation (positive signal) and kept the
		// ManagedCluster.
		importCondition(t, c, allowed, "optout-3", v1alpha1.ReasonWaitingForKubeconfig, "stays imported until its ManagedCluster is deleted")
		if _, err := c.clusters.ClusterV1().ManagedClusters().Get(ctx, "optout-3", metav1.GetOptions{}); err != nil {
			t.Fatalf("the ManagedCluster imported before: %v", err)
		}
		// Detached by the admin: not imported again.
		if err := c.clusters.ClusterV1().ManagedClusters().Delete(ctx, "optout-3", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		env.Eventually(t, 2*time.Minute, "optout-3 detached", func(ctx context.Context) error {
			hcd, err := getHCD(ctx, c, allowed, "optout-3")
			if err != nil {
				return err
			}
			cond := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionImported)
			if cond == nil || cond.Reason != v1alpha1.ReasonImportDisabled || hcd.Status.ManagedCluster != "" || hasFinalizer(hcd.Finalizers, importer.Finalizer) {
				return fmt.Errorf("Imported %+v, status.managedCluster %q, finalizers %v", cond, hcd.Status.ManagedCluster, hcd.Finalizers)
			}
			return nil
		})
		noManagedCluster(t, c, "optout-3")
	})

	t.Run("a HostingConfig turns it off for its management cluster", func(t *testing.T) {
		hc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1alpha1.GroupVersion.String(), "kind": "HostingConfig",
			"metadata": map[string]any{"name": "no-import", "namespace": addon.DefaultHubNamespace},
			"spec":     map[string]any{"hostedClusterImport": "Disabled"},
		}}
		if _, err := c.hub.Resource(hostingConfigGVR).Namespace(addon.DefaultHubNamespace).Create(ctx, hc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		addons := addonclient.NewForConfigOrDie(fleet.Hub.Config())
		useConfig := func(patch string) {
			t.Helper()
			if _, err := addons.AddonV1alpha1().ManagedClusterAddOns(host).Patch(ctx, addon.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		useConfig(`{"spec":{"configs":[{"group":"hcpfleet.io","resource":"hostingconfigs","name":"no-import","namespace":"hcp-fleet"}]}}`)
		t.Cleanup(func() {
			useConfig(`{"spec":{"configs":null}}`)
			_ = c.hub.Resource(hostingConfigGVR).Namespace(addon.DefaultHubNamespace).Delete(context.Background(), "no-import", metav1.DeleteOptions{})
		})
		// OCM's add-on manager resolves it first (the import reads the
		// resolved reference, as the scheduler does).
		env.Eventually(t, time.Minute, host+" resolves HostingConfig no-import", func(ctx context.Context) error {
			mca, err := addons.AddonV1alpha1().ManagedClusterAddOns(host).Get(ctx, addon.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if key, ok := hostmodel.HostingConfigKey(mca); !ok || key.Name != "no-import" {
				return fmt.Errorf("resolved %v %v", key, ok)
			}
			return nil
		})
		createHCD(t, c, strict, "optout-4", nil)
		markAvailable(t, c, strict, "optout-4")
		importCondition(t, c, strict, "optout-4", v1alpha1.ReasonImportDisabled, "HostingConfig hcp-fleet/no-import of management cluster "+host)
		noManagedCluster(t, c, "optout-4")
	})
}

// TestImportOptOutByTheHub: --import-hosted-clusters=false imports nothing.
func TestImportOptOutByTheHub(t *testing.T) {
	c := newClients()
	startImporterWith(t, importer.Options{Disabled: true})
	waitForStandIn(t, c)
	createHCD(t, c, "team-hub-off", "optout-5", nil)
	markAvailable(t, c, "team-hub-off", "optout-5")
	importCondition(t, c, "team-hub-off", "optout-5", v1alpha1.ReasonImportDisabled, "--import-hosted-clusters=false")
	noManagedCluster(t, c, "optout-5")
}
