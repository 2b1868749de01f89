//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/operator"
)

// TestScheduleAndDeliverOntoAHandsOffCluster: a management cluster whose
// HostingConfig says spec.operator.management External, while another
// manager runs (and changes) the HyperShift operator, is scheduled onto
// and delivered to as any other: the hosted cluster becomes Available (the
// HyperShift stand-in acts because an operator Deployment runs there), and
// the agent leaves the other manager's operator as it is.
func TestScheduleAndDeliverOntoAHandsOffCluster(t *testing.T) {
	ctx := context.Background()
	host := env.Fleet.Managed[2].Name
	spoke := kubernetes.NewForConfigOrDie(env.Fleet.Managed[2].Config())

	config := &v1alpha1.HostingConfig{ObjectMeta: metav1.ObjectMeta{Namespace: addon.DefaultHubNamespace, Name: "hands-off"},
		Spec: v1alpha1.HostingConfigSpec{Operator: &v1alpha1.HyperShiftOperatorConfig{Management: v1alpha1.HyperShiftOperatorExternal}}}
	if err := hubc.Create(ctx, config); err != nil {
		t.Fatal(err)
	}
	useConfig := func(patch string) {
		t.Helper()
		mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: host, Name: addon.Name}}
		if err := hubc.Patch(ctx, mca, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	installed := func(reason string) {
		t.Helper()
		env.Eventually(t, 2*time.Minute, host+" reports the operator "+reason, func(ctx context.Context) error {
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			if err := hubc.Get(ctx, types.NamespacedName{Namespace: host, Name: addon.Name}, mca); err != nil {
				return err
			}
			c := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionHyperShiftOperatorInstalled)
			if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
				return fmt.Errorf("%s: %+v", addon.ConditionHyperShiftOperatorInstalled, c)
			}
			if !meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable) {
				return fmt.Errorf("add-on not Available: %+v", mca.Status.Conditions)
			}
			return nil
		})
	}
	useConfig(fmt.Sprintf(`{"spec":{"configs":[{"group":"hcpfleet.io","resource":"hostingconfigs","name":%q,"namespace":%q}]}}`, config.Name, config.Namespace))
	t.Cleanup(func() {
		// Leave the shared fleet as it was: the agent manages the operator
		// of this cluster again.
		useConfig(`{"spec":{"configs":null}}`)
		installed("Installed")
		_ = hubc.Delete(context.Background(), config)
	})
	installed(operator.ReasonExternallyManaged)

	// The other manager changes its operator (an annotation of its own on
	// the pod template: a new rollout, which the kubelet stand-in runs).
	patch := `{"spec":{"template":{"metadata":{"annotations":{"example.com/managed-by":"other-manager"}}}}}`
	if _, err := spoke.AppsV1().Deployments(operator.Namespace).Patch(ctx, operator.DeploymentName, types.StrategicMergePatchType, []byte(patch),
		metav1.PatchOptions{FieldManager: "other-manager"}); err != nil {
		t.Fatal(err)
	}
	before, err := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	const ns = "hands-off"
	tenant(t, ns)
	if err := hubc.Create(ctx, hcd(ns, "ho-1", func(spec map[string]any) {
		delete(spec, "placement")
		spec["hostingCluster"] = host
	})); err != nil {
		t.Fatal(err)
	}
	h := waitCondition(t, ns, "ho-1", v1alpha1.ConditionAvailable, metav1.ConditionTrue, 3*time.Minute)
	if h.Status.HostingCluster != host {
		t.Fatalf("bound to %q, want %s", h.Status.HostingCluster, host)
	}
	if _, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, "ho-1", metav1.GetOptions{}); err != nil {
		t.Fatalf("HostedCluster clusters/ho-1 on %s: %v", host, err)
	}
	// The hosted cluster's delivery and availability went through the
	// agent (positive signal); it left the other manager's operator alone.
	after, err := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Generation != before.Generation || after.Spec.Template.Annotations["example.com/managed-by"] != "other-manager" {
		t.Errorf("the operator Deployment was changed: generation %d → %d, template annotations %v",
			before.Generation, after.Generation, after.Spec.Template.Annotations)
	}
	deleteAndWait(t, ns, "ho-1")
}
