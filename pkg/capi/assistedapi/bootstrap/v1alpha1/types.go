package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and reasons of an OpenshiftAssistedConfig.
const (
	// ConditionReady is True once the Machine may boot: its host has the
	// discovery ISO and the (empty) bootstrap data secret exists. Cluster
	// API's v1beta2 Machine mirrors it as BootstrapConfigReady.
	ConditionReady = "Ready"
	// ConditionAgentReady is True once the host booted from the ISO has
	// registered as an Agent and we gave it its role and approval.
	ConditionAgentReady = "AgentReady"

	ReasonWaitingForMachine           = "WaitingForMachine"
	ReasonWaitingForClusterDeployment = "WaitingForClusterDeployment"
	// ReasonWaitingForInstallation: the cluster's installation is running;
	// the Machine is held and joins as a day-2 host once it completes.
	ReasonWaitingForInstallation = "WaitingForInstallation"
	ReasonPullSecretMissing      = "PullSecretMissing"
	ReasonWaitingForISO          = "WaitingForISO"
	ReasonInfrastructureNotReady = "InfrastructureNotReady"
	ReasonDataSecretAvailable    = "DataSecretAvailable"
	ReasonWaitingForAgent        = "WaitingForAgent"
	ReasonAgentApproved          = "AgentApproved"
)

// Labels and annotations the bootstrap provider reads or sets.
const (
	// ConfigNameLabel is set on the InfraEnv (and so, by assisted-service,
	// on its Agents' InfraEnv label) to the OpenshiftAssistedConfig it was
	// created for.
	ConfigNameLabel = "bootstrap.cluster.x-k8s.io/openshift-assisted-config"
)

// OpenshiftAssistedConfigSpec is what the InfraEnv of one Machine is made
// from. Field names follow assisted-service's InfraEnv.
type OpenshiftAssistedConfigSpec struct {
	// PullSecretRef names the Secret (in this namespace) with the pull
	// secret the discovery image and the installation use. Required for the
	// InfraEnv; a config without it reports Ready=False PullSecretMissing.
	// +optional
	PullSecretRef *corev1.LocalObjectReference `json:"pullSecretRef,omitempty"`

	// SSHAuthorizedKey is added to the discovery image for debugging.
	// +optional
	SSHAuthorizedKey string `json:"sshAuthorizedKey,omitempty"`

	// AdditionalNTPSources are NTP sources (hostname or IP) added to the hosts.
	// +optional
	AdditionalNTPSources []string `json:"additionalNTPSources,omitempty"`

	// NMStateConfigLabelSelector selects the NMStateConfigs of the hosts.
	// +optional
	NMStateConfigLabelSelector metav1.LabelSelector `json:"nmStateConfigLabelSelector,omitempty"`

	// CpuArchitecture of the discovery image.
	// +kubebuilder:default=x86_64
	// +kubebuilder:validation:Enum=x86_64;aarch64;arm64;ppc64le;s390x
	// +optional
	CpuArchitecture string `json:"cpuArchitecture,omitempty"`

	// OSImageVersion selects the discovery OS image (an OpenshiftVersion of
	// the AgentServiceConfig's OSImages).
	// +optional
	OSImageVersion string `json:"osImageVersion,omitempty"`

	// AdditionalTrustBundle is a PEM bundle the hosts trust.
	// +optional
	AdditionalTrustBundle string `json:"additionalTrustBundle,omitempty"`

	// Proxy settings of the discovery image.
	// +optional
	Proxy *Proxy `json:"proxy,omitempty"`
}

// Proxy are HTTP proxy settings.
type Proxy struct {
	// +optional
	HTTPProxy string `json:"httpProxy,omitempty"`
	// +optional
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	// +optional
	NoProxy string `json:"noProxy,omitempty"`
}

// OpenshiftAssistedConfigInitializationStatus is the Cluster API v1beta2
// bootstrap contract.
type OpenshiftAssistedConfigInitializationStatus struct {
	// DataSecretCreated is true once status.dataSecretName names the
	// Machine's bootstrap data secret.
	// +optional
	DataSecretCreated *bool `json:"dataSecretCreated,omitempty"`
}

// OpenshiftAssistedConfigStatus is the observed state.
type OpenshiftAssistedConfigStatus struct {
	// Conditions: Ready, AgentReady.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Initialization is the v1beta2 bootstrap contract.
	// +optional
	Initialization OpenshiftAssistedConfigInitializationStatus `json:"initialization,omitempty,omitzero"`

	// Ready is the v1beta1 bootstrap contract's equivalent of
	// initialization.dataSecretCreated, kept for readers of that contract.
	// +optional
	Ready bool `json:"ready,omitempty"`

	// DataSecretName names the bootstrap data secret. It is empty on
	// purpose: the host boots the discovery ISO, and assisted-installer,
	// not cloud-init or ignition user data, installs it.
	// +optional
	DataSecretName *string `json:"dataSecretName,omitempty"`

	// InfraEnvName is the InfraEnv made for this config.
	// +optional
	InfraEnvName string `json:"infraEnvName,omitempty"`

	// ISODownloadURL is the discovery ISO handed to the Machine's
	// infrastructure object.
	// +optional
	ISODownloadURL string `json:"isoDownloadURL,omitempty"`

	// AgentName is the Agent that registered from this config's InfraEnv.
	// +optional
	AgentName string `json:"agentName,omitempty"`

	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=oac;oacs,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1alpha1"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].reason"
// +kubebuilder:printcolumn:name="Agent",type=string,JSONPath=".status.agentName"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"

// OpenshiftAssistedConfig is the bootstrap config of one Machine installed
// by assisted-installer: the provider makes an InfraEnv for it, hands the
// discovery ISO to the Machine's infrastructure, and approves the Agent that
// boots from it.
type OpenshiftAssistedConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OpenshiftAssistedConfigSpec   `json:"spec,omitempty"`
	Status OpenshiftAssistedConfigStatus `json:"status,omitempty"`
}

// GetConditions returns the config's conditions (cluster-api's
// util/conditions Getter, so its helpers and patch.Helper work on it).
func (c *OpenshiftAssistedConfig) GetConditions() []metav1.Condition {
	return c.Status.Conditions
}

// SetConditions sets the config's conditions (util/conditions Setter).
func (c *OpenshiftAssistedConfig) SetConditions(conds []metav1.Condition) {
	c.Status.Conditions = conds
}

// +kubebuilder:object:root=true

// OpenshiftAssistedConfigList is a list of OpenshiftAssistedConfigs.
type OpenshiftAssistedConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedConfig `json:"items"`
}

// OpenshiftAssistedConfigTemplateResource is the config a template stamps out.
type OpenshiftAssistedConfigTemplateResource struct {
	Spec OpenshiftAssistedConfigSpec `json:"spec,omitempty"`
}

// OpenshiftAssistedConfigTemplateSpec is the template.
type OpenshiftAssistedConfigTemplateSpec struct {
	Template OpenshiftAssistedConfigTemplateResource `json:"template"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=oact,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1alpha1"
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"

// OpenshiftAssistedConfigTemplate is what MachineDeployments/MachineSets
// (spec.template.spec.bootstrap.configRef) clone an OpenshiftAssistedConfig
// from for each worker Machine.
type OpenshiftAssistedConfigTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OpenshiftAssistedConfigTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// OpenshiftAssistedConfigTemplateList is a list of templates.
type OpenshiftAssistedConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedConfigTemplate `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OpenshiftAssistedConfig{}, &OpenshiftAssistedConfigList{},
		&OpenshiftAssistedConfigTemplate{}, &OpenshiftAssistedConfigTemplateList{})
}
