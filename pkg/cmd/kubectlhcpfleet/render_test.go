package kubectlhcpfleet

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/golden"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

func candidate(name string, load, capacity int32) scheduling.Candidate {
	return scheduling.Candidate{Name: name, ClusterAvailable: true, AddOnAvailable: true, OperatorInstalled: true,
		SupportedVersions: []string{"4.19", "4.18", "4.17"}, Platforms: []string{"Agent", "KubeVirt", "None"},
		Load: load, Capacity: capacity}
}

func TestRenderExplanation(t *testing.T) {
	req := scheduling.Request{Name: "web", HostingNamespace: "clusters", NodePools: []string{"web-workers"}, ReleaseMinor: "4.18", Platform: "Agent"}
	down := candidate("mgmt-down", 0, 80)
	down.AddOnAvailable, down.OperatorInstalled = false, false
	old := candidate("mgmt-old", 3, 80)
	old.SupportedVersions = []string{"4.15", "4.16"}
	fits := []scheduling.Candidate{candidate("mgmt-a", 10, 80), candidate("mgmt-b", 4, 20), down, old}
	explain := func(cands []scheduling.Candidate, s scheduling.Strategy) *scheduling.Explanation {
		x := scheduling.Explain(req, cands, s)
		return &x
	}
	scheduled := &metav1.Condition{Type: v1alpha1.ConditionScheduled, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonScheduled,
		Message: "scheduled onto management cluster mgmt-a (strategy Spread; it hosted 10 of 80 before)"}
	full := candidate("mgmt-full", 20, 20)
	none := explain([]scheduling.Candidate{full, down, old}, scheduling.StrategySpread)
	for _, tc := range []struct {
		name string
		x    *Explanation
	}{
		{"explain-bound-spread", &Explanation{Namespace: "team-a", Name: "web", Placement: "hosts", BoundTo: "mgmt-a", Scheduled: scheduled,
			Scheduling: explain(fits, scheduling.StrategySpread)}},
		{"explain-pending-binpack", &Explanation{Namespace: "team-a", Name: "web", Placement: "hosts",
			Scheduling: explain(fits, scheduling.StrategyBinPack)}},
		{"explain-placement-untolerated", &Explanation{Namespace: "team-a", Name: "web", Placement: "hosts",
			Untolerated: scheduling.AvailabilityTaints, Scheduling: explain(fits, scheduling.StrategySpread)}},
		{"explain-none-fits", &Explanation{Namespace: "team-a", Name: "web", Placement: "hosts",
			Scheduled:  &metav1.Condition{Status: metav1.ConditionFalse, Reason: none.Decision.Reason(), Message: none.Decision.Message()},
			Scheduling: none}},
		{"explain-no-candidates", &Explanation{Namespace: "team-a", Name: "web", Pinned: "mgmt-a",
			Reason: v1alpha1.ReasonHostingClusterNotAllowed, Message: "spec.hostingCluster mgmt-a is in no ManagedClusterSet bound to namespace team-a",
			Scheduled: &metav1.Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonHostingClusterNotAllowed,
				Message: "spec.hostingCluster mgmt-a is in no ManagedClusterSet bound to namespace team-a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := RenderExplanation(&b, tc.x); err != nil {
				t.Fatal(err)
			}
			golden.Compare(t, tc.name, b.String())
		})
	}
}

