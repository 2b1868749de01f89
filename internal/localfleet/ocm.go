package localfleet

import (
	"context"
	"embed"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"github.com/openshift/library-go/pkg/operator/events"
	"github.com/spf13/pflag"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	ocmfeature "open-cluster-management.io/api/feature"
	ocmaddon "open-cluster-management.io/ocm/pkg/addon"
	commonoptions "open-cluster-management.io/ocm/pkg/common/options"
	"open-cluster-management.io/ocm/pkg/features"
	placementcontrollers "open-cluster-management.io/ocm/pkg/placement/controllers"
	registrationhub "open-cluster-management.io/ocm/pkg/registration/hub"
	registrationspoke "open-cluster-management.io/ocm/pkg/registration/spoke"
	workspoke "open-cluster-management.io/ocm/pkg/work/spoke"
)

// The OCM CRDs, copied from open-cluster-management.io/api by
// hack/copy-ocm-crds.sh. A real ACM/MCE hub has them already.
//
//go:embed crds
var ocmCRDs embed.FS

const (
	// HubNamespace is where the OCM bootstrap identity lives on the hub.
	HubNamespace = "open-cluster-management"
	// AgentNamespace is the klusterlet agents' namespace on a managed cluster.
	AgentNamespace = "open-cluster-management-agent"
	// BootstrapServiceAccount is the hub identity a joining cluster
	// registers with (what `clusteradm get token` hands out).
	BootstrapServiceAccount = "agent-registration-bootstrap"
	bootstrapClusterRole    = "open-cluster-management:bootstrap"
)

var registerFeatureGates sync.Once

// ocmFeatureGates registers OCM's feature gates (process-wide) once, with
// OCM's defaults, as ocm's own commands do before starting anything; and
// turns on the ManifestWork webhook's NilExecutorValidating (off by
// default), so that every fleet's hub refuses a ManifestWork whose writer
// may not execute as its executor, the work agent's own identity standing
// in for a missing one: every hcp-fleet work is written under the strictest
// executor validation OCM has (docs/install.md).
func ocmFeatureGates() {
	registerFeatureGates.Do(func() {
		utilruntime.Must(features.HubMutableFeatureGate.Add(ocmfeature.DefaultHubRegistrationFeatureGates))
		utilruntime.Must(features.HubMutableFeatureGate.Add(ocmfeature.DefaultHubAddonManagerFeatureGates))
		utilruntime.Must(features.HubMutableFeatureGate.Add(ocmfeature.DefaultHubWorkFeatureGates))
		utilruntime.Must(features.HubMutableFeatureGate.SetFromMap(map[string]bool{string(ocmfeature.NilExecutorValidating): true}))
		utilruntime.Must(features.SpokeMutableFeatureGate.Add(ocmfeature.DefaultSpokeRegistrationFeatureGates))
		utilruntime.Must(features.SpokeMutableFeatureGate.Add(ocmfeature.DefaultSpokeWorkFeatureGates))
	})
}

func controllerContext(name string, cfg *rest.Config) *controllercmd.ControllerContext {
	return &controllercmd.ControllerContext{
		KubeConfig:        cfg,
		ProtoKubeConfig:   cfg,
		EventRecorder:     events.NewInMemoryRecorder(name, clock.RealClock{}),
		OperatorNamespace: HubNamespace,
		Clock:             clock.RealClock{},
	}
}

// installOCMHub installs the hub CRDs and the bootstrap RBAC the
// cluster-manager operator would install.
func installOCMHub(ctx context.Context, hub *Cluster) error {
	objs, err := ReadManifestDir(ocmCRDs, "crds/hub")
	if err != nil {
		return err
	}
	applier, err := NewApplier(hub.Config())
	if err != nil {
		return err
	}
	if err := applier.Apply(ctx, objs...); err != nil {
		return fmt.Errorf("installing OCM hub CRDs: %w", err)
	}
	client, err := kubernetes.NewForConfig(hub.Config())
	if err != nil {
		return err
	}
	if err := ensureNamespace(ctx, client, HubNamespace); err != nil {
		return err
	}
	// The bootstrap identity may only create a CSR and its own ManagedCluster
	// (the rules of OCM's cluster-manager chart).
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapClusterRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
			{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters"}, Verbs: []string{"get", "create", "list", "watch"}},
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclustersets/join"}, Verbs: []string{"create"}},
		},
	}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapClusterRole + ":agent-registration"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: bootstrapClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: BootstrapServiceAccount, Namespace: HubNamespace}},
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: BootstrapServiceAccount, Namespace: HubNamespace}}
	if _, err := client.CoreV1().ServiceAccounts(HubNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// bootstrapKubeconfig writes the kubeconfig a joining cluster registers with:
// the hub's CA and a token of the bootstrap service account.
func bootstrapKubeconfig(ctx context.Context, hub *Cluster, path string) error {
	client, err := kubernetes.NewForConfig(hub.Config())
	if err != nil {
		return err
	}
	tr, err := client.CoreV1().ServiceAccounts(HubNamespace).CreateToken(ctx, BootstrapServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](7 * 24 * 3600)}},
		metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("requesting a bootstrap token: %w", err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: hub.Host, CertificateAuthorityData: hub.CAData()}
	cfg.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["bootstrap"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "bootstrap"}
	cfg.CurrentContext = "bootstrap"
	return clientcmd.WriteToFile(*cfg, path)
}

