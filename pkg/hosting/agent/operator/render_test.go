package operator

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/manifests"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

func oidcSpec() *v1alpha1.HostingConfigSpec {
	return &v1alpha1.HostingConfigSpec{Install: &v1alpha1.InstallOptions{OIDCStorage: &v1alpha1.OIDCStorageS3{
		Bucket: "oidc", Region: "us-east-1", CredentialsSecret: v1alpha1.CredentialsSecretReference{Name: "s3", Key: "credentials"}}}}
}

func object(t *testing.T, install *Install, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range install.Objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("%s %s not rendered", kind, name)
	return nil
}

func TestRenderCredentials(t *testing.T) {
	install, err := Render(oidcSpec(), Credentials{addon.OIDCStorageCredentials.Purpose: []byte("[default]\nkey=1\n")}, Cluster{})
	if err != nil {
		t.Fatal(err)
	}
	secret := object(t, install, "Secret", OIDCCredentialsSecret)
	if data, _, _ := unstructured.NestedString(secret.Object, "data", CredentialsKey); secret.GetNamespace() != Namespace || data != "W2RlZmF1bHRdCmtleT0xCg==" {
		t.Errorf("OIDC credentials Secret %s/%s data %q", secret.GetNamespace(), secret.GetName(), data)
	}
	if secret.GetLabels()[ManagedByLabel] != ManagedByValue {
		t.Error("the credentials Secret is not labelled as the agent's")
	}
	deployment := object(t, install, "Deployment", DeploymentName)
	volumes, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "volumes")
	if len(volumes) != 1 || volumes[0].(map[string]any)["secret"].(map[string]any)["secretName"] != OIDCCredentialsSecret {
		t.Errorf("operator volumes %v", volumes)
	}
	hash1, _, _ := unstructured.NestedString(deployment.Object, "spec", "template", "metadata", "annotations", CredentialsHashAnnotation)
	if hash1 == "" {
		t.Fatal("the operator pod template carries no credentials hash")
	}
	// Secret before Deployment: the Deployment's pods mount it.
	if indexOf(install, secret) > indexOf(install, deployment) {
		t.Error("the credentials Secret is applied after the Deployment that mounts it")
	}

	// Rotated credentials: the Secret and the pod template change, nothing
	// else does.
	rotated, err := Render(oidcSpec(), Credentials{addon.OIDCStorageCredentials.Purpose: []byte("[default]\nkey=2\n")}, Cluster{})
	if err != nil {
		t.Fatal(err)
	}
	var changed []string
	for i, o := range install.Objects {
		if o.GetAnnotations()[AppliedHashAnnotation] != rotated.Objects[i].GetAnnotations()[AppliedHashAnnotation] {
			changed = append(changed, ObjectKey(o))
		}
	}
	if len(changed) != 2 || changed[0] != "Secret hypershift/"+OIDCCredentialsSecret || changed[1] != "Deployment hypershift/operator" {
		t.Errorf("rotating credentials changed %v; want the Secret and the operator Deployment", changed)
	}
	hash2, _, _ := unstructured.NestedString(object(t, rotated, "Deployment", DeploymentName).Object, "spec", "template", "metadata", "annotations", CredentialsHashAnnotation)
	if hash2 == hash1 {
		t.Error("the pod template's credentials hash did not change with the credentials")
	}

	// A referenced credential without its content is a caller's bug.
	if _, err := Render(oidcSpec(), nil, Cluster{}); err == nil {
		t.Error("Render without the referenced credentials succeeded")
	}
	// Without credentials the pod template has no annotation (installs
	// from before credentials were copied do not roll).
	plain, err := Render(&v1alpha1.HostingConfigSpec{}, nil, Cluster{})
	if err != nil {
		t.Fatal(err)
	}
	if a, _, _ := unstructured.NestedStringMap(object(t, plain, "Deployment", DeploymentName).Object, "spec", "template", "metadata", "annotations"); len(a) != 0 {
		t.Errorf("pod template annotations without credentials: %v", a)
	}
}