func TestRenderHost(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 30, 0, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	h := &HostDetail{Name: "mgmt-a", Available: "True", ClusterSet: "default", AddOn: true,
		HostingConfig: "hcp-fleet/small (this cluster's override (ManagedClusterAddOn spec.configs))",
		Load:          3, Capacity: 5, Bound: 2, ReportedTotal: "3", ReportedForeign: "1",
		Claims: []clusterv1.ManagedClusterClaim{{Name: "hostedclusters.hostingcluster.hcpfleet.io", Value: "3"}, {Name: "platforms.hostingcluster.hcpfleet.io", Value: "Agent,None"}},
		Deployments: []fleetview.Deployment{{Namespace: "team-a", Name: "web", Phase: "Available", Version: "4.18.5", ManagedCluster: "web"},
			{Namespace: "team-b", Name: "db", Phase: "Delivering"}},
		Conditions: []metav1.Condition{
			{Type: "HyperShiftOperatorInstalled", Status: metav1.ConditionTrue, Reason: "Installed", Message: "operator 4.18 rolled out", LastTransitionTime: at(5 * time.Minute)},
			{Type: "Available", Status: metav1.ConditionTrue, Reason: "ProbeAvailable", Message: strings.Repeat("long ", 40), LastTransitionTime: at(2 * time.Hour)},
		}}
	for _, tc := range []struct {
		name string
		h    *HostDetail
	}{
		{"hosts", h},
		{"hosts-no-addon", &HostDetail{Name: "mgmt-new", Available: "Unknown", HostingConfig: "-", Capacity: 80, ReportedTotal: "-", ReportedForeign: "-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := RenderHost(&b, tc.h, now); err != nil {
				t.Fatal(err)
			}
			golden.Compare(t, tc.name, b.String())
		})
	}
}

func TestRenderRollout(t *testing.T) {
	rr := &v1alpha1.ReleaseRollout{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "to-4-18-9", Generation: 3},
		Spec: v1alpha1.ReleaseRolloutSpec{Release: v1alpha1.RolloutRelease{Image: "quay.io/openshift-release-dev/ocp-release:4.18.9-multi"},
			MaintenanceWindows: []v1alpha1.SelectedMaintenanceWindow{
				{HostedClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
					MaintenanceWindow: v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Saturday", "Sunday"}, Start: "02:00", DurationMinutes: 240, TimeZone: "Europe/Berlin"}},
				{MaintenanceWindow: v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Monday"}, Start: "09:00", DurationMinutes: 480}},
			},
			SoakSeconds: 600},
		Status: v1alpha1.ReleaseRolloutStatus{ObservedGeneration: 3, Wave: 1, Waves: 3, Selected: 4, Done: 1, Upgrading: 1, Pending: 1, Blocked: 1,
			WaveStartTime: &metav1.Time{Time: time.Date(2026, 11, 27, 2, 5, 0, 0, time.UTC)},
			Conditions: []metav1.Condition{{Type: v1alpha1.ConditionRolloutProgressing, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonRolloutInProgress,
				Message: "wave 1 of 3: 1 done, 1 upgrading, 1 pending, 1 blocked, 0 failed of 4"}},
			HostedClusters: []v1alpha1.RolloutHostedClusterStatus{
				{Name: "canary", Wave: 0, State: v1alpha1.RolloutStateDone, Reason: "Upgraded", Message: "at 4.18.9"},
				{Name: "held", Wave: 1, State: v1alpha1.RolloutStateBlocked, Reason: v1alpha1.ReasonOperatorIncompatible, Message: "held by the upgrade gate"},
				{Name: "web", Wave: 1, State: v1alpha1.RolloutStateUpgrading, Reason: "ControlPlaneUpgrading", Message: "control plane moving"},
				{Name: "zeta", Wave: 2, State: v1alpha1.RolloutStatePending, Reason: "WaitingForWave", Message: "waiting for its wave"},
			}}}
	var b strings.Builder
	if err := RenderRollout(&b, rr); err != nil {
		t.Fatal(err)
	}
	golden.Compare(t, "upgrade-status", b.String())

	// Completed: the completion time replaces the wave's start.
	rr.Status.CompletionTime = &metav1.Time{Time: time.Date(2026, 11, 28, 6, 30, 0, 0, time.UTC)}
	b.Reset()
	if err := RenderRollout(&b, rr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "completed at 2026-11-28T06:30:00Z") || strings.Contains(b.String(), "wave 1 current") {
		t.Errorf("a completed rollout shows its completion time instead of its wave's start:\n%s", b.String())
	}
}
