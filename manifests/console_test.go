package manifests_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	consolev1 "github.com/openshift/api/console/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
)

// servingCertAnnotation has OpenShift's service CA write a serving
// certificate for a Service into the Secret it names.
const servingCertAnnotation = "service.beta.openshift.io/serving-cert-secret-name"

// The console plugin ships as the console expects it: a ConsolePlugin
// (strictly a console.openshift.io/v1 one) named as the plugin's build
// names itself, pointing at a Service that selects the asset server's pods
// on its HTTPS port, with the service CA's certificate mounted where the
// server reads it; the server is hardened and holds no credentials.
func TestConsolePlugin(t *testing.T) {
	objs := kustomizeBuild(t, ".")
	plugin := typed[consolev1.ConsolePlugin](t, objs, "ConsolePlugin", "hcp-fleet")
	svc := typed[corev1.Service](t, objs, "Service", "hcp-fleet-console")
	d := typed[appsv1.Deployment](t, objs, "Deployment", "hcp-fleet-console")

	// The ConsolePlugin's name is the one the build registers under
	// (console/package.json), or the console loads nothing.
	var pkg struct {
		ConsolePlugin struct {
			Name string `json:"name"`
		} `json:"consolePlugin"`
	}
	data, err := os.ReadFile("../console/package.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	if plugin.Name != pkg.ConsolePlugin.Name {
		t.Errorf("ConsolePlugin %q, the build's plugin %q", plugin.Name, pkg.ConsolePlugin.Name)
	}
	b := plugin.Spec.Backend
	if b.Type != consolev1.Service || b.Service == nil || b.Service.Name != svc.Name || b.Service.Namespace != svc.Namespace ||
		len(svc.Spec.Ports) != 1 || b.Service.Port != svc.Spec.Ports[0].Port || b.Service.BasePath != "/" {
		t.Errorf("ConsolePlugin backend %+v, Service %s/%s ports %+v: want the Service's port at /", b.Service, svc.Namespace, svc.Name, svc.Spec.Ports)
	}

	pod := d.Spec.Template.Spec
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("Service selector %v does not select the console's pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
		}
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if len(c.Ports) != 1 || svc.Spec.Ports[0].TargetPort != intstr.FromString(c.Ports[0].Name) {
		t.Errorf("Service targetPort %v, container ports %+v", svc.Spec.Ports[0].TargetPort, c.Ports)
	}
	if args := strings.Join(c.Args, " "); !strings.Contains(args, "--bind-address=:"+fmt.Sprint(c.Ports[0].ContainerPort)) {
		t.Errorf("args %q: the server does not listen on the container port %d", args, c.Ports[0].ContainerPort)
	}
	for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Scheme != corev1.URISchemeHTTPS || probe.HTTPGet.Path != "/healthz" || probe.HTTPGet.Port != intstr.FromString(c.Ports[0].Name) {
			t.Errorf("probe %+v: want GET /healthz over HTTPS on the served port", probe)
		}
	}

	// The certificate: the Secret the Service's annotation names, mounted
	// where the args say the server reads it.
	secret := svc.Annotations[servingCertAnnotation]
	if secret == "" {
		t.Fatalf("Service %s has no %s: the console cannot trust its certificate", svc.Name, servingCertAnnotation)
	}
	mountPath := ""
	for _, v := range pod.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name && m.ReadOnly {
					mountPath = m.MountPath
				}
			}
		}
	}
	for _, flag := range []string{"--tls-cert-file=" + mountPath + "/tls.crt", "--tls-key-file=" + mountPath + "/tls.key"} {
		if mountPath == "" || !strings.Contains(strings.Join(c.Args, " "), flag) {
			t.Errorf("args %q, Secret %s mounted at %q: want %s", c.Args, secret, mountPath, flag)
		}
	}
	if len(pod.Volumes) != 1 {
		t.Errorf("volumes %+v: want only the serving certificate", pod.Volumes)
	}

	// Hardened, and without credentials: no token, bound to nothing.
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
		t.Errorf("host namespaces: %+v", pod)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v: want CPU and memory requests and a memory limit", c.Resources)
	}
	if pod.ServiceAccountName != "hcp-fleet-console" || ptr.Deref(pod.AutomountServiceAccountToken, true) {
		t.Errorf("serviceAccountName %q, automount %v: want hcp-fleet-console without a token", pod.ServiceAccountName, pod.AutomountServiceAccountToken)
	}
	typed[corev1.ServiceAccount](t, objs, "ServiceAccount", pod.ServiceAccountName)
	for _, obj := range objs {
		if obj.GetKind() != "RoleBinding" && obj.GetKind() != "ClusterRoleBinding" {
			continue
		}
		b := typed[rbacv1.RoleBinding](t, []*unstructured.Unstructured{obj}, obj.GetKind(), obj.GetName())
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Name == pod.ServiceAccountName {
				t.Errorf("%s %s binds %s, which needs no rights", obj.GetKind(), obj.GetName(), s.Name)
			}
		}
	}
}

