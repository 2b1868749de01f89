package kubectlhcpfleet

import (
	"strings"
	"testing"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/adoption"
)

// TestParseAdoptArgs: CLUSTER NAMESPACE/NAME and --into NAMESPACE[/NAME];
// anything else is refused with what is wanted.
func TestParseAdoptArgs(t *testing.T) {
	for _, tc := range []struct {
		hc, into string
		want     adoption.Request
		err      string
	}{
		{hc: "clusters/prod", into: "team-a", want: adoption.Request{Cluster: "c1", Namespace: "clusters", Name: "prod", IntoNamespace: "team-a"}},
		{hc: "clusters/prod", into: "team-a/prod", want: adoption.Request{Cluster: "c1", Namespace: "clusters", Name: "prod", IntoNamespace: "team-a", IntoName: "prod"}},
		{hc: "prod", into: "team-a", err: "NAMESPACE/NAME"},
		{hc: "clusters/", into: "team-a", err: "NAMESPACE/NAME"},
		{hc: "a/b/c", into: "team-a", err: "NAMESPACE/NAME"},
		{hc: "clusters/prod", into: "/prod", err: "--into"},
		{hc: "clusters/prod", into: "a/b/c", err: "--into"},
	} {
		got, err := parseAdoptArgs([]string{"c1", tc.hc}, tc.into)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s --into %s: %v, want an error about %s", tc.hc, tc.into, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s --into %s = %+v, %v; want %+v", tc.hc, tc.into, got, err, tc.want)
		}
	}
}

// TestRenderAdoptionPlan: a plan says what would be created and kept, and
// that nothing was written; a refusal says its reason and message.
func TestRenderAdoptionPlan(t *testing.T) {
	req := adoption.Request{Cluster: "c1", Namespace: "clusters", Name: "prod", IntoNamespace: "team-a", IntoName: "prod"}
	var b strings.Builder
	orphan := &adoption.Plan{Request: req, HostingNamespace: "clusters",
		OrphanOf: &v1alpha1.InventoryDeployment{Namespace: "team-old", Name: "prod"}, Unchecked: []string{"the TenantPolicy"}}
	if err := RenderAdoptionPlan(&b, orphan); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"can be adopted into HostedClusterDeployment team-a/prod", "bound to c1", "hostingNamespace clusters",
		"team-old/prod, which is gone", "not checked here: the TenantPolicy", "dry-run: nothing was written"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan output lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	refused := &adoption.Plan{Request: req, Reason: adoption.ReasonInfraIDTaken, Message: "its infraID x is taken"}
	if err := RenderAdoptionPlan(&b, refused); err != nil {
		t.Fatal(err)
	}
	if want := "HostedCluster clusters/prod on c1 cannot be adopted into HostedClusterDeployment team-a/prod: InfraIDTaken: its infraID x is taken\n"; b.String() != want {
		t.Errorf("refusal output %q, want %q", b.String(), want)
	}
}
