package adoption

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

func inventory(cluster string, truncated bool, hcs ...v1alpha1.InventoryHostedCluster) v1alpha1.HostedClusterInventory {
	return v1alpha1.HostedClusterInventory{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: v1alpha1.InventoryName},
		Status: v1alpha1.HostedClusterInventoryStatus{HostedClusters: hcs, Truncated: truncated}}
}

func unmanaged(ns, name, infraID string) v1alpha1.InventoryHostedCluster {
	return v1alpha1.InventoryHostedCluster{Namespace: ns, Name: name, InfraID: infraID, Release: "quay.io/ocp-release:4.18.5", Platform: "None", Available: metav1.ConditionTrue}
}

func hcd(ns, name, uid string, mutate ...func(*v1alpha1.HostedClusterDeployment)) v1alpha1.HostedClusterDeployment {
	h := v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}}
	for _, m := range mutate {
		m(&h)
	}
	return h
}

func bound(cluster, hostingNamespace string) func(*v1alpha1.HostedClusterDeployment) {
	return func(h *v1alpha1.HostedClusterDeployment) {
		h.Status.HostingCluster, h.Spec.HostingNamespace = cluster, hostingNamespace
	}
}

// TestCheck: each row of docs/operations.md's table of adoption checks
// refuses with its reason, in the table's order, and a HostedCluster that
// passes them all (an unmanaged one, or an orphan whose deployment is gone)
// is planned into a deployment of its own name and namespace.
func TestCheck(t *testing.T) {
	req := Request{Cluster: "cluster-1", Namespace: "clusters", Name: "prod", IntoNamespace: "team-a"}
	wild := inventory("cluster-1", false, unmanaged("clusters", "prod", "prod-x1y2z"))
	orphan := v1alpha1.InventoryHostedCluster{Namespace: "clusters", Name: "prod",
		Deployment: &v1alpha1.InventoryDeployment{Namespace: "team-old", Name: "prod", UID: "u-old"}}
	for _, tc := range []struct {
		name     string
		req      Request
		in       Inputs
		reason   string
		contains string
	}{
		{name: "adoptable", req: req, in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{wild}}},
		{name: "orphan of a deleted deployment", req: req,
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{inventory("cluster-1", false, orphan)}}},
		{name: "no inventory", req: req, reason: ReasonNotListed, contains: "agent running",
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{inventory("cluster-2", false, unmanaged("clusters", "prod", "prod-x1y2z"))}}},
		{name: "not listed", req: req, reason: ReasonNotListed, contains: "clusters/prod",
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{inventory("cluster-1", false, unmanaged("clusters", "other", "o"))}}},
		{name: "truncated", req: req, reason: ReasonInventoryTruncated,
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{inventory("cluster-1", true, unmanaged("clusters", "other", "o"))}}},
		{name: "managed", req: req, reason: ReasonManagedByDeployment, contains: "relocation",
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{inventory("cluster-1", false, orphan)},
				Deployments: []v1alpha1.HostedClusterDeployment{hcd("team-old", "prod", "u-old")}}},
		{name: "its deployment restored with a new UID", req: req, reason: ReasonManagedByDeployment, contains: "another UID",
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{inventory("cluster-1", false, orphan)},
				Deployments: []v1alpha1.HostedClusterDeployment{hcd("team-old", "prod", "u-restored")}}},
		{name: "another name", req: Request{Cluster: "cluster-1", Namespace: "clusters", Name: "prod", IntoNamespace: "team-a", IntoName: "renamed"},
			reason: ReasonNameMismatch, in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{wild}}},
		{name: "deployment exists", req: req, reason: ReasonDeploymentExists,
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{wild}, Deployments: []v1alpha1.HostedClusterDeployment{hcd("team-a", "prod", "u1")}}},
		{name: "no infraID", req: req, reason: ReasonNoInfraID,
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{inventory("cluster-1", false, unmanaged("clusters", "prod", ""))}}},
		{name: "infraID of a deployment", req: req, reason: ReasonInfraIDTaken, contains: "prod-x1y2z is the infraID of a HostedClusterDeployment",
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{wild}, Deployments: []v1alpha1.HostedClusterDeployment{
				hcd("team-b", "b", "u2", func(h *v1alpha1.HostedClusterDeployment) { h.Spec.HostedCluster.Spec.InfraID = "prod-x1y2z" })}}},
		{name: "infraID of a HostedCluster elsewhere", req: req, reason: ReasonInfraIDTaken, contains: "clusters/twin on management cluster cluster-2",
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{wild, inventory("cluster-2", false, unmanaged("clusters", "twin", "prod-x1y2z"))}}},
		{name: "hosting namespace not allowed", req: req, reason: ReasonHostingNamespaceNotAllowed, contains: "HostingConfig small allows (hosted)",
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{wild}, HostingConfigName: "small",
				HostingConfig: &v1alpha1.HostingConfigSpec{HostingNamespaces: []v1alpha1.HostingNamespaceName{"hosted"}}}},
		{name: "control-plane namespace is a hosting namespace", req: req, reason: ReasonControlPlaneNamespaceConflict, contains: "clusters-prod",
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{wild},
				HostingConfig: &v1alpha1.HostingConfigSpec{HostingNamespaces: []v1alpha1.HostingNamespaceName{"clusters", "clusters-prod"}}}},
		{name: "same HostedCluster delivered by a bound deployment", req: req, reason: ReasonControlPlaneNamespaceConflict, contains: "delivered by",
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{wild}, Deployments: []v1alpha1.HostedClusterDeployment{
				hcd("team-b", "prod", "u3", bound("cluster-1", "clusters"))}}},
		{name: "namespace is a bound deployment's control-plane namespace", reason: ReasonControlPlaneNamespaceConflict, contains: "its namespace hc-x",
			req: Request{Cluster: "cluster-1", Namespace: "hc-x", Name: "prod", IntoNamespace: "team-a"},
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{inventory("cluster-1", false, unmanaged("hc-x", "prod", "prod-x1y2z"))},
				HostingConfig: &v1alpha1.HostingConfigSpec{HostingNamespaces: []v1alpha1.HostingNamespaceName{"hc-x"}},
				Deployments:   []v1alpha1.HostedClusterDeployment{hcd("team-c", "x", "u5", bound("cluster-1", "hc"))}}},
		{name: "the same names bound elsewhere do not clash", req: req,
			in: Inputs{Inventories: []v1alpha1.HostedClusterInventory{wild}, Deployments: []v1alpha1.HostedClusterDeployment{
				hcd("team-b", "prod", "u3", bound("cluster-2", "clusters"))}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Check(tc.req, tc.in)
			if p.Reason != tc.reason || !strings.Contains(p.Message, tc.contains) {
				t.Fatalf("Check = %s: %q, want %s containing %q", p.Reason, p.Message, tc.reason, tc.contains)
			}
			if tc.reason != "" {
				return
			}
			if p.IntoName != "prod" || p.HostingNamespace != tc.req.Namespace || len(p.Unchecked) == 0 {
				t.Errorf("plan %+v: want HCD team-a/prod in hosting namespace clusters, with what is left unchecked", p)
			}
			if tc.name == "adoptable" && (p.InfraID != "prod-x1y2z" || p.OrphanOf != nil) {
				t.Errorf("plan %+v: want the infraID kept, no orphan", p)
			}
			if tc.name == "orphan of a deleted deployment" && (p.OrphanOf == nil || p.OrphanOf.Namespace != "team-old") {
				t.Errorf("plan %+v: want the orphan's deployment named", p)
			}
		})
	}
}
