// Package addon holds what the hub and the agent of the hcp-fleet OCM add-on
// agree on: names, labels and condition types. The hub side lives in
// pkg/addon/hub, the agent side in pkg/addon/agent; neither imports the other.
package addon

import (
	"crypto/sha256"
	"fmt"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

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

	// HostingConfigRevisionAnnotation is the hub's revision of what it
	// hands the agent in the HostingConfig ConfigMap (HostingConfigRevision
	// of its data), and OperatorHealthyRevisionAnnotation the revision with
	// which the agent last saw the HyperShift operator healthy (absent while
	// it is not). A condition rule of the add-on ManifestWork compares the
	// two (pkg/addon/hub, rollouthealth.go), so that the work's Available,
	// which OCM's rollout counts, means "the operator is healthy with this
	// configuration". One writer each: the hub renders the first, the agent
	// patches the second.
	HostingConfigRevisionAnnotation   = "hcpfleet.io/hosting-config-revision"
	OperatorHealthyRevisionAnnotation = "hcpfleet.io/operator-healthy-revision"

	// AgentCAPINamespaceRole and AgentHostingNamespaceRole are the
	// ClusterRoles (manifests/agent) the agent binds to itself, with a
	// RoleBinding of the same name, in the namespaces known only at run time
	// where it needs them: CAPI namespaces (the OpenShift Agent providers',
	// and hosted control-plane namespaces during a CAPI migration) and
	// hosting namespaces (the namespace janitor, the kubeconfig export).
	AgentCAPINamespaceRole    = "open-cluster-management:hcp-fleet:agent:capi-namespace"
	AgentHostingNamespaceRole = "open-cluster-management:hcp-fleet:agent:hosting-namespace"
	// AgentExtensionNamespaceRole is what the extension engine
	// (pkg/extension/agent) binds in a hosted control-plane namespace it
	// works in.
	AgentExtensionNamespaceRole = "open-cluster-management:hcp-fleet:agent:extension-namespace"

	// DefaultAgentImage is the agent image when HostingConfig names none.
	DefaultAgentImage = "quay.io/hcp-fleet/hcp-fleet-agent:latest"
)

// The release configuration: the images of an hcp-fleet release, which the
// hub writes as customized variables of an AddOnDeploymentConfig that the
// ClusterManagementAddOn names as its default config. An upgrade of the hub
// is then a config change, which OCM's addon-manager rolls out to the
// management clusters as the install strategy's rolloutStrategy says,
// instead of replacing every agent at once.
const (
	// ReleaseConfigName names the AddOnDeploymentConfig (in the hub's
	// namespace) holding the release's images.
	ReleaseConfigName = Name + "-release"
	// AgentImageVariable is the customized variable of the agent image.
	AgentImageVariable = "AgentImage"
	// HyperShiftOperatorImageVariable is the customized variable of the
	// default HyperShift operator image (a HostingConfig's
	// spec.operator.image wins).
	HyperShiftOperatorImageVariable = "HyperShiftOperatorImage"
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
	// ConditionCAPIMigration: the migration of legacy hosted clusters to the
	// private CAPI types (pkg/capi/migration), in Private mode. True while a
	// migration runs, rolls back or waits (reasons Migrating, RollingBack);
	// False when none is under way: MigrationFailed (naming each failed
	// hosted cluster and why), Complete or NoneNeeded.
	ConditionCAPIMigration = "CAPIMigration"
	// ConditionHyperShiftOperatorInstalled: the HyperShift operator the agent
	// installed is rolled out. The hub schedules hosted clusters only onto
	// management clusters where it is True.
	ConditionHyperShiftOperatorInstalled = "HyperShiftOperatorInstalled"
)

// Credentials a HostingConfig references on the hub (Secrets in its
// namespace, which the agent cannot read). The hub copies each referenced key
// into the agent's install namespace, as the Credential's Secret with the
// data under CredentialsKey, in the add-on's ManifestWork; the agent copies
// it on into the HyperShift operator's namespace. A reference the hub cannot
// resolve is listed under CredentialProblemsKey in the HostingConfig
// ConfigMap instead, and no copy is rendered.
const (
	// CredentialsKey is the key of the credentials in a copied Secret.
	CredentialsKey = "credentials"
	// CredentialsLabel marks the copied Secrets; its value is the
	// Credential's Purpose.
	CredentialsLabel = "hcpfleet.io/credentials"
	// CredentialsSourceAnnotation says which hub Secret and key a copy
	// holds: CredentialRef.Source.
	CredentialsSourceAnnotation = "hcpfleet.io/credentials-source"
	// CredentialProblemsKey (in HostingConfigMap) holds, as a JSON list of
	// messages, the references the hub could not resolve. Absent when there
	// are none.
	CredentialProblemsKey = "credential-problems"
)

