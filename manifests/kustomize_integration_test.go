//go:build integration

package manifests_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/internal/testenv"
)

// What `make deploy` applies goes onto a real API server, server-side, in
// one pass (CRDs first; kubectl apply --server-side -k retries the rest),
// and the hub's pod passes the API server's Pod Security admission at the
// restricted level (a pod with privilege escalation, the control, does not).
// Costs one apiserver start (about 6 s).
func TestApplyToAPIServer(t *testing.T) {
	cfg := testenv.Start(t, testenv.Options{CRDPaths: []string{"../internal/localfleet/crds/hub"}, ErrorIfCRDPathMissing: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{scheme.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	// The ServiceMonitor and PrometheusRule are the Prometheus Operator's
	// kinds, whose CRDs a bare API server lacks (OpenShift ships them);
	// monitoring_test.go checks those two objects.
	var objs []*unstructured.Unstructured
	for _, obj := range kustomizeBuild(t, ".") {
		if obj.GroupVersionKind().Group != "monitoring.coreos.com" {
			objs = append(objs, obj)
		}
	}
	// CRDs, then namespaces, then the rest.
	rank := func(o *unstructured.Unstructured) int {
		switch o.GetKind() {
		case "CustomResourceDefinition":
			return 0
		case "Namespace":
			return 1
		}
		return 2
	}
	sort.SliceStable(objs, func(i, j int) bool { return rank(objs[i]) < rank(objs[j]) })
	crdsEstablished := false
	for _, obj := range objs {
		if rank(obj) > 0 && !crdsEstablished {
			waitForCRDs(ctx, t, c, objs)
			crdsEstablished = true
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj.DeepCopy()), client.FieldOwner("hcp-fleet-deploy"), client.ForceOwnership); err != nil {
			t.Fatalf("apply %s: %v", key(obj), err)
		}
	}
	for _, obj := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
			t.Errorf("%s after apply: %v", key(obj), err)
		}
	}

	// Pod Security: enforce restricted on the namespace, then ask the API
	// server to admit the hub's pod (dry run: nothing runs here).
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: "hcp-fleet"}, ns); err != nil {
		t.Fatal(err)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	ns.Labels["pod-security.kubernetes.io/enforce-version"] = "latest"
	if err := c.Update(ctx, ns); err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "hcp-fleet", Name: "hcp-fleet-hub"}, d); err != nil {
		t.Fatal(err)
	}
	newPod := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "hcp-fleet-hub-", Namespace: "hcp-fleet", Labels: d.Spec.Template.Labels},
			Spec:       *d.Spec.Template.Spec.DeepCopy(),
		}
	}
	// The ServiceAccount admission plugin needs the ServiceAccount: wait
	// for the API server's informer to see it.
	var podErr error
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, podErr = cs.CoreV1().Pods("hcp-fleet").Create(ctx, newPod(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return podErr == nil || !strings.Contains(podErr.Error(), "serviceaccount"), nil
	}); err != nil || podErr != nil {
		t.Fatalf("the hub's pod is not admitted under Pod Security restricted: %v %v", err, podErr)
	}
	control := newPod()
	control.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
	_, err = cs.CoreV1().Pods("hcp-fleet").Create(ctx, control, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "allowPrivilegeEscalation") {
		t.Errorf("a pod with privilege escalation: %v, want forbidden by Pod Security", err)
	}
}

func waitForCRDs(ctx context.Context, t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objs {
		if obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: obj.GetName()}, crd); err != nil {
				return false, err
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("CRD %s not established: %v", obj.GetName(), err)
		}
	}
}
