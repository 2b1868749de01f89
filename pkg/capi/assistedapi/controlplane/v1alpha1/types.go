package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/bootstrap/v1alpha1"
)

// Condition types and reasons of an OpenshiftAssistedControlPlane.
const (
	// ConditionSpecValid is False when the spec cannot be installed; its
	// reason says why. Nothing is created on the assisted side until it is
	// True.
	ConditionSpecValid = "SpecValid"
	// ConditionInstalled follows the AgentClusterInstall: waiting for
	// agents, installing, completed or failed.
	ConditionInstalled = "Installed"
	// ConditionKubeconfigAvailable is True once <cluster>-kubeconfig exists.
	ConditionKubeconfigAvailable = "KubeconfigAvailable"
	// ConditionAvailable is the v1beta2 control-plane contract's Available.
	ConditionAvailable = "Available"
	// ConditionReady summarises: installed and kubeconfig written.
	ConditionReady = "Ready"

	ReasonValid                = "Valid"
	ReasonPullSecretRefMissing = "PullSecretRefMissing"
	ReasonPullSecretNotFound   = "PullSecretNotFound"
	ReasonInvalidAPIVIPs       = "InvalidAPIVIPs"
	ReasonInvalidIngressVIPs   = "InvalidIngressVIPs"
	// ReasonReplicasMismatch: the replica count contradicts the topology
	// the spec asks for (a single-node control plane has no VIPs; a
	// multi-node one needs them), or is one assisted-installer cannot
	// install.
	ReasonReplicasMismatch     = "ReplicasMismatch"
	ReasonClusterNotFound      = "ClusterNotFound"
	ReasonWaitingForAgents     = "WaitingForAgents"
	ReasonInstalling           = "InstallationInProgress"
	ReasonInstalled            = "InstallationCompleted"
	ReasonInstallationFailed   = "InstallationFailed"
	ReasonWaitingForKubeconfig = "WaitingForKubeconfig"
	ReasonKubeconfigAvailable  = "KubeconfigAvailable"
	ReasonNotInstalled         = "NotInstalled"
	ReasonAvailable            = "Available"
)

// Labels the control-plane provider sets.
const (
	// ControlPlaneNameLabel is set on the Machines, configs and infrastructure
	// machines the control plane created, to its name.
	ControlPlaneNameLabel = "controlplane.cluster.x-k8s.io/openshift-assisted-control-plane"
)

// OpenshiftAssistedControlPlaneMachineTemplate is how control-plane
// Machines are made (v1beta2 contract: spec.machineTemplate.spec.infrastructureRef).
type OpenshiftAssistedControlPlaneMachineTemplate struct {
	// ObjectMeta is copied onto the Machines.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// Spec references the infrastructure machine template.
	Spec OpenshiftAssistedControlPlaneMachineTemplateSpec `json:"spec"`
}

// OpenshiftAssistedControlPlaneMachineTemplateSpec is the Machine part of the template.
type OpenshiftAssistedControlPlaneMachineTemplateSpec struct {
	// InfrastructureRef is the infrastructure machine template (same
	// namespace) cloned for each control-plane Machine.
	InfrastructureRef clusterv1.ContractVersionedObjectReference `json:"infrastructureRef"`
}

// OpenshiftAssistedControlPlaneConfigSpec is what the ClusterDeployment and
// the AgentClusterInstall are made from.
type OpenshiftAssistedControlPlaneConfigSpec struct {
	// ClusterName is the OpenShift cluster name (DNS: api.<clusterName>.<baseDomain>);
	// default: the Cluster API Cluster's name.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
	// BaseDomain of the cluster.
	// +kubebuilder:validation:MinLength=1
	BaseDomain string `json:"baseDomain"`
	// PullSecretRef names the pull secret (this namespace). Required.
	// +optional
	PullSecretRef *corev1.LocalObjectReference `json:"pullSecretRef,omitempty"`
	// APIVIPs: one per IP family (at most two). Required for a multi-node
	// control plane; must be empty for a single node.
	// +kubebuilder:validation:MaxItems=2
	// +optional
	APIVIPs []string `json:"apiVIPs,omitempty"`
	// IngressVIPs: as APIVIPs, distinct from them.
	// +kubebuilder:validation:MaxItems=2
	// +optional
	IngressVIPs []string `json:"ingressVIPs,omitempty"`
	// SSHAuthorizedKey for the installed nodes.
	// +optional
	SSHAuthorizedKey string `json:"sshAuthorizedKey,omitempty"`
	// NetworkType is the CNI plug-in.
	// +kubebuilder:validation:Enum=OVNKubernetes;OpenShiftSDN;None
	// +kubebuilder:default=OVNKubernetes
	// +optional
	NetworkType string `json:"networkType,omitempty"`
	// MastersSchedulable lets workloads run on control-plane nodes.
	// +optional
	MastersSchedulable bool `json:"mastersSchedulable,omitempty"`
	// ImageSetRef names the hive ClusterImageSet to install. Empty: one
	// named openshift-<distributionVersion> is created (if absent) from
	// ReleaseImage.
	// +optional
	ImageSetRef string `json:"imageSetRef,omitempty"`
	// ReleaseImage for the ClusterImageSet created when ImageSetRef is empty;
	// default quay.io/openshift-release-dev/ocp-release:<distributionVersion>-x86_64.
	// +optional
	ReleaseImage string `json:"releaseImage,omitempty"`
}

