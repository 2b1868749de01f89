//go:build integration

package hypershiftsim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/internal/testenv"
)

var (
	hcGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	npGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "nodepools"}
)

const (
	release418 = "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"
	release419 = "quay.io/openshift-release-dev/ocp-release:4.19.1-x86_64"
	rollout    = 700 * time.Millisecond
)

var (
	cfg  *rest.Config
	dyn  dynamic.Interface
	kube kubernetes.Interface
)

// TestMain runs one kube-apiserver with the HyperShift CRDs and the
// stand-in against it.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	var stop func() error
	var err error
	cfg, stop, err = testenv.StartMain(testenv.Options{ErrorIfCRDPathMissing: true,
		CRDPaths: []string{filepath.Join(filepath.Dir(file), "..", "..", "..", "manifests", "hypershift")}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = stop() }()
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	dyn = dynamic.NewForConfigOrDie(cfg)
	kube = kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	for _, ns := range []string{"hypershift", "clusters"} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			cancel()
			return 1
		}
	}
	done := make(chan error, 1)
	go func() {
		done <- hypershiftsim.Run(ctx, cfg, "hypershift", hypershiftsim.Options{RolloutDuration: rollout, ControlPlanes: snapshots})
	}()
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "stand-in:", err)
		code = 1
	}
	return code
}

func eventually(t *testing.T, what string, cond func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := cond(ctx)
		if err == nil || ctx.Err() == nil {
			last = err
		}
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, last)
	}
}

func createHostedCluster(t *testing.T, name, image string, annotations map[string]string) {
	t.Helper()
	hc := fleettest.HostedCluster("clusters", name)
	_ = unstructured.SetNestedField(hc.Object, image, "spec", "release", "image")
	hc.SetAnnotations(annotations)
	if _, err := dyn.Resource(hcGVR).Namespace("clusters").Create(context.Background(), hc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// rolledOut is the positive signal that the stand-in's rollout time has
// passed for what was created before: a valid HostedCluster created now
// becomes Available.
func rolledOut(t *testing.T, control string) {
	t.Helper()
	createHostedCluster(t, control, release418, nil)
	eventually(t, control+" Available", func(ctx context.Context) error {
		hc, err := getHC(ctx, control)
		if err != nil {
			return err
		}
		if s, r, _ := condition(hc, "Available"); s != "True" {
			return fmt.Errorf("Available=%s (%s)", s, r)
		}
		return nil
	})
}

func getHC(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	return dyn.Resource(hcGVR).Namespace("clusters").Get(ctx, name, metav1.GetOptions{})
}

// condition returns status, reason and message of a condition.
func condition(obj *unstructured.Unstructured, condType string) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == condType {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}

func history(obj *unstructured.Unstructured) []map[string]any {
	h, _, _ := unstructured.NestedSlice(obj.Object, "status", "version", "history")
	out := make([]map[string]any, 0, len(h))
	for _, e := range h {
		out = append(out, e.(map[string]any))
	}
	return out
}

// recorder records every state (Progressing/Available/history[0].state) a
// HostedCluster goes through, from a watch, so short-lived states are seen.
type recorder struct {
	mu     sync.Mutex
	states []string
	stop   func()
}

func record(t *testing.T, name string) *recorder {
	t.Helper()
	w, err := dyn.Resource(hcGVR).Namespace("clusters").Watch(context.Background(), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{stop: w.Stop}
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			obj := ev.Object.(*unstructured.Unstructured)
			p, _, _ := condition(obj, "Progressing")
			a, _, _ := condition(obj, "Available")
			state := ""
			if h := history(obj); len(h) > 0 {
				state = fmt.Sprintf("%v/%v", h[0]["state"], h[0]["version"])
			}
			s := fmt.Sprintf("Progressing=%s Available=%s history=%s", p, a, state)
			r.mu.Lock()
			if len(r.states) == 0 || r.states[len(r.states)-1] != s {
				r.states = append(r.states, s)
			}
			r.mu.Unlock()
		}
	}()
	t.Cleanup(w.Stop)
	return r
}

func (r *recorder) saw(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.states {
		if x == s {
			return true
		}
	}
	return false
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.states, "\n  ")
}

