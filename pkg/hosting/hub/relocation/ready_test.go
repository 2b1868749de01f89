package relocation

import (
	"testing"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// readyHCD is a bound HostedClusterDeployment HyperShift can move.
func readyHCD() *v1alpha1.HostedClusterDeployment {
	hcd := &v1alpha1.HostedClusterDeployment{}
	hcd.Status.HostingCluster = "cluster-1"
	spec := &hcd.Spec.HostedCluster.Spec
	spec.Platform.Type = hyperv1.NonePlatform
	spec.Etcd.ManagementType = hyperv1.Managed
	spec.Etcd.Managed = &hyperv1.ManagedEtcdSpec{}
	spec.Services = []hyperv1.ServicePublishingStrategyMapping{
		{Service: hyperv1.APIServer, ServicePublishingStrategy: hyperv1.ServicePublishingStrategy{
			Type: hyperv1.LoadBalancer, LoadBalancer: &hyperv1.LoadBalancerPublishingStrategy{Hostname: "api.team-a.example.com"}}},
		{Service: hyperv1.OAuthServer, ServicePublishingStrategy: hyperv1.ServicePublishingStrategy{Type: hyperv1.Route}},
	}
	return hcd
}

func TestReady(t *testing.T) {
	tests := []struct {
		name   string
		change func(*v1alpha1.HostedClusterDeployment)
		want   string
	}{
		{"ready", func(*v1alpha1.HostedClusterDeployment) {}, ""},
		{"route hostname", func(h *v1alpha1.HostedClusterDeployment) {
			h.Spec.HostedCluster.Spec.Services[0].ServicePublishingStrategy = hyperv1.ServicePublishingStrategy{
				Type: hyperv1.Route, Route: &hyperv1.RoutePublishingStrategy{Hostname: "api.team-a.example.com"}}
		}, ""},
		{"aescbc key delivered by the hub", func(h *v1alpha1.HostedClusterDeployment) {
			h.Spec.HostedCluster.Spec.SecretEncryption = &hyperv1.SecretEncryptionSpec{Type: hyperv1.AESCBC}
		}, ""},
		{"not bound", func(h *v1alpha1.HostedClusterDeployment) { h.Status.HostingCluster = "" }, ReasonNotBound},
		{"pinned by the tenant", func(h *v1alpha1.HostedClusterDeployment) { h.Spec.HostingCluster = "cluster-1" }, ReasonHostingClusterPinned},
		{"being deleted", func(h *v1alpha1.HostedClusterDeployment) { h.DeletionTimestamp = &metav1.Time{} }, ReasonBeingDeleted},
		{"unmanaged etcd", func(h *v1alpha1.HostedClusterDeployment) {
			h.Spec.HostedCluster.Spec.Etcd.ManagementType = hyperv1.Unmanaged
		}, ReasonEtcdNotManaged},
		{"KubeVirt", func(h *v1alpha1.HostedClusterDeployment) {
			h.Spec.HostedCluster.Spec.Platform.Type = hyperv1.KubevirtPlatform
		}, ReasonPlatformNotRelocatable},
		{"tenant paused it", func(h *v1alpha1.HostedClusterDeployment) {
			h.Spec.HostedCluster.Spec.PausedUntil = ptr.To("true")
		}, ReasonHubOwnedFieldSet},
		{"tenant set a restore URL", func(h *v1alpha1.HostedClusterDeployment) {
			h.Spec.HostedCluster.Spec.Etcd.Managed.Storage.RestoreSnapshotURL = []string{"https://bucket.example.com/x.db"}
		}, ReasonHubOwnedFieldSet},
		{"KMS", func(h *v1alpha1.HostedClusterDeployment) {
			h.Spec.HostedCluster.Spec.SecretEncryption = &hyperv1.SecretEncryptionSpec{Type: hyperv1.KMS}
		}, ReasonEncryptionNotPortable},
		{"API server on a load balancer without hostname", func(h *v1alpha1.HostedClusterDeployment) {
			h.Spec.HostedCluster.Spec.Services[0].LoadBalancer = nil
		}, ReasonNoFixedAPIHostname},
		{"API server on a NodePort", func(h *v1alpha1.HostedClusterDeployment) {
			h.Spec.HostedCluster.Spec.Services[0].ServicePublishingStrategy = hyperv1.ServicePublishingStrategy{
				Type: hyperv1.NodePort, NodePort: &hyperv1.NodePortPublishingStrategy{Address: "10.0.0.1"}}
		}, ReasonNoFixedAPIHostname},
		{"no APIServer service", func(h *v1alpha1.HostedClusterDeployment) {
			h.Spec.HostedCluster.Spec.Services = h.Spec.HostedCluster.Spec.Services[1:]
		}, ReasonNoFixedAPIHostname},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hcd := readyHCD()
			tt.change(hcd)
			reason, message := Ready(hcd)
			if reason != tt.want {
				t.Fatalf("Ready = %q (%s), want %q", reason, message, tt.want)
			}
			if (reason == "") != (message == "") {
				t.Fatalf("reason %q with message %q: a refusal needs both, readiness neither", reason, message)
			}
		})
	}
}
