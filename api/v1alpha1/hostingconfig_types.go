package v1alpha1

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults of HostingConfig capacity; they match those of the MCE hypershift-addon so
// fleets moving over keep their limits.
const (
	// DefaultMaxHostedClusters is the default of spec.capacity.maxHostedClusters.
	DefaultMaxHostedClusters = 80
	// DefaultAboveThreshold is the default of spec.capacity.aboveThreshold.
	DefaultAboveThreshold = 60
	// DefaultCredentialsKey is the Secret key credentials are read from unless a
	// reference names another one; it is the key `hypershift install` uses.
	DefaultCredentialsKey = "credentials"
)

// Well-known keys of spec.operator.imageOverrides: environment variables of the
// HyperShift operator that replace the images it would otherwise take from the release
// payload or its built-in defaults. Other IMAGE_* variables are accepted as well, so a
// newer operator's overrides can be set without an API change.
const (
	ImageOverrideClusterAPI            = "IMAGE_CLUSTER_API"
	ImageOverrideAgentCAPIProvider     = "IMAGE_AGENT_CAPI_PROVIDER"
	ImageOverrideAWSCAPIProvider       = "IMAGE_AWS_CAPI_PROVIDER"
	ImageOverrideAzureCAPIProvider     = "IMAGE_AZURE_CAPI_PROVIDER"
	ImageOverrideKubevirtCAPIProvider  = "IMAGE_KUBEVIRT_CAPI_PROVIDER"
	ImageOverridePowerVSCAPIProvider   = "IMAGE_POWERVS_CAPI_PROVIDER"
	ImageOverrideOpenStackCAPIProvider = "IMAGE_OPENSTACK_CAPI_PROVIDER"
	ImageOverrideKonnectivity          = "IMAGE_KONNECTIVITY"
	ImageOverrideAWSEncryptionProvider = "IMAGE_AWS_ENCRYPTION_PROVIDER"
)

// CAPIMode selects which Cluster API CRDs the HyperShift operator uses on a
// management cluster.
// +kubebuilder:validation:Enum=Standard;Private;Auto
type CAPIMode string

const (
	// CAPIModeStandard uses the standard cluster.x-k8s.io CRDs, installed and owned by
	// hcp-fleet.
	CAPIModeStandard CAPIMode = "Standard"
	// CAPIModePrivate uses HyperShift's private copies of the CAPI CRDs in
	// *.cluster.hypershift.openshift.io, reached through the CAPI API proxy, so the
	// platform may own the standard CRDs.
	CAPIModePrivate CAPIMode = "Private"
	// CAPIModeAuto chooses Private when the management cluster's platform already owns
	// the standard CAPI CRDs and Standard otherwise, and migrates existing hosted
	// clusters when that changes.
	CAPIModeAuto CAPIMode = "Auto"
)

// PrivatePlatformType is the platform on which the HyperShift operator supports
// private hosted clusters (hosted clusters whose API is reachable only through a
// private endpoint).
// +kubebuilder:validation:Enum=None;AWS
type PrivatePlatformType string

const (
	// PrivatePlatformNone supports no private hosted clusters.
	PrivatePlatformNone PrivatePlatformType = "None"
	// PrivatePlatformAWS supports private hosted clusters on AWS (PrivateLink).
	PrivatePlatformAWS PrivatePlatformType = "AWS"
)

// ExternalDNSProvider is a DNS provider external-dns can manage records in, as
// `hypershift install --external-dns-provider` names it.
// +kubebuilder:validation:Enum=aws;azure;ibm-cloud
type ExternalDNSProvider string

const (
	// ExternalDNSProviderAWS manages records in AWS Route 53.
	ExternalDNSProviderAWS ExternalDNSProvider = "aws"
	// ExternalDNSProviderAzure manages records in Azure DNS.
	ExternalDNSProviderAzure ExternalDNSProvider = "azure"
	// ExternalDNSProviderIBMCloud manages records in IBM Cloud DNS.
	ExternalDNSProviderIBMCloud ExternalDNSProvider = "ibm-cloud"
)

