// Package hosting holds what the hub's HostedCluster delivery and the agent on
// a management cluster agree on: the labels that tie a HostedCluster on a
// management cluster back to its HostedClusterDeployment on the hub, and the
// names of the objects that carry a hosted cluster's admin kubeconfig from the
// management cluster to the hub. Hub code (scheduling, delivery, import) and
// agent code (operator lifecycle, hosting report, kubeconfig export) live in
// sub-packages and never import each other.
package hosting

import (
	"crypto/sha256"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// HyperShift's kinds as every hcp-fleet component addresses them (declared
// once): hcp-fleet reads and writes them as unstructured or metadata, since
// the HyperShift API module it builds with is older than what runs.
var (
	// HyperShiftGroupVersion is hypershift.openshift.io/v1beta1.
	HyperShiftGroupVersion = schema.GroupVersion{Group: "hypershift.openshift.io", Version: "v1beta1"}
	// HostedClusterGVK is HyperShift's HostedCluster.
	HostedClusterGVK = HyperShiftGroupVersion.WithKind("HostedCluster")
	// HostedClusterGVR is its resource.
	HostedClusterGVR = HyperShiftGroupVersion.WithResource("hostedclusters")
	// NodePoolGVK is HyperShift's NodePool.
	NodePoolGVK = HyperShiftGroupVersion.WithKind("NodePool")
)

// Labels the hub puts on everything it delivers for a HostedClusterDeployment
// (the ManifestWork on the hub; the Namespace, HostedCluster, NodePools and
// copied Secrets/ConfigMaps on the management cluster), and the agent puts on
// the kubeconfig Secret it exports to the hub.
const (
	// LabelHCDNamespace is the HostedClusterDeployment's namespace on the hub.
	LabelHCDNamespace = "hcpfleet.io/hcd-namespace"
	// LabelHCDName is the HostedClusterDeployment's name.
	LabelHCDName = "hcpfleet.io/hcd-name"
	// LabelHCDUID is the HostedClusterDeployment's UID, on the objects the
	// hub delivers to a management cluster (HostedCluster, NodePools,
	// Secret/ConfigMap copies; not the shared hosting Namespace, nor the
	// ManifestWork on the hub). Each HostedClusterDeployment applies its
	// objects under a field manager of its own, so server-side apply without
	// force refuses to change this label on an object another one delivered
	// (one left behind by deletionPolicy Orphan, say): a HostedCluster is
	// never taken over by another HostedClusterDeployment of the same
	// namespace and name, not even one of the same tenant.
	LabelHCDUID = "hcpfleet.io/hcd-uid"
	// LabelAdminKubeconfig marks a Secret holding a hosted cluster's admin
	// kubeconfig exported or mirrored by hcp-fleet ("true").
	LabelAdminKubeconfig = "hcpfleet.io/admin-kubeconfig"
	// LabelCreatedNamespace marks a hosting namespace on a management cluster
	// that hcp-fleet created ("true"). The hub delivers the Namespace with
	// update strategy CreateOnly, so a namespace that existed before never
	// gets the label, and orphans it when a ManifestWork goes (other hosted
	// clusters may live there). The agent deletes a namespace so labelled once
	// nothing lives in it any more.
	LabelCreatedNamespace = "hcpfleet.io/created-namespace"
)

// ClusterClaims the agent publishes on a management cluster (OCM mirrors them
// into the ManagedCluster's status.clusterClaims) and the hub's scheduler
// reads. Values are strings.
const (
	// ClaimHostingCluster marks a management cluster ("true").
	ClaimHostingCluster = "hostingcluster.hcpfleet.io"
	// ClaimFull is "true" when the cluster hosts maxHostedClusters or more.
	ClaimFull = "full.hostingcluster.hcpfleet.io"
	// ClaimAboveThreshold is "true" when it hosts aboveThreshold or more.
	ClaimAboveThreshold = "above-threshold.hostingcluster.hcpfleet.io"
	// ClaimZero is "true" when it hosts none.
	ClaimZero = "zero.hostingcluster.hcpfleet.io"
	// ClaimHostedClusters is the number of HostedClusters on the cluster.
	ClaimHostedClusters = "hostedclusters.hostingcluster.hcpfleet.io"
	// ClaimUnmanagedHostedClusters is how many of them hcp-fleet did not
	// deliver (they lack LabelHCDName). The hub counts its own from its
	// bindings, which are never stale, and adds these. One claim rather than
	// a total and a managed count: claims sync to the hub one by one, and a
	// difference of two could be computed from values of different moments.
	ClaimUnmanagedHostedClusters = "unmanaged-hostedclusters.hostingcluster.hcpfleet.io"
	// ClaimSupportedVersions lists the OpenShift minor versions the installed
	// operator supports, newest first, comma separated ("" when unknown).
	ClaimSupportedVersions = "supported-versions.hostingcluster.hcpfleet.io"
	// ClaimPlatforms lists the HostedCluster platforms the cluster can host,
	// comma separated.
	ClaimPlatforms = "platforms.hostingcluster.hcpfleet.io"
	// ClaimCapacity is how many hosted clusters the cluster takes: the smaller
	// of its HostingConfig's maxHostedClusters and what the allocatable CPU
	// and memory of its Nodes take at the size of one hosted control plane
	// (ClaimCapacityBasis says which). The scheduler takes the smaller of this
	// and the maxHostedClusters it resolves itself.
	ClaimCapacity = "capacity.hostingcluster.hcpfleet.io"
	// ClaimResourceSlots is the resource part of ClaimCapacity alone: how many
	// hosted control planes the Nodes' allocatable CPU and memory take, or
	// "none" when no size per hosted control plane is known. The scheduler
	// takes the smaller of it and the maxHostedClusters it resolves itself,
	// so that a change of maxHostedClusters applies without waiting for the
	// agent's next report.
	ClaimResourceSlots = "resource-slots.hostingcluster.hcpfleet.io"
	// ClaimCapacityBasis says what ClaimCapacity was computed from (Nodes,
	// allocatable resources, size per hosted control plane and where that
	// size came from), for people and the fleet view.
	ClaimCapacityBasis = "capacity-basis.hostingcluster.hcpfleet.io"
)

// TaintUnschedulable is the ManagedCluster taint that cordons a management
// cluster (`kubectl hcpfleet cordon`): OCM's own mechanism, so that with
// effect NoSelect tenants' Placements stop selecting the cluster too, and
// the hub's scheduler binds no new HostedClusterDeployment there (pinned
// ones included) unless it tolerates the cordon (docs/operations.md).
// What already runs there keeps running: nothing is rescheduled.
const TaintUnschedulable = "hcpfleet.io/unschedulable"

// LabelBackup is ACM's cluster-backup label: the backup operator takes every
// object of any kind carrying it into its generic-resources backup
// (open-cluster-management's cluster-backup-operator). hcp-fleet objects are
// in no API group ACM backs up by default, so the hub labels the
// HostedClusterDeployments and ManifestWorks it owns with it, and the
// manifests label the HostingConfigs and the objects they ship.
const LabelBackup = "cluster.open-cluster-management.io/backup"

// KubeconfigKey is the data key of the admin kubeconfig in every kubeconfig
// Secret hcp-fleet writes, as in HyperShift's own admin-kubeconfig Secret.
const KubeconfigKey = "kubeconfig"

// maxNameLength is the longest object name (a DNS subdomain).
const maxNameLength = 253

// WorkName is the deterministic name of the ManifestWork, in the hosting
// cluster's namespace on the hub, that delivers the HostedClusterDeployment
// namespace/name. Namespace names cannot contain dots, so the name is
// unambiguous.
func WorkName(namespace, name string) string {
	return BoundedName("hcd-" + namespace + "." + name)
}

// RelocationPauseWorkName is the deterministic name of the ManifestWork, in
// the source's namespace on the hub, that pauses the HostedCluster of
// HostedClusterDeployment namespace/name during a relocation
// (pkg/hosting/hub/relocation). The scheduler's binding recovery tells a
// paused source apart by it.
func RelocationPauseWorkName(namespace, name string) string {
	return BoundedName("relocate-" + namespace + "." + name)
}

// AnnotationRelocationCopy marks the ManifestWork a relocation creates on
// its destination (WorkName's name, in the destination's namespace) with
// the source's name: until the binding moves it is a copy, not a binding.
// Annotations survive a backup restore, so a hub restored mid-move tells
// the copy from the binding (the scheduler's recovery) and removes it.
const AnnotationRelocationCopy = "hcpfleet.io/relocation-copy-of"

// ExportedKubeconfigName is the name of the Secret, in the hosting cluster's
// namespace on the hub, into which the agent copies the admin kubeconfig of
// the HostedCluster delivered for HostedClusterDeployment namespace/name.
func ExportedKubeconfigName(namespace, name string) string {
	return BoundedName(namespace + "." + name + "-admin-kubeconfig")
}

// AdminKubeconfigName is the Secret in the HostedClusterDeployment's own
// namespace that mirrors the hosted cluster's admin kubeconfig.
func AdminKubeconfigName(hcdName string) string {
	return BoundedName(hcdName + "-admin-kubeconfig")
}

// BoundedName keeps a generated name within the object-name limit: a name too
// long is cut and suffixed with a hash of the whole, so it stays unique and
// deterministic.
func BoundedName(n string) string {
	if len(n) <= maxNameLength {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	suffix := "-" + hex.EncodeToString(sum[:])[:10]
	return n[:maxNameLength-len(suffix)] + suffix
}
