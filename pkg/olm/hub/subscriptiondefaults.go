package hub

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// SubscriptionDefaults are a hosted cluster's effective Subscription
// defaults: its HostedClusterDeployment's spec.olm.subscriptionDefaults when
// set (even empty, which sets none), else its HostingConfig's (policy);
// nil when they set nothing.
func SubscriptionDefaults(policy *v1alpha1.OLMConfig, own *v1alpha1.HostedClusterOLM) *v1alpha1.SubscriptionDefaults {
	d := (*v1alpha1.SubscriptionDefaults)(nil)
	switch {
	case own != nil && own.SubscriptionDefaults != nil:
		d = own.SubscriptionDefaults
	case policy != nil:
		d = policy.SubscriptionDefaults
	}
	if olm.EncodeSubscriptionDefaults(d) == "" {
		return nil
	}
	return d
}

// SubscriptionDefaultsCondition is SubscriptionDefaultsApplied from the
// effective defaults and the agent's report as fed back (report: the raw
// annotation value, "" while there is none); nil without defaults. Pure.
func SubscriptionDefaultsCondition(defaults *v1alpha1.SubscriptionDefaults, report string) *metav1.Condition {
	if defaults == nil {
		return nil
	}
	c := &metav1.Condition{Type: v1alpha1.ConditionSubscriptionDefaultsApplied}
	var r olm.SubscriptionDefaultsReport
	if report == "" || json.Unmarshal([]byte(report), &r) != nil || r.Defaults != olm.FingerprintOf(defaults) {
		c.Status, c.Reason = metav1.ConditionUnknown, v1alpha1.ReasonStatusUnknown
		c.Message = "waiting for the agent to apply the current Subscription defaults in the hosted cluster"
		return c
	}
	msg := fmt.Sprintf("set on %d Subscriptions", r.Defaulted)
	if r.Own > 0 {
		msg += fmt.Sprintf("; %d keep their own node selector or tolerations: %s", r.Own, names(r.OwnNames, r.Own))
	}
	if r.Failed > 0 {
		c.Status, c.Reason = metav1.ConditionFalse, v1alpha1.ReasonSubscriptionDefaultsFailed
		c.Message = fmt.Sprintf("could not set them on %d Subscriptions: %s (the agent's log on the management cluster says why; it retries); ",
			r.Failed, names(r.FailedNames, r.Failed)) + msg
		return c
	}
	c.Status, c.Reason, c.Message = metav1.ConditionTrue, v1alpha1.ReasonAsExpected, msg
	return c
}

func names(listed []string, total int) string {
	s := strings.Join(listed, ", ")
	if more := total - len(listed); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
