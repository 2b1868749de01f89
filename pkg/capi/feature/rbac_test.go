package feature

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/internal/assistedtest"
	"github.com/hcp-fleet/hcp-fleet/manifests"
)

// TestAgentMayWriteEveryCRD: the agent's ClusterRole names exactly the CRDs
// the agent can install (HyperShift's, CAPI's in both forms with every
// provider, the OpenShift Agent providers'), in the one rule that lets it
// write CRDs, with the verbs it uses (server-side apply, which may create;
// delete).
func TestAgentMayWriteEveryCRD(t *testing.T) {
	want, err := assistedtest.InstallableCRDNames()
	if err != nil {
		t.Fatal(err)
	}

	data, err := manifests.Agent.ReadFile("agent/02-clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(data, role); err != nil {
		t.Fatal(err)
	}
	var writes []rbacv1.PolicyRule
	for _, r := range role.Rules {
		if slices.Contains(r.APIGroups, "apiextensions.k8s.io") && slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" }) {
			writes = append(writes, r)
		}
	}
	if len(writes) != 1 {
		t.Fatalf("%d rules let the agent write CRDs; want one", len(writes))
	}
	r := writes[0]
	got := slices.Sorted(slices.Values(r.ResourceNames))
	if !slices.Equal(got, want) {
		t.Errorf("the CRD rule names %d CRDs, the agent installs %d:\n  missing: %s\n  extra: %s", len(got), len(want),
			strings.Join(minus(want, got), ", "), strings.Join(minus(got, want), ", "))
	}
	if verbs := slices.Sorted(slices.Values(r.Verbs)); !slices.Equal(verbs, []string{"create", "delete", "patch"}) {
		t.Errorf("CRD write verbs %v, want create, delete, patch", verbs)
	}
}

func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}
