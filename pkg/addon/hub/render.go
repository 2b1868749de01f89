package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"open-cluster-management.io/addon-framework/pkg/addonfactory"
	"open-cluster-management.io/addon-framework/pkg/utils"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// CredentialCopy is the content of one Secret key a HostingConfig
// references, copied into the agent's install namespace.
type CredentialCopy struct {
	addon.Credential
	// Source is the Secret on the hub, as addon.CredentialRef.Source.
	Source string
	Data   []byte
}

// templatedCredentials are the credentials manifests/agent has a template
// for (0[678]-<purpose>-credentials.yaml): a template renders one object, so
// each copy has its own file.
var templatedCredentials = []addon.Credential{addon.OIDCStorageCredentials, addon.ExternalDNSCredentials, addon.PrivatePlatformCredentials}

// agentValues are the template values of the agent's manifests besides the
// template factory's built-in ones (ClusterName, AddonInstallNamespace) and
// those it derives from the AddOnDeploymentConfig (node placement, resource
// requirements, proxy config):
//
//   - Image: the HostingConfig's agentImage or the default, through the
//     AddOnDeploymentConfig's registries;
//   - HostingConfigSpec (JSON, "{}" without a HostingConfig),
//     HostingConfigHash and HostingConfigSource ("<namespace>/<name>"): the
//     HostingConfig handed to the agent in a ConfigMap;
//   - HostingNamespaces: the namespaces the HostingConfig allows hosted
//     clusters in (spec.hostingNamespaces, or the default), which the agent
//     may delete once empty;
//   - HostingConfigRevision: hostingConfigRevision of what the ConfigMap
//     hands the agent, which the add-on work's health rule compares with the
//     agent's report (rollouthealth.go);
//   - Credentials: the copies of the Secrets the HostingConfig references, by
//     purpose, every purpose present (empty where there is no copy);
//     CredentialProblems: the references the hub could not resolve,
//     as a JSON list of messages for the admin ("" when there are none).
func (a *AgentAddon) agentValues(cluster *clusterv1.ManagedCluster, mca *addonv1alpha1.ManagedClusterAddOn) (addonfactory.Values, error) {
	ctx := context.TODO()
	image := a.opts.DefaultAgentImage
	if err := a.deploymentConfigResolved(ctx, mca); err != nil {
		return nil, err
	}
	// The release's images, from the AddOnDeploymentConfig OCM resolved for
	// this cluster (the release config by default): that they come from a
	// config is what lets OCM's rolloutStrategy gate an upgrade. Without
	// them, the hub's flag and the agent's built-in operator default apply.
	release, err := addonfactory.GetAddOnDeploymentConfigValues(a.adcGetter, addonfactory.ToAddOnCustomizedVariableValues)(cluster, mca)
	if err != nil {
		return nil, err
	}
	if img, ok := release[addon.AgentImageVariable].(string); ok && img != "" {
		image = img
	}
	operatorImage, _ := release[addon.HyperShiftOperatorImageVariable].(string)
	specJSON, hash, source := "{}", "", ""
	// Every kind of copy is rendered, an empty one (no source, no data)
	// where the HostingConfig references none or the hub could not read
	// it, so a copy is emptied rather than dropped from the ManifestWork:
	// OCM's work agent forgets a resource it created when its status write
	// in that sync conflicts and the next spec no longer lists the
	// resource, and never deletes it (open-cluster-management-io/ocm#632).
	// Updates of a listed resource are never lost that way.
	credentials := map[string]*CredentialCopy{}
	for _, c := range templatedCredentials {
		credentials[c.Purpose] = &CredentialCopy{Credential: c}
	}
	problems := ""

	// HostingConfig: read unstructured so the spec reaches the agent exactly
	// as stored, including fields this hub's types may not know.
	ok, ref := utils.GetAddOnConfigRef(mca.Status.ConfigReferences, HostingConfigGVR.Group, HostingConfigGVR.Resource)
	if ok && ref.DesiredConfig != nil && !addon.HostingConfigNamespaceAllowed(ref.DesiredConfig.Namespace, a.opts.HubNamespace, a.opts.HostingConfigNamespaces) {
		// Nothing of a HostingConfig outside the allowed namespaces is
		// rendered, neither its spec nor its Secrets; the agent runs on the
		// defaults and reports why through the credential problems.
		data, err := json.Marshal([]string{fmt.Sprintf("HostingConfig %s/%s is ignored: namespace %s is not one the hub accepts HostingConfigs from (the hub's namespace and --hosting-config-namespaces)",
			ref.DesiredConfig.Namespace, ref.DesiredConfig.Name, ref.DesiredConfig.Namespace)})
		if err != nil {
			return nil, err
		}
		problems = string(data)
		ok = false
	}
	if ok && ref.DesiredConfig != nil {
		hc, err := a.dynamic.Resource(HostingConfigGVR).Namespace(ref.DesiredConfig.Namespace).Get(ctx, ref.DesiredConfig.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("reading HostingConfig %s/%s: %w", ref.DesiredConfig.Namespace, ref.DesiredConfig.Name, err)
		}
		spec, _ := hc.Object["spec"].(map[string]any)
		spec = withDefaultOperatorImage(spec, operatorImage)
		data, err := json.Marshal(spec)
		if err != nil {
			return nil, err
		}
		specJSON, hash = string(data), ref.DesiredConfig.SpecHash
		source = ref.DesiredConfig.Namespace + "/" + ref.DesiredConfig.Name
		copies, credentialProblems, err := a.credentials(ctx, hc.GetNamespace(), source, data)
		if err != nil {
			return nil, err
		}
		for i := range copies {
			if !slices.Contains(templatedCredentials, copies[i].Credential) {
				return nil, fmt.Errorf("manifests/agent has no template for the %s credentials", copies[i].Purpose)
			}
			credentials[copies[i].Purpose] = &copies[i]
		}
		if len(credentialProblems) > 0 {
			data, err := json.Marshal(credentialProblems)
			if err != nil {
				return nil, err
			}
			problems = string(data)
		}
		if img, ok := spec["agentImage"].(string); ok && img != "" {
			image = img
		}
	}
	if !ok || ref.DesiredConfig == nil {
		if spec := withDefaultOperatorImage(nil, operatorImage); spec != nil {
			data, err := json.Marshal(spec)
			if err != nil {
				return nil, err
			}
			specJSON = string(data)
		}
	}
	if image == "" {
		return nil, fmt.Errorf("no agent image for cluster %s: no default and none in the HostingConfig", cluster.Name)
	}

	// The AddOnDeploymentConfig's registries apply to the image the
	// HostingConfig chose, so they are resolved here rather than in the
	// factory's list of values functions, which cannot see each other's
	// values.
	imageValues, err := addonfactory.GetAddOnDeploymentConfigValues(a.adcGetter, addonfactory.ToImageOverrideValuesFunc("Image", image))(cluster, mca)
	if err != nil {
		return nil, err
	}
	if img, ok := imageValues["Image"].(string); ok {
		image = img
	}
	// The hosting namespaces, for the janitor's namespace deletion rights
	// (02-clusterrole-hosting-namespace-deletion.yaml): the HostingConfig's
	// spec.hostingNamespaces, or the default.
	// Only that field is read, so that nothing else of a spec this hub's
	// types may not know can fail the render.
	var namespaces struct {
		HostingNamespaces []v1alpha1.HostingNamespaceName `json:"hostingNamespaces,omitempty"`
	}
	if err := json.Unmarshal([]byte(specJSON), &namespaces); err != nil {
		return nil, fmt.Errorf("reading spec.hostingNamespaces of the HostingConfig of cluster %s: %w", cluster.Name, err)
	}
	hostingSpec := &v1alpha1.HostingConfigSpec{HostingNamespaces: namespaces.HostingNamespaces}
	return addonfactory.Values{
		"HostingConfigRevision": hostingConfigRevision(specJSON, source, problems),
		"HostingNamespaces":     hostingSpec.AllowedHostingNamespaces(),
		"Image":                 image,
		"HostingConfigSpec":     specJSON,
		"HostingConfigHash":     hash,
		"HostingConfigSource":   source,
		"Credentials":           credentials,
		"CredentialProblems":    problems,
	}, nil
}

