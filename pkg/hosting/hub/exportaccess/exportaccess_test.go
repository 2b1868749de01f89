package exportaccess

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

func bound(namespace, name, host string) v1alpha1.HostedClusterDeployment {
	return v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Status: v1alpha1.HostedClusterDeploymentStatus{HostingCluster: host}}
}

func TestDesiredRole(t *testing.T) {
	if r := DesiredRole("cluster-1", nil); r != nil {
		t.Errorf("no HCD bound: want no Role (empty resourceNames would grant every name), got %+v", r)
	}
	if r := DesiredRole("cluster-1", []v1alpha1.HostedClusterDeployment{bound("a", "x", "cluster-2")}); r != nil {
		t.Errorf("only another cluster's HCD: want no Role, got %+v", r)
	}
	r := DesiredRole("cluster-1", []v1alpha1.HostedClusterDeployment{
		bound("team-b", "y", "cluster-1"), bound("team-a", "x", "cluster-1"), bound("team-a", "z", "cluster-2"),
	})
	if r == nil || r.Namespace != "cluster-1" || r.Name != RoleName || len(r.Rules) != 1 {
		t.Fatalf("Role = %+v", r)
	}
	rule := r.Rules[0]
	want := []string{hosting.ExportedKubeconfigName("team-a", "x"), hosting.ExportedKubeconfigName("team-b", "y")}
	slices.Sort(want)
	if !slices.Equal(rule.ResourceNames, want) || !slices.Equal(rule.Resources, []string{"secrets"}) ||
		!slices.Equal(rule.Verbs, []string{"get", "create", "patch", "delete"}) {
		t.Errorf("rule = %+v, want secrets %v by name", rule, want)
	}
	b := DesiredBinding("cluster-1")
	if len(b.Subjects) != 1 || b.Subjects[0].Name != "system:open-cluster-management:cluster:cluster-1:addon:hcp-fleet" || b.RoleRef.Name != RoleName {
		t.Errorf("binding = %+v, want the cluster's agent group only", b)
	}
}
