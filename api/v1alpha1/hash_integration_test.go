//go:build integration

package v1alpha1_test

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	addonutils "open-cluster-management.io/addon-framework/pkg/utils"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hcpv1 "github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// TestHashMatchesOCM creates HostingConfigs and compares our hash of what the
// apiserver returns with the spec hash OCM's add-on manager computes for the same
// object (addon-framework utils.GetSpecHash, which fills
// status.configReferences[].desiredConfig.specHash).
func TestHashMatchesOCM(t *testing.T) {
	ctx := context.Background()
	ensureNamespace(t, "hash")
	examples, err := readFile(examplesDir + "/30-hostingconfig.yaml")
	if err != nil || len(examples) != 1 {
		t.Fatalf("reading the HostingConfig example: %v", err)
	}
	specs := map[string]any{
		"example":   examples[0].Object["spec"],
		"empty":     map[string]any{},
		"capacity":  map[string]any{"capacity": map[string]any{"maxHostedClusters": int64(3), "aboveThreshold": int64(2)}},
		"providers": map[string]any{"agentProviders": map[string]any{"bootstrap": true}},
		"quantity":  map[string]any{"capacity": map[string]any{"perHostedControlPlane": map[string]any{"memory": "18Gi"}}},
		// Tolerations are core's type, whose Go encoding must give back exactly what
		// the apiserver stored; an empty subscriptionDefaults ({}) too.
		"subscription defaults": map[string]any{"olm": map[string]any{"subscriptionDefaults": map[string]any{
			"nodeSelector": map[string]any{"zone": "a", "infra": ""},
			"tolerations": []any{
				map[string]any{"key": "dedicated", "operator": "Equal", "value": "ops", "effect": "NoExecute", "tolerationSeconds": int64(30)},
				map[string]any{"operator": "Exists"},
			}}}},
		"empty subscription defaults": map[string]any{"olm": map[string]any{"subscriptionDefaults": map[string]any{}}},
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			typed, stored := createHostingConfig(ctx, t, spec)
			ocm, err := addonutils.GetSpecHash(stored)
			if err != nil {
				t.Fatal(err)
			}
			if h := mustHash(t, &typed.Spec); h != ocm {
				t.Errorf("Hash() = %s, OCM's specHash = %s", h, ocm)
			}
			if h, err := hcpv1.SpecHashOfUnstructured(stored); err != nil || h != ocm {
				t.Errorf("SpecHashOfUnstructured = %s, %v; OCM's specHash = %s", h, err, ocm)
			}
		})
	}

	// A quantity written in non-canonical form: the Go types re-encode it, so only
	// the unstructured hash is guaranteed to match (as Hash's doc comment says).
	typed, stored := createHostingConfig(ctx, t, map[string]any{"capacity": map[string]any{"perHostedControlPlane": map[string]any{"cpu": "5000m"}}})
	ocm, err := addonutils.GetSpecHash(stored)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := hcpv1.SpecHashOfUnstructured(stored); h != ocm {
		t.Errorf("SpecHashOfUnstructured = %s, OCM's specHash = %s", h, ocm)
	}
	if h := mustHash(t, &typed.Spec); h == ocm {
		t.Errorf("Hash() matched OCM for cpu: 5000m; the doc comment on Hash says it does not, update it")
	}
}

var hashSeq int

func createHostingConfig(ctx context.Context, t *testing.T, spec any) (*hcpv1.HostingConfig, *unstructured.Unstructured) {
	t.Helper()
	hashSeq++
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": hcpv1.GroupVersion.String(),
		"kind":       hcpv1.HostingConfigKind,
		"metadata":   map[string]any{"name": fmt.Sprintf("hash-%d", hashSeq), "namespace": "hash"},
		"spec":       spec,
	}}
	if err := k8s.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(u.GroupVersionKind())
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), stored); err != nil {
		t.Fatal(err)
	}
	var typed hcpv1.HostingConfig
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), &typed); err != nil {
		t.Fatal(err)
	}
	return &typed, stored
}