// HostingConfigSpec configures the hcp-fleet add-on on management clusters: how the
// HyperShift operator is installed and run, how many hosted clusters a management
// cluster takes, and which companions run next to it.
//
// Optional parts are pointers and optional collections must not be empty, so a spec
// read from the apiserver encodes back to the JSON the apiserver stored; Hash relies
// on that.
type HostingConfigSpec struct {
	// agentImage is the hcp-fleet agent image on the management clusters this
	// config applies to. When unset, the hub's --agent-image is used. Changing it
	// rolls the agent out on those clusters only.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule=`!self.matches('\\s')`,message="spec.agentImage must be an image pull spec without white space"
	AgentImage string `json:"agentImage,omitempty"`

	// operator configures the HyperShift operator image.
	// +optional
	Operator *HyperShiftOperatorConfig `json:"operator,omitempty"`

	// install holds HyperShift operator install options (what `hypershift install`
	// takes as flags).
	// +optional
	Install *InstallOptions `json:"install,omitempty"`

	// capacity limits how many hosted clusters the scheduler places on one management
	// cluster.
	// +optional
	// +kubebuilder:default={}
	Capacity *CapacityConfig `json:"capacity,omitempty"`

	// capiMode selects the Cluster API CRDs the HyperShift operator uses: Standard
	// (cluster.x-k8s.io), Private (HyperShift's private copies in
	// *.cluster.hypershift.openshift.io behind the CAPI API proxy) or Auto (Private
	// when the platform already owns the standard CRDs, otherwise Standard). Once
	// the agent has installed the private CRDs, it runs the HyperShift operator with
	// --private-capi-types and migrates existing hosted clusters to them.
	// +optional
	// +kubebuilder:default=Auto
	CAPIMode CAPIMode `json:"capiMode,omitempty"`

	// olm is the fleet's policy for the OLM catalogs of the hosted clusters on these
	// management clusters: catalog images per OpenShift minor and registry overrides,
	// delivered onto each HostedCluster as HyperShift's annotations.
	// +optional
	OLM *OLMConfig `json:"olm,omitempty"`

	// agentProviders selects which OpenShift Agent Cluster API providers the add-on
	// agent runs on the management cluster. Both are off unless enabled.
	// +optional
	AgentProviders *AgentProvidersConfig `json:"agentProviders,omitempty"`

	// hostingNamespaces are the namespaces on management clusters with this
	// configuration where hosted clusters may be delivered (a HostedClusterDeployment's
	// spec.hostingNamespace). The scheduler binds a HostedClusterDeployment only to a
	// management cluster whose configuration allows its namespace; one already
	// delivered whose namespace is no longer allowed keeps running but is not updated
	// any more (Delivered=False, reason HostingNamespaceNotAllowed). When unset, only
	// clusters is allowed. Reserved namespaces cannot be listed: default, kube-*,
	// openshift, openshift-*, open-cluster-management*, hypershift and hcp-fleet*.
	// Nor can a namespace be listed with one that extends it by '-' (a and a-b):
	// HyperShift runs a hosted cluster's control plane in <namespace>-<name>, so
	// hosted cluster b in a would run its control plane in the hosting namespace
	// a-b.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule=`self.all(a, !self.exists(b, b.startsWith(a + '-')))`,messageExpression="'spec.hostingNamespaces lists ' + self.filter(a, self.exists(b, b.startsWith(a + '-')))[0] + ' together with a namespace that starts with ' + self.filter(a, self.exists(b, b.startsWith(a + '-')))[0] + '-: HyperShift runs the control plane of hosted cluster <name> in the namespace <hostingNamespace>-<name>, so a hosted cluster in ' + self.filter(a, self.exists(b, b.startsWith(a + '-')))[0] + ' would get one of the listed hosting namespaces as its control-plane namespace (a with a-b: hosted cluster b in a runs in a-b); list only one of them'"
	HostingNamespaces []HostingNamespaceName `json:"hostingNamespaces,omitempty"`

	// hostedClusterImport Disabled keeps the hub from importing the hosted
	// clusters on these management clusters as ManagedClusters (as the MCE
	// HyperShift add-on's auto-import turned off): their admin kubeconfigs
	// are still mirrored to the hub. Hosted clusters imported before stay
	// imported until their ManagedCluster is deleted. Unset or Enabled:
	// imported, unless the hub or the HostedClusterDeployment says otherwise.
	// +optional
	HostedClusterImport ImportMode `json:"hostedClusterImport,omitempty"`
}

