//go:build integration

package operator_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	addonhub "github.com/hcp-fleet/hcp-fleet/pkg/addon/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/operator"
)

// TestCredentialsFromTheHub: the credentials a HostingConfig references on
// the hub reach the HyperShift operator's namespace on the management
// cluster, follow rotation, and a bad reference is reported and recovers.
func TestCredentialsFromTheHub(t *testing.T) {
	setClients()
	ctx := context.Background()
	hub := kubernetes.NewForConfigOrDie(fleet.Hub.Config())
	spoke := kubernetes.NewForConfigOrDie(fleet.Cluster("cluster-1").Config())

	hubSecret := func(name, creds string) {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "hcp-fleet"}, Data: map[string][]byte{"credentials": []byte(creds)}}
		if _, err := hub.CoreV1().Secrets("hcp-fleet").Update(ctx, s, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
			_, err = hub.CoreV1().Secrets("hcp-fleet").Create(ctx, s, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
	// copied waits until the operator's OIDC credentials Secret holds creds
	// (the agent's own copy too) and the operator's pod template carries a
	// credentials hash other than before, and returns that hash.
	copied := func(creds, before string) string {
		t.Helper()
		hash := ""
		eventually(t, 2*time.Minute, "OIDC credentials "+creds+" in the operator namespace", func(ctx context.Context) error {
			for _, key := range []types.NamespacedName{
				{Namespace: addon.DefaultInstallNamespace, Name: addon.OIDCStorageCredentials.Secret},
				{Namespace: operator.Namespace, Name: operator.OIDCCredentialsSecret},
			} {
				s, err := spoke.CoreV1().Secrets(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if got := string(s.Data["credentials"]); got != creds {
					return fmt.Errorf("Secret %s holds %q", key, got)
				}
			}
			d, err := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			mounted := false
			for _, v := range d.Spec.Template.Spec.Volumes {
				mounted = mounted || (v.Secret != nil && v.Secret.SecretName == operator.OIDCCredentialsSecret)
			}
			if !mounted || !contains(d.Spec.Template.Spec.Containers[0].Args, "--oidc-storage-provider-s3-bucket-name=hcp-oidc") {
				return fmt.Errorf("the operator Deployment does not use the OIDC storage: volumes %v, args %v", d.Spec.Template.Spec.Volumes, d.Spec.Template.Spec.Containers[0].Args)
			}
			if hash = d.Spec.Template.Annotations[operator.CredentialsHashAnnotation]; hash == "" || hash == before {
				return fmt.Errorf("operator pod template credentials hash %q (before: %q)", hash, before)
			}
			return nil
		})
		return hash
	}
	setOIDCSecret := func(name string) {
		t.Helper()
		patch := []byte(fmt.Sprintf(`{"spec":{"install":{"oidcStorage":{"credentialsSecret":{"name":%q}}}}}`, name))
		if _, err := hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Patch(ctx, "oidc", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	hubSecret("oidc-s3", "v1")
	hc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hcpfleet.io/v1alpha1", "kind": "HostingConfig",
		"metadata": map[string]any{"name": "oidc", "namespace": "hcp-fleet"},
		"spec": map[string]any{"install": map[string]any{"oidcStorage": map[string]any{
			"bucket": "hcp-oidc", "region": "us-east-1", "credentialsSecret": map[string]any{"name": "oidc-s3"}}}},
	}}
	if _, err := hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Create(ctx, hc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// useConfig points cluster-1 at a HostingConfig ("": the default).
	useConfig := func(t *testing.T, name string) {
		t.Helper()
		patch := []byte(`{"spec":{"configs":null}}`)
		if name != "" {
			patch = []byte(fmt.Sprintf(`{"spec":{"configs":[{"group":"hcpfleet.io","resource":"hostingconfigs","name":%q,"namespace":"hcp-fleet"}]}}`, name))
		}
		eventually(t, time.Minute, "cluster-1 uses HostingConfig "+name, func(ctx context.Context) error {
			_, err := addons.AddonV1alpha1().ManagedClusterAddOns("cluster-1").Patch(ctx, addon.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		})
	}
	setHostLabel(t, "cluster-1", true)
	useConfig(t, "oidc")

	var hash1 string
	t.Run("the referenced Secret is copied to the operator and mounted", func(t *testing.T) {
		hash1 = copied("v1", "")
		condition(t, "cluster-1", operator.ConditionInstalled, metav1.ConditionTrue, "Installed", "HostingConfig hcp-fleet/oidc")
		condition(t, "cluster-1", operator.ConditionDegraded, metav1.ConditionFalse, "AsExpected", "")
	})

	t.Run("rotating the hub Secret rotates the copy and rolls the operator", func(t *testing.T) {
		d0, err := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hubSecret("oidc-s3", "v2")
		copied("v2", hash1)
		if d1, _ := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{}); d1.Generation != d0.Generation+1 {
			t.Errorf("operator Deployment generation %d -> %d: want exactly one rollout", d0.Generation, d1.Generation)
		}
	})

	t.Run("a missing Secret is reported and the install left alone", func(t *testing.T) {
		setOIDCSecret("oidc-s3-next")
		c := condition(t, "cluster-1", operator.ConditionDegraded, metav1.ConditionTrue, "CredentialsUnavailable",
			"spec.install.oidcStorage.credentialsSecret of HostingConfig hcp-fleet/oidc: Secret hcp-fleet/oidc-s3-next does not exist on the hub")
		t.Logf("cluster-1: %s", c.Message)
		condition(t, "cluster-1", operator.ConditionInstalled, metav1.ConditionTrue, "Installed", "")
		if s, err := spoke.CoreV1().Secrets(operator.Namespace).Get(ctx, operator.OIDCCredentialsSecret, metav1.GetOptions{}); err != nil || string(s.Data["credentials"]) != "v2" {
			t.Errorf("the operator's credentials changed while the new reference was broken: %v", err)
		}
	})

	t.Run("creating the Secret recovers", func(t *testing.T) {
		hubSecret("oidc-s3-next", "v3")
		copied("v3", "")
		condition(t, "cluster-1", operator.ConditionDegraded, metav1.ConditionFalse, "AsExpected", "")
	})

	// The hub empties the copy in the agent's namespace rather than drop it
	// from the add-on's ManifestWork (pkg/addon/hub, render.go): OCM's
	// work agent can leave a dropped Secret behind when the reference was
	// added just before, as in the step above.
	t.Run("back to a HostingConfig without credentials empties and removes the copies", func(t *testing.T) {
		useConfig(t, "")
		eventually(t, 2*time.Minute, "credentials copies emptied and removed", func(ctx context.Context) error {
			return emptied(ctx, spoke, addon.OIDCStorageCredentials)
		})
		condition(t, "cluster-1", operator.ConditionInstalled, metav1.ConditionTrue, "Installed", "HostingConfig hcp-fleet/default")
	})

	// RBAC: the agent's rule for the copies names them (resourceNames).
	// Kubernetes cannot restrict a plain create (POST) by name, since the name
	// is not in its URL; a server-side apply that creates is authorized as
	// "create" of the named object, which is why the agent writes the copies
	// with server-side apply. Checked on that rule alone: the agent's whole
	// ClusterRole grants more on Secrets for other features.
	t.Run("the copies' RBAC rule allows server-side apply by name only", func(t *testing.T) {
		const probe = "credentials-rbac-probe"
		rules := operator.CredentialsCopyRules(t)
		if _, err := spoke.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probe}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = spoke.CoreV1().Namespaces().Delete(ctx, probe, metav1.DeleteOptions{}) }()
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "copies", Namespace: probe}, Rules: rules}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "copies", Namespace: probe},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "copies"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "credentials-copier"}}}
		if _, err := spoke.RbacV1().Roles(probe).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := spoke.RbacV1().RoleBindings(probe).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(fleet.Cluster("cluster-1").Config())
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "credentials-copier", Groups: []string{"system:authenticated"}}
		copier := kubernetes.NewForConfigOrDie(cfg)
		apply := func(ctx context.Context, name string) error {
			s := corev1ac.Secret(name, probe).WithData(map[string][]byte{"credentials": []byte("x")})
			_, err := copier.CoreV1().Secrets(probe).Apply(ctx, s, metav1.ApplyOptions{FieldManager: operator.FieldManager, Force: true})
			return err
		}
		for i, name := range []string{operator.OIDCCredentialsSecret, operator.PrivatePlatformCredentialsSecret, operator.ExternalDNSCredentialsSecret} {
			if i == 0 {
				// The authorizer learns of the new binding from its informers.
				eventually(t, 30*time.Second, "the binding takes effect", func(ctx context.Context) error { return apply(ctx, name) })
			} else if err := apply(ctx, name); err != nil {
				t.Errorf("server-side apply creating Secret %s: %v", name, err)
			}
			if err := apply(ctx, name); err != nil {
				t.Errorf("server-side apply updating Secret %s: %v", name, err)
			}
			if err := copier.CoreV1().Secrets(probe).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting Secret %s: %v", name, err)
			}
		}
		plain := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: operator.OIDCCredentialsSecret, Namespace: probe}}
		if _, err := copier.CoreV1().Secrets(probe).Create(ctx, plain, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("plain create of Secret %s: want Forbidden (create is not restricted by name), got %v", plain.Name, err)
		}
		if err := apply(ctx, "not-a-credentials-copy"); !apierrors.IsForbidden(err) {
			t.Errorf("server-side apply creating another Secret: want Forbidden, got %v", err)
		}
	})

	t.Run("every kind of credentials, with a key of its own, reaches its Secret", func(t *testing.T) {
		dns := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: "hcp-fleet"}, Data: map[string][]byte{"azure.json": []byte(`{"tenantId":"t"}`)}}
		if _, err := hub.CoreV1().Secrets("hcp-fleet").Create(ctx, dns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		hubSecret("aws", "aws-v1")
		all := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hcpfleet.io/v1alpha1", "kind": "HostingConfig",
			"metadata": map[string]any{"name": "all-credentials", "namespace": "hcp-fleet"},
			"spec": map[string]any{"install": map[string]any{
				"oidcStorage": map[string]any{"bucket": "hcp-oidc", "region": "us-east-1", "credentialsSecret": map[string]any{"name": "oidc-s3-next"}},
				"externalDNS": map[string]any{"provider": "azure", "domainFilter": "hosted.example.com",
					"credentialsSecret": map[string]any{"name": "dns", "key": "azure.json"}},
				"privatePlatform": map[string]any{"type": "AWS", "aws": map[string]any{"region": "us-east-1", "credentialsSecret": map[string]any{"name": "aws"}}},
			}},
		}}
		if _, err := hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Create(ctx, all, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		useConfig(t, "all-credentials")
		want := map[string]string{
			operator.OIDCCredentialsSecret:            "v3",
			operator.ExternalDNSCredentialsSecret:     `{"tenantId":"t"}`,
			operator.PrivatePlatformCredentialsSecret: "aws-v1",
		}
		eventually(t, 2*time.Minute, "all three credentials in the operator namespace", func(ctx context.Context) error {
			for name, creds := range want {
				s, err := spoke.CoreV1().Secrets(operator.Namespace).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if got := string(s.Data[operator.CredentialsKey]); got != creds || s.Labels[operator.ManagedByLabel] != operator.ManagedByValue {
					return fmt.Errorf("Secret %s holds %q, labels %v", name, got, s.Labels)
				}
			}
			d, err := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, "external-dns", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if d.Spec.Template.Annotations[operator.CredentialsHashAnnotation] == "" {
				return fmt.Errorf("external-dns pod template carries no credentials hash")
			}
			return nil
		})
		condition(t, "cluster-1", operator.ConditionInstalled, metav1.ConditionTrue, "Installed", "HostingConfig hcp-fleet/all-credentials")
		condition(t, "cluster-1", operator.ConditionDegraded, metav1.ConditionFalse, "AsExpected", "")
	})

	// Last: it leaves cluster-1 without the add-on, as a fresh fleet has it.
	t.Run("uninstall removes every copy", func(t *testing.T) {
		setHostLabel(t, "cluster-1", false)
		eventually(t, 3*time.Minute, "add-on and credentials gone from cluster-1", func(ctx context.Context) error {
			if _, err := addons.AddonV1alpha1().ManagedClusterAddOns("cluster-1").Get(ctx, addon.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("ManagedClusterAddOn: %v", err)
			}
			return gone(ctx, spoke, addon.OIDCStorageCredentials, addon.ExternalDNSCredentials, addon.PrivatePlatformCredentials)
		})
	})
}

