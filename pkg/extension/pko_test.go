package extension

import (
	"strings"
	"testing"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// TestTeardownFollowsCurrentPhaseOrder: a revision that swaps two phases
// tears down in the reverse of the new order, not of the first apply.
func TestTeardownFollowsCurrentPhaseOrder(t *testing.T) {
	applied := Merge(nil, ref("a", "ConfigMap", "a1"), ref("b", "ConfigMap", "b1"), ref("c", "ConfigMap", "c1"))
	// Revision 2: phases c, a, b; phase c's object moved into b.
	applied = Merge(applied, ObjectRef{Phase: "b", Version: "v1", Kind: "ConfigMap", Name: "c1"})
	phases := []v1alpha1.ExtensionPhase{{Name: "c"}, {Name: "a"}, {Name: "b"}}
	ordered := InPhaseOrder(append(applied, ref("gone", "ConfigMap", "g1")), phases)
	var order []string
	for _, group := range TeardownPhases(Teardown(ordered)) {
		var names []string
		for _, r := range group {
			names = append(names, r.Name)
		}
		order = append(order, group[0].Phase+":"+strings.Join(names, ","))
	}
	if got := strings.Join(order, " "); got != "gone:g1 b:c1,b1 a:a1" {
		t.Fatalf("teardown %s, want the dropped phase first, then b (last now), then a", got)
	}
	if again := InPhaseOrder(ordered, phases); !sameOrder(again, ordered) {
		t.Fatalf("not stable: %v then %v", ordered, again)
	}
}

func sameOrder(a, b []ObjectRef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPausedRollout: paused keeps the current revision where it is and
// delivers nothing new, not even to a hosted cluster without any.
func TestPausedRollout(t *testing.T) {
	targets := []Target{
		{Name: "has-current", Ready: true, Delivered: 3, Observed: 3, State: v1alpha1.ExtensionStateAvailable},
		{Name: "has-older", Ready: true, Delivered: 2, Observed: 2, State: v1alpha1.ExtensionStateAvailable},
		{Name: "new", Ready: true},
	}
	for _, strategy := range []v1alpha1.ExtensionRolloutStrategy{{Type: v1alpha1.ExtensionStrategyInstant, Paused: true},
		{Type: v1alpha1.ExtensionStrategyRollingUpgrade, Paused: true, RollingUpgrade: &v1alpha1.RollingUpgradeStrategy{}}} {
		got := Rollout(strategy, 3, targets)
		if len(got) != 1 || !got["has-current"] {
			t.Fatalf("%s paused delivers %v, want only has-current", strategy.Type, got)
		}
	}
	if got := Rollout(v1alpha1.ExtensionRolloutStrategy{Type: v1alpha1.ExtensionStrategyInstant}, 3, targets); len(got) != 3 {
		t.Fatalf("unpaused delivers %v, want all three", got)
	}
}

// TestCollisionProtectionValidation: IfNoController only where adoption
// cannot reach HyperShift's objects; unknown modes refused.
func TestCollisionProtectionValidation(t *testing.T) {
	cm := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`)
	with := func(mode v1alpha1.CollisionProtection) v1alpha1.ExtensionObject {
		o := cm
		o.CollisionProtection = mode
		return o
	}
	for _, tc := range []struct {
		class v1alpha1.PhaseClass
		mode  v1alpha1.CollisionProtection
		want  string
	}{
		{v1alpha1.PhaseClassHostedCluster, v1alpha1.CollisionProtectionIfNoController, ""},
		{v1alpha1.PhaseClassHostedCluster, "", ""},
		{v1alpha1.PhaseClassControlPlane, v1alpha1.CollisionProtectionPrevent, ""},
		{v1alpha1.PhaseClassControlPlane, v1alpha1.CollisionProtectionIfNoController, "hosted-cluster phases only"},
		{v1alpha1.PhaseClassHostedCluster, "None", `collisionProtection "None" is not one of`},
	} {
		problems := Validate([]v1alpha1.ExtensionPhase{{Name: "p", Class: tc.class, Objects: []v1alpha1.ExtensionObject{with(tc.mode)}}})
		var msgs []string
		for _, p := range problems {
			msgs = append(msgs, p.Error())
		}
		got := strings.Join(msgs, "; ")
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("class %q mode %q: problems %q, want %q", tc.class, tc.mode, got, tc.want)
		}
	}
	if o, _ := Decode(v1alpha1.ExtensionPhase{Name: "p"}, cm); o.Collision != v1alpha1.CollisionProtectionPrevent {
		t.Fatalf("unset collisionProtection decodes as %q, want Prevent", o.Collision)
	}
}
