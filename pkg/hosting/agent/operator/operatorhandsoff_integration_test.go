//go:build integration

package operator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	addonhub "github.com/hcp-fleet/hcp-fleet/pkg/addon/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/operator"
)

// The hands-off mode (issue 37, item 3): on a cluster whose HostingConfig
// says spec.operator.management External, another manager's HyperShift
// operator is reported installed while it is available, and the agent never
// installs, changes or removes it — not when the other manager breaks it,
// not when it is gone, not when the add-on is removed. (The file sorts after
// operator_integration_test.go: this test leaves cluster-2 without the
// add-on.)
func TestHandsOffOperator(t *testing.T) {
	setClients()
	ctx := context.Background()
	const cluster = "cluster-2"
	spoke := kubernetes.NewForConfigOrDie(fleet.Cluster(cluster).Config())
	setHostLabel(t, cluster, true)

	handsOff := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hcpfleet.io/v1alpha1", "kind": "HostingConfig",
		"metadata": map[string]any{"name": "hands-off", "namespace": "hcp-fleet"},
		"spec":     map[string]any{"operator": map[string]any{"management": "External"}},
	}}
	if _, err := hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Create(ctx, handsOff, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Delete(context.Background(), "hands-off", metav1.DeleteOptions{})
	})
	patch := []byte(`{"spec":{"configs":[{"group":"hcpfleet.io","resource":"hostingconfigs","name":"hands-off","namespace":"hcp-fleet"}]}}`)
	eventually(t, time.Minute, "the add-on on "+cluster+" takes the hands-off HostingConfig", func(ctx context.Context) error {
		_, err := addons.AddonV1alpha1().ManagedClusterAddOns(cluster).Patch(ctx, addon.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})

	// The other manager's operator, whatever ran before: the stand-in runs
	// the default image, so it becomes available.
	if _, err := spoke.CoreV1().Namespaces().Get(ctx, operator.Namespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		if _, err := spoke.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operator.Namespace}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		theirs := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: operator.DeploymentName, Namespace: operator.Namespace},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": "operator"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"name": "operator"}},
					Spec:       corev1.PodSpec{ServiceAccountName: "operator", Containers: []corev1.Container{{Name: "operator", Image: operator.DefaultImage}}},
				},
			},
		}
		if _, err := spoke.AppsV1().Deployments(operator.Namespace).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := condition(t, cluster, operator.ConditionInstalled, metav1.ConditionTrue, operator.ReasonExternallyManaged, "spec.operator.management: External")
	t.Logf("%s: %s", cluster, c.Message)

	// The other manager rolls out a broken image: the agent reports it and
	// leaves it.
	brokenPatch := []byte(fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"operator","image":%q}]}}}}`, hcpfleet.BrokenHyperShiftOperatorImage))
	if _, err := spoke.AppsV1().Deployments(operator.Namespace).Patch(ctx, operator.DeploymentName, types.StrategicMergePatchType, brokenPatch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	condition(t, cluster, operator.ConditionInstalled, metav1.ConditionFalse, operator.ReasonWaitingForExternalOperator, hcpfleet.BrokenHyperShiftOperatorImage)
	d, err := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != hcpfleet.BrokenHyperShiftOperatorImage {
		t.Errorf("the agent changed the other manager's operator image to %s", img)
	}
	// Nor is the agent's answer to the rollout still "healthy".
	cm, err := spoke.CoreV1().ConfigMaps(addon.DefaultInstallNamespace).Get(ctx, addon.HostingConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := cm.Annotations[addon.OperatorHealthyRevisionAnnotation]; ok {
		t.Errorf("the agent still answers %s=%s while the operator is broken", addon.OperatorHealthyRevisionAnnotation, a)
	}

	// The other manager removes it: the agent does not put one back.
	if err := spoke.AppsV1().Deployments(operator.Namespace).Delete(ctx, operator.DeploymentName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	condition(t, cluster, operator.ConditionInstalled, metav1.ConditionFalse, operator.ReasonWaitingForExternalOperator, "none runs")
	if _, err := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an operator Deployment is back after the other manager removed it: %v", err)
	}

	// Removing the add-on removes nothing of the operator's: its namespace
	// stays, and so do the HyperShift CRDs hcp-fleet installed before the
	// mode changed, if any. (The CAPI CRDs are the CAPI feature's, which
	// the hands-off mode does not cover: its cleanup removes those it
	// installed.)
	crdsBefore := managedObjects(t, cluster)
	setHostLabel(t, cluster, false)
	eventually(t, 3*time.Minute, "the add-on gone from "+cluster, func(ctx context.Context) error {
		if _, err := addons.AddonV1alpha1().ManagedClusterAddOns(cluster).Get(ctx, addon.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ManagedClusterAddOn still there: %v", err)
		}
		return nil
	})
	if _, err := spoke.CoreV1().Namespaces().Get(ctx, operator.Namespace, metav1.GetOptions{}); err != nil {
		t.Errorf("namespace %s: %v", operator.Namespace, err)
	}
	after := managedObjects(t, cluster)
	for k := range crdsBefore {
		if _, ok := after[k]; !ok && strings.HasPrefix(k, "customresourcedefinitions ") && strings.HasSuffix(k, ".hypershift.openshift.io") {
			t.Errorf("the add-on's removal deleted %s", k)
		}
	}
}