func TestCleanupCoversEveryCredentialsSecret(t *testing.T) {
	install, err := Render(everything())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{OIDCCredentialsSecret, PrivatePlatformCredentialsSecret, ExternalDNSCredentialsSecret} {
		object(t, install, "Secret", name)
	}
	object(t, install, "Deployment", "external-dns")
}

// With hcp-fleet's private CAPI CRDs on the cluster the operator runs with
// --private-capi-types; the flag is the only difference, so switching mode
// rolls the operator and nothing else.
func TestRenderPrivateCAPITypes(t *testing.T) {
	standard, err := Render(&v1alpha1.HostingConfigSpec{}, nil, Cluster{})
	if err != nil {
		t.Fatal(err)
	}
	private, err := Render(&v1alpha1.HostingConfigSpec{}, nil, Cluster{PrivateCAPITypes: true})
	if err != nil {
		t.Fatal(err)
	}
	args := func(install *Install) []string {
		c, _, _ := unstructured.NestedSlice(object(t, install, "Deployment", DeploymentName).Object, "spec", "template", "spec", "containers")
		a, _, _ := unstructured.NestedStringSlice(c[0].(map[string]any), "args")
		return a
	}
	if slices.Contains(args(standard), PrivateCAPITypesFlag) {
		t.Errorf("standard CAPI types: operator args %v carry %s", args(standard), PrivateCAPITypesFlag)
	}
	if !slices.Contains(args(private), PrivateCAPITypesFlag) {
		t.Errorf("private CAPI types: operator args %v lack %s", args(private), PrivateCAPITypesFlag)
	}
	var changed []string
	for i, o := range standard.Objects {
		if o.GetAnnotations()[AppliedHashAnnotation] != private.Objects[i].GetAnnotations()[AppliedHashAnnotation] {
			changed = append(changed, ObjectKey(o))
		}
	}
	if !slices.Equal(changed, []string{"Deployment hypershift/operator"}) {
		t.Errorf("switching to private CAPI types changed %v; want only the operator Deployment", changed)
	}
}

func indexOf(install *Install, obj *unstructured.Unstructured) int {
	for i, o := range install.Objects {
		if o == obj {
			return i
		}
	}
	return -1
}

// credentialsCopyRules returns the rules of the agent's ClusterRole that
// name the credentials copies.
func credentialsCopyRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	data, err := manifests.Agent.ReadFile("agent/02-clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(data, role); err != nil {
		t.Fatal(err)
	}
	var out []rbacv1.PolicyRule
	for _, r := range role.Rules {
		if slices.Contains(r.ResourceNames, OIDCCredentialsSecret) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		t.Fatal("the agent's ClusterRole has no rule naming the credentials copies")
	}
	return out
}

// TestAgentMayWriteEveryCopy: the agent's ClusterRole names exactly the
// Secrets the agent copies credentials into, with the verbs it uses
// (server-side apply, which may create; delete; and get, of the metadata).
func TestAgentMayWriteEveryCopy(t *testing.T) {
	rules := credentialsCopyRules(t)
	if len(rules) != 1 {
		t.Fatalf("%d rules name the credentials copies; want one", len(rules))
	}
	r := rules[0]
	names := slices.Sorted(slices.Values(r.ResourceNames))
	if want := sortedValues(credentialSecrets); !slices.Equal(names, want) {
		t.Errorf("resourceNames %v, want the copies %v", names, want)
	}
	verbs := slices.Sorted(slices.Values(r.Verbs))
	if want := []string{"create", "delete", "get", "patch"}; !slices.Equal(verbs, want) || !slices.Equal(r.APIGroups, []string{""}) || !slices.Equal(r.Resources, []string{"secrets"}) {
		t.Errorf("rule %+v: want secrets in the core group, verbs %v", r, want)
	}
}