// HostingNamespaceName is a namespace on management clusters where hosted clusters may
// be delivered: a namespace name that is not reserved (default, kube-*, openshift,
// openshift-*, open-cluster-management*, hypershift, hcp-fleet*).
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`,message="must be a valid namespace name: a lowercase RFC 1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)"
// +kubebuilder:validation:XValidation:rule=`!(self in ['default', 'openshift', 'hypershift'] || self.startsWith('kube-') || self.startsWith('openshift-') || self.startsWith('open-cluster-management') || self.startsWith('hcp-fleet') || self == 'kube' || 'open-cluster-management'.startsWith(self + '-') || 'hcp-fleet'.startsWith(self + '-'))`,messageExpression="self + ' is reserved and cannot hold hosted clusters: default, kube-*, openshift, openshift-*, open-cluster-management*, hypershift and hcp-fleet* belong to the management cluster, OCM, the HyperShift operator or the hcp-fleet agent, and kube, open, open-cluster and hcp would put the HyperShift control-plane namespace (<namespace>-<name>) among them'"
type HostingNamespaceName string

// HyperShiftOperatorConfig configures the HyperShift operator's images.
// +kubebuilder:validation:XValidation:rule=`!has(self.management) || self.management != 'External' || (!has(self.image) && !has(self.imageOverrides) && !(has(self.adoptExisting) && self.adoptExisting))`,message="spec.operator.management External leaves the HyperShift operator to another manager: image, imageOverrides and adoptExisting do not apply"
type HyperShiftOperatorConfig struct {
	// management says who installs, upgrades and removes the HyperShift
	// operator on the management clusters this HostingConfig applies to.
	// Managed (the default): the hcp-fleet agent does. External: another
	// manager does (e.g. the MCE HyperShift add-on, or `hypershift install`);
	// the agent never installs, changes or removes it, reports it
	// HyperShiftOperatorInstalled=True (reason ExternallyManaged) while it is
	// available, and hcp-fleet still schedules and delivers hosted clusters
	// there.
	// +optional
	Management HyperShiftOperatorManagement `json:"management,omitempty"`

	// image is the HyperShift operator image. When unset, the image this hcp-fleet
	// release was built and tested with is used.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule=`!self.matches('\\s')`,message="spec.operator.image must be an image pull spec without white space"
	Image string `json:"image,omitempty"`

	// imageOverrides sets IMAGE_* environment variables of the HyperShift operator, which
	// replace the images it would otherwise take from the release payload or its
	// built-in defaults, e.g. IMAGE_CLUSTER_API, IMAGE_AGENT_CAPI_PROVIDER,
	// IMAGE_KUBEVIRT_CAPI_PROVIDER, IMAGE_KONNECTIVITY. Keys must match
	// ^IMAGE_[A-Z0-9_]+$; values are image pull specs.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.matches('^IMAGE_[A-Z0-9_]+$'))`,message="spec.operator.imageOverrides keys must be HyperShift operator image variables matching ^IMAGE_[A-Z0-9_]+$, e.g. IMAGE_CLUSTER_API, IMAGE_AGENT_CAPI_PROVIDER, IMAGE_KUBEVIRT_CAPI_PROVIDER, IMAGE_KONNECTIVITY"
	ImageOverrides map[string]ImagePullSpec `json:"imageOverrides,omitempty"`

	// adoptExisting lets the agent take over a HyperShift operator that was
	// installed by something else (e.g. `hypershift install` or another add-on).
	// Unset, the agent leaves such an install alone and reports it on the
	// ManagedClusterAddOn.
	// +optional
	AdoptExisting bool `json:"adoptExisting,omitempty"`
}

// HyperShiftOperatorManagement says who manages the HyperShift operator.
// +kubebuilder:validation:Enum=Managed;External
type HyperShiftOperatorManagement string

const (
	// HyperShiftOperatorManaged: the hcp-fleet agent installs, upgrades and
	// removes the operator.
	HyperShiftOperatorManaged HyperShiftOperatorManagement = "Managed"
	// HyperShiftOperatorExternal: another manager does; the agent leaves it
	// alone and reports its availability.
	HyperShiftOperatorExternal HyperShiftOperatorManagement = "External"
)

