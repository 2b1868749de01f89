package hub

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"open-cluster-management.io/addon-framework/pkg/utils"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/hcp-fleet/hcp-fleet/manifests"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// agentValues is what varies between management clusters in the agent's
// manifests, as a test sets it up on a (fake) hub: the default image, the
// AddOnDeploymentConfig (its agentInstallNamespace is InstallNamespace), the
// HostingConfig (at HostingConfigSource, its spec as JSON) and the Secrets
// in the HostingConfig's namespace.
type agentValues struct {
	ClusterName, InstallNamespace, Image string
	ADC                                  addonv1alpha1.AddOnDeploymentConfigSpec
	HostingConfigSource                  string
	HostingConfigHash                    string
	HostingConfigSpec                    string
	Secrets                              []runtime.Object
	// ADCHash is the AddOnDeploymentConfig spec hash the addon-manager
	// resolved; empty: the hash of ADC as it is.
	ADCHash string
	// WithoutConfigs renders before any config is resolved.
	WithoutConfigs bool
}

func values() agentValues {
	return agentValues{
		ClusterName: "mc-1", InstallNamespace: addon.DefaultInstallNamespace, Image: "example.com/agent:v1",
		ADC: addonv1alpha1.AddOnDeploymentConfigSpec{
			NodePlacement: &addonv1alpha1.NodePlacement{NodeSelector: map[string]string{"infra": ""}},
			ResourceRequirements: []addonv1alpha1.ContainerResourceRequirements{
				{ContainerID: "*:*:*", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
				{ContainerID: "deployments:hcp-fleet-agent:agent", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}},
			},
			ProxyConfig: addonv1alpha1.ProxyConfig{HTTPSProxy: "http://p:3128"},
		},
		HostingConfigSource: "hcp-fleet/default", HostingConfigHash: "abc", HostingConfigSpec: `{"capiMode":"Auto"}`,
	}
}

// adcGetter serves one AddOnDeploymentConfig.
type adcGetter struct {
	adc *addonv1alpha1.AddOnDeploymentConfig
}

func (g adcGetter) Get(_ context.Context, namespace, name string) (*addonv1alpha1.AddOnDeploymentConfig, error) {
	if g.adc == nil || g.adc.Namespace != namespace || g.adc.Name != name {
		return nil, apierrors.NewNotFound(addonv1alpha1.Resource("addondeploymentconfigs"), name)
	}
	return g.adc.DeepCopy(), nil
}

// RenderAgent renders the agent's manifests as the addon-manager does once
// it resolved v's configs into the ManagedClusterAddOn's status.
func RenderAgent(v agentValues) ([]runtime.Object, error) {
	ns, name, _ := strings.Cut(v.HostingConfigSource, "/")
	hc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": HostingConfigGVR.GroupVersion().String(), "kind": "HostingConfig",
		"metadata": map[string]any{"namespace": ns, "name": name},
	}}
	spec := map[string]any{}
	if err := json.Unmarshal([]byte(v.HostingConfigSpec), &spec); err != nil {
		return nil, err
	}
	hc.Object["spec"] = spec
	adc := &addonv1alpha1.AddOnDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "hcp-fleet", Name: "placement"}, Spec: v.ADC}
	adc.Spec.AgentInstallNamespace = v.InstallNamespace
	adcObj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(adc)
	if err != nil {
		return nil, err
	}
	adcU := &unstructured.Unstructured{Object: adcObj}
	adcU.SetAPIVersion(addonv1alpha1.GroupVersion.String())
	adcU.SetKind("AddOnDeploymentConfig")
	adcHash := v.ADCHash
	if adcHash == "" {
		if adcHash, err = utils.GetSpecHash(adcU); err != nil {
			return nil, err
		}
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{HostingConfigGVR: "HostingConfigList", utils.AddOnDeploymentConfigGVR: "AddOnDeploymentConfigList"}, hc, adcU)
	a, err := newAgentAddon(Options{DefaultAgentImage: v.Image}, fake.NewClientset(v.Secrets...), dyn, adcGetter{adc})
	if err != nil {
		return nil, err
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: v.ClusterName, Name: addon.Name},
		Status: addonv1alpha1.ManagedClusterAddOnStatus{ConfigReferences: []addonv1alpha1.ConfigReference{
			{
				ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: utils.AddOnDeploymentConfigGVR.Group, Resource: utils.AddOnDeploymentConfigGVR.Resource},
				DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: adc.Namespace, Name: adc.Name}, SpecHash: adcHash},
			},
			{
				ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: HostingConfigGVR.Group, Resource: HostingConfigGVR.Resource},
				DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: ns, Name: name}, SpecHash: v.HostingConfigHash},
			},
		}},
	}
	if v.WithoutConfigs {
		mca.Status.ConfigReferences = nil
	}
	return a.Manifests(&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: v.ClusterName}}, mca)
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