// The console reaches the hub's console endpoint through the ConsolePlugin's
// proxy: alias hub (console/src/hubapi.ts), with the user's token, to a
// Service that selects the hub's pods on the port the hub listens on
// (--console-api-bind-address), with the service CA's certificate mounted
// where --console-api-cert-dir points, optionally (no service CA, no
// Secret: the hub serves a self-signed certificate).
func TestConsolePluginProxy(t *testing.T) {
	objs := kustomizeBuild(t, ".")
	plugin := typed[consolev1.ConsolePlugin](t, objs, "ConsolePlugin", "hcp-fleet")
	svc := typed[corev1.Service](t, objs, "Service", "hcp-fleet-hub-console-api")
	d := typed[appsv1.Deployment](t, objs, "Deployment", "hcp-fleet-hub")
	if len(plugin.Spec.Proxy) != 1 {
		t.Fatalf("proxy %+v: want one, to the hub", plugin.Spec.Proxy)
	}
	p := plugin.Spec.Proxy[0]
	if p.Alias != "hub" || p.Authorization != consolev1.UserToken || p.Endpoint.Type != consolev1.ProxyTypeService || p.Endpoint.Service == nil ||
		p.Endpoint.Service.Name != svc.Name || p.Endpoint.Service.Namespace != svc.Namespace || len(svc.Spec.Ports) != 1 || p.Endpoint.Service.Port != svc.Spec.Ports[0].Port {
		t.Errorf("proxy %+v to %+v: want alias hub with the user's token to Service %s/%s port %+v", p, p.Endpoint.Service, svc.Namespace, svc.Name, svc.Spec.Ports)
	}
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("Service selector %v does not select the hub's pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
		}
	}
	c := d.Spec.Template.Spec.Containers[0]
	opts := hub.NewOptions()
	if err := opts.FlagSet(io.Discard).Parse(expand(t, c, d.Namespace)); err != nil {
		t.Fatal(err)
	}
	port := int32(0)
	for _, cp := range c.Ports {
		if intstr.FromString(cp.Name) == svc.Spec.Ports[0].TargetPort {
			port = cp.ContainerPort
		}
	}
	if opts.ConsoleAPIBindAddress == "0" || port == 0 || portOf(t, opts.ConsoleAPIBindAddress) != port {
		t.Errorf("--console-api-bind-address %q, the Service's target port %v (container port %d)", opts.ConsoleAPIBindAddress, svc.Spec.Ports[0].TargetPort, port)
	}
	secret := svc.Annotations[servingCertAnnotation]
	mounted := false
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret == nil || v.Secret.SecretName != secret || !ptr.Deref(v.Secret.Optional, false) {
			continue
		}
		for _, m := range c.VolumeMounts {
			mounted = mounted || (m.Name == v.Name && m.ReadOnly && m.MountPath == opts.ConsoleAPICertDir)
		}
	}
	if secret == "" || !mounted {
		t.Errorf("Service annotation %s=%q, --console-api-cert-dir %q, volumes %+v: want the serving certificate's Secret mounted there, optional",
			servingCertAnnotation, secret, opts.ConsoleAPICertDir, d.Spec.Template.Spec.Volumes)
	}
}