// External reports whether the operator is left to another manager.
func (o *HyperShiftOperatorConfig) External() bool {
	return o != nil && o.Management == HyperShiftOperatorExternal
}

// ImagePullSpec is a container image reference, e.g. quay.io/org/image:tag or
// registry.example.com/org/image@sha256:... (a named type so the schema can bound the
// values of maps, which keeps the CEL rules on them within the apiserver's cost budget).
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=1024
// +kubebuilder:validation:XValidation:rule=`!self.matches('\\s')`,message="must be an image pull spec without white space"
type ImagePullSpec string

// InstallOptions are HyperShift operator install options.
type InstallOptions struct {
	// oidcStorage is the S3 bucket where HyperShift publishes the OIDC discovery
	// documents of AWS hosted clusters.
	// +optional
	OIDCStorage *OIDCStorageS3 `json:"oidcStorage,omitempty"`

	// externalDNS runs external-dns next to the HyperShift operator so hosted cluster
	// API and OAuth endpoints get DNS names under a public zone.
	// +optional
	ExternalDNS *ExternalDNSConfig `json:"externalDNS,omitempty"`

	// privatePlatform is the platform on which the HyperShift operator supports private
	// hosted clusters.
	// +optional
	PrivatePlatform *PrivatePlatformConfig `json:"privatePlatform,omitempty"`
}

// OIDCStorageS3 is the S3 bucket for hosted clusters' OIDC documents.
type OIDCStorageS3 struct {
	// bucket is the name of the S3 bucket.
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9][a-z0-9.-]*[a-z0-9]$')`,message="spec.install.oidcStorage.bucket must be an S3 bucket name: lowercase letters, digits, '.' and '-'"
	Bucket string `json:"bucket"`

	// region is the AWS region of the bucket, e.g. us-east-1.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region"`

	// credentialsSecret holds AWS credentials (a shared credentials file) allowed to
	// write to the bucket.
	// +required
	CredentialsSecret CredentialsSecretReference `json:"credentialsSecret"`
}

// ExternalDNSConfig configures external-dns for hosted cluster endpoints.
type ExternalDNSConfig struct {
	// provider is the DNS provider: aws, azure or ibm-cloud.
	// +required
	Provider ExternalDNSProvider `json:"provider"`

	// credentialsSecret holds the provider credentials external-dns uses.
	// +required
	CredentialsSecret CredentialsSecretReference `json:"credentialsSecret"`

	// domainFilter restricts external-dns to this DNS domain, e.g.
	// hosted.example.com; hosted clusters publishing endpoints must use names under it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,message="spec.install.externalDNS.domainFilter must be a DNS domain such as hosted.example.com"
	DomainFilter string `json:"domainFilter"`

	// txtOwnerID identifies this management cluster's records in the zone (external-dns
	// --txt-owner-id) so several management clusters can share one zone. When unset,
	// the ManagedCluster name is used.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	TxtOwnerID string `json:"txtOwnerID,omitempty"`
}

// PrivatePlatformConfig is the platform for private hosted clusters.
// +kubebuilder:validation:XValidation:rule="self.type == 'AWS' ? has(self.aws) : !has(self.aws)",message="spec.install.privatePlatform.aws is required when type is AWS and not allowed otherwise"
type PrivatePlatformConfig struct {
	// type is the platform: None or AWS.
	// +optional
	// +kubebuilder:default=None
	Type PrivatePlatformType `json:"type,omitempty"`

	// aws configures AWS PrivateLink for private hosted clusters; required when type is
	// AWS.
	// +optional
	AWS *AWSPrivatePlatform `json:"aws,omitempty"`
}

// AWSPrivatePlatform configures AWS PrivateLink for private hosted clusters.
type AWSPrivatePlatform struct {
	// region is the AWS region of the management cluster, e.g. us-east-1.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region"`

	// credentialsSecret holds AWS credentials allowed to manage PrivateLink endpoint
	// services.
	// +required
	CredentialsSecret CredentialsSecretReference `json:"credentialsSecret"`
}

