package fleetview

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/golden"
)

func cond(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}

func TestDeploymentOf(t *testing.T) {
	upgrading := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "up"}}
	upgrading.Status.HostingCluster = "cluster-1"
	upgrading.Status.ManagedCluster = "up"
	upgrading.Status.Version = &v1alpha1.HostedClusterVersionStatus{Current: "4.18.5"}
	upgrading.Status.Version.Desired.Version = "4.18.6"
	upgrading.Status.Conditions = []metav1.Condition{
		cond(v1alpha1.ConditionScheduled, metav1.ConditionTrue, "Scheduled", ""),
		cond(v1alpha1.ConditionDelivered, metav1.ConditionTrue, "Applied", ""),
		cond(v1alpha1.ConditionAvailable, metav1.ConditionTrue, "AsExpected", ""),
		cond(v1alpha1.ConditionProgressing, metav1.ConditionTrue, "RollingOut", "rolling out 4.18.6"),
		cond(v1alpha1.ConditionDegraded, metav1.ConditionFalse, "AsExpected", ""),
		cond(v1alpha1.ConditionImported, metav1.ConditionTrue, "Imported", ""),
	}
	pending := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pinned"}}
	pending.Status.Conditions = []metav1.Condition{
		cond(v1alpha1.ConditionScheduled, metav1.ConditionFalse, v1alpha1.ReasonHostingClusterNotFound, "spec.hostingCluster names ManagedCluster mgmt-east, which does not exist"),
		cond(v1alpha1.ConditionImported, metav1.ConditionFalse, "WaitingForAvailable", "waiting"),
	}
	deleting := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gone",
		DeletionTimestamp: &metav1.Time{Time: time.Now()}, Finalizers: []string{"x"}}}
	deleting.Spec.DeletionPolicy = v1alpha1.DeletionPolicyOrphan
	deleting.Status.HostingCluster = "cluster-2"

	held := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "held"}}
	held.Status.HostingCluster = "cluster-1"
	held.Status.Version = &v1alpha1.HostedClusterVersionStatus{Current: "4.17.6"}
	held.Status.Version.Desired.Version = "4.17.6"
	held.Status.Conditions = []metav1.Condition{
		cond(v1alpha1.ConditionScheduled, metav1.ConditionTrue, "Scheduled", ""),
		cond(v1alpha1.ConditionDelivered, metav1.ConditionTrue, "Applied", ""),
		cond(v1alpha1.ConditionAvailable, metav1.ConditionTrue, "AsExpected", ""),
		cond(v1alpha1.ConditionUpgradeBlocked, metav1.ConditionTrue, v1alpha1.ReasonOperatorIncompatible,
			"the upgrade from OpenShift 4.17 to 4.18 is held: installed operators do not support OpenShift 4.18: operators/old-db.v1 (olm.maxOpenShiftVersion 4.17)"),
	}

	catalogs := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "catalogs"}}
	catalogs.Status.HostingCluster = "cluster-1"
	catalogs.Status.Conditions = []metav1.Condition{
		cond(v1alpha1.ConditionScheduled, metav1.ConditionTrue, "Scheduled", ""),
		cond(v1alpha1.ConditionDelivered, metav1.ConditionTrue, "Applied", ""),
		cond(v1alpha1.ConditionAvailable, metav1.ConditionTrue, "AsExpected", ""),
		cond(v1alpha1.ConditionCatalogsReady, metav1.ConditionFalse, v1alpha1.ReasonCatalogsNotReady,
			"1 of 4 catalogs in openshift-marketplace do not serve: redhat-marketplace (TRANSIENT_FAILURE)"),
	}

	for _, tc := range []struct {
		hcd                          *v1alpha1.HostedClusterDeployment
		phase, version, conds, issue string
	}{
		{upgrading, "Upgrading", "4.18.5 → 4.18.6", "Scheduled Delivered Available Progressing Imported", ""},
		{pending, "Pending", "", "!Scheduled !Imported", "Scheduled HostingClusterNotFound: spec.hostingCluster names ManagedCluster mgmt-east, which does not exist"},
		{deleting, "Orphaning", "", "-", ""},
		{held, "Available", "4.17.6", "Scheduled Delivered Available UpgradeBlocked",
			"UpgradeBlocked OperatorIncompatible: the upgrade from OpenShift 4.17 to 4.18 is held: installed operators do not support OpenShift 4.18: operators/old-db.v1 (olm.maxOpenShiftVersion 4.17)"},
		{catalogs, "Available", "", "Scheduled Delivered Available !CatalogsReady",
			"CatalogsReady CatalogsNotReady: 1 of 4 catalogs in openshift-marketplace do not serve: redhat-marketplace (TRANSIENT_FAILURE)"},
	} {
		d := DeploymentOf(tc.hcd)
		if d.Phase != tc.phase || d.Version != tc.version || conditionSummary(d.Conditions) != tc.conds || d.Problem != tc.issue {
			t.Errorf("%s: phase %q version %q conditions %q problem %q; want %q %q %q %q", tc.hcd.Name,
				d.Phase, d.Version, conditionSummary(d.Conditions), d.Problem, tc.phase, tc.version, tc.conds, tc.issue)
		}
	}
}