// TestRenderAgentHostingNamespaceDeletion: the agent may delete the hosting
// namespaces its HostingConfig allows, by name, and no other.
func TestRenderAgentHostingNamespaceDeletion(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string
	}{
		{`{"capiMode":"Auto"}`, []string{"clusters"}},
		{`{"hostingNamespaces":["team-a","team-b"]}`, []string{"team-a", "team-b"}},
	} {
		v := values()
		v.HostingConfigSpec = tc.spec
		objs, err := RenderAgent(v)
		if err != nil {
			t.Fatal(err)
		}
		var got []rbacv1.PolicyRule
		for _, r := range find[*rbacv1.ClusterRole](objs) {
			if r.Name == "open-cluster-management:hcp-fleet:agent:hosting-namespace-deletion" {
				got = r.Rules
			}
		}
		want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: tc.want, Verbs: []string{"delete"}}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("HostingConfig %s: rules %+v, want %+v", tc.spec, got, want)
		}
	}
}

// TestRenderAgentExecutors: the add-on creates the three executors of the
// hub's ManifestWorks in the agent's namespace, each bound to a ClusterRole
// of its own; the delivery executor creates only the hosting namespaces the
// HostingConfig allows.
func TestRenderAgentExecutors(t *testing.T) {
	v := values()
	v.HostingConfigSpec = `{"hostingNamespaces":["team-a","team-b"]}`
	objs, err := RenderAgent(v)
	if err != nil {
		t.Fatal(err)
	}
	accounts := map[string]bool{}
	for _, sa := range find[*corev1.ServiceAccount](objs) {
		accounts[sa.Namespace+"/"+sa.Name] = true
	}
	roles := map[string][]rbacv1.PolicyRule{}
	for _, r := range find[*rbacv1.ClusterRole](objs) {
		roles[r.Name] = r.Rules
	}
	bound := map[string]string{}
	for _, b := range find[*rbacv1.ClusterRoleBinding](objs) {
		for _, s := range b.Subjects {
			bound[s.Namespace+"/"+s.Name] = b.RoleRef.Name
		}
	}
	for _, name := range addon.Executors {
		key := v.InstallNamespace + "/" + name
		if !accounts[key] {
			t.Errorf("no ServiceAccount %s", key)
		}
		role := bound[key]
		if role == "" || roles[role] == nil {
			t.Errorf("ServiceAccount %s is bound to %q, which is not rendered", key, role)
		}
		for _, rule := range roles[role] {
			for _, verb := range rule.Verbs {
				if verb != "get" && verb != "create" && verb != "update" && verb != "patch" && verb != "delete" {
					t.Errorf("%s: verb %s in %+v; the work agent asks only get, create, update, patch, delete", role, verb, rule)
				}
			}
		}
	}
	delivery := roles[bound[v.InstallNamespace+"/"+addon.ExecutorDelivery]]
	if len(delivery) == 0 || !reflect.DeepEqual(delivery[0], rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"},
		ResourceNames: []string{"team-a", "team-b"}, Verbs: []string{"get", "create", "update", "patch"}}) {
		t.Errorf("delivery executor rules %+v: want the allowed hosting namespaces first, by name, never deleted", delivery)
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
	v.HostingConfigSpec = `{"install":{"oidcStorage":{"bucket":"b","region":"r","credentialsSecret":{"name":"oidc"}},` +
		`"externalDNS":{"provider":"aws","domainFilter":"d","credentialsSecret":{"name":"dns"}}}}`
	v.Secrets = []runtime.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "hcp-fleet", Name: "oidc"},
		Data: map[string][]byte{"credentials": []byte("[default]\n")}}}
	objs, err := RenderAgent(v)
	if err != nil {
		t.Fatal(err)
	}
	secrets := copies(objs)
	if len(secrets) != 1 {
		t.Fatalf("want 1 credentials copy, got %d", len(secrets))
	}
	s := secrets[0]
	if s.Name != addon.OIDCStorageCredentials.Secret || s.Namespace != addon.DefaultInstallNamespace ||
		string(s.Data[addon.CredentialsKey]) != "[default]\n" || len(s.Data) != 1 ||
		s.Labels[addon.CredentialsLabel] != "oidc-storage" || s.Annotations[addon.CredentialsSourceAnnotation] != (addon.CredentialRef{Name: "oidc", Key: "credentials"}).Source("hcp-fleet") {
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
	if _, ok := find[*corev1.ConfigMap](objs)[0].Data[addon.CredentialProblemsKey]; ok || len(copies(objs)) != 0 {
		t.Error("a render without credentials carries credential problems or copies")
	}
}

