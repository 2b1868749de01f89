//go:build integration

package v1alpha1_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	hcpv1 "github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// TestExamplesApply applies every file in examples/ to the apiserver the way
// `kubectl apply --server-side` does, with strict field validation, and checks that
// what the apiserver stored contains everything the example says.
func TestExamplesApply(t *testing.T) {
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples in %s: %v", examplesDir, err)
	}
	kinds := map[string]int{}
	platforms := map[any]bool{}
	for _, f := range files {
		objs, err := readFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) == 0 {
			t.Errorf("%s holds no objects", f)
		}
		for _, u := range objs {
			kinds[u.GetKind()]++
			if ns := u.GetNamespace(); u.GetKind() != "Namespace" && u.GetKind() != "TenantPolicy" && ns != "hcp-demo" {
				t.Errorf("%s: %s %s is in namespace %q, want all namespaced examples in hcp-demo", f, u.GetKind(), u.GetName(), ns)
			}
			applied := u.DeepCopy()
			if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
				t.Errorf("%s: applying %s %s: %v", f, u.GetKind(), u.GetName(), err)
				continue
			}
			// Strict field validation cannot see typos inside the preserved HyperShift
			// specs (unknown fields are kept there on purpose), so the examples must
			// also decode strictly into our pinned Go types.
			switch u.GetKind() {
			case hcpv1.HostedClusterDeploymentKind:
				var hcd hcpv1.HostedClusterDeployment
				strictDecode(t, f, applied, &hcd)
				platforms[hcd.Spec.HostedCluster.Spec.Platform.Type] = true
			case hcpv1.HostingConfigKind:
				var hc hcpv1.HostingConfig
				strictDecode(t, f, applied, &hc)
			case "TenantPolicy":
				var tp hcpv1.TenantPolicy
				strictDecode(t, f, applied, &tp)
			}
			stored := &unstructured.Unstructured{}
			stored.SetGroupVersionKind(u.GroupVersionKind())
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), stored); err != nil {
				t.Fatalf("%s: reading back %s %s: %v", f, u.GetKind(), u.GetName(), err)
			}
			if u.GetKind() == "Secret" || applied.Object["spec"] == nil {
				continue // stringData is write-only; the apiserver turns it into data
			}
			if path, ok := contains(stored.Object["spec"], applied.Object["spec"], "spec"); !ok {
				t.Errorf("%s: %s %s: the apiserver did not keep %s", f, u.GetKind(), u.GetName(), path)
			}
		}
	}
	if kinds[hcpv1.HostedClusterDeploymentKind] < 2 || kinds[hcpv1.HostingConfigKind] < 1 || kinds["Secret"] < 2 {
		t.Errorf("examples should hold at least two HostedClusterDeployments, a HostingConfig and the Secrets they use; found %v", kinds)
	}
	if len(platforms) < 2 {
		t.Errorf("the HostedClusterDeployment examples should cover at least two platforms, found %v", platforms)
	}
}

func strictDecode(t *testing.T, file string, u *unstructured.Unstructured, into any) {
	t.Helper()
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Errorf("%s: %s %s does not match the Go types (a typo?): %v", file, u.GetKind(), u.GetName(), err)
	}
}

// contains reports whether got holds everything in want (maps may have more keys,
// e.g. defaults); on failure it returns the first path that differs.
func contains(got, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		for k, wv := range w {
			if p, ok := contains(g[k], wv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := contains(g[i], w[i], path+"[]"); !ok {
				return p, false
			}
		}
		return "", true
	default:
		// JSON numbers come back as int64 or float64 depending on the decoder.
		if gf, ok := toFloat(got); ok {
			if wf, ok := toFloat(want); ok {
				return path, gf == wf
			}
		}
		return path, reflect.DeepEqual(got, want)
	}
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}
