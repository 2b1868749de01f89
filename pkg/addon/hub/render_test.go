package hub

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

func values() AgentValues {
	return AgentValues{
		ClusterName: "mc-1", InstallNamespace: addon.DefaultInstallNamespace, Image: "example.com/agent:v1",
		NodeSelector: map[string]string{"infra": ""},
		Resources: []ContainerResources{
			{ContainerIDRegex: ".*:.*:.*", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
			{ContainerIDRegex: "^deployments:hcp-fleet-agent:agent$", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}},
		},
		ProxyEnv:            []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://p:3128"}},
		HostingConfigSource: "hcp-fleet/default", HostingConfigHash: "abc", HostingConfigSpec: `{"capiMode":"Auto"}`,
	}
}

func find[T runtime.Object](objs []runtime.Object) []T {
	var out []T
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

func TestRenderAgent(t *testing.T) {
	objs, err := RenderAgent(values())
	if err != nil {
		t.Fatal(err)
	}
	again, _ := RenderAgent(values())
	if !reflect.DeepEqual(objs, again) {
		t.Fatal("RenderAgent is not deterministic")
	}
	deps := find[*appsv1.Deployment](objs)
	if len(deps) != 1 {
		t.Fatalf("want 1 Deployment, got %d", len(deps))
	}
	c := deps[0].Spec.Template.Spec.Containers[0]
	if c.Image != "example.com/agent:v1" || c.Resources.Requests.Cpu().String() != "2" {
		t.Errorf("deployment container: image %s, cpu %s (the last matching resource rule must win)", c.Image, c.Resources.Requests.Cpu())
	}
	if !contains(c.Args, "--cluster-name=mc-1") || !contains(c.Args, "--addon-namespace="+addon.DefaultInstallNamespace) {
		t.Errorf("args %v", c.Args)
	}
	jobs := find[*batchv1.Job](objs)
	if len(jobs) != 1 {
		t.Fatalf("want 1 pre-delete Job, got %d", len(jobs))
	}
	if _, ok := jobs[0].Annotations["addon.open-cluster-management.io/addon-pre-delete"]; !ok {
		t.Error("the cleanup Job is not marked as the pre-delete hook")
	}
	jc := jobs[0].Spec.Template.Spec.Containers[0]
	if jc.Args[0] != "cleanup" || jc.Image != "example.com/agent:v1" || jc.Resources.Requests.Cpu().String() != "1" {
		t.Errorf("cleanup job container: %v %s cpu %s", jc.Args, jc.Image, jc.Resources.Requests.Cpu())
	}
	cms := find[*corev1.ConfigMap](objs)
	if len(cms) != 1 || cms[0].Data[addon.HostingConfigHashKey] != "abc" || cms[0].Data[addon.HostingConfigKey] != `{"capiMode":"Auto"}` {
		t.Errorf("hosting config map: %+v", cms)
	}
	nss := find[*corev1.Namespace](objs)
	if len(nss) != 1 || len(nss[0].Annotations) != 0 {
		t.Errorf("the default namespace is the add-on's own and goes with it: %+v", nss)
	}
}

func TestRenderAgentInCustomNamespace(t *testing.T) {
	v := values()
	v.InstallNamespace = "shared-addons"
	objs, err := RenderAgent(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		m := o.(interface{ GetNamespace() string })
		if ns := m.GetNamespace(); ns != "" && ns != "shared-addons" {
			t.Errorf("%T in namespace %s", o, ns)
		}
	}
	ns := find[*corev1.Namespace](objs)[0]
	if ns.Name != "shared-addons" {
		t.Errorf("namespace %s", ns.Name)
	}
	if _, ok := ns.Annotations["addon.open-cluster-management.io/deletion-orphan"]; !ok {
		t.Error("a namespace the admin chose must be orphaned, not deleted, with the add-on")
	}
	for _, b := range find[*rbacv1.ClusterRoleBinding](objs) {
		if b.Subjects[0].Namespace != "shared-addons" {
			t.Errorf("ClusterRoleBinding subject namespace %s", b.Subjects[0].Namespace)
		}
	}
}

func TestRenderAgentRequiresValues(t *testing.T) {
	v := values()
	v.Image = ""
	if _, err := RenderAgent(v); err == nil {
		t.Fatal("RenderAgent without an image succeeded")
	}
}

func contains(s []string, want string) bool {
	for _, x := range s {
		if x == want {
			return true
		}
	}
	return false
}

func TestRenderAgentCredentials(t *testing.T) {
	v := values()
	v.Credentials = []CredentialCopy{{Credential: addon.OIDCStorageCredentials, Source: "hcp-fleet/oidc[credentials]", Data: []byte("[default]\n")}}
	v.CredentialProblems = []string{"spec.install.externalDNS.credentialsSecret of HostingConfig hcp-fleet/default: Secret hcp-fleet/dns does not exist on the hub"}
	objs, err := RenderAgent(v)
	if err != nil {
		t.Fatal(err)
	}
	secrets := find[*corev1.Secret](objs)
	if len(secrets) != 1 {
		t.Fatalf("want 1 credentials Secret, got %d", len(secrets))
	}
	s := secrets[0]
	if s.Name != addon.OIDCStorageCredentials.Secret || s.Namespace != addon.DefaultInstallNamespace ||
		string(s.Data[addon.CredentialsKey]) != "[default]\n" || len(s.Data) != 1 ||
		s.Labels[addon.CredentialsLabel] != "oidc-storage" || s.Annotations[addon.CredentialsSourceAnnotation] != "hcp-fleet/oidc[credentials]" {
		t.Errorf("credentials Secret: %+v", s)
	}
	// The copy is applied before the ConfigMap that references it.
	secretAt, configMapAt := -1, -1
	for i, o := range objs {
		switch o.(type) {
		case *corev1.Secret:
			secretAt = i
		case *corev1.ConfigMap:
			configMapAt = i
		}
	}
	if secretAt > configMapAt {
		t.Errorf("the credentials Secret (#%d) comes after the HostingConfig ConfigMap (#%d)", secretAt, configMapAt)
	}
	cm := find[*corev1.ConfigMap](objs)[0]
	if got, want := cm.Data[addon.CredentialProblemsKey], `["spec.install.externalDNS.credentialsSecret of HostingConfig hcp-fleet/default: Secret hcp-fleet/dns does not exist on the hub"]`; got != want {
		t.Errorf("credential problems %q, want %q", got, want)
	}

	// Without problems the key is absent, so renders without credentials
	// stay as they were.
	objs, _ = RenderAgent(values())
	if _, ok := find[*corev1.ConfigMap](objs)[0].Data[addon.CredentialProblemsKey]; ok || len(find[*corev1.Secret](objs)) != 0 {
		t.Error("a render without credentials carries credential problems or Secrets")
	}
}