// OpenshiftAssistedControlPlaneSpec is the desired control plane.
type OpenshiftAssistedControlPlaneSpec struct {
	// Replicas is the number of control-plane Machines: 1 (single node) or 3–5.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Version is the Kubernetes version of the control plane (contract
	// field; informational for OpenShift, whose version is DistributionVersion).
	// +optional
	Version string `json:"version,omitempty"`
	// DistributionVersion is the OpenShift version to install, e.g. 4.16.3.
	// +kubebuilder:validation:MinLength=1
	DistributionVersion string `json:"distributionVersion"`
	// MachineTemplate makes the control-plane Machines.
	MachineTemplate OpenshiftAssistedControlPlaneMachineTemplate `json:"machineTemplate"`
	// OpenshiftAssistedConfigSpec is the bootstrap config of each
	// control-plane Machine.
	// +optional
	OpenshiftAssistedConfigSpec bootstrapv1.OpenshiftAssistedConfigSpec `json:"openshiftAssistedConfigSpec,omitempty"`
	// Config is the cluster installation.
	Config OpenshiftAssistedControlPlaneConfigSpec `json:"config"`
}

// OpenshiftAssistedControlPlaneInitializationStatus is the v1beta2 contract.
type OpenshiftAssistedControlPlaneInitializationStatus struct {
	// ControlPlaneInitialized is true once the installation completed and
	// the kubeconfig secret exists.
	// +optional
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

// OpenshiftAssistedControlPlaneStatus is the observed state.
type OpenshiftAssistedControlPlaneStatus struct {
	// Conditions: SpecValid, Installed, KubeconfigAvailable, Available, Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Initialization is the v1beta2 control-plane contract.
	// +optional
	Initialization OpenshiftAssistedControlPlaneInitializationStatus `json:"initialization,omitempty,omitzero"`
	// Initialized and Ready are the v1beta1 contract's fields, kept for
	// readers of that contract.
	// +optional
	Initialized bool `json:"initialized,omitempty"`
	// +optional
	Ready bool `json:"ready,omitempty"`
	// Selector selects the control-plane Machines (scale subresource).
	// +optional
	Selector string `json:"selector,omitempty"`
	// Replicas is the number of control-plane Machines.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// ReadyReplicas are control-plane Machines whose host is installed.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
	// AvailableReplicas: as ReadyReplicas.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`
	// UpToDateReplicas: Machines made from the current template.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
	// Version is spec.version once the control plane is installed.
	// +optional
	Version string `json:"version,omitempty"`
	// DistributionVersion is the installed OpenShift version.
	// +optional
	DistributionVersion string `json:"distributionVersion,omitempty"`
	// ClusterDeploymentName is the hive ClusterDeployment (and the
	// AgentClusterInstall) this control plane created.
	// +optional
	ClusterDeploymentName string `json:"clusterDeploymentName,omitempty"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=oacp;oacps,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
// +kubebuilder:printcolumn:name="Initialized",type=boolean,JSONPath=".status.initialization.controlPlaneInitialized"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=".spec.replicas"
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=".status.replicas"
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=".status.readyReplicas"
// +kubebuilder:printcolumn:name="Installed",type=string,JSONPath=".status.conditions[?(@.type=='Installed')].reason"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=".spec.distributionVersion"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"

// OpenshiftAssistedControlPlane is an OpenShift control plane installed by
// assisted-installer: it owns the hive ClusterDeployment and the
// AgentClusterInstall, creates the control-plane Machines, and publishes the
// kubeconfig once the installation completes.
type OpenshiftAssistedControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OpenshiftAssistedControlPlaneSpec   `json:"spec,omitempty"`
	Status OpenshiftAssistedControlPlaneStatus `json:"status,omitempty"`
}

// GetConditions returns the control plane's conditions (cluster-api's
// util/conditions Getter, so its helpers and patch.Helper work on it).
func (c *OpenshiftAssistedControlPlane) GetConditions() []metav1.Condition {
	return c.Status.Conditions
}

// SetConditions sets the control plane's conditions (util/conditions Setter).
func (c *OpenshiftAssistedControlPlane) SetConditions(conds []metav1.Condition) {
	c.Status.Conditions = conds
}

// +kubebuilder:object:root=true

// OpenshiftAssistedControlPlaneList is a list of control planes.
type OpenshiftAssistedControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedControlPlane `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OpenshiftAssistedControlPlane{}, &OpenshiftAssistedControlPlaneList{})
}
