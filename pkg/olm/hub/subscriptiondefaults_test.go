package hub

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

func TestSubscriptionDefaultsPrecedence(t *testing.T) {
	fleet := &v1alpha1.SubscriptionDefaults{NodeSelector: map[string]v1alpha1.LabelValue{"role": "infra"}}
	own := &v1alpha1.SubscriptionDefaults{Tolerations: []v1alpha1.Toleration{{Operator: corev1.TolerationOpExists}}}
	policy := &v1alpha1.OLMConfig{SubscriptionDefaults: fleet}
	cases := []struct {
		name   string
		policy *v1alpha1.OLMConfig
		own    *v1alpha1.HostedClusterOLM
		want   *v1alpha1.SubscriptionDefaults
	}{
		{"none", nil, nil, nil},
		{"the fleet's", policy, nil, fleet},
		{"the fleet's when the HCD's olm says nothing of them", policy, &v1alpha1.HostedClusterOLM{}, fleet},
		{"the HCD's win", policy, &v1alpha1.HostedClusterOLM{SubscriptionDefaults: own}, own},
		{"the HCD's without a fleet policy", nil, &v1alpha1.HostedClusterOLM{SubscriptionDefaults: own}, own},
		{"the HCD opts out with {}", policy, &v1alpha1.HostedClusterOLM{SubscriptionDefaults: &v1alpha1.SubscriptionDefaults{}}, nil},
		{"an empty fleet policy sets none", &v1alpha1.OLMConfig{SubscriptionDefaults: &v1alpha1.SubscriptionDefaults{}}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := SubscriptionDefaults(tc.policy, tc.own); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSubscriptionDefaultsCondition(t *testing.T) {
	d := &v1alpha1.SubscriptionDefaults{NodeSelector: map[string]v1alpha1.LabelValue{"role": "infra"}}
	current := olm.Fingerprint(map[string]string{"role": "infra"}, nil)
	report := func(r olm.SubscriptionDefaultsReport) string {
		b, _ := json.Marshal(r)
		return string(b)
	}
	if c := SubscriptionDefaultsCondition(nil, report(olm.SubscriptionDefaultsReport{Defaulted: 2})); c != nil {
		t.Errorf("without defaults: %+v, want none", c)
	}
	cases := []struct {
		name, report string
		status       metav1.ConditionStatus
		reason       string
		message      []string
	}{
		{"no report yet", "", metav1.ConditionUnknown, v1alpha1.ReasonStatusUnknown, []string{"waiting for the agent"}},
		{"a report about other defaults", report(olm.SubscriptionDefaultsReport{Defaults: "old", Defaulted: 3}), metav1.ConditionUnknown, v1alpha1.ReasonStatusUnknown, nil},
		{"a report that does not decode", "{", metav1.ConditionUnknown, v1alpha1.ReasonStatusUnknown, nil},
		{"applied", report(olm.SubscriptionDefaultsReport{Defaults: current, Defaulted: 3, Own: 7, OwnNames: []string{"a/x", "b/y", "c/z", "d/w", "e/v"}}),
			metav1.ConditionTrue, v1alpha1.ReasonAsExpected, []string{"set on 3 Subscriptions", "7 keep their own", "a/x, b/y, c/z, d/w, e/v and 2 more"}},
		{"failed", report(olm.SubscriptionDefaultsReport{Defaults: current, Defaulted: 1, Failed: 1, FailedNames: []string{"ops/db"}}),
			metav1.ConditionFalse, v1alpha1.ReasonSubscriptionDefaultsFailed, []string{"could not set them on 1 Subscriptions: ops/db", "set on 1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := SubscriptionDefaultsCondition(d, tc.report)
			if c == nil || c.Type != v1alpha1.ConditionSubscriptionDefaultsApplied || c.Status != tc.status || c.Reason != tc.reason {
				t.Fatalf("got %+v, want %s %s", c, tc.status, tc.reason)
			}
			for _, m := range tc.message {
				if !strings.Contains(c.Message, m) {
					t.Errorf("message %q lacks %q", c.Message, m)
				}
			}
		})
	}
}
