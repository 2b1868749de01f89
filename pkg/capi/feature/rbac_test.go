package feature

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/manifests"
	agentcrds "github.com/hcp-fleet/hcp-fleet/pkg/capi/agentapi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
)

// TestAgentMayWriteEveryCRD: the agent's ClusterRole names exactly the CRDs
// the agent can install (HyperShift's, CAPI's in both forms with every
// provider, the OpenShift Agent providers'), in the one rule that lets it
// write CRDs, with the verbs it uses (server-side apply, which may create;
// delete).
func TestAgentMayWriteEveryCRD(t *testing.T) {
	var want []string
	for _, mode := range []crds.Mode{crds.ModeStandard, crds.ModePrivate} {
		built, err := crds.Build(mode, crds.Options{Providers: []crds.Provider{crds.ProviderAgent, crds.ProviderKubeVirt, crds.ProviderAWS}})
		if err != nil {
			t.Fatal(err)
		}
		for _, crd := range built {
			want = append(want, crd.Name)
		}
	}
	providers, err := agentcrds.All()
	if err != nil {
		t.Fatal(err)
	}
	for name := range providers {
		want = append(want, name)
	}
	entries, err := manifests.HyperShiftCRDs.ReadDir("hypershift")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := manifests.HyperShiftCRDs.ReadFile("hypershift/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		want = append(want, crd.Name)
	}
	slices.Sort(want)
	want = slices.Compact(want)

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
