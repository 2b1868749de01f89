package hostmodel

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHeldAvailable(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cond := func(status metav1.ConditionStatus, reason string, ago time.Duration) *metav1.Condition {
		return &metav1.Condition{Type: "Available", Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(now.Add(-ago))}
	}
	const grace = time.Minute
	for _, tc := range []struct {
		name      string
		c         *metav1.Condition
		grace     time.Duration
		available bool
		recheck   time.Duration
	}{
		{"no condition", nil, grace, false, 0},
		{"true", cond(metav1.ConditionTrue, "ManagedClusterAvailable", time.Hour), grace, true, 0},
		{"probe failed moments ago: held", cond(metav1.ConditionFalse, "ManagedClusterKubeAPIServerUnavailable", 10*time.Second), grace, true, 50 * time.Second},
		{"probe failing for the whole grace", cond(metav1.ConditionFalse, "ManagedClusterKubeAPIServerUnavailable", grace), grace, false, 0},
		{"no grace", cond(metav1.ConditionFalse, "ManagedClusterKubeAPIServerUnavailable", time.Second), 0, false, 0},
		{"cluster lease expired: OCM waited already", cond(metav1.ConditionUnknown, "ManagedClusterLeaseUpdateStopped", time.Second), grace, false, 0},
		{"add-on lease expired", cond(metav1.ConditionFalse, "ManagedClusterAddOnLeaseUpdateStopped", time.Second), grace, false, 0},
		{"add-on lease never there", cond(metav1.ConditionUnknown, "ManagedClusterAddOnLeaseNotFound", time.Second), grace, false, 0},
		{"unknown for another reason: held", cond(metav1.ConditionUnknown, "Whatever", 30*time.Second), grace, true, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			available, recheck := HeldAvailable(tc.c, tc.grace, now)
			if available != tc.available || recheck != tc.recheck {
				t.Errorf("HeldAvailable = %v, %s; want %v, %s", available, recheck, tc.available, tc.recheck)
			}
		})
	}
}
