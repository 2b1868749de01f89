package hub

import (
	"strings"
	"testing"

	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

func TestDecide(t *testing.T) {
	const (
		r4185 = "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"
		r4186 = "quay.io/openshift-release-dev/ocp-release:4.18.6-multi"
		r4190 = "quay.io/openshift-release-dev/ocp-release:4.19.0-multi"
	)
	old := olm.Limit{Namespace: "operators", Name: "old-db.v1", MaxOpenShiftVersion: "4.18"}
	newer := olm.Limit{Namespace: "operators", Name: "newer.v1", MaxOpenShiftVersion: "4.19"}
	minor := Upgrade{Delivered: r4185, DeliveredMinor: "4.18", Target: r4190, TargetMinor: "4.19", Reported: true, Limits: []olm.Limit{old, newer}}
	with := func(mutate func(*Upgrade)) Upgrade { u := minor; mutate(&u); return u }
	for name, tc := range map[string]struct {
		u           Upgrade
		hold, force bool
		blocking    int
		message     string
	}{
		"held by the operator that does not support 4.19": {minor, true, false, 1,
			"installed operators do not support OpenShift 4.19: operators/old-db.v1 (olm.maxOpenShiftVersion 4.18); upgrade or remove them, or ask the fleet admin to allow this release in the TenantPolicy's spec.upgradeOverrides"},
		"a z-stream is never held":   {with(func(u *Upgrade) { u.Target, u.TargetMinor = r4186, "4.18" }), false, false, 0, "only minor upgrades are"},
		"the first delivery":         {with(func(u *Upgrade) { u.Delivered = "" }), false, false, 0, "no release upgrade pending"},
		"no change":                  {with(func(u *Upgrade) { u.Target = r4185 }), false, false, 0, "no release upgrade pending"},
		"unknown minor":              {with(func(u *Upgrade) { u.TargetMinor = "" }), false, false, 0, "is not known"},
		"no report yet":              {with(func(u *Upgrade) { u.Reported, u.Limits = false, nil }), false, false, 0, "not reported"},
		"the operator was removed":   {with(func(u *Upgrade) { u.Limits = []olm.Limit{newer} }), false, false, 0, "no installed operator limits"},
		"an invalid limit holds too": {with(func(u *Upgrade) { u.Limits = []olm.Limit{{Namespace: "x", Name: "y", Invalid: "empty"}} }), true, false, 1, "x/y (invalid olm.maxOpenShiftVersion: empty)"},
		"allowed for this release":   {with(func(u *Upgrade) { u.Allowed = r4190 }), false, false, 1, "goes ahead as allowed"},
		"allowed while OLM blocks":   {with(func(u *Upgrade) { u.Allowed, u.NotUpgradeableReason = r4190, olm.IncompatibleOperatorsInstalled }), false, true, 1, "goes ahead as allowed"},
		"allowed, another reason":    {with(func(u *Upgrade) { u.Allowed, u.NotUpgradeableReason = r4190, "AdminAckRequired" }), false, false, 1, "goes ahead as allowed"},
		"allowed and delivered": {with(func(u *Upgrade) {
			u.Allowed, u.Delivered, u.NotUpgradeableReason = r4190, r4190, olm.IncompatibleOperatorsInstalled
		}), false, true, 0, "is delivered as allowed by the TenantPolicy's spec.upgradeOverrides"},
		"delivered, another reason":   {with(func(u *Upgrade) { u.Allowed, u.Delivered, u.NotUpgradeableReason = r4190, r4190, "AdminAckRequired" }), false, false, 0, "which the override does not cover"},
		"allowed for another release": {with(func(u *Upgrade) { u.Allowed = r4190 + "-other" }), true, false, 1, "held"},
		"two minors at once":          {with(func(u *Upgrade) { u.TargetMinor = "4.20" }), true, false, 2, "operators/old-db.v1"},
	} {
		t.Run(name, func(t *testing.T) {
			d := Decide(tc.u)
			if d.Hold != tc.hold || d.Force != tc.force || len(d.Blocking) != tc.blocking || d.Status != tc.hold {
				t.Errorf("hold %v force %v blocking %v status %v; want hold %v force %v %d blocking", d.Hold, d.Force, d.Blocking, d.Status, tc.hold, tc.force, tc.blocking)
			}
			if !strings.Contains(d.Message, tc.message) {
				t.Errorf("message %q does not contain %q", d.Message, tc.message)
			}
		})
	}
}
