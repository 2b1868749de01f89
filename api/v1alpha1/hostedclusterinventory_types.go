package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InventoryName is the name of the one HostedClusterInventory in each
// management cluster's namespace on the hub.
const InventoryName = "hcp-fleet"

// MaxInventoryHostedClusters bounds status.hostedClusters; an agent with
// more HostedClusters lists the first ones by namespace and name and sets
// status.truncated.
const MaxInventoryHostedClusters = 500

// InventoryDeployment names the HostedClusterDeployment a HostedCluster's
// labels (hcpfleet.io/hcd-namespace, -name, -uid) say delivered it.
type InventoryDeployment struct {
	// namespace of the HostedClusterDeployment on the hub.
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// name of the HostedClusterDeployment.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// uid of the HostedClusterDeployment that delivered it (a restored
	// one has another).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	UID string `json:"uid,omitempty"`
}

// InventoryHostedCluster is one HostedCluster on the management cluster.
type InventoryHostedCluster struct {
	// namespace of the HostedCluster on the management cluster.
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// name of the HostedCluster.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// deployment is the HostedClusterDeployment its labels name; absent on
	// a HostedCluster no HostedClusterDeployment delivered (an unmanaged
	// one: created by `hcp`, MCE or by hand).
	// +optional
	Deployment *InventoryDeployment `json:"deployment,omitempty"`
	// release is its spec.release.image. Unmanaged HostedClusters only (a
	// managed one's is in its HostedClusterDeployment).
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Release string `json:"release,omitempty"`
	// platform is its spec.platform.type. Unmanaged HostedClusters only.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Platform string `json:"platform,omitempty"`
	// infraID is its spec.infraID. Unmanaged HostedClusters only.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	InfraID string `json:"infraID,omitempty"`
	// available is the status of its Available condition (Unknown when it
	// has none). Unmanaged HostedClusters only.
	// +kubebuilder:validation:Enum=True;False;Unknown
	// +optional
	Available metav1.ConditionStatus `json:"available,omitempty"`
	// deleting is true once the HostedCluster is being deleted (it has a
	// deletionTimestamp). The hub's delivery tells from it a HostedCluster
	// on its way out from one left behind by a ManifestWork that went first.
	// +optional
	Deleting bool `json:"deleting,omitempty"`
}

// Managed reports whether a HostedClusterDeployment delivered it.
func (h *InventoryHostedCluster) Managed() bool { return h.Deployment != nil }

// HostedClusterInventoryStatus is what the agent saw on its management
// cluster.
type HostedClusterInventoryStatus struct {
	// hostedClusters lists every HostedCluster on the management cluster,
	// by namespace and name.
	// +listType=map
	// +listMapKey=namespace
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=500
	// +optional
	HostedClusters []InventoryHostedCluster `json:"hostedClusters,omitempty"`
	// truncated is true when the management cluster has more
	// HostedClusters than the list holds.
	// +optional
	Truncated bool `json:"truncated,omitempty"`
}

// HostedClusterInventory lists the HostedClusters running on one
// management cluster, as its hcp-fleet agent sees them: those hcp-fleet
// delivered (with the HostedClusterDeployment their labels name) and the
// unmanaged ones, for `kubectl hcpfleet status`, the console and adoption.
// The agent writes the one named hcp-fleet in its cluster's namespace on the
// hub; nothing else writes it. The hub recovers a lost binding from it
// (docs/operations.md).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=hostedclusterinventories,singular=hostedclusterinventory,scope=Namespaced
// +kubebuilder:printcolumn:name="Truncated",type="boolean",JSONPath=".status.truncated",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type HostedClusterInventory struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// status is written by the agent.
	// +optional
	Status HostedClusterInventoryStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// HostedClusterInventoryList is a list of HostedClusterInventories.
type HostedClusterInventoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HostedClusterInventory `json:"items"`
}

func init() {
	SchemeBuilder.Register(&HostedClusterInventory{}, &HostedClusterInventoryList{})
}
