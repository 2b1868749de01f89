package hub

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// An older hub granted the agent its hub rights with a Role of its own in
// the cluster namespace; the hub now binds the shipped ClusterRole, and
// replaces the old binding (a roleRef cannot change) and Role.
func TestGrantHubPermissionsReplacesOlderRole(t *testing.T) {
	ctx := context.Background()
	const cluster = "cluster-1"
	oldRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: HubBindingName},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"*"}}}}
	oldBinding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: HubBindingName},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: HubBindingName},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:open-cluster-management:cluster:cluster-1:addon:hcp-fleet"}}}
	kube := fake.NewClientset(oldRole, oldBinding)
	a, err := newAgentAddon(Options{}, kube, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: addon.Name, UID: "mca-uid"}}
	for range 2 { // the second pass finds everything in place
		if err := a.grantHubPermissions(&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}, mca); err != nil {
			t.Fatal(err)
		}
	}
	got, err := kube.RbacV1().RoleBindings(cluster).Get(ctx, HubBindingName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.RoleRef.Kind != "ClusterRole" || got.RoleRef.Name != "open-cluster-management:hcp-fleet:agent-hub" {
		t.Errorf("roleRef = %+v, want the ClusterRole open-cluster-management:hcp-fleet:agent-hub", got.RoleRef)
	}
	if len(got.Subjects) != 1 || got.Subjects[0].Name != "system:open-cluster-management:cluster:cluster-1:addon:hcp-fleet" {
		t.Errorf("subjects = %+v, want the cluster's agent group only", got.Subjects)
	}
	if _, err := kube.RbacV1().Roles(cluster).Get(ctx, HubBindingName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the older hub's Role is still there (err %v)", err)
	}
}

// HubRole is the ClusterRole shipped in manifests/hub.
func TestHubRoleIsTheShippedClusterRole(t *testing.T) {
	role, err := HubRole()
	if err != nil {
		t.Fatal(err)
	}
	if role.Name != "open-cluster-management:hcp-fleet:agent-hub" || len(role.Rules) == 0 {
		t.Fatalf("HubRole = %s with %d rules", role.Name, len(role.Rules))
	}
}