// TestRenderAgentEmptiesCopiesItHasNot: the Secret of every kind of copy is
// rendered, empty (no data, an empty source) where there is no copy, so
// that a copy no longer referenced is emptied in place: a Secret dropped
// from the ManifestWork can be left behind by OCM's work agent.
func TestRenderAgentEmptiesCopiesItHasNot(t *testing.T) {
	v := values()
	v.HostingConfigSpec = `{"install":{"oidcStorage":{"bucket":"b","region":"r","credentialsSecret":{"name":"oidc"}}}}`
	v.Secrets = []runtime.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "hcp-fleet", Name: "oidc"},
		Data: map[string][]byte{"credentials": []byte("x")}}}
	for _, render := range []struct {
		name string
		v    agentValues
		full int
	}{{"with one copy", v, 1}, {"without a HostingConfig", values(), 0}} {
		objs, err := RenderAgent(render.v)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range find[*corev1.Secret](objs) {
			names = append(names, s.Name)
			if s.Annotations[addon.CredentialsSourceAnnotation] == "" && (len(s.Data) != 0 || s.Labels[addon.CredentialsLabel] == "") {
				t.Errorf("%s: the empty copy %s holds data or lacks its label: %+v", render.name, s.Name, s)
			}
		}
		want := []string{addon.OIDCStorageCredentials.Secret, addon.ExternalDNSCredentials.Secret, addon.PrivatePlatformCredentials.Secret}
		if !reflect.DeepEqual(names, want) {
			t.Errorf("%s: credentials Secrets %v, want %v", render.name, names, want)
		}
		if got := len(copies(objs)); got != render.full {
			t.Errorf("%s: %d copies with credentials, want %d", render.name, got, render.full)
		}
	}
}

// copies are the rendered credentials Secrets that hold a copy (a source).
func copies(objs []runtime.Object) []*corev1.Secret {
	var out []*corev1.Secret
	for _, s := range find[*corev1.Secret](objs) {
		if s.Annotations[addon.CredentialsSourceAnnotation] != "" {
			out = append(out, s)
		}
	}
	return out
}