// Credential is one kind of credentials a HostingConfig can reference.
type Credential struct {
	// Purpose names it in labels and logs.
	Purpose string
	// Field is the reference's path in the HostingConfig, for messages.
	Field string
	// Secret is the copy's name in the agent's install namespace.
	Secret string
}

// The credentials a HostingConfig can reference.
var (
	OIDCStorageCredentials = Credential{Purpose: "oidc-storage", Field: "spec.install.oidcStorage.credentialsSecret",
		Secret: Name + "-oidc-storage-credentials"}
	ExternalDNSCredentials = Credential{Purpose: "external-dns", Field: "spec.install.externalDNS.credentialsSecret",
		Secret: Name + "-external-dns-credentials"}
	PrivatePlatformCredentials = Credential{Purpose: "private-platform", Field: "spec.install.privatePlatform.aws.credentialsSecret",
		Secret: Name + "-private-platform-credentials"}
)

// CredentialRef is a credentials reference of a HostingConfig spec.
type CredentialRef struct {
	Credential
	// Name and Key of the Secret in the HostingConfig's namespace; Key is
	// defaulted.
	Name, Key string
}

// Source is the CredentialsSourceAnnotation of a copy of r from the hub
// namespace ns: "<ns>/<name>#<hash of the key>". The hash tells a copy of
// another key of the same Secret apart without naming the key: Secret key
// names stay out of everything a reader of the management cluster, a
// condition or a log sees.
func (r CredentialRef) Source(ns string) string {
	sum := sha256.Sum256([]byte(r.Key))
	return fmt.Sprintf("%s/%s#%x", ns, r.Name, sum[:4])
}

// CredentialRefs returns the credentials the spec references, in a fixed
// order. The private platform's are referenced only when its type is AWS, as
// the operator uses them only then.
func CredentialRefs(spec *v1alpha1.HostingConfigSpec) []CredentialRef {
	if spec == nil || spec.Install == nil {
		return nil
	}
	in := spec.Install
	var out []CredentialRef
	add := func(c Credential, ref v1alpha1.CredentialsSecretReference) {
		key := ref.Key
		if key == "" {
			key = v1alpha1.DefaultCredentialsKey
		}
		out = append(out, CredentialRef{Credential: c, Name: ref.Name, Key: key})
	}
	if in.OIDCStorage != nil {
		add(OIDCStorageCredentials, in.OIDCStorage.CredentialsSecret)
	}
	if in.ExternalDNS != nil {
		add(ExternalDNSCredentials, in.ExternalDNS.CredentialsSecret)
	}
	if pp := in.PrivatePlatform; pp != nil && pp.Type == v1alpha1.PrivatePlatformAWS && pp.AWS != nil {
		add(PrivatePlatformCredentials, pp.AWS.CredentialsSecret)
	}
	return out
}

// DefaultHubNamespace is the hub's own namespace unless the hub is told
// otherwise; the default HostingConfig lives there.
const DefaultHubNamespace = "hcp-fleet"

// HostingConfigNamespaceAllowed reports whether the hub accepts a
// HostingConfig in namespace ns: only from the hub's own namespace
// (DefaultHubNamespace when hubNamespace is empty) and the namespaces the
// admin listed. A ManagedClusterAddOn a tenant can edit may name a
// HostingConfig anywhere; one elsewhere would ship that namespace's Secrets.
func HostingConfigNamespaceAllowed(ns, hubNamespace string, allowed []string) bool {
	if hubNamespace == "" {
		hubNamespace = DefaultHubNamespace
	}
	if ns == "" {
		return false
	}
	if ns == hubNamespace {
		return true
	}
	for _, a := range allowed {
		if a == ns {
			return true
		}
	}
	return false
}
