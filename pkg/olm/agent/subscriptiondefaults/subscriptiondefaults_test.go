package subscriptiondefaults

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

func TestDecide(t *testing.T) {
	infraDefaults := &v1alpha1.SubscriptionDefaults{NodeSelector: map[string]v1alpha1.LabelValue{"role": "infra"},
		Tolerations: []v1alpha1.Toleration{{Key: "infra", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}
	edge := &v1alpha1.SubscriptionDefaults{NodeSelector: map[string]v1alpha1.LabelValue{"role": "edge"}}
	// infra is infraDefaults as a Subscription holds them.
	var infra struct {
		NodeSelector map[string]string
		Tolerations  []corev1.Toleration
	}
	infra.NodeSelector, infra.Tolerations = infraDefaults.Placement()
	mark := func(d *v1alpha1.SubscriptionDefaults) string { return olm.FingerprintOf(d) }
	cases := []struct {
		name     string
		sub      Subscription
		defaults *v1alpha1.SubscriptionDefaults
		action   Action
		state    State
	}{
		{"none set: gets the defaults", Subscription{}, infraDefaults, Set, Defaulted},
		{"empty values count as none", Subscription{NodeSelector: map[string]string{}, Tolerations: []corev1.Toleration{}}, infraDefaults, Set, Defaulted},
		{"no defaults, nothing set", Subscription{}, nil, Keep, None},
		{"own node selector is left alone", Subscription{NodeSelector: map[string]string{"role": "mine"}}, infraDefaults, Keep, Own},
		{"own tolerations alone are the user's placement too", Subscription{Tolerations: infra.Tolerations}, edge, Keep, Own},
		{"own values equal to the defaults, unmarked, stay the user's", Subscription{NodeSelector: infra.NodeSelector, Tolerations: infra.Tolerations}, infraDefaults, Keep, Own},
		{"set and unchanged: nothing to write", Subscription{NodeSelector: infra.NodeSelector, Tolerations: infra.Tolerations, Mark: mark(infraDefaults), Marked: true}, infraDefaults, Keep, Defaulted},
		{"set, unchanged, defaults changed: follows them", Subscription{NodeSelector: infra.NodeSelector, Tolerations: infra.Tolerations, Mark: mark(infraDefaults), Marked: true}, edge, Set, Defaulted},
		{"set, unchanged, defaults gone: removed", Subscription{NodeSelector: infra.NodeSelector, Tolerations: infra.Tolerations, Mark: mark(infraDefaults), Marked: true}, nil, Remove, None},
		{"set, then changed by the user: theirs", Subscription{NodeSelector: map[string]string{"role": "mine"}, Tolerations: infra.Tolerations, Mark: mark(infraDefaults), Marked: true}, infraDefaults, Forget, Own},
		{"set, then changed by the user, defaults gone: still theirs", Subscription{NodeSelector: map[string]string{"role": "mine"}, Mark: mark(infraDefaults), Marked: true}, nil, Forget, Own},
		{"set, then removed by the user: none, so the defaults again", Subscription{Mark: mark(infraDefaults), Marked: true}, infraDefaults, Set, Defaulted},
		{"set, then removed by the user, no defaults: the mark goes", Subscription{Mark: mark(infraDefaults), Marked: true}, nil, Forget, None},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			action, state := Decide(tc.sub, tc.defaults)
			if action != tc.action || state != tc.state {
				t.Errorf("Decide = %q, %d; want %q, %d", action, state, tc.action, tc.state)
			}
		})
	}
}

// TestPatch: the patches touch only the two fields and the mark, carry the
// resourceVersion, and null what they remove — a node selector key the
// agent set that the new defaults lack too (a merge patch merges maps).
func TestPatch(t *testing.T) {
	edge := &v1alpha1.SubscriptionDefaults{NodeSelector: map[string]v1alpha1.LabelValue{"role": "edge"}}
	set := `{"metadata":{"annotations":{"hcpfleet.io/subscription-defaults":"` + olm.FingerprintOf(edge) + `"},"resourceVersion":"7"},`
	wasInfra := Subscription{NodeSelector: map[string]string{"pool": "infra"}, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}
	cases := []struct {
		action Action
		sub    Subscription
		want   string
	}{
		{Set, Subscription{}, set + `"spec":{"config":{"nodeSelector":{"role":"edge"},"tolerations":null}}}`},
		{Set, wasInfra, set + `"spec":{"config":{"nodeSelector":{"pool":null,"role":"edge"},"tolerations":null}}}`},
		{Remove, wasInfra, `{"metadata":{"annotations":{"hcpfleet.io/subscription-defaults":null},"resourceVersion":"7"},"spec":{"config":{"nodeSelector":null,"tolerations":null}}}`},
		{Forget, wasInfra, `{"metadata":{"annotations":{"hcpfleet.io/subscription-defaults":null},"resourceVersion":"7"}}`},
	}
	for _, tc := range cases {
		if got := Patch(tc.action, "7", tc.sub, edge); mustCanon(string(got)) != mustCanon(tc.want) {
			t.Errorf("%s over %+v: patch %s, want %s", tc.action, tc.sub, got, tc.want)
		}
	}
	if Patch(Keep, "7", Subscription{}, edge) != nil {
		t.Error("Keep has a patch")
	}
}

func mustCanon(s string) string {
	var v any
	_ = json.Unmarshal([]byte(s), &v)
	b, _ := json.Marshal(v)
	return string(b)
}