// CredentialsSecretReference names a Secret holding credentials, in the HostingConfig's
// namespace on the hub. hcp-fleet copies it to each management cluster that uses the
// HostingConfig, into the HyperShift operator's namespace; the add-on agent itself
// cannot read outside its cluster namespace on the hub.
type CredentialsSecretReference struct {
	// name is the name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// key is the key of the credentials in the Secret's data.
	// +optional
	// +kubebuilder:default=credentials
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key,omitempty"`
}

// CapacityConfig limits how many hosted clusters one management cluster takes. The
// add-on agent reports the count and free slots; the scheduler uses them, plus the
// hub's own assignments still in flight, to skip full clusters. (The has() guards in
// the rule are for the apiserver's check of the schema default {}, which it validates
// without the nested defaults; stored objects always have both fields.)
// +kubebuilder:validation:XValidation:rule="!has(self.aboveThreshold) || !has(self.maxHostedClusters) || self.aboveThreshold <= self.maxHostedClusters",message="spec.capacity.aboveThreshold must not be greater than spec.capacity.maxHostedClusters"
type CapacityConfig struct {
	// maxHostedClusters is the number of hosted clusters at which a management cluster
	// is full and gets no more.
	// +optional
	// +kubebuilder:default=80
	// +kubebuilder:validation:Minimum=1
	MaxHostedClusters int32 `json:"maxHostedClusters,omitempty"`

	// aboveThreshold is the number of hosted clusters from which a management cluster
	// reports itself above threshold (a ClusterClaim Placements can select on), so
	// fleets can prefer emptier clusters before any is full. At most maxHostedClusters.
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	AboveThreshold int32 `json:"aboveThreshold,omitempty"`

	// perHostedControlPlane is the resource baseline of one hosted control plane. A
	// management cluster's capacity is also limited by the allocatable CPU and memory
	// of its schedulable Nodes divided by the size of one hosted control plane: the
	// average the running ones request once there are some, this baseline before.
	// +optional
	PerHostedControlPlane *ResourceBaseline `json:"perHostedControlPlane,omitempty"`
}

