package hub

import (
	"context"
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"open-cluster-management.io/addon-framework/pkg/addonfactory"
	"open-cluster-management.io/addon-framework/pkg/addonmanager/constants"
	"open-cluster-management.io/addon-framework/pkg/agent"
	"open-cluster-management.io/addon-framework/pkg/utils"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/manifests"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// HostingConfigGVR is the hcp-fleet add-on configuration resource.
var HostingConfigGVR = schema.GroupVersionResource{Group: "hcpfleet.io", Version: "v1alpha1", Resource: "hostingconfigs"}

// Options configure the add-on.
type Options struct {
	// DefaultAgentImage is used when the HostingConfig names no agent image.
	DefaultAgentImage string
	// HubNamespace is the hub's own namespace (addon.DefaultHubNamespace
	// when empty); HostingConfigs there are always accepted.
	HubNamespace string
	// HostingConfigNamespaces are the other namespaces a ManagedClusterAddOn
	// may take its HostingConfig from. A HostingConfig elsewhere is not
	// rendered: the agent gets the defaults and a problem naming it.
	HostingConfigNamespaces []string
}

// AgentAddon implements the addon-framework's agent.AgentAddon for hcp-fleet:
// the template agent add-on built by addon-framework's factory from
// manifests/agent, with this package's values, registration and options.
type AgentAddon struct {
	opts      Options
	kube      kubernetes.Interface
	dynamic   dynamic.Interface
	adcGetter utils.AddOnDeploymentConfigGetter
	hubRole   *rbacv1.ClusterRole
	template  agent.AgentAddon
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
	return newAgentAddon(opts, kube, dyn, utils.NewAddOnDeploymentConfigGetter(addonClient))
}

// newAgentAddon builds the add-on on the given hub clients.
func newAgentAddon(opts Options, kube kubernetes.Interface, dyn dynamic.Interface, adcGetter utils.AddOnDeploymentConfigGetter) (*AgentAddon, error) {
	hubRole, err := HubRole()
	if err != nil {
		return nil, err
	}
	a := &AgentAddon{opts: opts, kube: kube, dynamic: dyn, adcGetter: adcGetter, hubRole: hubRole}
	template, err := addonfactory.NewAgentAddonFactory(addon.Name, manifests.Agent, "agent").
		// Values of later functions override earlier ones'. The
		// AddOnDeploymentConfig's registries are applied in agentValues, to
		// the image the HostingConfig chose.
		WithGetValuesFuncs(
			addonfactory.GetAddOnDeploymentConfigValues(adcGetter,
				addonfactory.ToAddOnNodePlacementValues,
				addonfactory.ToAddOnResourceRequirementsValues,
				addonfactory.ToAddOnProxyConfigValues),
			a.agentValues,
		).
		WithAgentRegistrationOption(&agent.RegistrationOption{
			CSRConfigurations:     agent.KubeClientSignerConfigurations(addon.Name, addon.AgentName),
			CSRApproveCheck:       utils.DefaultCSRApprover(addon.AgentName),
			PermissionConfig:      a.grantHubPermissions,
			AgentInstallNamespace: a.installNamespace,
		}).
		// The template's AddonInstallNamespace.
		WithAgentInstallNamespace(a.installNamespace).
		// Available means the agent and its HyperShift operator are
		// healthy (health.go), so a bad operator image shows on the add-on.
		WithAgentHealthProber(healthProber()).
		// The work prober skips a cluster whose availability is Unknown
		// and, unlike the lease, nothing re-probes it when the cluster
		// comes back: re-sync the add-on when that changes.
		WithAgentDeployTriggerClusterFilter(clusterAvailabilityChanged).
		// The addon-manager resolves these configs into the
		// ManagedClusterAddOn's status.configReferences, from which the
		// values are read.
		WithConfigGVRs(utils.AddOnDeploymentConfigGVR, HostingConfigGVR).
		// Render only once the addon-manager resolved every config: an early
		// render without them would roll the agent out twice.
		WithConfigCheckEnabledOption().
		// Never hosted mode: the factory's default reads the mode from an
		// annotation of the ManagedClusterAddOn.
		WithAgentHostedInfoFn(func(*addonv1alpha1.ManagedClusterAddOn, *clusterv1.ManagedCluster) (string, string) {
			return constants.InstallModeDefault, ""
		}).
		BuildTemplateAgentAddon()
	if err != nil {
		return nil, fmt.Errorf("building the agent add-on from manifests/agent: %w", err)
	}
	a.template = template
	return a, nil
}

// GetAgentAddonOptions tells the addon-framework how to register, configure
// and probe the agent, and gives the add-on ManifestWork the condition
// rules that make its Available mean a healthy agent and operator
// (rollouthealth.go).
func (a *AgentAddon) GetAgentAddonOptions() agent.AgentAddonOptions {
	opts := a.template.GetAgentAddonOptions()
	opts.ManifestConfigs = append(slices.Clone(opts.ManifestConfigs), rolloutHealthManifestConfigs()...)
	return opts
}

// agentRenders counts renders of the agent's manifests: the add-on manager
// renders on every change it watches and writes the ManifestWorks only when
// the result differs.
var agentRenders = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "hcpfleet_hub_addon_agent_renders_total",
	Help: "Renders of the hcp-fleet agent's manifests by the add-on manager, by management cluster (a render writes nothing when its result is unchanged).",
}, []string{"cluster"})

