package hub

import (
	"fmt"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// Upgrade is a HostedCluster's release change as the hub sees it.
type Upgrade struct {
	// Delivered is the release image in the ManifestWork now ("" before the
	// first delivery) and DeliveredMinor its OpenShift minor ("" unknown).
	Delivered, DeliveredMinor string
	// Target is spec.hostedCluster.spec.release.image and TargetMinor its
	// minor ("" unknown).
	Target, TargetMinor string
	// Limits are the guest's operator limits the agent reported; Reported
	// is false while it has reported none.
	Limits   []olm.Limit
	Reported bool
	// Allowed is the release image the fleet admin lets the
	// HostedClusterDeployment go to past the hold (its TenantPolicy's
	// spec.upgradeOverrides), or "".
	Allowed string
	// NotUpgradeableReason is the reason of the HostedCluster's
	// ClusterVersionUpgradeable condition while it is False ("" otherwise,
	// or before it is reported).
	NotUpgradeableReason string
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
}

// ReasonUpgradeAllowed: the admin released the hold for this release.
const ReasonUpgradeAllowed = "UpgradeAllowed"

// Decide applies OLM's rule before the hub moves a delivered HostedCluster
// to a new minor: when operators installed in the hosted cluster do not
// support the target minor (by the agent's report), the old release stays
// in the ManifestWork, so the HyperShift operator never sees an upgrade it
// would refuse — and with it freeze every other change to the
// HostedCluster. Z-streams and the first delivery are never held; an
// unknown minor or a missing report holds nothing (HyperShift's own check
// still applies). An override (Allowed) naming Target exactly releases the
// hold; it forces HyperShift past its own check (force-upgrade-to) only
// while what keeps the hosted cluster from upgrading is OLM's block alone
// (ClusterVersionUpgradeable=False with olm.IncompatibleOperatorsInstalled),
// never past the cluster-version operator's other reasons.
func Decide(u Upgrade) Decision {
	allowed := u.Allowed != "" && u.Allowed == u.Target
	force := allowed && u.NotUpgradeableReason == olm.IncompatibleOperatorsInstalled
	switch {
	case (u.Delivered == "" || u.Delivered == u.Target) && allowed:
		if !force && u.NotUpgradeableReason != "" {
			return Decision{Reason: ReasonUpgradeAllowed, Message: fmt.Sprintf(
				"%s is allowed by %s, but the hosted cluster is not upgradeable for a reason other than its operators (%s), which the override does not cover",
				u.Target, overridePlace, u.NotUpgradeableReason)}
		}
		return Decision{Force: force, Reason: ReasonUpgradeAllowed, Message: fmt.Sprintf(
			"%s is delivered as allowed by %s (with HyperShift's %s while only OLM blocks it)", u.Target, overridePlace, olm.AnnotationForceUpgradeTo)}
	case u.Delivered == "" || u.Delivered == u.Target:
		return Decision{Reason: v1alpha1.ReasonAsExpected, Message: "no release upgrade pending"}
	case u.DeliveredMinor == "" || u.TargetMinor == "":
		return Decision{Force: force, Reason: v1alpha1.ReasonAsExpected, Message: fmt.Sprintf(
			"the upgrade to %s is not checked against the hosted cluster's operators: the OpenShift minor of %s or %s is not known",
			u.Target, u.Delivered, u.Target)}
	case !MinorAbove(u.TargetMinor, u.DeliveredMinor):
		return Decision{Force: force, Reason: v1alpha1.ReasonAsExpected, Message: fmt.Sprintf(
			"the release change within or below OpenShift %s is not held (only minor upgrades are)", u.DeliveredMinor)}
	case !u.Reported:
		return Decision{Force: force, Reason: v1alpha1.ReasonAsExpected, Message: fmt.Sprintf(
			"the upgrade to OpenShift %s is not checked: the hosted cluster's operators are not reported (yet); HyperShift's own check applies", u.TargetMinor)}
	}
	var blocking []olm.Limit
	for _, l := range u.Limits {
		if l.Blocks(u.TargetMinor) {
			blocking = append(blocking, l)
		}
	}
	if len(blocking) == 0 {
		return Decision{Force: force, Reason: v1alpha1.ReasonAsExpected, Message: fmt.Sprintf(
			"no installed operator limits the upgrade to OpenShift %s", u.TargetMinor)}
	}
	names := make([]string, len(blocking))
	for i, l := range blocking {
		names[i] = l.String()
	}
	if allowed {
		return Decision{Force: force, Blocking: blocking, Reason: ReasonUpgradeAllowed, Message: fmt.Sprintf(
			"the upgrade to %s goes ahead as allowed by %s although installed operators do not support OpenShift %s: %s",
			u.Target, overridePlace, u.TargetMinor, strings.Join(names, ", "))}
	}
	return Decision{Hold: true, Blocking: blocking, Status: true, Reason: v1alpha1.ReasonOperatorIncompatible, Message: fmt.Sprintf(
		"the upgrade from OpenShift %s to %s (%s) is held, the hosted cluster stays on %s: installed operators do not support OpenShift %s: %s; "+
			"upgrade or remove them, or ask the fleet admin to allow this release in %s",
		u.DeliveredMinor, u.TargetMinor, u.Target, u.Delivered, u.TargetMinor, strings.Join(names, ", "), overridePlace)}
}

// MinorAbove reports whether minor a is above minor b ("4.19" > "4.18").
func MinorAbove(a, b string) bool {
	va, errA := semver.ParseTolerant(a)
	vb, errB := semver.ParseTolerant(b)
	return errA == nil && errB == nil && va.GT(vb)
}