// runOCMHub starts the real OCM hub controllers in-process: registration,
// placement and the addon-manager (install strategies, config resolution).
func runOCMHub(ctx context.Context, hub *Cluster, report func(component string, err error)) {
	ocmFeatureGates()
	cfg := hub.Config()
	go func() {
		report("OCM registration hub", registrationhub.NewHubManagerOptions().RunControllerManager(ctx, controllerContext("registration-hub", cfg)))
	}()
	go func() {
		report("OCM placement controller", placementcontrollers.RunControllerManager(ctx, controllerContext("placement", cfg)))
	}()
	go func() {
		report("OCM addon-manager", ocmaddon.RunManager(ctx, controllerContext("addon-manager", cfg)))
	}()
}

// ManagedCluster is a management cluster of the fleet, joined to the hub by
// the real OCM registration agent and served by the real OCM work agent.
type ManagedCluster struct {
	*Cluster
	// HubKubeconfigDir holds the hub credentials the registration agent
	// obtained through the CSR flow (kubeconfig, tls.crt, tls.key).
	HubKubeconfigDir string
	// AgentID is the klusterlet agent id in the hub identity
	// system:open-cluster-management:<cluster>:<agent id>.
	AgentID string

	// agentsCtx scopes the cluster's OCM agents (registration and work), so
	// that Fleet.Disconnect can stop them alone; stopAgents cancels it.
	agentsCtx  context.Context
	stopAgents context.CancelFunc
}

// HubKubeconfigPath is the kubeconfig of the cluster's klusterlet identity on
// the hub.
func (m *ManagedCluster) HubKubeconfigPath() string {
	return filepath.Join(m.HubKubeconfigDir, "kubeconfig")
}

// HubConfig is the rest.Config of the cluster's klusterlet identity on the
// hub: what the registration agent was issued, with only its permissions.
func (m *ManagedCluster) HubConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", m.HubKubeconfigPath())
}

// installOCMSpoke installs what the klusterlet operator would install on a
// managed cluster before the agents start.
func installOCMSpoke(ctx context.Context, c *Cluster) error {
	objs, err := ReadManifestDir(ocmCRDs, "crds/spoke")
	if err != nil {
		return err
	}
	applier, err := NewApplier(c.Config())
	if err != nil {
		return err
	}
	if err := applier.Apply(ctx, objs...); err != nil {
		return fmt.Errorf("installing OCM CRDs on %s: %w", c.Name, err)
	}
	client, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		return err
	}
	return ensureNamespace(ctx, client, AgentNamespace)
}

// runRegistrationAgent starts the real OCM registration agent for m. It
// creates the ManagedCluster on the hub and requests a client certificate
// with a CSR; once the hub accepts the cluster and the CSR is signed it
// writes the hub kubeconfig (secret hub-kubeconfig-secret, dumped to
// HubKubeconfigDir).
func runRegistrationAgent(ctx context.Context, m *ManagedCluster, bootstrapPath string, report func(string, error)) {
	ocmFeatureGates()
	agentOpts := agentOptions()
	agentOpts.SpokeClusterName = m.Name
	agentOpts.AgentID = m.AgentID
	agentOpts.HubKubeconfigDir = m.HubKubeconfigDir
	agentOpts.ComponentNamespace = AgentNamespace
	regOpts := registrationspoke.NewSpokeAgentOptions()
	regOpts.BootstrapKubeconfig = bootstrapPath
	regOpts.SpokeExternalServerURLs = []string{m.Host}
	regOpts.ClusterHealthCheckPeriod = 10 * time.Second
	agentCtx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		cfg := registrationspoke.NewSpokeAgentConfig(agentOpts.AgentOptions, regOpts, cancel)
		report("OCM registration agent ("+m.Name+")", cfg.RunSpokeAgent(agentCtx, controllerContext("registration-agent", agentOpts.spokeConfig(m))))
	}()
}