// operatorCopies names the operator's copy of each kind of credentials.
var operatorCopies = map[string]string{
	addon.OIDCStorageCredentials.Purpose:     operator.OIDCCredentialsSecret,
	addon.ExternalDNSCredentials.Purpose:     operator.ExternalDNSCredentialsSecret,
	addon.PrivatePlatformCredentials.Purpose: operator.PrivatePlatformCredentialsSecret,
}

// gone checks that the copies of the given credentials are gone from both
// the agent's and the operator's namespace.
func gone(ctx context.Context, spoke kubernetes.Interface, creds ...addon.Credential) error {
	for _, c := range creds {
		for _, key := range []types.NamespacedName{
			{Namespace: addon.DefaultInstallNamespace, Name: c.Secret},
			{Namespace: operator.Namespace, Name: operatorCopies[c.Purpose]},
		} {
			if _, err := spoke.CoreV1().Secrets(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("Secret %s: %v", key, err)
			}
		}
	}
	return nil
}

// emptied checks that the hub's copies of the given credentials in the
// agent's namespace hold nothing (no data, an empty source) and that the
// operator's copies are gone.
func emptied(ctx context.Context, spoke kubernetes.Interface, creds ...addon.Credential) error {
	for _, c := range creds {
		s, err := spoke.CoreV1().Secrets(addon.DefaultInstallNamespace).Get(ctx, c.Secret, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Data) != 0 || s.Annotations[addon.CredentialsSourceAnnotation] != "" {
			return fmt.Errorf("Secret %s/%s holds %d keys, source %q", s.Namespace, s.Name, len(s.Data), s.Annotations[addon.CredentialsSourceAnnotation])
		}
		key := types.NamespacedName{Namespace: operator.Namespace, Name: operatorCopies[c.Purpose]}
		if _, err := spoke.CoreV1().Secrets(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Secret %s: %v", key, err)
		}
	}
	return nil
}

func contains(s []string, want string) bool {
	for _, x := range s {
		if x == want {
			return true
		}
	}
	return false
}
