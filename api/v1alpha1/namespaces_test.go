package v1alpha1_test

import (
	"testing"

	hcpv1 "github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// reservedNamespaces are namespaces no hosted cluster may be delivered into, one or
// more of each reserved pattern.
var reservedNamespaces = []string{"default", "kube-system", "kube-public", "openshift", "openshift-config",
	"open-cluster-management", "open-cluster-management-agent", "hypershift", "hcp-fleet", "hcp-fleet-agent",
	// prefixes that make HyperShift's control-plane namespace <ns>-<name> reserved
	"kube", "open", "open-cluster", "hcp"}

// allowedNamespaces are namespaces a HostedClusterDeployment may name.
var allowedNamespaces = []string{"clusters", "team-a-hcps", "kubernetes-hcps", "openshiftx", "hypershift-team", "opens", "hcps", "kubes"}

// TestReservedHostingNamespace keeps the hub's copy of the rule (Go) in step with
// the API's (CEL), on the same namespaces the apiserver tests use
// (TestValidationRejects, TestValidationAccepts).
func TestReservedHostingNamespace(t *testing.T) {
	for _, ns := range reservedNamespaces {
		if !hcpv1.ReservedHostingNamespace(ns) {
			t.Errorf("ReservedHostingNamespace(%q) = false; the API refuses it", ns)
		}
		spec := &hcpv1.HostingConfigSpec{HostingNamespaces: []hcpv1.HostingNamespaceName{hcpv1.HostingNamespaceName(ns)}}
		if spec.AllowsHostingNamespace(ns) {
			t.Errorf("a HostingConfig listing reserved %q allows it", ns)
		}
	}
	for _, ns := range allowedNamespaces {
		if hcpv1.ReservedHostingNamespace(ns) {
			t.Errorf("ReservedHostingNamespace(%q) = true; the API accepts it", ns)
		}
	}
	var unset *hcpv1.HostingConfigSpec
	for ns, want := range map[string]bool{"clusters": true, "": true, "team-a-hcps": false} {
		if got := unset.AllowsHostingNamespace(ns); got != want {
			t.Errorf("no HostingConfig: AllowsHostingNamespace(%q) = %v, want %v", ns, got, want)
		}
		if got := (&hcpv1.HostingConfigSpec{}).AllowsHostingNamespace(ns); got != want {
			t.Errorf("empty HostingConfig: AllowsHostingNamespace(%q) = %v, want %v", ns, got, want)
		}
	}
	listed := &hcpv1.HostingConfigSpec{HostingNamespaces: []hcpv1.HostingNamespaceName{"team-a-hcps"}}
	if !listed.AllowsHostingNamespace("team-a-hcps") || listed.AllowsHostingNamespace("clusters") || listed.AllowsHostingNamespace("") {
		t.Errorf("a HostingConfig listing team-a-hcps only: %v", listed.AllowedHostingNamespaces())
	}
}
