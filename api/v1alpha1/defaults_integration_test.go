//go:build integration

package v1alpha1_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hcpv1 "github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// TestDefaults checks the defaults the apiserver fills in, and that they agree with
// the Go constants controllers use.
func TestDefaults(t *testing.T) {
	ctx := context.Background()
	ensureNamespace(t, "defaults")
	// The defaults the issue asks for; the Go constants must agree with them.
	if hcpv1.DefaultHostingNamespace != "clusters" || hcpv1.DefaultMaxHostedClusters != 80 || hcpv1.DefaultAboveThreshold != 60 {
		t.Fatalf("Go default constants changed: %q %d %d", hcpv1.DefaultHostingNamespace, hcpv1.DefaultMaxHostedClusters, hcpv1.DefaultAboveThreshold)
	}

	hcd := mustObject(t, validHCD)
	hcd.SetNamespace("defaults")
	unstructured.RemoveNestedField(hcd.Object, "spec", "hostingNamespace")
	unstructured.RemoveNestedField(hcd.Object, "spec", "deletionPolicy")
	if err := k8s.Create(ctx, hcd); err != nil {
		t.Fatal(err)
	}
	var gotHCD hcpv1.HostedClusterDeployment
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(hcd), &gotHCD); err != nil {
		t.Fatal(err)
	}
	if gotHCD.Spec.HostingNamespace != hcpv1.DefaultHostingNamespace {
		t.Errorf("hostingNamespace defaulted to %q, want %q", gotHCD.Spec.HostingNamespace, "clusters")
	}
	if gotHCD.Spec.DeletionPolicy != hcpv1.DeletionPolicyDelete {
		t.Errorf("deletionPolicy defaulted to %q, want Delete", gotHCD.Spec.DeletionPolicy)
	}

	for _, tc := range []struct {
		name string
		spec map[string]any
	}{
		{"no spec", nil},
		{"empty spec", map[string]any{}},
		{"empty capacity", map[string]any{"capacity": map[string]any{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": hcpv1.GroupVersion.String(),
				"kind":       hcpv1.HostingConfigKind,
				"metadata":   map[string]any{"generateName": "defaults-", "namespace": "defaults"},
			}}
			if tc.spec != nil {
				cfg.Object["spec"] = tc.spec
			}
			if err := k8s.Create(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			var got hcpv1.HostingConfig
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(cfg), &got); err != nil {
				t.Fatal(err)
			}
			c := got.Spec.Capacity
			if c == nil {
				t.Fatal("capacity was not defaulted")
			}
			if c.MaxHostedClusters != hcpv1.DefaultMaxHostedClusters {
				t.Errorf("maxHostedClusters defaulted to %d, want 80", c.MaxHostedClusters)
			}
			if c.AboveThreshold != hcpv1.DefaultAboveThreshold {
				t.Errorf("aboveThreshold defaulted to %d, want 60", c.AboveThreshold)
			}
			if got.Spec.CAPIMode != hcpv1.CAPIModeAuto {
				t.Errorf("capiMode defaulted to %q, want Auto", got.Spec.CAPIMode)
			}
			if got.Spec.Operator != nil || got.Spec.Install != nil || got.Spec.OLM != nil || got.Spec.AgentProviders != nil {
				t.Errorf("optional sections appeared out of nothing: %+v", got.Spec)
			}
		})
	}

	// Nested defaults: credential keys, private platform type, agent providers off.
	cfg := mustObject(t, `
apiVersion: hcpfleet.io/v1alpha1
kind: HostingConfig
metadata:
  name: nested
  namespace: defaults
spec:
  install:
    oidcStorage: {bucket: oidc-bucket, region: us-east-1, credentialsSecret: {name: oidc}}
    privatePlatform: {}
  agentProviders: {}
`)
	if err := k8s.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	var got hcpv1.HostingConfig
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(cfg), &got); err != nil {
		t.Fatal(err)
	}
	if key := got.Spec.Install.OIDCStorage.CredentialsSecret.Key; key != hcpv1.DefaultCredentialsKey {
		t.Errorf("credentialsSecret.key defaulted to %q, want %q", key, hcpv1.DefaultCredentialsKey)
	}
	if typ := got.Spec.Install.PrivatePlatform.Type; typ != hcpv1.PrivatePlatformNone {
		t.Errorf("privatePlatform.type defaulted to %q, want None", typ)
	}
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(hcpv1.GroupVersion.WithKind(hcpv1.HostingConfigKind))
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(cfg), stored); err != nil {
		t.Fatal(err)
	}
	providers, _, _ := unstructured.NestedMap(stored.Object, "spec", "agentProviders")
	if providers["bootstrap"] != false || providers["controlPlane"] != false {
		t.Errorf("agentProviders defaulted to %v, want both false, stored explicitly", providers)
	}
}
