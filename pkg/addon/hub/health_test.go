package hub

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"open-cluster-management.io/addon-framework/pkg/agent"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

func agentStatus(ready int64) agent.FieldResult {
	return agent.FieldResult{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: addon.DefaultInstallNamespace, Name: AgentDeployment},
		FeedbackResult: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{
			{Name: "Replicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](1)}},
			{Name: "ReadyReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](ready)}},
			{Name: "AvailableReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](ready)}},
		}},
	}
}

func withOperator(status metav1.ConditionStatus, reason, message string) *addonv1alpha1.ManagedClusterAddOn {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if status != "" {
		meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{Type: addon.ConditionHyperShiftOperatorInstalled, Status: status, Reason: reason, Message: message})
	}
	return mca
}

func TestAddonHealth(t *testing.T) {
	for _, tc := range []struct {
		name    string
		results []agent.FieldResult
		mca     *addonv1alpha1.ManagedClusterAddOn
		wantErr string // "" means healthy
	}{
		{"agent and operator available", []agent.FieldResult{agentStatus(1)}, withOperator(metav1.ConditionTrue, "Installed", "ok"), ""},
		{"another manager runs the operator", []agent.FieldResult{agentStatus(1)}, withOperator(metav1.ConditionFalse, ReasonForeignInstall, "not ours"), ""},
		{"operator crash-looping", []agent.FieldResult{agentStatus(1)},
			withOperator(metav1.ConditionFalse, "WaitingForAvailability", "CrashLoopBackOff"), "WaitingForAvailability: CrashLoopBackOff"},
		{"no operator report yet", []agent.FieldResult{agentStatus(1)}, withOperator("", "", ""), "has not reported"},
		{"agent unavailable", []agent.FieldResult{agentStatus(0)}, withOperator(metav1.ConditionTrue, "Installed", "ok"), "the agent is not available"},
		{"no agent status", nil, withOperator(metav1.ConditionTrue, "Installed", "ok"), "no status of the agent Deployment"},
		{"other resources are not the agent", []agent.FieldResult{{ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Name: "other"}}},
			withOperator(metav1.ConditionTrue, "Installed", "ok"), "no status of the agent Deployment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := addonHealth(tc.results, nil, tc.mca)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("want healthy, got %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

// The prober asks the work agent for the agent Deployment's status in any
// namespace (the AddOnDeploymentConfig may move it) and checks it itself.
func TestHealthProberProbesTheAgentDeployment(t *testing.T) {
	a, err := newAgentAddon(Options{}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := a.GetAgentAddonOptions().HealthProber
	if p == nil || p.Type != agent.HealthProberTypeWork || p.WorkProber == nil || p.WorkProber.HealthChecker == nil {
		t.Fatalf("want a work prober with a health checker, got %+v", p)
	}
	if len(p.WorkProber.ProbeFields) != 1 {
		t.Fatalf("want one probe field, got %+v", p.WorkProber.ProbeFields)
	}
	id := p.WorkProber.ProbeFields[0].ResourceIdentifier
	if id.Group != "apps" || id.Resource != "deployments" || id.Name != AgentDeployment || id.Namespace != "*" {
		t.Fatalf("probe field %+v", id)
	}
}

// A cluster that comes back (Available Unknown → True) re-syncs its add-on,
// whose work prober skipped it while Unknown; a lease renewal alone does not.
func TestClusterAvailabilityChanged(t *testing.T) {
	with := func(s metav1.ConditionStatus) *clusterv1.ManagedCluster {
		mc := &clusterv1.ManagedCluster{}
		if s != "" {
			mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: s}}
		}
		return mc
	}
	for _, tc := range []struct {
		old, new metav1.ConditionStatus
		want     bool
	}{
		{metav1.ConditionUnknown, metav1.ConditionTrue, true},
		{metav1.ConditionTrue, metav1.ConditionUnknown, true},
		{"", metav1.ConditionTrue, true},
		{metav1.ConditionTrue, metav1.ConditionTrue, false},
		{metav1.ConditionFalse, metav1.ConditionFalse, false},
	} {
		if got := clusterAvailabilityChanged(with(tc.old), with(tc.new)); got != tc.want {
			t.Errorf("Available %q → %q: %v, want %v", tc.old, tc.new, got, tc.want)
		}
	}
}
