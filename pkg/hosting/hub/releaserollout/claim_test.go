package releaserollout

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// Two rollouts selecting the same hosted cluster: the older goes first,
// except that a fleet admin's goes before a tenant's whatever their ages;
// the one waiting names the other and why.
func TestClaimant(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(name string, age time.Duration, admin bool) v1alpha1.ReleaseRollout {
		rr := v1alpha1.ReleaseRollout{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(t0.Add(-age))},
			Spec: v1alpha1.ReleaseRolloutSpec{HostedClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}
		if admin {
			rr.Labels = map[string]string{v1alpha1.LabelFleetAdminRollout: "true"}
		}
		return rr
	}
	h := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"env": "prod"}}}
	tenantOld, tenantNew, admin := mk("tenant-old", 2*time.Hour, false), mk("tenant-new", time.Hour, false), mk("admin", 0, true)
	all := []v1alpha1.ReleaseRollout{tenantOld, tenantNew, admin}
	for _, c := range []struct {
		rr        v1alpha1.ReleaseRollout
		by, whyIs string
	}{
		{admin, "", ""},
		{tenantOld, "admin", "a fleet admin's rollout, which goes before this one"},
		{tenantNew, "admin", "a fleet admin's rollout, which goes before this one"},
	} {
		if by, why := claimant(&c.rr, all, h); by != c.by || why != c.whyIs {
			t.Errorf("%s: claimed by %q (%q), want %q (%q)", c.rr.Name, by, why, c.by, c.whyIs)
		}
	}
	// Without the admin's: the older tenant's goes first.
	if by, why := claimant(&tenantNew, []v1alpha1.ReleaseRollout{tenantOld, tenantNew}, h); by != "tenant-old" || why != "older" {
		t.Errorf("tenant-new: claimed by %q (%q), want tenant-old (older)", by, why)
	}
	// A completed admin rollout claims nothing: by its recorded completion
	// time, or by the condition of a status written before it was
	// recorded; nor does an aborted one.
	done := admin
	done.Status.CompletionTime = &metav1.Time{Time: t0}
	legacy := admin
	legacy.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionRolloutCompleted, Status: metav1.ConditionTrue}}
	aborted := admin
	aborted.Spec.Abort = true
	for _, o := range []v1alpha1.ReleaseRollout{done, legacy, aborted} {
		if by, _ := claimant(&tenantOld, []v1alpha1.ReleaseRollout{tenantOld, o}, h); by != "" {
			t.Errorf("tenant-old: claimed by %q after the admin's completed or aborted (%+v, abort %v)", by, o.Status, o.Spec.Abort)
		}
	}
	if by, _ := claimant(&tenantOld, []v1alpha1.ReleaseRollout{tenantOld, admin}, h); by != "admin" {
		t.Errorf("tenant-old: claimed by %q, want admin while it is at work", by)
	}
}