// ocmAgentOptions are the OCM agents' common options.
type ocmAgentOptions struct{ *commonoptions.AgentOptions }

// agentOptions returns the OCM agents' common options with every flag at
// the default the agents' command lines give it. NewAgentOptions alone
// leaves the hub client's QPS and burst at zero, which client-go turns
// into 5 and 10: a tenth of what a real agent sends to the hub, and a
// work agent that reports a burst of ManifestWorks applied at 5 status
// writes a second.
func agentOptions() ocmAgentOptions {
	o := commonoptions.NewAgentOptions()
	o.AddFlags(pflag.NewFlagSet("ocm-agent", pflag.ContinueOnError))
	return ocmAgentOptions{o}
}

// spokeConfig is m's client configuration with the QPS and burst the
// agents' command lines set for it (--kube-api-qps, --kube-api-burst).
func (o ocmAgentOptions) spokeConfig(m *ManagedCluster) *rest.Config {
	cfg := m.Config()
	cfg.QPS, cfg.Burst = o.CommonOpts.QPS, o.CommonOpts.Burst
	return cfg
}

// runWorkAgent starts the real OCM work agent for m with the hub credentials
// the registration agent obtained.
func runWorkAgent(ctx context.Context, m *ManagedCluster, statusSyncInterval time.Duration, report func(string, error)) {
	ocmFeatureGates()
	agentOpts := agentOptions()
	agentOpts.SpokeClusterName = m.Name
	agentOpts.AgentID = m.AgentID
	agentOpts.HubKubeconfigDir = m.HubKubeconfigDir
	agentOpts.ComponentNamespace = AgentNamespace
	workOpts := workspoke.NewWorkloadAgentOptions()
	workOpts.WorkloadSourceDriver = "kube"
	workOpts.WorkloadSourceConfig = m.HubKubeconfigPath()
	if statusSyncInterval > 0 {
		workOpts.StatusSyncInterval = statusSyncInterval
	}
	go func() {
		report("OCM work agent ("+m.Name+")", workspoke.NewWorkAgentConfig(agentOpts.AgentOptions, workOpts).RunWorkloadAgent(ctx, controllerContext("work-agent", agentOpts.spokeConfig(m))))
	}()
}

// AcceptCluster does what a hub admin does with `clusteradm accept`: approve
// the cluster's pending registration CSRs and set hubAcceptsClient.
func AcceptCluster(ctx context.Context, hub *Cluster, name string) error {
	client, err := kubernetes.NewForConfig(hub.Config())
	if err != nil {
		return err
	}
	clusters, err := clusterclient.NewForConfig(hub.Config())
	if err != nil {
		return err
	}
	mc, err := clusters.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if !mc.Spec.HubAcceptsClient {
		patch := []byte(`{"spec":{"hubAcceptsClient":true}}`)
		if _, err := clusters.ClusterV1().ManagedClusters().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	csrs, err := client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{
		LabelSelector: clusterv1.ClusterNameLabelKey + "=" + name,
	})
	if err != nil {
		return err
	}
	bootstrapUser := fmt.Sprintf("system:serviceaccount:%s:%s", HubNamespace, BootstrapServiceAccount)
	for i := range csrs.Items {
		csr := &csrs.Items[i]
		if csr.Spec.Username != bootstrapUser || csrDecided(csr) {
			continue
		}
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
			Reason: "AcceptedByLocalFleet", Message: "the local fleet accepted cluster " + name,
		})
		if _, err := client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// DecidedClusters are the clusters the Placement namespace/placement
// decides now, sorted: the union of its PlacementDecisions (OCM splits a
// long list over several, labelled with the Placement's name), as a
// consumer of the Placement API reads them.
func DecidedClusters(ctx context.Context, clusters clusterclient.Interface, namespace, placement string) ([]string, error) {
	pds, err := clusters.ClusterV1beta1().PlacementDecisions(namespace).List(ctx,
		metav1.ListOptions{LabelSelector: clusterv1beta1.PlacementLabel + "=" + placement})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, pd := range pds.Items {
		for _, d := range pd.Status.Decisions {
			names = append(names, d.ClusterName)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

func csrDecided(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied {
			return true
		}
	}
	return false
}

func ensureNamespace(ctx context.Context, client kubernetes.Interface, name string) error {
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
