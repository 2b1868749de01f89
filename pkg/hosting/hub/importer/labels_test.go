package importer

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

func TestLabelPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy  string
		allowed []string
		refused []string
	}{
		{
			policy:  "*",
			allowed: []string{"team", "env", "region", "cost-center"},
			refused: []string{
				// reserved domains and their subdomains
				"cluster.open-cluster-management.io/clusterset", "open-cluster-management.io/cluster-name",
				"feature.open-cluster-management.io/addon-work-manager",
				"hcpfleet.io/management-cluster", "hcpfleet.io/hcd-name", "kubernetes.io/metadata.name",
				"node-role.kubernetes.io/master", "k8s.io/x", "openshift.io/run-level", "hypershift.openshift.io/x",
				// OCM's and ACM's own unprefixed labels
				"name", "vendor", "cloud", "clusterID", "local-cluster", "managed-by",
				"openshiftVersion", "openshiftVersion-major", "openshiftVersion-major-minor",
				// prefixed keys need an admin's opt-in
				"example.com/team", "velero.io/exclude-from-backup", "cluster.x-k8s.io/cluster-name",
			},
		},
		{
			policy:  DefaultImportedClusterLabels,
			refused: []string{"team", "example.com/team", "env"},
		},
		{
			// Reserved keys stay refused even when listed, one by one or by
			// pattern.
			policy:  "team, example.com/*, cluster.open-cluster-management.io/clusterset, hcpfleet.io/*, name, vendor, *.openshift.io/*",
			allowed: []string{"team", "example.com/team", "example.com/cost-center"},
			refused: []string{
				"env", "sub.example.com/team", "example.org/team",
				"cluster.open-cluster-management.io/clusterset", "hcpfleet.io/management-cluster", "name", "vendor",
				"hypershift.openshift.io/x",
			},
		},
		{
			policy:  "*/*",
			allowed: []string{"example.com/team", "cluster.x-k8s.io/cluster-name", "notk8s.io/x"},
			refused: []string{"team", "k8s.io/x", "Kubernetes.IO/x", "sub.hcpfleet.io/x"},
		},
		{
			policy:  "*,*/*",
			allowed: []string{"team", "example.com/team"},
			refused: []string{"cloud", "cluster.open-cluster-management.io/clusterset", "hcpfleet.io/management-cluster"},
		},
		{
			policy:  "team-*,*.example.com/*",
			allowed: []string{"team-a", "a.example.com/x"},
			refused: []string{"team", "example.com/x"},
		},
	} {
		p, err := ParseLabelPolicy(tc.policy)
		if err != nil {
			t.Fatalf("ParseLabelPolicy(%q): %v", tc.policy, err)
		}
		for _, k := range tc.allowed {
			if !p.Allows(k) {
				t.Errorf("policy %q refuses %s, want allowed", tc.policy, k)
			}
		}
		for _, k := range tc.refused {
			if p.Allows(k) {
				t.Errorf("policy %q allows %s, want refused", tc.policy, k)
			}
		}
	}
}

func TestParseLabelPolicyRejectsBadPatterns(t *testing.T) {
	if _, err := ParseLabelPolicy("team,[a-"); err == nil {
		t.Error("ParseLabelPolicy accepted a malformed pattern")
	}
}

func TestZeroLabelPolicyCopiesNothing(t *testing.T) {
	copied, dropped := LabelPolicy{}.Filter(map[string]string{"team": "a"})
	if len(copied) != 0 || !reflect.DeepEqual(dropped, []string{"team"}) {
		t.Errorf("zero policy: copied %v, dropped %v", copied, dropped)
	}
}

func TestFilterAndMessage(t *testing.T) {
	p, err := ParseLabelPolicy("*")
	if err != nil {
		t.Fatal(err)
	}
	copied, dropped := p.Filter(map[string]string{
		"team": "blue", "cluster.open-cluster-management.io/clusterset": "admins",
		"hcpfleet.io/management-cluster": "true", "example.com/cost-center": "cc-4711",
	})
	if !reflect.DeepEqual(copied, map[string]string{"team": "blue"}) {
		t.Errorf("copied %v, want team=blue only", copied)
	}
	want := []string{"cluster.open-cluster-management.io/clusterset", "example.com/cost-center", "hcpfleet.io/management-cluster"}
	if !reflect.DeepEqual(dropped, want) {
		t.Errorf("dropped %v, want %v", dropped, want)
	}
	msg := droppedMessage(dropped)
	for _, s := range []string{"reserved: cluster.open-cluster-management.io/clusterset, hcpfleet.io/management-cluster", "--imported-cluster-labels: example.com/cost-center"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q does not contain %q", msg, s)
		}
	}
	for _, v := range []string{"admins", "cc-4711", "blue"} {
		if strings.Contains(msg, v) {
			t.Errorf("message %q names the value %q", msg, v)
		}
	}
	if droppedMessage(nil) != "" {
		t.Errorf("message without dropped keys: %q", droppedMessage(nil))
	}
	many := make([]string, 0, 15)
	for i := range 15 {
		many = append(many, "example.com/k"+string(rune('a'+i)))
	}
	if msg := droppedMessage(many); !strings.Contains(msg, "and 5 more") || strings.Contains(msg, "example.com/kk") {
		t.Errorf("message of 15 keys not bounded: %q", msg)
	}
}

func TestDesiredManagedClusterKeepsOwnLabels(t *testing.T) {
	hcd := &v1alpha1.HostedClusterDeployment{}
	hcd.Namespace, hcd.Name = "team-a", "c1"
	// Even a policy-bypassing copied map cannot override the import's own
	// labels.
	mc := DesiredManagedCluster(hcd, hcd.Name, "cluster-1", map[string]string{"team": "blue", hosting.LabelHCDName: "other"})
	lbls := mc["metadata"].(map[string]any)["labels"].(map[string]string)
	want := map[string]string{"team": "blue", hosting.LabelHCDNamespace: "team-a", hosting.LabelHCDName: "c1"}
	if !reflect.DeepEqual(lbls, want) {
		t.Errorf("labels %v, want %v", lbls, want)
	}
}
