package releaserollout

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// TestRecordTransitions: an Event on the hosted cluster when it becomes
// Blocked or Failed or its reason there changes, none while it stays so,
// none for the other states.
func TestRecordTransitions(t *testing.T) {
	rr := &v1alpha1.ReleaseRollout{ObjectMeta: metav1.ObjectMeta{Name: "to-4-18-9"}}
	rr.Status.HostedClusters = []v1alpha1.RolloutHostedClusterStatus{
		{Name: "still-held", State: v1alpha1.RolloutStateBlocked, Reason: v1alpha1.ReasonOperatorIncompatible},
		{Name: "now-held", State: v1alpha1.RolloutStatePending, Reason: ReasonWaiting},
		{Name: "other-reason", State: v1alpha1.RolloutStateBlocked, Reason: ReasonNotReady},
		{Name: "failed", State: v1alpha1.RolloutStateUpgrading, Reason: ReasonControlPlaneUpgrading},
	}
	p := &Plan{HostedClusters: []v1alpha1.RolloutHostedClusterStatus{
		{Name: "still-held", State: v1alpha1.RolloutStateBlocked, Reason: v1alpha1.ReasonOperatorIncompatible, Message: "operators"},
		{Name: "now-held", State: v1alpha1.RolloutStateBlocked, Reason: v1alpha1.ReasonOperatorIncompatible, Message: "operators: etcd-operator 0.9"},
		{Name: "other-reason", State: v1alpha1.RolloutStateBlocked, Reason: ReasonRisksNotAccepted, Message: "risks: EtcdSlow"},
		{Name: "failed", State: v1alpha1.RolloutStateFailed, Reason: ReasonDegraded, Message: "Degraded after the move"},
		{Name: "new-upgrading", State: v1alpha1.RolloutStateUpgrading, Reason: ReasonControlPlaneUpgrading},
		{Name: "not-selected", State: v1alpha1.RolloutStateBlocked, Reason: ReasonNotReady},
	}}
	hcds := map[string]*v1alpha1.HostedClusterDeployment{}
	for _, h := range p.HostedClusters[:5] {
		hcds[h.Name] = &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: h.Name}}
	}
	rec := record.NewFakeRecorder(10)
	recordTransitions(rec, rr, p, hcds)
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	want := []string{
		"Warning ReleaseRolloutBlocked ReleaseRollout to-4-18-9 skips this hosted cluster, never forcing it (OperatorIncompatible): operators: etcd-operator 0.9",
		"Warning ReleaseRolloutBlocked ReleaseRollout to-4-18-9 skips this hosted cluster, never forcing it (UpdateRisksNotAccepted): risks: EtcdSlow",
		"Warning ReleaseRolloutFailed ReleaseRollout to-4-18-9 stopped: the upgrade of this hosted cluster failed (UpgradeDegraded): Degraded after the move",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