// TestRenderAgentFromAddOnDeploymentConfig: every AddOnDeploymentConfig
// setting reaches both pod templates as it is, whatever its characters.
func TestRenderAgentFromAddOnDeploymentConfig(t *testing.T) {
	seconds := int64(3600)
	v := values()
	v.HostingConfigSpec = `{"agentImage":"example.com/hcp-fleet/agent:v2"}`
	v.ADC = addonv1alpha1.AddOnDeploymentConfigSpec{
		NodePlacement: &addonv1alpha1.NodePlacement{
			NodeSelector: map[string]string{"node-role.kubernetes.io/infra": "", "zone": `a "b": c`},
			Tolerations: []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "infra: yes", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds},
				{Operator: corev1.TolerationOpExists},
			},
		},
		Registries: []addonv1alpha1.ImageMirror{{Source: "example.com/hcp-fleet", Mirror: "mirror.local/hcp"}},
		ResourceRequirements: []addonv1alpha1.ContainerResourceRequirements{{ContainerID: "jobs:*:cleanup", Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			Claims:   []corev1.ResourceClaim{{Name: "gpu", Request: "one"}},
		}}},
		ProxyConfig: addonv1alpha1.ProxyConfig{HTTPProxy: "http://a:3128", HTTPSProxy: "http://b:3128", NoProxy: ".local,10.0.0.0/8", CABundle: []byte("pem")},
	}
	objs, err := RenderAgent(v)
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]corev1.PodSpec{
		"Deployment": find[*appsv1.Deployment](objs)[0].Spec.Template.Spec,
		"Job":        find[*batchv1.Job](objs)[0].Spec.Template.Spec,
	}
	wantEnv := []corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://a:3128"}, {Name: "HTTPS_PROXY", Value: "http://b:3128"}, {Name: "NO_PROXY", Value: ".local,10.0.0.0/8"}}
	for kind, pod := range pods {
		if !reflect.DeepEqual(pod.NodeSelector, v.ADC.NodePlacement.NodeSelector) || !reflect.DeepEqual(pod.Tolerations, v.ADC.NodePlacement.Tolerations) {
			t.Errorf("%s node placement: %v %+v", kind, pod.NodeSelector, pod.Tolerations)
		}
		c := pod.Containers[0]
		if c.Image != "mirror.local/hcp/agent:v2" {
			t.Errorf("%s image %s: want the HostingConfig's image through the registries", kind, c.Image)
		}
		if !reflect.DeepEqual(c.Env, wantEnv) {
			t.Errorf("%s env %v", kind, c.Env)
		}
	}
	// Resources: the cleanup container's from the rule; the agent, which
	// no rule matches, keeps its own.
	if got := pods["Job"].Containers[0].Resources; !equality.Semantic.DeepEqual(got, v.ADC.ResourceRequirements[0].Resources) {
		t.Errorf("cleanup resources %+v", got)
	}
	if got, want := pods["Deployment"].Containers[0].Resources, (corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}); !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("agent resources %+v", got)
	}

	// A matching rule without resources clears them, as it says.
	v.ADC.ResourceRequirements = []addonv1alpha1.ContainerResourceRequirements{{ContainerID: "*:*:*"}}
	objs, err = RenderAgent(v)
	if err != nil {
		t.Fatal(err)
	}
	if got := find[*appsv1.Deployment](objs)[0].Spec.Template.Spec.Containers[0].Resources; !equality.Semantic.DeepEqual(got, corev1.ResourceRequirements{}) {
		t.Errorf("agent resources %+v, want none", got)
	}
}

// TestRenderAgentWithoutConfigs: before any config resolves, the agent gets
// the default image, its own resources and an empty HostingConfig.
func TestRenderAgentWithoutConfigs(t *testing.T) {
	v := values()
	v.WithoutConfigs = true
	objs, err := RenderAgent(v)
	if err != nil {
		t.Fatal(err)
	}
	pod := find[*appsv1.Deployment](objs)[0].Spec.Template.Spec
	c := pod.Containers[0]
	if c.Image != v.Image || c.Env != nil || pod.NodeSelector != nil || pod.Tolerations != nil || c.Resources.Requests.Cpu().String() != "10m" {
		t.Errorf("agent without configs: %+v", pod)
	}
	cm := find[*corev1.ConfigMap](objs)[0]
	if want := map[string]string{addon.HostingConfigKey: "{}", addon.HostingConfigHashKey: "", addon.HostingConfigRefKey: ""}; !reflect.DeepEqual(cm.Data, want) {
		t.Errorf("hosting config map %v, want %v", cm.Data, want)
	}
	if cm.Name != addon.HostingConfigMap || cm.Namespace != addon.DefaultInstallNamespace {
		t.Errorf("hosting config map %s/%s", cm.Namespace, cm.Name)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetObjectKind().GroupVersionKind().Kind)
	}
	if want := []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRole", "ClusterRole", "ClusterRole", "ClusterRole", "ClusterRole", "ClusterRoleBinding", "ClusterRoleBinding",
		"Role", "RoleBinding", "Deployment", "Service", "Job",
		// The credentials copies, empty without a HostingConfig.
		"Secret", "Secret", "Secret", "ConfigMap",
		// The executors of the hub's ManifestWorks: delivery, extension, relocation.
		"ClusterRole", "ClusterRoleBinding", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ServiceAccount"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("objects %v, want %v", kinds, want)
	}
}

