//go:build integration

package addon_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	addonhub "github.com/hcp-fleet/hcp-fleet/pkg/addon/hub"
)

// A HyperShift operator image that crash-loops makes the add-on unavailable:
// the add-on's health is the agent's and its operator's (issue 37, item 2),
// so OCM and the scheduler see a bad operator, not just a live agent.
func TestOperatorHealthIsAddOnHealth(t *testing.T) {
	ctx := context.Background()
	c := newClients(t)
	const cluster = "cluster-2"
	c.label(t, cluster, hcpfleet.HostLabel, ptrTo("true"))
	mca := c.agentReady(t, cluster)
	if mca.Status.HealthCheck.Mode != addonv1alpha1.HealthCheckModeCustomized {
		t.Errorf("health check mode %q, want %q (the hub's work prober, not the lease)", mca.Status.HealthCheck.Mode, addonv1alpha1.HealthCheckModeCustomized)
	}

	broken := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hcpfleet.io/v1alpha1", "kind": "HostingConfig",
		"metadata": map[string]any{"name": "broken-operator", "namespace": "hcp-fleet"},
		"spec":     map[string]any{"operator": map[string]any{"image": hcpfleet.BrokenHyperShiftOperatorImage}},
	}}
	if _, err := c.hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Create(ctx, broken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Delete(context.Background(), "broken-operator", metav1.DeleteOptions{})
	})
	setConfigs := func(configs string) {
		t.Helper()
		patch := []byte(`{"spec":{"configs":` + configs + `}}`)
		if _, err := c.addons.AddonV1alpha1().ManagedClusterAddOns(cluster).Patch(ctx, addon.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setConfigs(`[{"group":"hcpfleet.io","resource":"hostingconfigs","name":"broken-operator","namespace":"hcp-fleet"}]`)
	t.Cleanup(func() { setConfigs("null") })

	start := time.Now()
	eventually(t, 2*time.Minute, "the add-on on "+cluster+" unavailable because of its operator", func(ctx context.Context) error {
		mca, err := c.addons.AddonV1alpha1().ManagedClusterAddOns(cluster).Get(ctx, addon.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		// The agent saw the broken image: its own condition says so first.
		op := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionHyperShiftOperatorInstalled)
		if op == nil || op.Status != metav1.ConditionFalse || !strings.Contains(op.Message, hcpfleet.BrokenHyperShiftOperatorImage) {
			return fmt.Errorf("the agent does not report the broken operator yet: %+v", op)
		}
		// The add-on work's condition rule on the HostingConfig ConfigMap
		// (rollouthealth.go) makes the work not Available, which the
		// addon-framework's work prober reports before its own health
		// checker runs.
		work, err := c.deployWork(ctx, cluster)
		if err != nil {
			return err
		}
		if cm := manifestCondition(work, "configmaps", addon.HostingConfigMap, workv1.ManifestAvailable); cm == nil || cm.Status != metav1.ConditionFalse ||
			!strings.Contains(cm.Message, "has not reported the HyperShift operator healthy") {
			return fmt.Errorf("the HostingConfig ConfigMap's rule: %+v", cm)
		}
		av := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
		if av == nil || av.Status != metav1.ConditionFalse || av.Reason != addonv1alpha1.AddonAvailableReasonWorkNotApply {
			return fmt.Errorf("Available: %+v", av)
		}
		return nil
	})
	t.Logf("add-on unavailable %s after the broken image was configured", time.Since(start).Round(time.Millisecond))

	// Back to the default image: the operator and the add-on recover.
	setConfigs("null")
	c.agentReady(t, cluster)
}
