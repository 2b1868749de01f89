package manifests_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
)

// The directories manifests/kustomization.yaml installs, each file in full.
var kustomizedDirs = []string{"crds", "hub", "deploy", "console"}

// kustomizeBuild is `kustomize build dir` (kustomize/api as kubectl 1.34
// embeds it).
func kustomizeBuild(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, res := range resMap.Resources() {
		data, err := res.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, obj)
	}
	return objs
}

func key(obj *unstructured.Unstructured) string {
	return obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
}

func readDir(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			obj := &unstructured.Unstructured{}
			if err := dec.Decode(&obj.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("%s: %v", path, err)
			}
			if len(obj.Object) > 0 {
				objs = append(objs, obj)
			}
		}
	}
	return objs
}

// The kustomization installs every object of crds/, hub/ (what the local
// fleet applies) and deploy/, unchanged, and nothing else: a file added to
// a directory but not to kustomization.yaml, or a transformer that
// rewrites objects, fails here.
func TestKustomization(t *testing.T) {
	want := map[string]*unstructured.Unstructured{}
	for _, dir := range kustomizedDirs {
		for _, obj := range readDir(t, dir) {
			want[key(obj)] = obj
		}
	}
	got := map[string]*unstructured.Unstructured{}
	for _, obj := range kustomizeBuild(t, ".") {
		got[key(obj)] = obj
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("kustomize build lacks %s", k)
			continue
		}
		// Compared as JSON: the decoders differ in number types.
		gj, err := json.Marshal(g.Object)
		if err != nil {
			t.Fatal(err)
		}
		wj, err := json.Marshal(w.Object)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gj, wj) {
			t.Errorf("kustomize build changed %s", k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("kustomize build has %s, which is in none of %v", k, kustomizedDirs)
		}
	}
	// What a hub needs, by kind.
	kinds := map[string]int{}
	for _, obj := range got {
		kinds[obj.GetKind()]++
	}
	for kind, n := range map[string]int{
		"CustomResourceDefinition": 8, "Namespace": 1, "ServiceAccount": 2, "ClusterRole": 7, "ClusterRoleBinding": 1,
		"Role": 1, "RoleBinding": 1, "Deployment": 2, "Service": 3, "ConsolePlugin": 1, "ClusterManagementAddOn": 1, "HostingConfig": 1,
		"Placement": 1, "ManagedClusterSetBinding": 1, "ServiceMonitor": 1, "PrometheusRule": 1,
		"ValidatingAdmissionPolicy": 2, "ValidatingAdmissionPolicyBinding": 2,
	} {
		if kinds[kind] != n {
			t.Errorf("%d objects of kind %s, want %d", kinds[kind], kind, n)
		}
	}
}

func typed[T any](t *testing.T, objs []*unstructured.Unstructured, kind, name string) *T {
	t.Helper()
	for _, obj := range objs {
		if obj.GetKind() == kind && obj.GetName() == name {
			out := new(T)
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, out, true); err != nil {
				t.Fatalf("%s %s: %v", kind, name, err)
			}
			return out
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

// expand resolves $(VAR) in a container's args from its environment, as the
// kubelet does (fieldRef metadata.namespace: the Deployment's namespace).
func expand(t *testing.T, c corev1.Container, namespace string) []string {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env[e.Name] = namespace
		default:
			t.Fatalf("env %s: unexpected source", e.Name)
		}
	}
	ref := regexp.MustCompile(`\$\(([A-Z_]+)\)`)
	var out []string
	for _, a := range c.Args {
		out = append(out, ref.ReplaceAllStringFunc(a, func(m string) string {
			v, ok := env[ref.FindStringSubmatch(m)[1]]
			if !ok {
				t.Errorf("arg %q refers to an undefined variable", a)
			}
			return v
		}))
	}
	return out
}

func portOf(t *testing.T, addr string) int32 {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return intstr.Parse(p).IntVal
}