func TestRender(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 30, 5, 0, time.UTC)
	s := Snapshot{
		Hosts: []Host{
			{Name: "cluster-1", Available: "True", AddOn: "Available", Operator: "Installed", CAPI: "Private", Hosted: "1", Capacity: 9, FreeScore: "78",
				CapacityBasis: "min(maxHostedClusters 80, 3 nodes: cpu 48, memory 192Gi; per hosted control plane cpu 5, memory 18Gi (HostingConfig) = 9) = 9", Platforms: "Agent,KubeVirt,None", Versions: "4.19,4.18"},
			{Name: "cluster-2", Available: "True", AddOn: "-", Operator: "-", Hosted: "-", FreeScore: "-"},
		},
		Deployments: []Deployment{{Namespace: "hcp-demo", Name: "demo-agent", Host: "cluster-1", Phase: "Available", Version: "4.18.5",
			ManagedCluster: "demo-agent", Problem: "Degraded UnavailableReplicas: " + strings.Repeat("x", 300),
			Conditions: []Condition{{Type: v1alpha1.ConditionScheduled, Status: metav1.ConditionTrue, Good: true}}}},
	}
	for _, tc := range []struct {
		name string
		s    Snapshot
	}{
		{"status", s},
		{"status-empty", Snapshot{}},
		{"status-extensions", Snapshot{Deployments: s.Deployments, Extensions: []Extension{
			{Namespace: "hcp-demo", Name: "demo-audit-forwarder", Revision: 3, Strategy: "RollingUpgrade (maxUnavailable 1)", Selected: 2, Updated: 1, Available: 1, Failed: 1,
				Problem: "ProbeFailure: hosted cluster demo-agent: phase operator: Deployment.apps audit-forwarder: condition Available=True, is False"},
			{Namespace: "team-b", Name: "logging", Revision: 1, Strategy: "Instant", Selected: 0}}}},
		{"status-unmanaged", Snapshot{Hosts: s.Hosts, Unmanaged: []Unmanaged{
			{Cluster: "cluster-1", Namespace: "clusters", Name: "made-by-hcp", Release: "quay.io/openshift-release-dev/ocp-release:4.18.5-multi", Platform: "Agent", InfraID: "made-by-hcp-x7k2p", Available: "True"},
			{Cluster: "cluster-2", Namespace: "legacy", Name: "old", Available: "Unknown"}}}},
		// A tenant: one namespace, no management clusters.
		{"status-tenant", Snapshot{Namespace: "hcp-demo", Deployments: s.Deployments,
			HostsHidden: (&PermissionError{Verb: "list", Resource: "managedclusters.cluster.open-cluster-management.io"}).Error()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := Render(&b, "hcp-fleet", tc.s, now); err != nil {
				t.Fatal(err)
			}
			golden.Compare(t, tc.name, b.String())
			for _, line := range strings.Split(b.String(), "\n") {
				if n := len([]rune(line)); n > 200 {
					t.Errorf("line of %d characters (problems are truncated): %q", n, line)
				}
			}
		})
	}
}
