//go:build integration

package manifests_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
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
// and the pods of the hub and of the console plugin's asset server pass
// the API server's Pod Security admission at the restricted level (a pod
// with privilege escalation, the control, does not). The ConsolePlugin is
// applied against OpenShift's own CRD (github.com/openshift/api, the
// version go.mod pins), so its schema, not only its Go type, accepts it.
// Costs one apiserver start (about 6 s).
func TestApplyToAPIServer(t *testing.T) {
	consoleCRD := filepath.Join(moduleDir(t, "github.com/openshift/api"), "console", "v1", "zz_generated.crd-manifests", "90_consoleplugins.crd.yaml")
	cfg := testenv.Start(t, testenv.Options{CRDPaths: []string{"../internal/localfleet/crds/hub", consoleCRD}, ErrorIfCRDPathMissing: true})
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
	for _, name := range []string{"hcp-fleet-hub", "hcp-fleet-console"} {
		checkPodSecurity(ctx, t, c, cs, name)
	}
}

// checkPodSecurity asks the API server to admit the pod of the Deployment
// name (dry run: nothing runs here), and to refuse the same pod with
// privilege escalation.
func checkPodSecurity(ctx context.Context, t *testing.T, c client.Client, cs kubernetes.Interface, name string) {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "hcp-fleet", Name: name}, d); err != nil {
		t.Fatal(err)
	}
	newPod := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-", Namespace: "hcp-fleet", Labels: d.Spec.Template.Labels},
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
		t.Fatalf("the pod of %s is not admitted under Pod Security restricted: %v %v", name, err, podErr)
	}
	control := newPod()
	control.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
	_, err := cs.CoreV1().Pods("hcp-fleet").Create(ctx, control, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "allowPrivilegeEscalation") {
		t.Errorf("a pod of %s with privilege escalation: %v, want forbidden by Pod Security", name, err)
	}
}

// moduleDir is where the Go toolchain keeps module path, at the version
// go.mod requires.
func moduleDir(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path).Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Fatalf("go list -m %s: %v (%s)", path, err, out)
	}
	return string(bytes.TrimSpace(out))
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
