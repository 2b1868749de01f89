// Package hub is the hub side of the hcp-fleet OCM add-on: the agent's
// manifests per management cluster (from AddOnDeploymentConfig and
// HostingConfig), its registration (CSR-based hub identity with automatic
// approval of exactly that identity) and its hub permissions (its own cluster
// namespace only), served through the addon-framework.
package hub

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"open-cluster-management.io/addon-framework/pkg/addonfactory"
	"open-cluster-management.io/addon-framework/pkg/agent"
	"open-cluster-management.io/addon-framework/pkg/utils"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// HostingConfigGVR is the hcp-fleet add-on configuration resource.
var HostingConfigGVR = schema.GroupVersionResource{Group: "hcpfleet.io", Version: "v1alpha1", Resource: "hostingconfigs"}

// Options configure the add-on.
type Options struct {
	// DefaultAgentImage is used when the HostingConfig names no agent image.
	DefaultAgentImage string
}

// AgentAddon implements the addon-framework's agent.AgentAddon for hcp-fleet.
type AgentAddon struct {
	opts        Options
	kube        kubernetes.Interface
	dynamic     dynamic.Interface
	adcGetter   utils.AddOnDeploymentConfigGetter
	permissions agent.PermissionConfigFunc
}

var _ agent.AgentAddon = &AgentAddon{}

