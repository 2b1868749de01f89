package assistedbootstrap

import (
	"testing"

	hiveext "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/assisted"
	bootstrapv1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/bootstrap/v1alpha1"
)

func TestAgentPatch(t *testing.T) {
	cp := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m0", Namespace: "ns", Labels: map[string]string{clusterv1.MachineControlPlaneLabel: ""}}}
	worker := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "w0", Namespace: "ns"}}
	fresh := &aiv1beta1.Agent{}
	p := agentPatch(fresh, cp, "c", "metal3.io/uuid", "uid-1")["spec"].(map[string]any)
	if p["role"] != "master" || p["approved"] != true || p["hostname"] != "m0" ||
		p["nodeLabels"].(map[string]any)["metal3.io/uuid"] != "uid-1" || p["clusterDeploymentName"].(map[string]any)["name"] != "c" {
		t.Fatalf("control-plane agent patch: %v", p)
	}
	if p := agentPatch(fresh, worker, "c", "metal3.io/uuid", "")["spec"].(map[string]any); p["role"] != "worker" || p["nodeLabels"] != nil {
		t.Fatalf("worker agent patch without provider ID: %v", p)
	}
	done := &aiv1beta1.Agent{Spec: aiv1beta1.AgentSpec{Role: "worker", Approved: true, Hostname: "w0",
		NodeLabels: map[string]string{"metal3.io/uuid": "u"}, ClusterDeploymentName: &aiv1beta1.ClusterReference{Name: "c", Namespace: "ns"}}}
	if p := agentPatch(done, worker, "c", "metal3.io/uuid", "u"); p != nil {
		t.Fatalf("an Agent that is already right must not be patched: %v", p)
	}
}

func TestDesiredInfraEnv(t *testing.T) {
	cfg := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "w0", Namespace: "ns", UID: "u"},
		Spec: bootstrapv1.OpenshiftAssistedConfigSpec{PullSecretRef: &corev1.LocalObjectReference{Name: "ps"}, CpuArchitecture: "aarch64",
			AdditionalNTPSources: []string{"ntp.example.com"}}}
	u := desiredInfraEnv(cfg, "c")
	spec := u.Object["spec"].(map[string]any)
	if u.GetName() != "w0" || spec["clusterRef"].(map[string]any)["name"] != "c" || spec["pullSecretRef"].(map[string]any)["name"] != "ps" ||
		spec["cpuArchitecture"] != "aarch64" || spec["agentLabels"].(map[string]any)[bootstrapv1.ConfigNameLabel] != "w0" {
		t.Fatalf("InfraEnv: %v", u.Object)
	}
	if _, ok := spec["ipxeScriptType"]; ok {
		t.Fatal("the InfraEnv must hold only the fields we own")
	}
	if owners := u.GetOwnerReferences(); len(owners) != 1 || owners[0].UID != "u" || owners[0].Controller == nil || !*owners[0].Controller {
		t.Fatalf("owner: %v", owners)
	}
}

func TestInstallState(t *testing.T) {
	cond := func(t, s, r string) hivev1.ClusterInstallCondition {
		return hivev1.ClusterInstallCondition{Type: t, Status: corev1.ConditionStatus(s), Reason: r}
	}
	for want, aci := range map[assisted.InstallState]*hiveext.AgentClusterInstall{
		assisted.NotStarted: {Status: hiveext.AgentClusterInstallStatus{Conditions: []hivev1.ClusterInstallCondition{
			cond(hiveext.ClusterCompletedCondition, "False", hiveext.ClusterInstallationNotStartedReason)}}},
		assisted.Installing: {Status: hiveext.AgentClusterInstallStatus{Conditions: []hivev1.ClusterInstallCondition{
			cond(hiveext.ClusterCompletedCondition, "False", hiveext.ClusterInstallationInProgressReason)}}},
		assisted.Installed: {Status: hiveext.AgentClusterInstallStatus{Conditions: []hivev1.ClusterInstallCondition{
			cond(hiveext.ClusterCompletedCondition, "True", hiveext.ClusterInstalledReason)}}},
		assisted.Failed: {Status: hiveext.AgentClusterInstallStatus{Conditions: []hivev1.ClusterInstallCondition{
			cond(hiveext.ClusterFailedCondition, "True", hiveext.ClusterFailedReason)}}},
	} {
		if got := assisted.State(aci); got != want {
			t.Errorf("State = %s, want %s", got, want)
		}
	}
	if got := assisted.State(&hiveext.AgentClusterInstall{Status: hiveext.AgentClusterInstallStatus{DebugInfo: hiveext.DebugInfo{State: "finalizing"}}}); got != assisted.Installing {
		t.Errorf("debugInfo finalizing: %s", got)
	}
	if assisted.State(nil) != assisted.NotStarted {
		t.Error("nil ACI must be NotStarted")
	}
}