func TestHostedClusterCreateUpgradeDelete(t *testing.T) {
	ctx := context.Background()
	rec := record(t, "lifecycle")
	createHostedCluster(t, "lifecycle", release418, nil)

	var hc *unstructured.Unstructured
	eventually(t, "HostedCluster available", func(ctx context.Context) error {
		var err error
		if hc, err = getHC(ctx, "lifecycle"); err != nil {
			return err
		}
		if s, r, _ := condition(hc, "Available"); s != "True" || r != "AsExpected" {
			return fmt.Errorf("Available=%s (%s)", s, r)
		}
		return nil
	})
	if !rec.saw("Progressing=True Available=False history=Partial/4.18.5") {
		t.Errorf("never saw the rollout in progress before Available; states:\n  %s", rec)
	}
	if s, r, _ := condition(hc, "Progressing"); s != "False" || r != "AsExpected" {
		t.Errorf("Progressing=%s (%s), want False (AsExpected) once rolled out", s, r)
	}
	for _, c := range []string{"ValidReleaseImage", "ReconciliationSucceeded", "ValidConfiguration"} {
		if s, _, _ := condition(hc, c); s != "True" {
			t.Errorf("%s=%q, want True", c, s)
		}
	}
	if s, _, _ := condition(hc, "Degraded"); s != "False" {
		t.Errorf("Degraded=%q, want False", s)
	}
	if got := hc.GetFinalizers(); len(got) != 1 || got[0] != hypershiftsim.Finalizer {
		t.Errorf("finalizers %v, want [%s]", got, hypershiftsim.Finalizer)
	}
	desired, _, _ := unstructured.NestedStringMap(hc.Object, "status", "version", "desired")
	if desired["image"] != release418 || desired["version"] != "4.18.5" {
		t.Errorf("version.desired = %v", desired)
	}
	h := history(hc)
	if len(h) != 1 || h[0]["state"] != "Completed" || h[0]["completionTime"] == nil || h[0]["startedTime"] == nil {
		t.Errorf("history = %v, want one Completed entry with times", h)
	}
	if og, _, _ := unstructured.NestedInt64(hc.Object, "status", "version", "observedGeneration"); og != hc.GetGeneration() {
		t.Errorf("version.observedGeneration = %d, want %d", og, hc.GetGeneration())
	}
	host, _, _ := unstructured.NestedString(hc.Object, "status", "controlPlaneEndpoint", "host")
	port, _, _ := unstructured.NestedInt64(hc.Object, "status", "controlPlaneEndpoint", "port")
	if host != "api.lifecycle.example.com" || port != 6443 {
		t.Errorf("controlPlaneEndpoint = %s:%d", host, port)
	}
	kcName, _, _ := unstructured.NestedString(hc.Object, "status", "kubeconfig", "name")
	if kcName != "lifecycle-admin-kubeconfig" {
		t.Fatalf("status.kubeconfig.name = %q", kcName)
	}
	secret, err := kube.CoreV1().Secrets("clusters").Get(ctx, kcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(secret.Data["kubeconfig"])
	if err != nil {
		t.Fatalf("kubeconfig does not parse: %v", err)
	}
	if server := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster].Server; server != "https://api.lifecycle.example.com:6443" {
		t.Errorf("kubeconfig server %q, want the control-plane endpoint", server)
	}
	if _, err := kube.CoreV1().Namespaces().Get(ctx, "clusters-lifecycle", metav1.GetOptions{}); err != nil {
		t.Errorf("control-plane namespace: %v", err)
	}
	// Components next to the control plane get the same credentials at the
	// in-cluster address of the kube-apiserver Service (as HyperShift's
	// InClusterKASURL); only admin-kubeconfig carries the external one.
	serviceNetwork, err := kube.CoreV1().Secrets("clusters-lifecycle").Get(ctx, hypershiftsim.ServiceNetworkKubeconfigSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("service-network kubeconfig in the control-plane namespace: %v", err)
	}
	snkc, err := clientcmd.Load(serviceNetwork.Data["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range snkc.Clusters {
		if c.Server != "https://kube-apiserver:6443" {
			t.Errorf("service-network kubeconfig cluster %s: server %q, want https://kube-apiserver:6443", name, c.Server)
		}
	}
	if ai := snkc.AuthInfos[snkc.Contexts[snkc.CurrentContext].AuthInfo]; ai == nil || ai.Token != kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo].Token {
		t.Error("the service-network kubeconfig does not carry the admin credentials")
	}
	cpAdmin, err := kube.CoreV1().Secrets("clusters-lifecycle").Get(ctx, "admin-kubeconfig", metav1.GetOptions{})
	if err != nil || string(cpAdmin.Data["kubeconfig"]) != string(secret.Data["kubeconfig"]) {
		t.Errorf("admin-kubeconfig in the control-plane namespace (the external address): %v", err)
	}
	svc, err := kube.CoreV1().Services("clusters-lifecycle").Get(ctx, "kube-apiserver", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kube-apiserver Service: %v", err)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 6443 || svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.ClusterIP == "" {
		t.Errorf("kube-apiserver Service: %+v", svc.Spec)
	}

	// A NodePool gets its replicas and version.
	np := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "NodePool",
		"metadata": map[string]any{"name": "lifecycle-workers", "namespace": "clusters"},
		"spec": map[string]any{"clusterName": "lifecycle", "replicas": int64(2), "release": map[string]any{"image": release418},
			"management": map[string]any{"upgradeType": "Replace"}, "platform": map[string]any{"type": "None"}},
	}}
	if _, err := dyn.Resource(npGVR).Namespace("clusters").Create(ctx, np, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNodePool(t, 2, "4.18.5")

	// Upgrade: a new Partial entry, Progressing while Available stays True,
	// then Completed.
	patch := fmt.Sprintf(`{"spec":{"release":{"image":%q}}}`, release419)
	if _, err := dyn.Resource(hcGVR).Namespace("clusters").Patch(ctx, "lifecycle", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "upgrade completed", func(ctx context.Context) error {
		if hc, err = getHC(ctx, "lifecycle"); err != nil {
			return err
		}
		if h := history(hc); len(h) != 2 || h[0]["state"] != "Completed" || h[0]["version"] != "4.19.1" || h[1]["version"] != "4.18.5" {
			return fmt.Errorf("history %v", h)
		}
		return nil
	})
	if !rec.saw("Progressing=True Available=True history=Partial/4.19.1") {
		t.Errorf("never saw the upgrade in progress (with Available kept True); states:\n  %s", rec)
	}
	// The NodePool follows its own release; scaling follows replicas.
	patch = fmt.Sprintf(`{"spec":{"replicas":3,"release":{"image":%q}}}`, release419)
	if _, err := dyn.Resource(npGVR).Namespace("clusters").Patch(ctx, "lifecycle-workers", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "NodePool updating", func(ctx context.Context) error {
		obj, err := dyn.Resource(npGVR).Namespace("clusters").Get(ctx, "lifecycle-workers", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s, _, msg := condition(obj, "UpdatingVersion"); s != "True" || !strings.Contains(msg, "4.19.1") {
			if v, _, _ := unstructured.NestedString(obj.Object, "status", "version"); v == "4.19.1" {
				return nil // already done: the window was shorter than a poll
			}
			return fmt.Errorf("UpdatingVersion=%s %q", s, msg)
		}
		return nil
	})
	waitNodePool(t, 3, "4.19.1")

	// Deletion: the finalizer holds the HostedCluster while the stand-in
	// tears down NodePools, the kubeconfig and the namespace.
	if err := dyn.Resource(hcGVR).Namespace("clusters").Delete(ctx, "lifecycle", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if hc, err = getHC(ctx, "lifecycle"); err != nil || hc.GetDeletionTimestamp() == nil {
		t.Fatalf("right after delete: want the HostedCluster still there, terminating; got %v", err)
	}
	// As HyperShift, the stand-in holds the HostedCluster until its
	// control-plane namespace is gone. No namespace controller runs here, so
	// the namespace stays terminating until the test finalizes it as
	// kube-controller-manager would once it is empty.
	var terminating *corev1.Namespace
	eventually(t, "control-plane namespace terminating", func(ctx context.Context) error {
		ns, err := kube.CoreV1().Namespaces().Get(ctx, "clusters-lifecycle", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ns.DeletionTimestamp == nil {
			return errors.New("not deleted yet")
		}
		terminating = ns
		return nil
	})
	if _, err := dyn.Resource(npGVR).Namespace("clusters").Get(ctx, "lifecycle-workers", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("NodePool after HostedCluster deletion: %v, want NotFound", err)
	}
	if _, err := kube.CoreV1().Secrets("clusters").Get(ctx, kcName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("kubeconfig Secret after deletion: %v, want NotFound", err)
	}
	if hc, err := getHC(ctx, "lifecycle"); err != nil || !slices.Contains(hc.GetFinalizers(), hypershiftsim.Finalizer) {
		t.Fatalf("while its control-plane namespace terminates: want the HostedCluster held by %s; got %v", hypershiftsim.Finalizer, err)
	}
	terminating.Spec.Finalizers = nil
	if _, err := kube.CoreV1().Namespaces().Finalize(ctx, terminating, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "HostedCluster gone", func(ctx context.Context) error {
		if _, err := getHC(ctx, "lifecycle"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}

func waitNodePool(t *testing.T, replicas int64, version string) {
	t.Helper()
	eventually(t, fmt.Sprintf("NodePool ready with %d replicas at %s", replicas, version), func(ctx context.Context) error {
		obj, err := dyn.Resource(npGVR).Namespace("clusters").Get(ctx, "lifecycle-workers", metav1.GetOptions{})
		if err != nil {
			return err
		}
		r, _, _ := unstructured.NestedInt64(obj.Object, "status", "replicas")
		v, _, _ := unstructured.NestedString(obj.Object, "status", "version")
		ready, _, _ := condition(obj, "Ready")
		all, _, _ := condition(obj, "AllMachinesReady")
		upd, _, _ := condition(obj, "UpdatingVersion")
		if r != replicas || v != version || ready != "True" || all != "True" || upd != "False" {
			return fmt.Errorf("replicas=%d version=%q Ready=%s AllMachinesReady=%s UpdatingVersion=%s", r, v, ready, all, upd)
		}
		if f := obj.GetFinalizers(); len(f) != 1 || f[0] != hypershiftsim.Finalizer {
			return fmt.Errorf("finalizers %v", f)
		}
		return nil
	})
}

func TestUnsupportedReleaseIsNotRolledOut(t *testing.T) {
	createHostedCluster(t, "too-old", "quay.io/openshift-release-dev/ocp-release:4.12.3-x86_64", nil)
	eventually(t, "ValidReleaseImage=False", func(ctx context.Context) error {
		hc, err := getHC(ctx, "too-old")
		if err != nil {
			return err
		}
		if s, r, msg := condition(hc, "ValidReleaseImage"); s != "False" || r != "InvalidImage" || !strings.Contains(msg, "4.12.3") || !strings.Contains(msg, "not support") {
			return fmt.Errorf("ValidReleaseImage=%s (%s) %q", s, r, msg)
		}
		if s, r, _ := condition(hc, "Available"); s != "False" || r != "InvalidImage" {
			return fmt.Errorf("Available=%s (%s)", s, r)
		}
		if s, r, _ := condition(hc, "Progressing"); s != "False" || r != "Blocked" {
			return fmt.Errorf("Progressing=%s (%s)", s, r)
		}
		return nil
	})
	rolledOut(t, "too-old-control")
	hc, err := getHC(context.Background(), "too-old")
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := condition(hc, "Available"); s != "False" {
		t.Errorf("Available=%s after the rollout time, want False", s)
	}
	if kc, found, _ := unstructured.NestedMap(hc.Object, "status", "kubeconfig"); found {
		t.Errorf("kubeconfig published for an invalid release: %v", kc)
	}
}

func TestFailureInjection(t *testing.T) {
	ctx := context.Background()
	createHostedCluster(t, "broken", release418, map[string]string{
		hypershiftsim.AnnotationNeverAvailable: "etcd quorum lost (demo)",
		hypershiftsim.AnnotationDegraded:       "kube-apiserver has 0/3 replicas (demo)",
	})
	eventually(t, "degraded and not available", func(ctx context.Context) error {
		hc, err := getHC(ctx, "broken")
		if err != nil {
			return err
		}
		if s, r, msg := condition(hc, "Degraded"); s != "True" || r != "UnavailableReplicas" || msg != "kube-apiserver has 0/3 replicas (demo)" {
			return fmt.Errorf("Degraded=%s (%s) %q", s, r, msg)
		}
		if s, r, msg := condition(hc, "Available"); s != "False" || r != "WaitingForAvailable" || msg != "etcd quorum lost (demo)" {
			return fmt.Errorf("Available=%s (%s) %q", s, r, msg)
		}
		if s, _, _ := condition(hc, "Progressing"); s != "True" {
			return fmt.Errorf("Progressing=%s, want True while the rollout cannot finish", s)
		}
		return nil
	})
	rolledOut(t, "broken-control")
	hc, err := getHC(ctx, "broken")
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := condition(hc, "Available"); s != "False" {
		t.Fatalf("Available=%s after the rollout time with never-available, want False", s)
	}
	if _, found, _ := unstructured.NestedMap(hc.Object, "status", "kubeconfig"); found {
		t.Error("kubeconfig published for a control plane that never came up")
	}
	// Lifting the failures lets it finish.
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null,%q:null}}}`, hypershiftsim.AnnotationNeverAvailable, hypershiftsim.AnnotationDegraded)
	if _, err := dyn.Resource(hcGVR).Namespace("clusters").Patch(ctx, "broken", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "available once fixed", func(ctx context.Context) error {
		hc, err := getHC(ctx, "broken")
		if err != nil {
			return err
		}
		a, _, _ := condition(hc, "Available")
		d, _, _ := condition(hc, "Degraded")
		if a != "True" || d != "False" {
			return fmt.Errorf("Available=%s Degraded=%s", a, d)
		}
		return nil
	})
}

func TestOperatorFailure(t *testing.T) {
	err := hypershiftsim.Program(hypershiftsim.Options{OperatorFailure: "webhook certificate expired"})(context.Background(), []string{"run", "--namespace=hypershift"})
	if err == nil || !strings.Contains(err.Error(), "webhook certificate expired") {
		t.Fatalf("err = %v, want the injected failure", err)
	}
}