// NewAgentAddon returns the add-on for the hub behind cfg.
func NewAgentAddon(cfg *rest.Config, opts Options) (*AgentAddon, error) {
	if opts.DefaultAgentImage == "" {
		opts.DefaultAgentImage = addon.DefaultAgentImage
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	addonClient, err := addonclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	a := &AgentAddon{opts: opts, kube: kube, dynamic: dyn, adcGetter: utils.NewAddOnDeploymentConfigGetter(addonClient)}
	a.permissions = a.grantHubPermissions
	return a, nil
}

// GetAgentAddonOptions tells the addon-framework how to register, configure
// and probe the agent.
func (a *AgentAddon) GetAgentAddonOptions() agent.AgentAddonOptions {
	return agent.AgentAddonOptions{
		AddonName: addon.Name,
		Registration: &agent.RegistrationOption{
			CSRConfigurations:     agent.KubeClientSignerConfigurations(addon.Name, addon.AgentName),
			CSRApproveCheck:       utils.DefaultCSRApprover(addon.AgentName),
			PermissionConfig:      a.permissions,
			AgentInstallNamespace: a.installNamespace,
		},
		// The agent renews a lease in its namespace; OCM's registration
		// agent turns it into the add-on's Available condition.
		HealthProber:        &agent.HealthProber{Type: agent.HealthProberTypeLease},
		SupportedConfigGVRs: []schema.GroupVersionResource{utils.AddOnDeploymentConfigGVR, HostingConfigGVR},
		// Render only once the addon-manager resolved every config: an early
		// render without them would roll the agent out twice.
		ConfigCheckEnabled: true,
	}
}

// installNamespace is the AddOnDeploymentConfig's agentInstallNamespace, or
// hcp-fleet-agent.
func (a *AgentAddon) installNamespace(mca *addonv1alpha1.ManagedClusterAddOn) (string, error) {
	ns, err := utils.AgentInstallNamespaceFromDeploymentConfigFunc(a.adcGetter)(mca)
	if err != nil {
		return "", err
	}
	if ns == "" {
		ns = addon.DefaultInstallNamespace
	}
	return ns, nil
}

// Manifests renders the agent's manifests for a management cluster.
func (a *AgentAddon) Manifests(cluster *clusterv1.ManagedCluster, mca *addonv1alpha1.ManagedClusterAddOn) ([]runtime.Object, error) {
	values, err := a.values(context.TODO(), cluster, mca)
	if err != nil {
		return nil, err
	}
	return RenderAgent(values)
}

// values gathers AgentValues from the add-on's resolved configs.
func (a *AgentAddon) values(ctx context.Context, cluster *clusterv1.ManagedCluster, mca *addonv1alpha1.ManagedClusterAddOn) (AgentValues, error) {
	ns, err := a.installNamespace(mca)
	if err != nil {
		return AgentValues{}, err
	}
	v := AgentValues{ClusterName: cluster.Name, InstallNamespace: ns, Image: a.opts.DefaultAgentImage, HostingConfigSpec: "{}"}

	// HostingConfig: read unstructured so the spec reaches the agent exactly
	// as stored, including fields this hub's types may not know.
	if ok, ref := utils.GetAddOnConfigRef(mca.Status.ConfigReferences, HostingConfigGVR.Group, HostingConfigGVR.Resource); ok && ref.DesiredConfig != nil {
		hc, err := a.dynamic.Resource(HostingConfigGVR).Namespace(ref.DesiredConfig.Namespace).Get(ctx, ref.DesiredConfig.Name, metav1.GetOptions{})
		if err != nil {
			return AgentValues{}, fmt.Errorf("reading HostingConfig %s/%s: %w", ref.DesiredConfig.Namespace, ref.DesiredConfig.Name, err)
		}
		spec, _ := hc.Object["spec"].(map[string]any)
		data, err := json.Marshal(spec)
		if err != nil {
			return AgentValues{}, err
		}
		v.HostingConfigSpec = string(data)
		v.HostingConfigHash = ref.DesiredConfig.SpecHash
		v.HostingConfigSource = ref.DesiredConfig.Namespace + "/" + ref.DesiredConfig.Name
		if v.Credentials, v.CredentialProblems, err = a.credentials(ctx, hc.GetNamespace(), v.HostingConfigSource, data); err != nil {
			return AgentValues{}, err
		}
		if img, ok := spec["agentImage"].(string); ok && img != "" {
			v.Image = img
		}
	}

	adc, err := utils.GetDesiredAddOnDeploymentConfig(mca, a.adcGetter)
	if err != nil {
		return AgentValues{}, err
	}
	if adc != nil {
		if np := adc.Spec.NodePlacement; np != nil {
			v.NodeSelector, v.Tolerations = np.NodeSelector, np.Tolerations
		}
		v.Image = addonfactory.OverrideImage(adc.Spec.Registries, v.Image)
		reqs, err := addonfactory.GetRegexResourceRequirements(adc.Spec.ResourceRequirements)
		if err != nil {
			return AgentValues{}, err
		}
		for _, r := range reqs {
			v.Resources = append(v.Resources, ContainerResources{ContainerIDRegex: r.ContainerIDRegex, Resources: r.ResourcesRaw})
		}
		v.ProxyEnv = proxyEnv(adc.Spec.ProxyConfig)
	}
	return v, nil
}

func proxyEnv(p addonv1alpha1.ProxyConfig) []corev1.EnvVar {
	var env []corev1.EnvVar
	for _, kv := range [][2]string{{"HTTP_PROXY", p.HTTPProxy}, {"HTTPS_PROXY", p.HTTPSProxy}, {"NO_PROXY", p.NoProxy}} {
		if kv[1] != "" {
			env = append(env, corev1.EnvVar{Name: kv[0], Value: kv[1]})
		}
	}
	return env
}

// HubRole is what the agent may do on the hub, in its own cluster namespace
// only. Each rule says why.
func HubRole() *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:" + addon.Name + ":agent"},
		Rules: []rbacv1.PolicyRule{
			// Report its conditions on its own ManagedClusterAddOn.
			{APIGroups: []string{addonv1alpha1.GroupName}, Resources: []string{"managedclusteraddons"},
				ResourceNames: []string{addon.Name}, Verbs: []string{"get"}},
			{APIGroups: []string{addonv1alpha1.GroupName}, Resources: []string{"managedclusteraddons/status"},
				ResourceNames: []string{addon.Name}, Verbs: []string{"get", "patch", "update"}},
			// Publish hosting capacity for Placements.
			{APIGroups: []string{clusterv1.GroupName}, Resources: []string{"addonplacementscores", "addonplacementscores/status"},
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			// Mirror hosted clusters' admin kubeconfigs to the hub.
			{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"},
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			// Record events about the cluster.
			{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		},
	}
}

// grantHubPermissions binds HubRole in the cluster's namespace to the
// cluster-specific group of the agent's identity only. (The registration
// subject also carries the groups system:open-cluster-management:addon:<name>
// and system:authenticated, which every cluster's agent — or anyone — has:
// binding those would let one cluster's agent into another's namespace.)
func (a *AgentAddon) grantHubPermissions(cluster *clusterv1.ManagedCluster, mca *addonv1alpha1.ManagedClusterAddOn) error {
	ctx := context.TODO()
	role := HubRole()
	role.Namespace = cluster.Name
	owner := metav1.NewControllerRef(mca, schema.GroupVersionKind{Group: addonv1alpha1.GroupName, Version: "v1alpha1", Kind: "ManagedClusterAddOn"})
	role.OwnerReferences = []metav1.OwnerReference{*owner}
	if _, _, err := utils.ApplyRole(ctx, a.kube.RbacV1(), role); err != nil {
		return err
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: cluster.Name, OwnerReferences: []metav1.OwnerReference{*owner}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{
			Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName,
			Name: agent.DefaultGroups(cluster.Name, addon.Name)[0],
		}},
	}
	_, _, err := utils.ApplyRoleBinding(ctx, a.kube.RbacV1(), binding)
	return err
}
