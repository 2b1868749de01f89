// Package addon holds what the hub and the agent of the hcp-fleet OCM add-on
// agree on: names, labels and condition types. The hub side lives in
// pkg/addon/hub, the agent side in pkg/addon/agent; neither imports the other.
package addon

const (
	// Name is the add-on's name: the ClusterManagementAddOn, every
	// ManagedClusterAddOn, and the lease the agent renews.
	Name = "hcp-fleet"

	// DefaultInstallNamespace is where the agent runs on a management
	// cluster unless an AddOnDeploymentConfig sets agentInstallNamespace.
	DefaultInstallNamespace = "hcp-fleet-agent"

	// AgentName is the agent's name in its hub identity
	// system:open-cluster-management:cluster:<cluster>:addon:hcp-fleet:agent:<AgentName>.
	AgentName = "hcp-fleet-agent"

	// HubKubeconfigSecret is the Secret (in the install namespace) holding
	// the agent's hub credentials, written by the OCM registration agent.
	HubKubeconfigSecret = Name + "-hub-kubeconfig"

	// HostingConfigMap is the ConfigMap (in the install namespace) through
	// which the hub hands the agent its effective HostingConfig spec.
	HostingConfigMap = Name + "-hosting-config"
	// HostingConfigKey holds the HostingConfig spec as JSON.
	HostingConfigKey = "spec.json"
	// HostingConfigHashKey holds the spec hash OCM computed for it.
	HostingConfigHashKey = "spec-hash"
	// HostingConfigRefKey holds namespace/name of the HostingConfig.
	HostingConfigRefKey = "source"

	// DefaultAgentImage is the agent image when HostingConfig names none.
	DefaultAgentImage = "quay.io/hcp-fleet/hcp-fleet-agent:latest"
)

// ManagedClusterAddOn condition types the agent reports. The addon-manager
// and registration agent own Available, Degraded, Progressing and the
// registration conditions; these are the agent's own.
const (
	// ConditionHostingConfigApplied: the agent runs with the HostingConfig
	// the hub rendered for this cluster (the message names it and its hash).
	ConditionHostingConfigApplied = "HostingConfigApplied"
	// ConditionCleanup: the pre-delete cleanup's progress or failure.
	ConditionCleanup = "CleanupSucceeded"
	// ConditionCAPITypes: which Cluster API CRDs (Standard or Private) the
	// agent installed and why (pkg/capi).
	ConditionCAPITypes = "CAPITypes"
	// ConditionCAPIAgentProviders: whether the OpenShift Agent CAPI
	// providers run as HostingConfig asks (pkg/capi).
	ConditionCAPIAgentProviders = "CAPIAgentProviders"
	// ConditionHyperShiftOperatorInstalled: the HyperShift operator the agent
	// installed is rolled out. The hub schedules hosted clusters only onto
	// management clusters where it is True.
	ConditionHyperShiftOperatorInstalled = "HyperShiftOperatorInstalled"
)