// ResourceBaseline is the CPU and memory one hosted control plane needs.
// +kubebuilder:validation:MinProperties=1
type ResourceBaseline struct {
	// cpu is the CPU one hosted control plane requests, e.g. "5".
	// +optional
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.capacity.perHostedControlPlane.cpu must be greater than zero"
	CPU *resource.Quantity `json:"cpu,omitempty"`

	// memory is the memory one hosted control plane requests, e.g. "18Gi".
	// +optional
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.capacity.perHostedControlPlane.memory must be greater than zero"
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// OLMConfig is the fleet's policy for the OLM catalogs of the hosted clusters on the
// management clusters that run with this configuration. The hub delivers it onto each
// HostedCluster as HyperShift's annotations (hypershift.openshift.io/<catalog>-catalog-image
// and hypershift.openshift.io/olm-catalogs-is-registry-overrides); annotations of the same
// names that a HostedClusterDeployment sets itself, and the hub lets through, win over it.
// Changing it updates the running hosted clusters it applies to, and no others.
type OLMConfig struct {
	// catalogs pins the images of the four default catalogs (redhat-operators,
	// certified-operators, community-operators, redhat-marketplace), by digest, for
	// hosted clusters of one OpenShift minor version each. It applies to hosted clusters
	// whose catalogs run on the management side (olmCatalogPlacement management, the
	// default); with guest placement OLM in the hosted cluster runs the catalogs. A hosted
	// cluster of a minor not listed here gets the catalogs its release selects.
	// +optional
	// +listType=map
	// +listMapKey=openShiftVersion
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Catalogs []OLMCatalogImages `json:"catalogs,omitempty"`

	// registryOverrides redirects the catalog images of every hosted cluster (either
	// placement) in disconnected environments: a catalog image under a source is pulled
	// from its mirrors instead. HyperShift replaces the source string in the image
	// reference, so the catalogs must be mirrored under their original names and tags.
	// +optional
	// +listType=map
	// +listMapKey=source
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	RegistryOverrides []RegistryOverride `json:"registryOverrides,omitempty"`

	// subscriptionDefaults is where operators that users install in the hosted clusters
	// run by default: the agent sets this node selector and these tolerations on every
	// OLM Subscription in a hosted cluster whose spec.config sets neither (OLM puts them
	// on the operator's Deployment), and never changes a Subscription that sets either.
	// Use it when only some node pools can reach the hosted control plane. A
	// HostedClusterDeployment's spec.olm.subscriptionDefaults replaces it for that
	// hosted cluster.
	// +optional
	SubscriptionDefaults *SubscriptionDefaults `json:"subscriptionDefaults,omitempty"`

	// catalogSources are CatalogSources outside openshift-marketplace whose health
	// the agent reports too (HostedClusterDeployment condition CatalogsReady), in every
	// hosted cluster of this HostingConfig: catalogs users or a team add in their own
	// namespaces. A named CatalogSource that does not exist in a hosted cluster counts as
	// not serving (MISSING). Every CatalogSource in openshift-marketplace is reported
	// anyway.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	CatalogSources []CatalogSourceReference `json:"catalogSources,omitempty"`
}

// CatalogSourceReference names a CatalogSource in a hosted cluster.
type CatalogSourceReference struct {
	// namespace of the CatalogSource in the hosted cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace"`

	// name of the CatalogSource.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// SubscriptionDefaults are the spec.config.nodeSelector and spec.config.tolerations
// the agent sets on OLM Subscriptions in a hosted cluster that set neither. Values it
// set are marked on the Subscription (annotation hcpfleet.io/subscription-defaults);
// it updates or removes them when the defaults change or go away, unless someone has
// changed them since, and then leaves them alone for good. Empty ({}) sets no defaults.
type SubscriptionDefaults struct {
	// nodeSelector is the default spec.config.nodeSelector: the operator's pods run
	// only on nodes with all these labels. Keys and values are label keys and values.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$'))",message="subscriptionDefaults.nodeSelector keys must be label keys: an optional DNS subdomain prefix and '/', then a name of letters, digits, '-', '_' and '.' starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self.all(k, self[k].matches('^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$'))",message="subscriptionDefaults.nodeSelector values must be label values: at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	NodeSelector map[string]LabelValue `json:"nodeSelector,omitempty"`

	// tolerations is the default spec.config.tolerations, as on a Pod: they let the
	// operator's pods run on nodes with matching taints.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Tolerations []Toleration `json:"tolerations,omitempty"`
}

// LabelValue is a Kubernetes label value.
// +kubebuilder:validation:MaxLength=63
type LabelValue string

// Toleration is core's Toleration (k8s.io/api/core/v1), with the validation Kubernetes
// applies to a Pod's at admission.
// +kubebuilder:validation:XValidation:rule="(has(self.key) && size(self.key) > 0) || (has(self.operator) && self.operator == 'Exists')",message="subscriptionDefaults.tolerations[]: a toleration without key must have operator Exists (it tolerates every taint)"
// +kubebuilder:validation:XValidation:rule="!has(self.operator) || self.operator != 'Exists' || !has(self.value) || size(self.value) == 0",message="subscriptionDefaults.tolerations[].value must be empty when operator is Exists"
// +kubebuilder:validation:XValidation:rule="!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",message="subscriptionDefaults.tolerations[].tolerationSeconds needs effect NoExecute"
type Toleration struct {
	// key is the taint key the toleration applies to; empty (with operator Exists)
	// matches every key.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="size(self) == 0 || self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="subscriptionDefaults.tolerations[].key must be a label key: an optional DNS subdomain prefix and '/', then a name of letters, digits, '-', '_' and '.' starting and ending with a letter or digit"
	Key string `json:"key,omitempty"`

	// operator is Exists (any value) or Equal (the default: value must match).
	// +optional
	// +kubebuilder:validation:Enum=Exists;Equal
	Operator corev1.TolerationOperator `json:"operator,omitempty"`

	// value is the taint value the toleration matches with operator Equal.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$')",message="subscriptionDefaults.tolerations[].value must be a label value: letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
	Value string `json:"value,omitempty"`

	// effect is the taint effect to match: NoSchedule, PreferNoSchedule or NoExecute;
	// empty matches every effect.
	// +optional
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	Effect corev1.TaintEffect `json:"effect,omitempty"`

	// tolerationSeconds is how long a NoExecute taint is tolerated before the pod is
	// evicted; unset: forever.
	// +optional
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// Core is the Toleration as core's type.
func (t Toleration) Core() corev1.Toleration {
	return corev1.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect, TolerationSeconds: t.TolerationSeconds}
}

// Placement is the defaults as a Pod's (and OLM's SubscriptionConfig's) types: nil
// for what they do not set.
func (d *SubscriptionDefaults) Placement() (nodeSelector map[string]string, tolerations []corev1.Toleration) {
	if d == nil {
		return nil, nil
	}
	if len(d.NodeSelector) > 0 {
		nodeSelector = make(map[string]string, len(d.NodeSelector))
		for k, v := range d.NodeSelector {
			nodeSelector[k] = string(v)
		}
	}
	for _, t := range d.Tolerations {
		tolerations = append(tolerations, t.Core())
	}
	return nodeSelector, tolerations
}

// OLMCatalogImages are the images of the default OLM catalogs for one OpenShift minor
// version. HyperShift uses all four images or none, and only by digest.
// +kubebuilder:validation:XValidation:rule="has(self.redHatOperators) && has(self.certifiedOperators) && has(self.communityOperators) && has(self.redHatMarketplace)",message="spec.olm.catalogs[] must set all four catalog images (redHatOperators, certifiedOperators, communityOperators, redHatMarketplace): HyperShift overrides all default catalogs or none"
type OLMCatalogImages struct {
	// openShiftVersion is the OpenShift minor version ("4.18") of the hosted clusters
	// these catalogs are for.
	// +required
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[0-9]+[.][0-9]+$')`,message="spec.olm.catalogs[].openShiftVersion must be an OpenShift minor version such as 4.18"
	OpenShiftVersion string `json:"openShiftVersion"`

	// redHatOperators is the image of the redhat-operators catalog, by digest.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[^\\s@]+@sha256:[a-f0-9]{64}$')`,message="spec.olm.catalogs[].redHatOperators must be an image by digest (repository@sha256:<64 hex digits>): HyperShift takes catalog images by digest only"
	RedHatOperators string `json:"redHatOperators,omitempty"`

	// certifiedOperators is the image of the certified-operators catalog, by digest.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[^\\s@]+@sha256:[a-f0-9]{64}$')`,message="spec.olm.catalogs[].certifiedOperators must be an image by digest (repository@sha256:<64 hex digits>): HyperShift takes catalog images by digest only"
	CertifiedOperators string `json:"certifiedOperators,omitempty"`

	// communityOperators is the image of the community-operators catalog, by digest.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[^\\s@]+@sha256:[a-f0-9]{64}$')`,message="spec.olm.catalogs[].communityOperators must be an image by digest (repository@sha256:<64 hex digits>): HyperShift takes catalog images by digest only"
	CommunityOperators string `json:"communityOperators,omitempty"`

	// redHatMarketplace is the image of the redhat-marketplace catalog, by digest.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[^\\s@]+@sha256:[a-f0-9]{64}$')`,message="spec.olm.catalogs[].redHatMarketplace must be an image by digest (repository@sha256:<64 hex digits>): HyperShift takes catalog images by digest only"
	RedHatMarketplace string `json:"redHatMarketplace,omitempty"`
}

// RegistryOverride maps a registry (or a repository in it) to mirrors serving the same
// images under the same names.
type RegistryOverride struct {
	// source is a registry, or a repository in it, e.g. registry.redhat.io/redhat.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule=`!self.matches('[\\s,=]')`,message="spec.olm.registryOverrides[].source must be a registry or repository without white space, ',' or '='"
	Source string `json:"source"`

	// mirrors are registries or repositories serving the same images as source.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:XValidation:rule=`self.all(m, !m.matches('[\\s,=]'))`,message="spec.olm.registryOverrides[].mirrors must be registries or repositories without white space, ',' or '='"
	Mirrors []string `json:"mirrors"`
}

// AgentProvidersConfig selects the OpenShift Agent Cluster API providers (which
// install OpenShift on bare metal through assisted-service) the add-on agent runs.
// +kubebuilder:validation:XValidation:rule="!self.controlPlane || self.bootstrap",message="spec.agentProviders.controlPlane requires spec.agentProviders.bootstrap: the control-plane provider's machines are bootstrapped by the bootstrap provider"
type AgentProvidersConfig struct {
	// bootstrap runs the bootstrap provider (OpenshiftAssistedConfig).
	// +optional
	// +kubebuilder:default=false
	Bootstrap bool `json:"bootstrap"`

	// controlPlane runs the control-plane provider (OpenshiftAssistedControlPlane); it
	// needs bootstrap.
	// +optional
	// +kubebuilder:default=false
	ControlPlane bool `json:"controlPlane"`
}

// HostingConfig is the configuration of the hcp-fleet add-on on management clusters.
// The ClusterManagementAddOn lists hostingconfigs.hcpfleet.io among its supported
// configs, with a default; a ManagedClusterAddOn may name another one in spec.configs
// to override it for one management cluster. It is namespaced, like
// AddOnDeploymentConfig, because OCM refers to add-on configs by name and namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=hostingconfigs,singular=hostingconfig,scope=Namespaced
// +kubebuilder:printcolumn:name="Max",type="integer",JSONPath=".spec.capacity.maxHostedClusters",description="Hosted clusters at which a management cluster is full"
// +kubebuilder:printcolumn:name="Threshold",type="integer",JSONPath=".spec.capacity.aboveThreshold",description="Hosted clusters from which a management cluster is above threshold"
// +kubebuilder:printcolumn:name="CAPI",type="string",JSONPath=".spec.capiMode",description="Cluster API CRD mode"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type HostingConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the configuration.
	// +optional
	// +kubebuilder:default={}
	Spec HostingConfigSpec `json:"spec,omitempty"`
}

// HostingConfigList is a list of HostingConfigs.
//
// +kubebuilder:object:root=true
type HostingConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HostingConfig `json:"items"`
}

