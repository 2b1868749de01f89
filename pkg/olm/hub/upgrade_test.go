package hub

import (
	"strings"
	"testing"
	"time"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

func TestDecide(t *testing.T) {
	const (
		r4185 = "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"
		r4186 = "quay.io/openshift-release-dev/ocp-release:4.18.6-multi"
		r4190 = "quay.io/openshift-release-dev/ocp-release:4.19.0-multi"
	)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	fresh := &olm.UpgradeReport{ObservedAt: now.Add(-time.Minute)}
	olmBlocks := &Upgradeable{Status: "False", Reason: olm.IncompatibleOperatorsInstalled, Message: "Cluster operator operator-lifecycle-manager should not be upgraded"}
	ackNeeded := &Upgradeable{Status: "False", Reason: "AdminAckRequired", Message: "Kubernetes 1.32 removes APIs"}
	old := olm.Limit{Namespace: "operators", Name: "old-db.v1", MaxOpenShiftVersion: "4.18"}
	newer := olm.Limit{Namespace: "operators", Name: "newer.v1", MaxOpenShiftVersion: "4.19"}
	minor := Upgrade{Delivered: r4185, DeliveredMinor: "4.18", Target: r4190, TargetMinor: "4.19", Reported: true, Limits: []olm.Limit{old, newer},
		Report: fresh, Now: now, Waiting: now.Add(-time.Hour)}
	with := func(mutate func(*Upgrade)) Upgrade { u := minor; mutate(&u); return u }
	guestSays := func(c *Upgradeable) *olm.UpgradeReport { r := *fresh; r.ClusterVersion = c; return &r }
	for name, tc := range map[string]struct {
		u           Upgrade
		hold, force bool
		blocking    int
		reason      string
		message     string
	}{
		"held by the operator that does not support 4.19": {minor, true, false, 1, v1alpha1.ReasonOperatorIncompatible,
			"installed operators do not support OpenShift 4.19: operators/old-db.v1 (olm.maxOpenShiftVersion 4.18); upgrade or remove them, or ask the fleet admin to allow this release in the TenantPolicy's spec.upgradeOverrides"},
		"a z-stream is never held":  {with(func(u *Upgrade) { u.Target, u.TargetMinor = r4186, "4.18" }), false, false, 0, v1alpha1.ReasonAsExpected, "only minor upgrades are"},
		"a z-stream without report": {with(func(u *Upgrade) { u.Target, u.TargetMinor, u.Report = r4186, "4.18", nil }), false, false, 0, v1alpha1.ReasonAsExpected, "only minor upgrades are"},
		"the first delivery":        {with(func(u *Upgrade) { u.Delivered, u.Report = "", nil }), false, false, 0, v1alpha1.ReasonAsExpected, "no release upgrade pending"},
		"no change":                 {with(func(u *Upgrade) { u.Target = r4185 }), false, false, 0, v1alpha1.ReasonAsExpected, "no release upgrade pending"},
		"unknown target version":    {with(func(u *Upgrade) { u.TargetMinor = "" }), true, false, 0, v1alpha1.ReasonReleaseVersionUnknown, "the OpenShift version of " + r4190 + " is not known; publish a ClusterImageSet"},
		"unknown delivered version": {with(func(u *Upgrade) { u.DeliveredMinor = "" }), true, false, 0, v1alpha1.ReasonReleaseVersionUnknown, "version of " + r4185},
		"unknown version, allowed":  {with(func(u *Upgrade) { u.TargetMinor, u.Allowed = "", r4190 }), true, false, 0, v1alpha1.ReasonReleaseVersionUnknown, "is not known"},
		"no report yet": {with(func(u *Upgrade) { u.Report, u.Waiting = nil, now.Add(-time.Minute) }), true, false, 0, v1alpha1.ReasonUpgradeReportPending,
			"no report from the agent of the hosted cluster's operators and ClusterVersion yet; waiting for it (up to 5m0s)"},
		"limits without report": {with(func(u *Upgrade) { u.Reported, u.Waiting = false, now }), true, false, 0, v1alpha1.ReasonUpgradeReportPending, "waiting for it"},
		"no report past the bound": {with(func(u *Upgrade) { u.Report = nil }), true, false, 0, v1alpha1.ReasonUpgradeReportMissing,
			"no report from the agent of the hosted cluster's operators and ClusterVersion arrived in the 5m0s since 2026-01-01T11:00:00Z"},
		"unreadable report": {with(func(u *Upgrade) { u.Report, u.ReportProblem = nil, "not JSON" }), true, false, 0, v1alpha1.ReasonUpgradeReportMissing, "no readable report from the agent (not JSON)"},
		"stale report": {with(func(u *Upgrade) { u.Report = &olm.UpgradeReport{ObservedAt: now.Add(-10 * time.Minute)} }), true, false, 0, v1alpha1.ReasonUpgradeReportMissing,
			"observed at 2026-01-01T11:50:00Z, 10m0s ago, older than the bound of 5m0s"},
		"stale report, allowed": {with(func(u *Upgrade) {
			u.Report, u.Allowed = &olm.UpgradeReport{ObservedAt: now.Add(-10 * time.Minute)}, r4190
		}), true, false, 0, v1alpha1.ReasonUpgradeReportMissing, "older than the bound"},
		"the operator was removed": {with(func(u *Upgrade) { u.Limits = []olm.Limit{newer} }), false, false, 0, v1alpha1.ReasonAsExpected, "no installed operator limits"},
		"OLM blocks, limits do not": {with(func(u *Upgrade) { u.Limits, u.Report = nil, guestSays(olmBlocks) }), true, false, 0, v1alpha1.ReasonOperatorIncompatible,
			"should not be upgraded (IncompatibleOperatorsInstalled)"},
		"an invalid limit holds too": {with(func(u *Upgrade) { u.Limits = []olm.Limit{{Namespace: "x", Name: "y", Invalid: "empty"}} }), true, false, 1, v1alpha1.ReasonOperatorIncompatible, "x/y (invalid olm.maxOpenShiftVersion: empty)"},
		"HostedCluster not upgradeable": {with(func(u *Upgrade) { u.Limits, u.HostedCluster = nil, ackNeeded }), true, false, 0, v1alpha1.ReasonClusterVersionNotUpgradeable,
			"the HostedCluster's ClusterVersionUpgradeable is False (AdminAckRequired: Kubernetes 1.32 removes APIs)"},
		"guest ClusterVersion not upgradeable": {with(func(u *Upgrade) { u.Limits, u.Report = nil, guestSays(ackNeeded) }), true, false, 0, v1alpha1.ReasonClusterVersionNotUpgradeable,
			"the guest ClusterVersion's Upgradeable is False (AdminAckRequired"},
		"no ClusterVersion":        {with(func(u *Upgrade) { u.Report = &olm.UpgradeReport{ObservedAt: now, NoClusterVersion: true} }), true, false, 0, v1alpha1.ReasonClusterVersionNotUpgradeable, "serves no ClusterVersion"},
		"allowed for this release": {with(func(u *Upgrade) { u.Allowed = r4190 }), false, false, 1, ReasonUpgradeAllowed, "goes ahead as allowed"},
		"allowed while OLM blocks": {with(func(u *Upgrade) { u.Allowed, u.HostedCluster = r4190, olmBlocks }), false, true, 1, ReasonUpgradeAllowed, "goes ahead as allowed"},
		"allowed, another reason": {with(func(u *Upgrade) { u.Allowed, u.HostedCluster = r4190, ackNeeded }), true, false, 0, v1alpha1.ReasonClusterVersionNotUpgradeable,
			"lifts only the block by installed operators (OperatorIncompatible), not this one"},
		"allowed, guest says another reason": {with(func(u *Upgrade) { u.Allowed, u.HostedCluster, u.Report = r4190, olmBlocks, guestSays(ackNeeded) }), true, false, 0,
			v1alpha1.ReasonClusterVersionNotUpgradeable, "not this one"},
		"allowed and delivered": {with(func(u *Upgrade) {
			u.Allowed, u.Delivered, u.HostedCluster = r4190, r4190, olmBlocks
		}), false, true, 0, ReasonUpgradeAllowed, "is delivered as allowed by the TenantPolicy's spec.upgradeOverrides"},
		"delivered, another reason":   {with(func(u *Upgrade) { u.Allowed, u.Delivered, u.HostedCluster = r4190, r4190, ackNeeded }), false, false, 0, ReasonUpgradeAllowed, "which the override does not cover"},
		"allowed for another release": {with(func(u *Upgrade) { u.Allowed = r4190 + "-other" }), true, false, 1, v1alpha1.ReasonOperatorIncompatible, "held"},
		"two minors at once":          {with(func(u *Upgrade) { u.TargetMinor = "4.20" }), true, false, 2, v1alpha1.ReasonOperatorIncompatible, "operators/old-db.v1"},
	} {
		t.Run(name, func(t *testing.T) {
			d := Decide(tc.u)
			if d.Hold != tc.hold || d.Force != tc.force || len(d.Blocking) != tc.blocking || d.Status != tc.hold || d.Reason != tc.reason {
				t.Errorf("hold %v force %v blocking %v status %v reason %s; want hold %v force %v %d blocking, %s", d.Hold, d.Force, d.Blocking, d.Status, d.Reason, tc.hold, tc.force, tc.blocking, tc.reason)
			}
			if !strings.Contains(d.Message, tc.message) {
				t.Errorf("message %q does not contain %q", d.Message, tc.message)
			}
		})
	}
	// Pending decides again when the bound passes.
	if d := Decide(with(func(u *Upgrade) { u.Report, u.Waiting = nil, now.Add(-time.Minute) })); d.Recheck != 4*time.Minute {
		t.Errorf("pending rechecks after %s, want 4m", d.Recheck)
	}
	// A shorter bound (Upgrade.ReportMaxAge) makes the same report stale
	// and shortens the wait for a missing one.
	if d := Decide(with(func(u *Upgrade) { u.ReportMaxAge = 45 * time.Second })); d.Reason != v1alpha1.ReasonUpgradeReportMissing ||
		!strings.Contains(d.Message, "older than the bound of 45s") {
		t.Errorf("a 1m-old report with a 45s bound: %s %q, want %s, older than the bound", d.Reason, d.Message, v1alpha1.ReasonUpgradeReportMissing)
	}
	if d := Decide(with(func(u *Upgrade) { u.Report, u.Waiting, u.ReportMaxAge = nil, now.Add(-30*time.Second), 45*time.Second })); d.Recheck != 15*time.Second {
		t.Errorf("pending with a 45s bound rechecks after %s, want 15s", d.Recheck)
	}
}
