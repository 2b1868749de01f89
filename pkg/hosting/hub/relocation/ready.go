package relocation

import (
	"fmt"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// Reasons a relocation is refused before anything is written.
const (
	ReasonNotBound               = "NotBound"
	ReasonBeingDeleted           = "BeingDeleted"
	ReasonEtcdNotManaged         = "EtcdNotManaged"
	ReasonNoFixedAPIHostname     = "NoFixedAPIHostname"
	ReasonEncryptionNotPortable  = "EncryptionKeyNotPortable"
	ReasonPlatformNotRelocatable = "PlatformNotRelocatable"
	ReasonHubOwnedFieldSet       = "HubOwnedFieldSet"
	ReasonHostingClusterPinned   = "HostingClusterPinned"
)

// Ready says whether hcd's hosted cluster may be relocated: "" when it
// may, else a reason above and a message naming the field. Pure.
//
// The fields come from HyperShift's documented procedure: only managed
// etcd is snapshotted and restored (restoreSnapshotURL); the API server
// needs a fixed hostname, since nodes keep its address and an ephemeral
// load balancer or route address changes with the management cluster
// (disaster-recovery prerequisites, "all platforms"); the restored data is
// encrypted with the aescbc key the hub delivers, while a KMS key may not
// be reachable from elsewhere; KubeVirt workers are VMs on the source
// management cluster itself. pausedUntil and restoreSnapshotURL are the
// relocation's to set while it runs. A pinned deployment
// (spec.hostingCluster) cannot move: the API ties its binding to the pin,
// which is the tenant's to change.
func Ready(hcd *v1alpha1.HostedClusterDeployment) (reason, message string) {
	spec := &hcd.Spec.HostedCluster.Spec
	switch {
	case hcd.DeletionTimestamp != nil:
		return ReasonBeingDeleted, "the HostedClusterDeployment is being deleted"
	case hcd.Status.HostingCluster == "":
		return ReasonNotBound, "the HostedClusterDeployment is not bound to a management cluster: there is nothing to move"
	case hcd.Spec.HostingCluster != "":
		return ReasonHostingClusterPinned, fmt.Sprintf("spec.hostingCluster pins it to %s: remove the pin (the tenant's field) before moving it", hcd.Spec.HostingCluster)
	case spec.Etcd.ManagementType != hyperv1.Managed:
		return ReasonEtcdNotManaged, fmt.Sprintf("spec.hostedCluster.spec.etcd.managementType is %q: only Managed etcd can be snapshotted and restored", spec.Etcd.ManagementType)
	case spec.Platform.Type == hyperv1.KubevirtPlatform:
		return ReasonPlatformNotRelocatable, "platform KubeVirt: the workers are virtual machines on the source management cluster and do not move"
	case spec.PausedUntil != nil:
		return ReasonHubOwnedFieldSet, "spec.hostedCluster.spec.pausedUntil is set: a relocation pauses the source itself; remove it first"
	case spec.Etcd.Managed != nil && len(spec.Etcd.Managed.Storage.RestoreSnapshotURL) > 0:
		return ReasonHubOwnedFieldSet, "spec.hostedCluster.spec.etcd.managed.storage.restoreSnapshotURL is set: a relocation sets it on the destination itself"
	}
	if spec.SecretEncryption != nil && spec.SecretEncryption.Type != hyperv1.AESCBC {
		return ReasonEncryptionNotPortable, fmt.Sprintf("spec.hostedCluster.spec.secretEncryption.type is %q: only an aescbc key, which the hub delivers to every management cluster, is sure to decrypt the restored data", spec.SecretEncryption.Type)
	}
	if !fixedAPIHostname(spec.Services) {
		return ReasonNoFixedAPIHostname, "the APIServer service has no fixed hostname (servicePublishingStrategy loadBalancer.hostname or route.hostname): its nodes would lose it when it moves"
	}
	return "", ""
}

// fixedAPIHostname: the APIServer service is published under a hostname of
// its own, which DNS can re-point to the destination.
func fixedAPIHostname(services []hyperv1.ServicePublishingStrategyMapping) bool {
	for _, s := range services {
		if s.Service != hyperv1.APIServer {
			continue
		}
		p := s.ServicePublishingStrategy
		switch p.Type {
		case hyperv1.LoadBalancer:
			return p.LoadBalancer != nil && p.LoadBalancer.Hostname != ""
		case hyperv1.Route:
			return p.Route != nil && p.Route.Hostname != ""
		}
		return false
	}
	return false
}
