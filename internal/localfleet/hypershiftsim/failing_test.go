package hypershiftsim

import (
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFailingRelease: an upgrade to the release the failing-release
// annotation names stays Partial, Progressing and Degraded with the CVO
// Failing, the control plane Available on the release it ran; without the
// annotation the same upgrade completes and Succeeding turns True.
func TestFailingRelease(t *testing.T) {
	const from, to = "quay.io/openshift-release-dev/ocp-release:4.18.5-multi", "quay.io/openshift-release-dev/ocp-release:4.18.9-multi"
	start := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	hc := &hyperv1.HostedCluster{ObjectMeta: metav1.ObjectMeta{Name: "hc", Generation: 2,
		Annotations: map[string]string{AnnotationFailingRelease: to}}}
	hc.Spec.Release.Image = from
	// The first rollout is not the failing release: it completes.
	s, _ := desiredStatus(hc, start, time.Second)
	hc.Status.Conditions, hc.Status.Version = s.Conditions, s.Version
	s, _ = desiredStatus(hc, start.Add(2*time.Second), time.Second)
	if s.Version.History[0].State != configv1.CompletedUpdate || meta.FindStatusCondition(s.Conditions, string(hyperv1.ClusterVersionSucceeding)) != nil {
		t.Fatalf("first rollout: history %+v, conditions %+v", s.Version.History, s.Conditions)
	}
	hc.Status.Conditions, hc.Status.Version = s.Conditions, s.Version

	hc.Spec.Release.Image = to
	for _, at := range []time.Duration{3 * time.Second, time.Hour} {
		s, requeue := desiredStatus(hc, start.Add(at), time.Second)
		hc.Status.Conditions, hc.Status.Version = s.Conditions, s.Version
		if got := s.Version.History[0]; got.Image != to || got.State != configv1.PartialUpdate || got.CompletionTime != nil {
			t.Errorf("after %s: newest history %+v, want %s Partial", at, got, to)
		}
		if requeue != 0 {
			t.Errorf("after %s: requeue %s, want none (nothing to wait for)", at, requeue)
		}
		want := map[hyperv1.ConditionType]metav1.ConditionStatus{hyperv1.HostedClusterDegraded: metav1.ConditionTrue,
			hyperv1.HostedClusterProgressing: metav1.ConditionTrue, hyperv1.HostedClusterAvailable: metav1.ConditionTrue,
			hyperv1.ClusterVersionSucceeding: metav1.ConditionFalse}
		for typ, status := range want {
			if c := meta.FindStatusCondition(s.Conditions, string(typ)); c == nil || c.Status != status {
				t.Errorf("after %s: %s = %+v, want %s", at, typ, c, status)
			}
		}
		if c := meta.FindStatusCondition(s.Conditions, string(hyperv1.HostedClusterDegraded)); c.Reason != "UnavailableReplicas" || c.Message != failingMessage {
			t.Errorf("Degraded %s: %s", c.Reason, c.Message)
		}
	}

	// Fixed: the annotation goes, the upgrade completes.
	delete(hc.Annotations, AnnotationFailingRelease)
	s, _ = desiredStatus(hc, start.Add(2*time.Hour), time.Second)
	if got := s.Version.History[0]; got.State != configv1.CompletedUpdate {
		t.Errorf("fixed: newest history %+v, want Completed", got)
	}
	for typ, status := range map[hyperv1.ConditionType]metav1.ConditionStatus{hyperv1.HostedClusterDegraded: metav1.ConditionFalse,
		hyperv1.HostedClusterProgressing: metav1.ConditionFalse, hyperv1.ClusterVersionSucceeding: metav1.ConditionTrue} {
		if c := meta.FindStatusCondition(s.Conditions, string(typ)); c == nil || c.Status != status {
			t.Errorf("fixed: %s = %+v, want %s", typ, c, status)
		}
	}
}
