package hub

import (
	"fmt"
	"strings"
	"time"

	"github.com/blang/semver/v4"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// DefaultReportMaxAge bounds the age of the agent's upgrade report the gate
// decides on when Upgrade.ReportMaxAge is 0: an older one no longer speaks
// for the guest (the agent refreshes it every minute,
// operatorlimits.DefaultReportRefresh, so five minutes is several missed
// passes).
const DefaultReportMaxAge = 5 * time.Minute

// Upgradeable is an Upgradeable-style condition as reported.
type Upgradeable = olm.Upgradeable

// Upgrade is a HostedCluster's release change as the hub sees it.
type Upgrade struct {
	// Delivered is the release image in the ManifestWork now ("" before the
	// first delivery) and DeliveredMinor its OpenShift minor ("" unknown).
	Delivered, DeliveredMinor string
	// Target is spec.hostedCluster.spec.release.image and TargetMinor its
	// minor ("" unknown); TargetSource says where TargetMinor came from
	// when not from the image's tag (a ClusterImageSet), for messages.
	Target, TargetMinor, TargetSource string
	// Limits are the guest's operator limits the agent reported; Reported
	// is false while it has reported none.
	Limits   []olm.Limit
	Reported bool
	// Report is the agent's upgrade report (nil: none readable), and
	// ReportProblem why none is readable when one is there.
	Report        *olm.UpgradeReport
	ReportProblem string
	// Allowed is the release image the fleet admin lets the
	// HostedClusterDeployment go to past OLM's block (its TenantPolicy's
	// spec.upgradeOverrides), or "".
	Allowed string
	// HostedCluster is the HostedCluster's ClusterVersionUpgradeable
	// condition (nil: not reported).
	HostedCluster *Upgradeable
	// Now is the decision's time and Waiting since when the hub has had no
	// fresh report (the ManifestWork's creation, at worst).
	Now, Waiting time.Time
	// ReportMaxAge bounds the report's age (DefaultReportMaxAge when 0).
	ReportMaxAge time.Duration
}

// overridePlace says where an admin allows a release past the hold, for
// messages.
const overridePlace = "the TenantPolicy's spec.upgradeOverrides"

// Decision is what the hub does about an Upgrade.
type Decision struct {
	// Hold keeps Delivered in the ManifestWork.
	Hold bool
	// Force sets HyperShift's force-upgrade-to to Target.
	Force bool
	// Blocking are the limits that forbid TargetMinor.
	Blocking []olm.Limit
	// Condition is UpgradeBlocked's status, reason and message.
	Status          bool
	Reason, Message string
	// Recheck is when to decide again although nothing changed (the
	// report's bound passes); 0 never.
	Recheck time.Duration
}

// imageSetRecheck is how often a release of unknown version is looked up
// again: the delivery does not watch ClusterImageSets.
const imageSetRecheck = 30 * time.Second

// ReasonUpgradeAllowed: the admin released the hold for this release.
const ReasonUpgradeAllowed = "UpgradeAllowed"

// Decide gates a delivered HostedCluster's minor upgrade on everything the
// HyperShift operator reads before it would refuse it (and with it freeze
// every other change to the HostedCluster), so the hub holds the old release
// in the ManifestWork instead:
//
//   - the release's minor must be known (tag, ClusterImageSet, or the
//     version the hosted cluster reports); a digest nobody names is held;
//   - a fresh agent report must exist (fail closed): none, or one older
//     than u.ReportMaxAge, holds, first as pending, after the bound as
//     missing;
//   - the HostedCluster's ClusterVersionUpgradeable and the guest
//     ClusterVersion's Upgradeable must not be False for any reason but
//     OLM's (ClusterVersionNotUpgradeable);
//   - no reported operator may forbid the target minor, and OLM's own
//     IncompatibleOperatorsInstalled holds even when the limits say
//     nothing (OperatorIncompatible).
//
// Z-streams (and downgrades) and the first delivery are never held, as
// HyperShift never refuses them. An override (Allowed) naming Target exactly
// lifts OLM's block alone, and forces HyperShift past its own check
// (force-upgrade-to) only while OLM's reason is the one it reports.
func Decide(u Upgrade) Decision {
	allowed := u.Allowed != "" && u.Allowed == u.Target
	hcReason := ""
	if u.HostedCluster != nil && u.HostedCluster.Status == "False" {
		hcReason = u.HostedCluster.Reason
	}
	force := allowed && hcReason == olm.IncompatibleOperatorsInstalled
	switch {
	case (u.Delivered == "" || u.Delivered == u.Target) && allowed:
		if !force && hcReason != "" {
			return Decision{Reason: ReasonUpgradeAllowed, Message: fmt.Sprintf(
				"%s is allowed by %s, but the hosted cluster is not upgradeable for a reason other than its operators (%s), which the override does not cover",
				u.Target, overridePlace, hcReason)}
		}
		return Decision{Force: force, Reason: ReasonUpgradeAllowed, Message: fmt.Sprintf(
			"%s is delivered as allowed by %s (with HyperShift's %s while only OLM blocks it)", u.Target, overridePlace, olm.AnnotationForceUpgradeTo)}
	case u.Delivered == "" || u.Delivered == u.Target:
		return Decision{Reason: v1alpha1.ReasonAsExpected, Message: "no release upgrade pending"}
	case u.DeliveredMinor == "" || u.TargetMinor == "":
		unknown := u.Target
		if u.DeliveredMinor == "" {
			unknown = u.Delivered
		}
		return held(v1alpha1.ReasonReleaseVersionUnknown, fmt.Sprintf(
			"the change from %s to %s is held: the OpenShift version of %s is not known; publish a ClusterImageSet "+
				"(hive.openshift.io/v1) whose spec.releaseImage is exactly that image and whose name (img<version>-…) or label %s carries its version",
			u.Delivered, u.Target, unknown, LabelClusterImageSetVersion), imageSetRecheck)
	case !MinorAbove(u.TargetMinor, u.DeliveredMinor):
		return Decision{Force: force, Reason: v1alpha1.ReasonAsExpected, Message: fmt.Sprintf(
			"the release change within or below OpenShift %s is not held (only minor upgrades are)", u.DeliveredMinor)}
	}
	if d, ok := reportHold(u); ok {
		return d
	}
	if d, ok := notUpgradeableHold(u, allowed); ok {
		return d
	}
	var blocking []olm.Limit
	for _, l := range u.Limits {
		if l.Blocks(u.TargetMinor) {
			blocking = append(blocking, l)
		}
	}
	names := make([]string, len(blocking))
	for i, l := range blocking {
		names[i] = l.String()
	}
	if len(blocking) == 0 {
		// OLM's own word, when the limits the agent read say nothing
		// (a CSV installed after the agent's pass, say).
		olmSays := olmMessage(u)
		if olmSays == "" {
			return Decision{Force: force, Reason: v1alpha1.ReasonAsExpected, Message: fmt.Sprintf(
				"no installed operator limits the upgrade to OpenShift %s, and the hosted cluster reports it upgradeable", u.TargetMinor)}
		}
		names = []string{olmSays}
	}
	if allowed {
		return Decision{Force: force, Blocking: blocking, Reason: ReasonUpgradeAllowed, Message: fmt.Sprintf(
			"the upgrade to %s goes ahead as allowed by %s although installed operators do not support OpenShift %s: %s",
			u.Target, overridePlace, u.TargetMinor, strings.Join(names, ", "))}
	}
	d := held(v1alpha1.ReasonOperatorIncompatible, fmt.Sprintf(
		"the upgrade from OpenShift %s to %s (%s) is held, the hosted cluster stays on %s: installed operators do not support OpenShift %s: %s; "+
			"upgrade or remove them, or ask the fleet admin to allow this release in %s",
		u.DeliveredMinor, u.TargetMinor, u.Target, u.Delivered, u.TargetMinor, strings.Join(names, ", "), overridePlace), 0)
	d.Blocking = blocking
	return d
}

func held(reason, message string, recheck time.Duration) Decision {
	return Decision{Hold: true, Status: true, Reason: reason, Message: message, Recheck: recheck}
}

// reportHold holds while no fresh report exists. A report older than the
// bound is missing at once (it went stale a bound ago); without one, the
// hub waits a bound from Waiting (pending, and decides again then) before
// it says the report never arrived.
func reportHold(u Upgrade) (Decision, bool) {
	bound := u.ReportMaxAge
	if bound <= 0 {
		bound = DefaultReportMaxAge
	}
	prefix := fmt.Sprintf("the upgrade from OpenShift %s to %s (%s) is held, the hosted cluster stays on %s: ",
		u.DeliveredMinor, u.TargetMinor, u.Target, u.Delivered)
	if u.Report != nil && u.Reported {
		age := u.Now.Sub(u.Report.ObservedAt)
		if age <= bound {
			return Decision{}, false
		}
		return held(v1alpha1.ReasonUpgradeReportMissing, prefix+fmt.Sprintf(
			"the agent's last report of the hosted cluster was observed at %s, %s ago, older than the bound of %s; "+
				"is the agent running, and can it reach the hosted cluster's API server?",
			u.Report.ObservedAt.UTC().Format(time.RFC3339), age.Round(time.Second), bound), 0), true
	}
	what := "no report from the agent of the hosted cluster's operators and ClusterVersion"
	if u.ReportProblem != "" {
		what = "no readable report from the agent (" + u.ReportProblem + ")"
	}
	waited := u.Now.Sub(u.Waiting)
	if waited < bound {
		return held(v1alpha1.ReasonUpgradeReportPending, prefix+fmt.Sprintf(
			"%s yet; waiting for it (up to %s)", what, bound), bound-waited), true
	}
	return held(v1alpha1.ReasonUpgradeReportMissing, prefix+fmt.Sprintf(
		"%s arrived in the %s since %s; is the agent running, and can it reach the hosted cluster's API server?",
		what, bound, u.Waiting.UTC().Format(time.RFC3339)), 0), true
}

// notUpgradeableHold holds while the hosted cluster says it may not
// upgrade for a reason other than OLM's: neither the HyperShift operator
// nor the cluster-version operator would take it, and no override covers
// it. The guest ClusterVersion's word counts as soon as the agent saw it
// (the HostedCluster's condition follows it later).
func notUpgradeableHold(u Upgrade, allowed bool) (Decision, bool) {
	var says []string
	for _, c := range []struct {
		where string
		u     *Upgradeable
	}{{"the HostedCluster's ClusterVersionUpgradeable", u.HostedCluster}, {"the guest ClusterVersion's Upgradeable", u.Report.ClusterVersion}} {
		if c.u == nil || c.u.Status != "False" || c.u.Reason == olm.IncompatibleOperatorsInstalled {
			continue
		}
		says = append(says, fmt.Sprintf("%s is False (%s: %s)", c.where, orUnset(c.u.Reason), c.u.Message))
	}
	if u.Report.NoClusterVersion {
		says = append(says, "the hosted cluster serves no ClusterVersion, so its cluster-version operator has not said it may upgrade")
	}
	if len(says) == 0 {
		return Decision{}, false
	}
	msg := fmt.Sprintf("the upgrade from OpenShift %s to %s (%s) is held, the hosted cluster stays on %s: %s",
		u.DeliveredMinor, u.TargetMinor, u.Target, u.Delivered, strings.Join(says, "; "))
	if allowed {
		msg += "; the release is allowed in " + overridePlace + ", which lifts only the block by installed operators (OperatorIncompatible), not this one"
	}
	return held(v1alpha1.ReasonClusterVersionNotUpgradeable, msg, 0), true
}

// olmMessage is OLM's block as the hosted cluster reports it, or "".
func olmMessage(u Upgrade) string {
	for _, c := range []*Upgradeable{u.Report.ClusterVersion, u.HostedCluster} {
		if c != nil && c.Status == "False" && c.Reason == olm.IncompatibleOperatorsInstalled {
			return fmt.Sprintf("%s (%s)", c.Message, c.Reason)
		}
	}
	return ""
}

func orUnset(s string) string {
	if s == "" {
		return "no reason"
	}
	return s
}

// MinorAbove reports whether minor a is above minor b ("4.19" > "4.18").
func MinorAbove(a, b string) bool {
	va, errA := semver.ParseTolerant(a)
	vb, errB := semver.ParseTolerant(b)
	return errA == nil && errB == nil && va.GT(vb)
}
