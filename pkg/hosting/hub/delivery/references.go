package delivery

// The classes of every reference-shaped field of HyperShift's
// HostedClusterSpec and NodePoolSpec that hack/refs finds
// (zz_generated.references.go), by hand: what each name refers to is in the
// field's documentation, not in its type. The tests fail when a generated
// path is missing here or a path here is no longer generated, so a HyperShift
// bump that adds a reference cannot be delivered until someone decides
// whether the hub copies it: `make generate`, then the test names the path.
//
// Secret and ConfigMap: HyperShift reads the object from the HostedCluster's
// namespace, which on a management cluster is shared by every hosted cluster
// delivered there. The hub reads the tenant's object from the
// HostedClusterDeployment's namespace and delivers a renamed copy
// (CopyName); a reference that passed through as written would resolve to
// whatever the shared namespace holds: another tenant's copy, HyperShift's
// own Secrets of another hosted cluster.
//
// The configuration.* references are the ones HyperShift's own
// util/configrefs collects and copies from the HostedCluster's namespace into
// the control plane's.

// hostedClusterClasses classifies the fields of
// generatedHostedClusterReferences.
var hostedClusterClasses = map[string]classification{
	"additionalTrustBundle":    configMap,
	"auditWebhook":             secret,
	"pullSecret":               secret,
	"serviceAccountSigningKey": secret,
	"sshKey":                   secret,

	"etcd.unmanaged.tls.clientSecret": secret,

	"secretEncryption.aescbc.activeKey":                        secret,
	"secretEncryption.aescbc.backupKey":                        secret,
	"secretEncryption.kms.ibmcloud.auth.unmanaged.credentials": secret,

	"platform.kubevirt.credentials.infraKubeConfigSecret": secret,
	// clouds.yaml (and cacert) "in the same namespace as the resource
	// being provisioned".
	"platform.openstack.identityRef":                   secret,
	"platform.powervs.imageRegistryOperatorCloudCreds": secret,
	"platform.powervs.ingressOperatorCloudCreds":       secret,
	"platform.powervs.kubeCloudControllerCreds":        secret,
	"platform.powervs.nodePoolManagementCreds":         secret,
	"platform.powervs.storageOperatorCloudCreds":       secret,

	"configuration.apiServer.clientCA":                                            configMap,
	"configuration.apiServer.servingCerts.namedCertificates[].servingCertificate": secret,

	"configuration.authentication.oauthMetadata":                                     configMap,
	"configuration.authentication.oidcProviders[].issuer.issuerCertificateAuthority": configMap,
	"configuration.authentication.oidcProviders[].oidcClients[].clientSecret":        secret,
	"configuration.authentication.webhookTokenAuthenticator.kubeConfig":              secret,
	"configuration.authentication.webhookTokenAuthenticators[].kubeConfig":           secret,

	"configuration.image.additionalTrustedCA":                          configMap,
	"configuration.ingress.componentRoutes[].servingCertKeyPairSecret": secret,
	"configuration.proxy.trustedCA":                                    configMap,
	"configuration.scheduler.policy":                                   configMap,

	"configuration.oauth.templates.error":             secret,
	"configuration.oauth.templates.login":             secret,
	"configuration.oauth.templates.providerSelection": secret,

	"configuration.oauth.identityProviders[].basicAuth.ca":            configMap,
	"configuration.oauth.identityProviders[].basicAuth.tlsClientCert": secret,
	"configuration.oauth.identityProviders[].basicAuth.tlsClientKey":  secret,
	"configuration.oauth.identityProviders[].github.ca":               configMap,
	"configuration.oauth.identityProviders[].github.clientSecret":     secret,
	"configuration.oauth.identityProviders[].gitlab.ca":               configMap,
	"configuration.oauth.identityProviders[].gitlab.clientSecret":     secret,
	"configuration.oauth.identityProviders[].google.clientSecret":     secret,
	"configuration.oauth.identityProviders[].htpasswd.fileData":       secret,
	"configuration.oauth.identityProviders[].keystone.ca":             configMap,
	"configuration.oauth.identityProviders[].keystone.tlsClientCert":  secret,
	"configuration.oauth.identityProviders[].keystone.tlsClientKey":   secret,
	"configuration.oauth.identityProviders[].ldap.bindPassword":       secret,
	"configuration.oauth.identityProviders[].ldap.ca":                 configMap,
	"configuration.oauth.identityProviders[].openID.ca":               configMap,
	"configuration.oauth.identityProviders[].openID.clientSecret":     secret,
	"configuration.oauth.identityProviders[].requestHeader.ca":        configMap,
}

// nodePoolClasses classifies the fields of generatedNodePoolReferences.
var nodePoolClasses = map[string]classification{
	// "references to ConfigMaps containing serialized MachineConfig
	// resources" and "Tuned or PerformanceProfile resources", which
	// HyperShift reads from the NodePool's namespace.
	"config[]":       configMap,
	"tuningConfig[]": configMap,

	"platform.kubevirt.additionalNetworks[]": notLocal(`a Multus NetworkAttachmentDefinition ("[namespace]/name") on the KubeVirt infra cluster, not a Secret or ConfigMap`),
}