// hostingConfigRevision names what the HostingConfig ConfigMap hands the
// agent: a change of the spec (operator image included), of its source or of
// the credential problems is a new revision, for which the agent must report
// the HyperShift operator healthy anew. The credentials' contents are left
// out: a hash of a Secret's value is not published in an annotation.
func hostingConfigRevision(specJSON, source, problems string) string {
	h := sha256.New()
	for _, part := range []string{specJSON, source, problems} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// withDefaultOperatorImage returns spec with spec.operator.image set to the
// release's HyperShift operator image when the HostingConfig names none
// (a copy; spec itself is the informer's). The agent renders the operator
// from the spec it is handed, so the release's default reaches it with the
// same rollout as the rest of the config.
func withDefaultOperatorImage(spec map[string]any, image string) map[string]any {
	if image == "" {
		return spec
	}
	if op, ok := spec["operator"].(map[string]any); ok {
		if img, ok := op["image"].(string); ok && img != "" {
			return spec
		}
	}
	out := make(map[string]any, len(spec)+1)
	for k, v := range spec {
		out[k] = v
	}
	op := map[string]any{}
	if have, ok := spec["operator"].(map[string]any); ok {
		for k, v := range have {
			op[k] = v
		}
	}
	op["image"] = image
	out["operator"] = op
	return out
}

// deploymentConfigResolved fails while the AddOnDeploymentConfig the
// addon-manager resolved for this cluster has changed since: the
// addon-framework reads configs live (utils.GetDesiredAddOnDeploymentConfig
// leaves its spec-hash check out), so any render of a cluster the rollout
// strategy has not reached yet would otherwise take the new release's images
// early, and one shared release config would reach every cluster at its next
// render. The failed render leaves the cluster's ManifestWorks as they are
// until the addon-manager resolves the new spec hash for it.
func (a *AgentAddon) deploymentConfigResolved(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn) error {
	ok, ref := utils.GetAddOnConfigRef(mca.Status.ConfigReferences, utils.AddOnDeploymentConfigGVR.Group, utils.AddOnDeploymentConfigGVR.Resource)
	if !ok || ref.DesiredConfig == nil || ref.DesiredConfig.SpecHash == "" {
		return nil
	}
	live, err := a.dynamic.Resource(utils.AddOnDeploymentConfigGVR).Namespace(ref.DesiredConfig.Namespace).Get(ctx, ref.DesiredConfig.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading AddOnDeploymentConfig %s/%s: %w", ref.DesiredConfig.Namespace, ref.DesiredConfig.Name, err)
	}
	hash, err := utils.GetSpecHash(live)
	if err != nil {
		return err
	}
	if hash != ref.DesiredConfig.SpecHash {
		return fmt.Errorf("AddOnDeploymentConfig %s/%s changed after the addon-manager resolved it for cluster %s (spec hash %s, resolved %s): "+
			"not rendered until the rollout strategy reaches this cluster", ref.DesiredConfig.Namespace, ref.DesiredConfig.Name, mca.Namespace, hash, ref.DesiredConfig.SpecHash)
	}
	return nil
}
