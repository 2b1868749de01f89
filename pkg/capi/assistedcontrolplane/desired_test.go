package assistedcontrolplane

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	controlplanev1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/controlplane/v1alpha1"
)

func validACP() *controlplanev1.OpenshiftAssistedControlPlane {
	return &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{Replicas: ptr.To[int32](3), DistributionVersion: "4.16.3",
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{BaseDomain: "example.com",
				PullSecretRef: &corev1.LocalObjectReference{Name: "ps"},
				APIVIPs:       []string{"10.0.0.5", "fd00::5"}, IngressVIPs: []string{"10.0.0.4", "fd00::4"}}},
	}
}

func TestValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*controlplanev1.OpenshiftAssistedControlPlane)
		reason string
	}{
		"valid dual stack": {func(*controlplanev1.OpenshiftAssistedControlPlane) {}, ""},
		"valid single node": {func(a *controlplanev1.OpenshiftAssistedControlPlane) {
			a.Spec.Replicas = ptr.To[int32](1)
			a.Spec.Config.APIVIPs, a.Spec.Config.IngressVIPs = nil, nil
		}, ""},
		"five":               {func(a *controlplanev1.OpenshiftAssistedControlPlane) { a.Spec.Replicas = ptr.To[int32](5) }, ""},
		"no pull secret":     {func(a *controlplanev1.OpenshiftAssistedControlPlane) { a.Spec.Config.PullSecretRef = nil }, controlplanev1.ReasonPullSecretRefMissing},
		"not an IP":          {func(a *controlplanev1.OpenshiftAssistedControlPlane) { a.Spec.Config.APIVIPs[0] = "api" }, controlplanev1.ReasonInvalidAPIVIPs},
		"two IPv4 API VIPs":  {func(a *controlplanev1.OpenshiftAssistedControlPlane) { a.Spec.Config.APIVIPs[1] = "10.0.0.6" }, controlplanev1.ReasonInvalidAPIVIPs},
		"loopback ingress":   {func(a *controlplanev1.OpenshiftAssistedControlPlane) { a.Spec.Config.IngressVIPs[0] = "127.0.0.1" }, controlplanev1.ReasonInvalidIngressVIPs},
		"ingress equals API": {func(a *controlplanev1.OpenshiftAssistedControlPlane) { a.Spec.Config.IngressVIPs[0] = "10.0.0.5" }, controlplanev1.ReasonInvalidIngressVIPs},
		"VIP counts differ": {func(a *controlplanev1.OpenshiftAssistedControlPlane) {
			a.Spec.Config.IngressVIPs = a.Spec.Config.IngressVIPs[:1]
		}, controlplanev1.ReasonInvalidIngressVIPs},
		"single node with VIPs": {func(a *controlplanev1.OpenshiftAssistedControlPlane) { a.Spec.Replicas = ptr.To[int32](1) }, controlplanev1.ReasonReplicasMismatch},
		"multi node no VIPs": {func(a *controlplanev1.OpenshiftAssistedControlPlane) {
			a.Spec.Config.APIVIPs, a.Spec.Config.IngressVIPs = nil, nil
		}, controlplanev1.ReasonReplicasMismatch},
		"two": {func(a *controlplanev1.OpenshiftAssistedControlPlane) { a.Spec.Replicas = ptr.To[int32](2) }, controlplanev1.ReasonReplicasMismatch},
		"six": {func(a *controlplanev1.OpenshiftAssistedControlPlane) { a.Spec.Replicas = ptr.To[int32](6) }, controlplanev1.ReasonReplicasMismatch},
	} {
		acp := validACP()
		tc.mutate(acp)
		got := ""
		if inv := validate(acp); inv != nil {
			got = inv.Reason
			if inv.Message == "" {
				t.Errorf("%s: empty message", name)
			}
		}
		if got != tc.reason {
			t.Errorf("%s: reason %q, want %q", name, got, tc.reason)
		}
	}
}

func TestProvisionRequirementsFreeze(t *testing.T) {
	acp := validACP()
	if got := provisionRequirements(acp, 2, nil); got["controlPlaneAgents"] != int64(3) || got["workerAgents"] != int64(2) {
		t.Fatalf("before installation: %v", got)
	}
	frozen := map[string]any{"controlPlaneAgents": int64(3), "workerAgents": int64(2)}
	if got := provisionRequirements(acp, 7, frozen); got["workerAgents"] != int64(2) {
		t.Fatalf("after the installation started the counts must not follow the MachineDeployments: %v", got)
	}
}

func TestSinglenodeInstallHasNoVIPs(t *testing.T) {
	acp := validACP()
	acp.Spec.Replicas = ptr.To[int32](1)
	u := desiredAgentClusterInstall(acp, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, provisionRequirements(acp, 0, nil))
	spec := u.Object["spec"].(map[string]any)
	if spec["platformType"] != "None" || spec["apiVIPs"] != nil || spec["networking"].(map[string]any)["userManagedNetworking"] != true {
		t.Fatalf("single-node ACI spec: %v", spec)
	}
}

func TestNamesAndScaleDown(t *testing.T) {
	acp := validACP()
	got := nextIndices(acp, map[string]bool{"c-0": true, "c-2": true}, 3)
	if len(got) != 3 || got[0] != 1 || got[1] != 3 || got[2] != 4 {
		t.Fatalf("nextIndices: %v", got)
	}
	now := time.Now()
	ms := []clusterv1.Machine{
		{ObjectMeta: metav1.ObjectMeta{Name: "c-0", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c-3", CreationTimestamp: metav1.NewTime(now)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c-1", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}},
	}
	del := machinesToDelete(ms, 2)
	if len(del) != 2 || del[0].Name != "c-3" || del[1].Name != "c-1" {
		t.Fatalf("machinesToDelete: %v %v", del[0].Name, del[1].Name)
	}
}