// The hub's Deployment: hardened, probed, sized, leader-elected, running as
// its ServiceAccount; its args are flags cmd/hub accepts; the Service
// reaches its metrics port.
func TestHubDeployment(t *testing.T) {
	objs := kustomizeBuild(t, ".")
	d := typed[appsv1.Deployment](t, objs, "Deployment", "hcp-fleet-hub")
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]

	psc := pod.SecurityContext
	if psc == nil || !ptr.Deref(psc.RunAsNonRoot, false) || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v: want runAsNonRoot and seccomp RuntimeDefault", psc)
	}
	sc := c.SecurityContext
	if sc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) ||
		ptr.Deref(sc.AllowPrivilegeEscalation, true) || ptr.Deref(sc.Privileged, false) ||
		sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("container securityContext %+v: want non-root, read-only root, no privilege escalation, all capabilities dropped", sc)
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Errorf("the hub needs no host namespaces: %+v", pod)
	}
	// One volume: its console endpoint's serving certificate, optional
	// (TestConsolePluginProxy).
	for _, v := range pod.Volumes {
		if v.Secret == nil || v.Secret.SecretName != "hcp-fleet-hub-console-api-cert" || !ptr.Deref(v.Secret.Optional, false) {
			t.Errorf("volume %+v: the hub needs none but its console endpoint's optional serving certificate", v)
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v: want CPU and memory requests and a memory limit", c.Resources)
	}
	if ptr.Deref(d.Spec.Replicas, 1) < 2 {
		t.Errorf("replicas %d: want a standby for leader election", ptr.Deref(d.Spec.Replicas, 1))
	}

	// The args are the hub's flags, valid together.
	opts := hub.NewOptions()
	if err := opts.FlagSet(io.Discard).Parse(expand(t, c, d.Namespace)); err != nil {
		t.Fatalf("hub flags %q: %v", c.Args, err)
	}
	if err := opts.Validate(); err != nil {
		t.Errorf("hub flags %q: %v", c.Args, err)
	}
	if !opts.LeaderElect || opts.Namespace != d.Namespace || opts.Kubeconfig != "" {
		t.Errorf("hub options %+v: want leader election in %s with the in-cluster identity", opts, d.Namespace)
	}
	agentImage := ""
	for _, e := range c.Env {
		if e.Name == "RELATED_IMAGE_AGENT" {
			agentImage = e.Value
		}
	}
	if agentImage == "" || opts.DefaultAgentImage != agentImage {
		t.Errorf("--agent-image %q, RELATED_IMAGE_AGENT %q: want the agent image from the variable (OLM's relatedImages, make deploy AGENT_IMG)", opts.DefaultAgentImage, agentImage)
	}

	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["health"] != portOf(t, opts.HealthProbeBindAddress) || ports["metrics"] != portOf(t, opts.MetricsBindAddress) {
		t.Errorf("container ports %v; the hub listens for probes on %s and metrics on %s", ports, opts.HealthProbeBindAddress, opts.MetricsBindAddress)
	}
	for name, probe := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != name || probe.HTTPGet.Port != intstr.FromString("health") {
			t.Errorf("probe %s: %+v, want GET %s on port health", name, probe, name)
		}
	}

	// It runs as hcp-fleet-hub, bound to the hub's ClusterRole and Role.
	if pod.ServiceAccountName != "hcp-fleet-hub" || ptr.Deref(pod.AutomountServiceAccountToken, true) == false {
		t.Errorf("serviceAccountName %q (automount %v): want hcp-fleet-hub with its token", pod.ServiceAccountName, pod.AutomountServiceAccountToken)
	}
	typed[corev1.ServiceAccount](t, objs, "ServiceAccount", pod.ServiceAccountName)
	crb := typed[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding", "hcp-fleet:hub")
	rb := typed[rbacv1.RoleBinding](t, objs, "RoleBinding", "hcp-fleet-hub")
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: pod.ServiceAccountName, Namespace: d.Namespace}
	if !reflect.DeepEqual(crb.Subjects, []rbacv1.Subject{sa}) || !reflect.DeepEqual(rb.Subjects, []rbacv1.Subject{sa}) || rb.Namespace != d.Namespace {
		t.Errorf("bindings %v, %v: want only %v", crb.Subjects, rb.Subjects, sa)
	}

	svc := typed[corev1.Service](t, objs, "Service", "hcp-fleet-hub-metrics")
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("Service selector %v does not select the hub's pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
		}
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != intstr.FromString("metrics") || svc.Namespace != d.Namespace {
		t.Errorf("Service ports %+v: want the hub's metrics port", svc.Spec.Ports)
	}
}

// `make deploy`'s overlay (hack/deploy/overlay.sh) replaces the three
// images, whatever their form, and nothing else.
func TestDeployOverlay(t *testing.T) {
	dir := t.TempDir()
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	// kustomize takes a base by a relative path only.
	base, err := filepath.Rel(dir, here)
	if err != nil {
		t.Fatal(err)
	}
	const hubImage, agentImage = "registry.example:5000/team/hub:v9", "quay.io/x/agent@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	const consoleImage = "registry.example:5000/team/console:v9"
	out, err := exec.Command("bash", "../hack/deploy/overlay.sh", hubImage, agentImage, consoleImage, base).Output()
	if err != nil {
		t.Fatalf("overlay.sh: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), out, 0o600); err != nil {
		t.Fatal(err)
	}
	overlaid := kustomizeBuild(t, dir)
	plain := kustomizeBuild(t, ".")
	if len(overlaid) != len(plain) {
		t.Fatalf("%d objects with the overlay, %d without", len(overlaid), len(plain))
	}
	d := typed[appsv1.Deployment](t, overlaid, "Deployment", "hcp-fleet-hub")
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != hubImage || c.Env[0].Name != "RELATED_IMAGE_AGENT" || c.Env[0].Value != agentImage {
		t.Errorf("image %q, %s=%q: want %q and %q", c.Image, c.Env[0].Name, c.Env[0].Value, hubImage, agentImage)
	}
	// Everything else as without the overlay.
	want := typed[appsv1.Deployment](t, plain, "Deployment", "hcp-fleet-hub")
	want.Spec.Template.Spec.Containers[0].Image = hubImage
	want.Spec.Template.Spec.Containers[0].Env[0].Value = agentImage
	if !reflect.DeepEqual(d, want) {
		t.Errorf("the overlay changed more than the hub's images")
	}
	cd := typed[appsv1.Deployment](t, overlaid, "Deployment", "hcp-fleet-console")
	wantConsole := typed[appsv1.Deployment](t, plain, "Deployment", "hcp-fleet-console")
	wantConsole.Spec.Template.Spec.Containers[0].Image = consoleImage
	if !reflect.DeepEqual(cd, wantConsole) {
		t.Errorf("the overlay changed the console's Deployment other than its image to %q: image %q", consoleImage, cd.Spec.Template.Spec.Containers[0].Image)
	}
	if _, err := exec.Command("bash", "../hack/deploy/overlay.sh", `bad"ref`, agentImage, consoleImage).Output(); err == nil {
		t.Errorf("overlay.sh took an image reference with a quote")
	}
	if _, err := exec.Command("bash", "../hack/deploy/overlay.sh", hubImage, agentImage, "bad ref").Output(); err == nil {
		t.Errorf("overlay.sh took a console image reference with a space")
	}
}