// HostsAWS reports whether management clusters with this configuration can
// host AWS hosted clusters: HyperShift needs an OIDC storage bucket for them.
// The agent advertises the AWS platform to the scheduler and installs the AWS
// Cluster API CRDs on the same condition.
func (s *HostingConfigSpec) HostsAWS() bool {
	return s.Install != nil && s.Install.OIDCStorage != nil
}

// Limits returns spec.capacity's maxHostedClusters and aboveThreshold with
// the API defaults filled in where the spec has none (a spec read from a
// ConfigMap or built in code is not defaulted by the API server). Hub and
// agent take capacity from here only.
func (s *HostingConfigSpec) Limits() (maxHostedClusters, aboveThreshold int32) {
	maxHostedClusters, aboveThreshold = DefaultMaxHostedClusters, DefaultAboveThreshold
	if s == nil || s.Capacity == nil {
		return maxHostedClusters, aboveThreshold
	}
	if s.Capacity.MaxHostedClusters > 0 {
		maxHostedClusters = s.Capacity.MaxHostedClusters
	}
	if s.Capacity.AboveThreshold > 0 {
		aboveThreshold = s.Capacity.AboveThreshold
	}
	return maxHostedClusters, aboveThreshold
}

// AllowsHostingNamespace reports whether hosted clusters may be delivered into
// namespace ns on management clusters with this configuration: ns is listed in
// spec.hostingNamespaces, or, when the list is unset, ns is the default hosting
// namespace (clusters). A reserved namespace is never allowed, and "" stands for
// the default (an HCD's unset spec.hostingNamespace). Hub code decides from here only.
func (s *HostingConfigSpec) AllowsHostingNamespace(ns string) bool {
	if ns == "" {
		ns = DefaultHostingNamespace
	}
	if ReservedHostingNamespace(ns) {
		return false
	}
	if s == nil || len(s.HostingNamespaces) == 0 {
		return ns == DefaultHostingNamespace
	}
	return slices.Contains(s.HostingNamespaces, HostingNamespaceName(ns))
}

// AllowedHostingNamespaces lists the namespaces AllowsHostingNamespace accepts, for
// messages.
func (s *HostingConfigSpec) AllowedHostingNamespaces() []string {
	if s == nil || len(s.HostingNamespaces) == 0 {
		return []string{DefaultHostingNamespace}
	}
	out := make([]string, 0, len(s.HostingNamespaces))
	for _, ns := range s.HostingNamespaces {
		out = append(out, string(ns))
	}
	return out
}

func init() {
	SchemeBuilder.Register(&HostingConfig{}, &HostingConfigList{})
}
