package delivery

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
)

// The takeover is one forced generation: it ends once that generation is
// applied and never comes back, whatever the HCD's Delivered says.
func TestTakingOver(t *testing.T) {
	work := func(force bool, applied metav1.ConditionStatus, observed int64) *workv1.ManifestWork {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
		w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: hyperShiftGroup, Resource: "hostedclusters", Name: "hc", Namespace: "clusters"},
			UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply,
				ServerSideApply: &workv1.ServerSideApplyConfig{Force: force}},
		}}
		if applied != "" {
			w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: applied, ObservedGeneration: observed}}
		}
		return w
	}
	for _, tc := range []struct {
		name string
		work *workv1.ManifestWork
		want bool
	}{
		{"no work yet", nil, true},
		{"forced, not applied yet", work(true, "", 0), true},
		{"forced, an older generation applied", work(true, metav1.ConditionTrue, 1), true},
		{"forced, not applied", work(true, metav1.ConditionFalse, 2), true},
		{"forced generation applied", work(true, metav1.ConditionTrue, 2), false},
		{"rendered without force after it, not applied yet", work(false, metav1.ConditionTrue, 1), false},
		{"without force, a conflict reported", work(false, metav1.ConditionFalse, 2), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := takingOver(tc.work); got != tc.want {
				t.Errorf("takingOver = %v, want %v", got, tc.want)
			}
		})
	}
}