func init() { metrics.Registry.MustRegister(agentRenders) }

// Manifests renders the agent's manifests for a management cluster. The
// template factory panics when a template fails to execute; that is an error
// of this render, not a reason to take the hub down.
func (a *AgentAddon) Manifests(cluster *clusterv1.ManagedCluster, mca *addonv1alpha1.ManagedClusterAddOn) (objs []runtime.Object, err error) {
	agentRenders.WithLabelValues(cluster.Name).Inc()
	defer func() {
		if r := recover(); r != nil {
			objs, err = nil, fmt.Errorf("rendering manifests/agent for cluster %s: %v", cluster.Name, r)
		}
	}()
	return a.template.Manifests(cluster, mca)
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

// HubBindingName names the RoleBinding that grants an agent its hub rights
// in its cluster's namespace (an older hub named its Role the same).
const HubBindingName = "open-cluster-management:" + addon.Name + ":agent"

// hubRoleFile is the ClusterRole, shipped in manifests/hub, that holds what
// an agent may do on the hub.
const hubRoleFile = "hub/55-agent-hub-clusterrole.yaml"

// HubRole is what the agent may do on the hub: the ClusterRole the admin
// installs from manifests/hub, which the hub binds in each cluster's own
// namespace only. Each rule's reason is in that file.
func HubRole() (*rbacv1.ClusterRole, error) {
	data, err := manifests.Hub.ReadFile(hubRoleFile)
	if err != nil {
		return nil, err
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, role); err != nil {
		return nil, fmt.Errorf("%s: %w", hubRoleFile, err)
	}
	return role, nil
}

// grantHubPermissions binds HubRole in the cluster's namespace to the
// cluster-specific group of the agent's identity only. (The registration
// subject also carries the groups system:open-cluster-management:addon:<name>
// and system:authenticated, which every cluster's agent — or anyone — has:
// binding those would let one cluster's agent into another's namespace.)
// The hub may bind that one ClusterRole and nothing else, and holds none
// of its rights itself (manifests/hub, hcp-fleet:hub).
func (a *AgentAddon) grantHubPermissions(cluster *clusterv1.ManagedCluster, mca *addonv1alpha1.ManagedClusterAddOn) error {
	ctx := context.TODO()
	owner := metav1.NewControllerRef(mca, schema.GroupVersionKind{Group: addonv1alpha1.GroupName, Version: "v1alpha1", Kind: "ManagedClusterAddOn"})
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: HubBindingName, Namespace: cluster.Name, OwnerReferences: []metav1.OwnerReference{*owner}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: a.hubRole.Name},
		Subjects: []rbacv1.Subject{{
			Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName,
			Name: agent.DefaultGroups(cluster.Name, addon.Name)[0],
		}},
	}
	if err := a.dropOlderHubRole(ctx, binding); err != nil {
		return err
	}
	_, _, err := utils.ApplyRoleBinding(ctx, a.kube.RbacV1(), binding)
	return err
}

// dropOlderHubRole removes what an older hub made for the agent: a Role
// named like the binding, with the binding pointing at it. A RoleBinding's
// roleRef cannot change, so the binding goes too and is made anew.
func (a *AgentAddon) dropOlderHubRole(ctx context.Context, want *rbacv1.RoleBinding) error {
	have, err := a.kube.RbacV1().RoleBindings(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if have.RoleRef.Kind == want.RoleRef.Kind && have.RoleRef.Name == want.RoleRef.Name {
		return nil
	}
	if err := a.kube.RbacV1().RoleBindings(want.Namespace).Delete(ctx, want.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if have.RoleRef.Kind == "Role" {
		if err := a.kube.RbacV1().Roles(want.Namespace).Delete(ctx, have.RoleRef.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