// TestRenderAgentEveryCredential: each credential a HostingConfig can
// reference has its template, and the copies come in CredentialRefs' order.
func TestRenderAgentEveryCredential(t *testing.T) {
	v := values()
	v.HostingConfigSpec = `{"install":{"oidcStorage":{"bucket":"b","region":"r","credentialsSecret":{"name":"s"}},` +
		`"externalDNS":{"provider":"aws","domainFilter":"d","credentialsSecret":{"name":"s","key":"dns"}},` +
		`"privatePlatform":{"type":"AWS","aws":{"region":"r","credentialsSecret":{"name":"s","key":"aws"}}}}}`
	v.Secrets = []runtime.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "hcp-fleet", Name: "s"},
		Data: map[string][]byte{"credentials": []byte("oidc"), "dns": {0, 1, 0xff}, "aws": []byte("aws")}}}
	objs, err := RenderAgent(v)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range find[*corev1.Secret](objs) {
		got = append(got, s.Name+" "+s.Labels[addon.CredentialsLabel]+" "+s.Annotations[addon.CredentialsSourceAnnotation]+" "+string(s.Data[addon.CredentialsKey]))
	}
	want := []string{
		addon.OIDCStorageCredentials.Secret + " oidc-storage " + addon.CredentialRef{Name: "s", Key: "credentials"}.Source("hcp-fleet") + " oidc",
		addon.ExternalDNSCredentials.Secret + " external-dns " + addon.CredentialRef{Name: "s", Key: "dns"}.Source("hcp-fleet") + " \x00\x01\xff",
		addon.PrivatePlatformCredentials.Secret + " private-platform " + addon.CredentialRef{Name: "s", Key: "aws"}.Source("hcp-fleet") + " aws",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("credential copies\n%q\nwant\n%q", got, want)
	}
	if _, ok := find[*corev1.ConfigMap](objs)[0].Data[addon.CredentialProblemsKey]; ok {
		t.Error("credential problems with every reference resolved")
	}
}

// TestAgentTemplatesHoldOneObjectEach: the template factory decodes one
// object per file and would silently drop a second one.
func TestAgentTemplatesHoldOneObjectEach(t *testing.T) {
	entries, err := manifests.Agent.ReadDir("agent")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := manifests.Agent.ReadFile("agent/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(data), "---") || strings.Contains(string(data), "\n---") {
			t.Errorf("manifests/agent/%s holds more than one YAML document", e.Name())
		}
	}
}

// TestRenderAgentRefusesHostingConfigElsewhere: a ManagedClusterAddOn naming
// a HostingConfig outside the hub's namespace gets nothing of it (neither its
// spec nor the Secrets it references), and the problem names it.
func TestRenderAgentRefusesHostingConfigElsewhere(t *testing.T) {
	v := values()
	v.HostingConfigSource = "tenant/evil"
	v.HostingConfigSpec = `{"agentImage":"evil.example.com/agent:v1","install":{"oidcStorage":{"bucket":"b","region":"r","credentialsSecret":{"name":"s"}}}}`
	v.Secrets = []runtime.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "s"},
		Data: map[string][]byte{"credentials": []byte("marker-9f1c")}}}
	objs, err := RenderAgent(v)
	if err != nil {
		t.Fatal(err)
	}
	if s := copies(objs); len(s) != 0 {
		t.Errorf("credential copies from a refused HostingConfig: %d", len(s))
	}
	data, err := json.Marshal(objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"marker-9f1c", "evil.example.com", "bucket"} {
		if strings.Contains(string(data), leak) {
			t.Errorf("rendered manifests hold %q of the refused HostingConfig", leak)
		}
	}
	problems := find[*corev1.ConfigMap](objs)[0].Data[addon.CredentialProblemsKey]
	if !strings.Contains(problems, "HostingConfig tenant/evil is ignored") {
		t.Errorf("credential problems %q do not name the refused HostingConfig", problems)
	}
}
