// Package hub is the hub side of the hcp-fleet OCM add-on. It runs in the hub
// process (pkg/cmd/hub), inside OCM's addon-framework add-on manager, and
// serves, per management cluster:
//
//   - the agent's manifests, which the add-on manager wraps into
//     ManifestWorks in the cluster's namespace;
//   - the agent's registration: a CSR-based hub identity, approved
//     automatically for exactly that identity;
//   - the agent's hub permissions: a RoleBinding of the ClusterRole HubRole
//     (manifests/hub) in its own cluster namespace only.
//
// It reads the configs OCM resolved for the cluster's ManagedClusterAddOn
// (status.configReferences): the AddOnDeploymentConfig (install namespace,
// node placement, image registries, resource requirements, proxy) and the
// HostingConfig (read unstructured, so the spec reaches the agent exactly as
// stored), and the Secrets the HostingConfig references in its namespace. It
// writes, on the hub, only the RoleBinding of HubRole in each cluster
// namespace (and removes the Role an older hub made there); everything else reaches the management cluster through
// the ManifestWorks. SetupCredentialsWatch re-renders a cluster's agent when
// a Secret its HostingConfig references changes.
//
// # The template factory
//
// The manifests are addon-framework's template agent add-on
// (addonfactory.NewAgentAddonFactory(...).BuildTemplateAgentAddon()) over
// the Go templates in manifests/agent, rendered with
//
//   - the factory's built-in ClusterName and AddonInstallNamespace;
//   - addonfactory.GetAddOnDeploymentConfigValues with
//     ToAddOnNodePlacementValues, ToAddOnResourceRequirementsValues and
//     ToAddOnProxyConfigValues (the Helm-style "tolerations" and
//     "global.nodeSelector", "global.resourceRequirements",
//     "global.proxyConfig" values);
//   - agentValues, this package's values function: the image, the
//     HostingConfig (spec, OCM's spec hash, source), the credential copies
//     and the hosting namespaces the agent may delete (its RBAC names them).
//
// What the factory does not do, and is therefore done here:
//
//   - It only computes values: in addon-framework v1.2.0 neither the template
//     nor the Helm factory applies node placement, registries, resources or
//     proxy to the rendered Deployments and Jobs by itself. The templates
//     (04-deployment.yaml, 05-cleanup-job.yaml) use the values: node selector
//     and tolerations, the resources of the last rule whose containerIDRegex
//     matches "<resource>:<name>:<container>" (replacing the template's own
//     resources), and HTTP_PROXY, HTTPS_PROXY and NO_PROXY.
//     ToAddOnProxyConfigValues yields nothing without an HTTP or HTTPS
//     proxy, so a NO_PROXY alone (which has no effect without a proxy) is not
//     set; its PROXY_CA_BUNDLE is not used.
//   - ToImageOverrideValuesFunc applies the registries to an image fixed when
//     the values functions are built, and the factory's values functions
//     cannot see each other's values. The image is the HostingConfig's
//     agentImage (or the default), known only per render, so agentValues
//     reads the HostingConfig and then calls GetAddOnDeploymentConfigValues
//     with ToImageOverrideValuesFunc for that image itself.
//   - The template factory decodes exactly one object per template file (a
//     second YAML document in a file is dropped without a word; a file that
//     renders to no object is skipped), so it cannot make a variable number
//     of objects from a list. The credential copies (at most one per kind of
//     credentials a HostingConfig can reference, addon.CredentialRefs) each
//     have a template file, 06-08, rendering the copy of its kind, or the
//     same Secret empty when there is none (OCM's work agent can leave a
//     Secret dropped from the ManifestWork behind, render.go); a copy of a
//     kind without a template is a render error, never dropped. They come before the HostingConfig ConfigMap (09), by file
//     order, as the agent expects. The credentials themselves are read by
//     hand (credentials.go): the factory has no notion of Secrets a config
//     references.
//   - The factory's default install namespace is the ManagedClusterAddOn's
//     spec.installNamespace or open-cluster-management-agent-addon, and
//     utils.AgentInstallNamespaceFromDeploymentConfigFunc gives "" without an
//     AddOnDeploymentConfig; installNamespace defaults to hcp-fleet-agent and
//     is set both as the template's and as the registration's install
//     namespace.
//   - The factory's default hosted-mode function puts an add-on annotated
//     with a hosting cluster into hosted mode; this add-on has none, so the
//     mode is always the default one.
//   - The factory panics when a template fails to execute; Manifests turns
//     that into an error of the render.
//   - Hub permissions stay hand-written (grantHubPermissions): the
//     framework's RBAC permission builder binds either every group of the
//     registration subject (BindKubeClientRole: also
//     system:open-cluster-management:addon:hcp-fleet and
//     system:authenticated, which would let one cluster's agent, or anyone,
//     into another cluster's namespace) or a group fixed when the builder is
//     built (BindRoleToGroup), not the cluster-specific group. The factory
//     passes the RegistrationOption through as it is.
//   - The framework reads configs live (utils.GetDesiredAddOnDeploymentConfig
//     does not compare the spec hash), so a render of a cluster OCM's rollout
//     has not reached would take a changed AddOnDeploymentConfig early;
//     deploymentConfigResolved holds such a render back (release.go).
//
// # Release and health
//
// The hub's images (--agent-image, --hypershift-operator-image) are written
// into the release config, an AddOnDeploymentConfig the
// ClusterManagementAddOn names as its default (ApplyReleaseConfig), so an
// upgrade is rolled out as its rolloutStrategy says. The add-on's health is
// the work prober of health.go: the agent Deployment's availability and the
// agent's HyperShiftOperatorInstalled condition. OCM's rollout reads the
// add-on ManifestWork's Available instead, which the condition rules of
// rollouthealth.go give the same meaning.
package hub
