// Package hcpfleet installs and runs hcp-fleet on a local fleet the way it
// runs on a real hub: the same manifests (CRDs, ClusterManagementAddOn,
// default HostingConfig, Placement), the hub process in-process (one or more
// replicas, leader-elected), and on every management cluster a kubelet
// stand-in that runs the agent's Deployment and Jobs — pkg/cmd/agent, the
// program cmd/agent runs — with the identity and mounts the manifests give
// it. It reads the shipped manifests (the manifests package) and, for
// ApplyDir, a directory of examples; the kubelet stand-ins keep their pods'
// volumes under each management cluster's directory. Local fleet and tests
// only (cmd/localfleet, fleettest, test/e2e).
package hcpfleet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/clusterdns"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/kubeletsim"
	"github.com/hcp-fleet/hcp-fleet/manifests"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/proxy"
	agentcmd "github.com/hcp-fleet/hcp-fleet/pkg/cmd/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/connector"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/operator"
)

// HostLabel marks a managed cluster as a management cluster for hcp-fleet;
// the shipped hcp-fleet-hosts Placement selects it.
const HostLabel = "hcpfleet.io/management-cluster"

// Manifests returns what a hub admin installs: the CRDs and the hub
// manifests, in apply order.
func Manifests() ([]*unstructured.Unstructured, error) {
	var all []*unstructured.Unstructured
	for _, dir := range []struct {
		fs   fs.FS
		path string
	}{{manifests.CRDs, "crds"}, {manifests.Hub, "hub"}} {
		objs, err := localfleet.ReadManifestDir(dir.fs, dir.path)
		if err != nil {
			return nil, err
		}
		all = append(all, objs...)
	}
	return all, nil
}

// Install applies the hcp-fleet CRDs and hub manifests to the fleet's hub.
func Install(ctx context.Context, fleet *localfleet.Fleet) error {
	objs, err := Manifests()
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.GetKind() == "ClusterManagementAddOn" {
			if err := rolloutAll(o); err != nil {
				return err
			}
		}
	}
	applier, err := localfleet.NewApplier(fleet.Hub.Config())
	if err != nil {
		return err
	}
	return applier.Apply(ctx, objs...)
}

// rolloutAll sets the install strategy's rollouts to All: the shipped
// Progressive strategy waits minutes per management cluster, which every
// local fleet would spend at start-up. Tests of the rollout itself set the
// shipped strategy (pkg/addon's release test).
func rolloutAll(cma *unstructured.Unstructured) error {
	placements, _, err := unstructured.NestedSlice(cma.Object, "spec", "installStrategy", "placements")
	if err != nil {
		return err
	}
	for i := range placements {
		p, ok := placements[i].(map[string]any)
		if !ok {
			return fmt.Errorf("ClusterManagementAddOn %s: placement %d is not an object", cma.GetName(), i)
		}
		p["rolloutStrategy"] = map[string]any{"type": "All"}
	}
	return unstructured.SetNestedSlice(cma.Object, placements, "spec", "installStrategy", "placements")
}

// Options configure the running product.
type Options struct {
	// HubReplicas is how many hub processes run (leader-elected). Default 1.
	HubReplicas int
	// Hub tweaks the hub options (after defaults for the local fleet).
	Hub func(*hub.Options)
	// HyperShift tunes the HyperShift stand-in on every management cluster
	// (rollout duration, operator failure).
	HyperShift hypershiftsim.Options
	// HubFromDeployment runs no hub replica in-process: instead a kubelet
	// stand-in on the hub runs every Deployment that uses the hub image
	// (HubImage), as the hub's kubelets would, under that Deployment's own
	// ServiceAccount. For a hub someone else installed, such as OLM from the
	// bundle's install strategy (test/olm); Install is then not needed and
	// HubReplicas, Hub, StartHub and HubIdentity do not apply.
	HubFromDeployment bool
	// AgentArgs, when set, adds flags to the agent's on a management
	// cluster (after the local fleet's own, so they win), e.g. a metrics
	// address to scrape. It is called at each start of the agent (not of
	// its cleanup Job).
	AgentArgs func(cluster string) []string
	// AgentOptions tune the in-process agent's features beyond its flags
	// (agentcmd.Options: timings a test changes while the agent runs); not
	// used when Agent is set.
	AgentOptions agentcmd.Options
	// Agent, when set, runs the agent's run and cleanup commands in place of
	// the in-process pkg/cmd/agent Main, with the same arguments (the local
	// fleet's and AgentArgs' included), e.g. the agent binary as a
	// subprocess to measure it alone. The CAPI API proxy sidecar stays
	// in-process.
	Agent func(ctx context.Context, cluster string, args []string) error
	// HubTransport, when set, wraps the transport of every hub replica's
	// clients (its manager's and its add-on manager's), e.g. to count the
	// hub's own requests apart from everyone else's on the hub API server.
	HubTransport func(http.RoundTripper) http.RoundTripper
	// Nodes are the worker Nodes the kubelet stand-in registers on a
	// management cluster (with allocatable CPU and memory, which the
	// agent's capacity report reads); kubeletsim.DefaultNodes when nil.
	Nodes func(cluster string) []kubeletsim.Node
}

// Product is hcp-fleet running on a local fleet.
type Product struct {
	fleet  *localfleet.Fleet
	cancel context.CancelFunc
	wg     sync.WaitGroup

	kubelets map[string]*kubeletsim.Kubelet
	// hubConfig is the hub's identity: the hcp-fleet-hub ServiceAccount of
	// manifests/hub, as on a real hub, never an administrator.
	hubConfig *rest.Config

	mu     sync.Mutex
	errs   []error
	hubs   []*hubReplica
	parent context.Context
	opts   Options
}

type hubReplica struct {
	cancel context.CancelFunc
	done   chan struct{}
	// killed cuts the replica off from the API server at once (KillHub).
	killed atomic.Bool
}

// errKilled is what every request of a killed hub replica gets.
var errKilled = errors.New("hub replica killed")

// severable is a replica's transport: once killed, no request leaves it,
// as none leaves a killed process (in-flight ones may still land).
type severable struct {
	next   http.RoundTripper
	killed *atomic.Bool
}

func (s severable) RoundTrip(req *http.Request) (*http.Response, error) {
	if s.killed.Load() {
		return nil, errKilled
	}
	return s.next.RoundTrip(req)
}

// AgentImage is the agent image the local fleet runs (in-process).
const AgentImage = addon.DefaultAgentImage

// BrokenHyperShiftOperatorImage is a HyperShift operator image whose
// operator fails at start on the local fleet (hypershiftsim's
// OperatorFailure): the kubelet stand-in restarts it with back-off and
// reports its Deployment unavailable (CrashLoopBackOff), as a real cluster
// would for an operator image that crash-loops. Set it as a HostingConfig's
// spec.operator.image to make one management cluster's operator unhealthy.
const BrokenHyperShiftOperatorImage = "quay.io/hcp-fleet-test/hypershift-operator-broken:latest"

// HubImage is the repository of the hub image (make images, the bundle's
// install strategy) whose Deployments the hub's kubelet stand-in runs with
// HubFromDeployment.
const HubImage = "quay.io/hcp-fleet/hcp-fleet-hub"

// Start runs the hub replicas and a kubelet stand-in on every management
// cluster. Install first.
func Start(fleet *localfleet.Fleet, opts Options) (*Product, error) {
	if opts.HubReplicas <= 0 {
		opts.HubReplicas = 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Product{fleet: fleet, cancel: cancel, parent: ctx, opts: opts, kubelets: map[string]*kubeletsim.Kubelet{}}
	if opts.HubFromDeployment {
		k, err := kubeletsim.New(fleet.Hub.Config(), kubeletsim.Images{HubImage: hubProgram, ConsoleImage: consoleProgram}, filepath.Join(fleet.Hub.Dir, "kubelet"))
		if err != nil {
			cancel()
			return nil, err
		}
		p.kubelets[fleet.Hub.Name] = k
		p.wg.Add(1)
		go func() { defer p.wg.Done(); k.Run(ctx) }()
	} else {
		hubConfig, err := HubConfig(ctx, fleet)
		if err != nil {
			cancel()
			return nil, err
		}
		p.hubConfig = hubConfig
		for i := 0; i < opts.HubReplicas; i++ {
			p.StartHub()
		}
	}
	images := func(cluster string, dns *clusterdns.Table) kubeletsim.Images {
		// The HyperShift operator cannot run here; its stand-in plays it,
		// routing each control plane's kube-apiserver Service in this
		// cluster's DNS stand-in.
		hyperShiftOpts := opts.HyperShift
		hyperShiftOpts.ClusterDNS = dns
		hyperShift := hypershiftsim.Program(hyperShiftOpts)
		return kubeletsim.Images{
			// The local fleet gives every in-process program the same network
			// namespace: no fixed ports.
			kubeletsim.Repository(AgentImage): func(ctx context.Context, args []string) error {
				if len(args) > 0 && args[0] == connector.Command {
					// The extension connector, in its pod's network: the
					// kube-apiserver Service of its namespace resolves
					// (clusterdns), as in a real pod.
					return connector.Program(connector.Options{DialContext: kubeletsim.DialerFrom(ctx)})(ctx, args[1:], os.Stderr)
				}
				if len(args) > 0 && args[0] == proxy.SidecarCommand {
					// The CAPI API proxy sidecar the migration adds to CAPI
					// workloads (the agent's image): a free loopback port
					// instead of its pod's own 127.0.0.1:8080.
					return agentcmd.Main(ctx, append(args, "--listen=127.0.0.1:0"), os.Stderr)
				}
				args = append(args, "--metrics-bind-address=0", "--health-probe-bind-address=0", "--credential-poll-period=1s")
				if opts.AgentArgs != nil && (len(args) == 0 || args[0] != "cleanup") {
					args = append(args, opts.AgentArgs(cluster)...)
				}
				if opts.Agent != nil {
					return opts.Agent(ctx, cluster, args)
				}
				return agentcmd.MainWith(ctx, args, os.Stderr, opts.AgentOptions)
			},
			kubeletsim.Repository(operator.DefaultImage): hyperShift,
			kubeletsim.Repository(BrokenHyperShiftOperatorImage): hypershiftsim.Program(hypershiftsim.Options{
				OperatorFailure: "image " + BrokenHyperShiftOperatorImage + " crash-loops (local fleet)",
			}),
		}
	}
	for _, m := range fleet.Managed {
		// Each management cluster has its own Service network.
		dns := &clusterdns.Table{}
		k, err := kubeletsim.New(m.Config(), images(m.Name, dns), filepath.Join(m.Dir, "kubelet"))
		if err != nil {
			cancel()
			return nil, err
		}
		k.SetNetwork(func(namespace string) kubeletsim.DialFunc { return dns.Dialer(namespace, nil) })
		nodes := kubeletsim.DefaultNodes()
		if opts.Nodes != nil {
			nodes = opts.Nodes(m.Name)
		}
		if err := k.RegisterNodes(ctx, nodes...); err != nil {
			cancel()
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		p.kubelets[m.Name] = k
		p.wg.Add(1)
		go func() { defer p.wg.Done(); k.Run(ctx) }()
	}
	return p, nil
}

// ConsoleImage is the console plugin's asset server (cmd/console), the
// bundle's second Deployment.
const ConsoleImage = "quay.io/hcp-fleet/hcp-fleet-console"

// consoleProgram keeps the asset server's Deployment running, so that
// olm-operator finds every Deployment of the CSV available. It serves
// nothing: cmd/console is a binary of its own, which test/console builds
// and runs for real.
func consoleProgram(ctx context.Context, _ []string) error {
	<-ctx.Done()
	return nil
}

// hubProgram is the hub image's entrypoint (cmd/hub) in-process: the same
// command line (the hub's flags and the zap logging flags), with the
// kubeconfig of the pod's ServiceAccount the kubelet stand-in adds.
func hubProgram(ctx context.Context, args []string) error {
	opts := hub.NewOptions()
	fs := opts.FlagSet(os.Stderr)
	(&zap.Options{}).BindFlags(fs) // accepted as cmd/hub accepts them; the test process keeps its logger
	// Every in-process program shares the test's network namespace: no
	// fixed ports.
	if err := fs.Parse(append(args, "--metrics-bind-address=0", "--health-probe-bind-address=0", "--console-api-bind-address=0")); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("hub: unexpected arguments %q", fs.Args())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err != nil {
		return err
	}
	return hub.Run(ctx, cfg, opts)
}

// The hub's ServiceAccount in manifests/hub.
const (
	HubNamespace      = addon.DefaultHubNamespace
	HubServiceAccount = "hcp-fleet-hub"
)

// HubConfig is a client configuration for the fleet's hub that
// authenticates as the hub's ServiceAccount (manifests/hub) with a token
// from the TokenRequest API, as a hub pod's projected token does: the hub
// runs with exactly the RBAC it ships. Install first.
func HubConfig(ctx context.Context, fleet *localfleet.Fleet) (*rest.Config, error) {
	admin := fleet.Hub.Config()
	kube, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	tr, err := kube.CoreV1().ServiceAccounts(HubNamespace).CreateToken(ctx, HubServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](7 * 24 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token for the hub's service account %s/%s: %w", HubNamespace, HubServiceAccount, err)
	}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}

// HubIdentity is the client configuration the hub replicas run with (nil
// with HubFromDeployment).
func (p *Product) HubIdentity() *rest.Config {
	if p.hubConfig == nil {
		return nil
	}
	return rest.CopyConfig(p.hubConfig)
}

// StartHub starts one more hub replica and returns its index.
func (p *Product) StartHub() int {
	ctx, cancel := context.WithCancel(p.parent)
	r := &hubReplica{cancel: cancel, done: make(chan struct{})}
	p.mu.Lock()
	p.hubs = append(p.hubs, r)
	idx := len(p.hubs) - 1
	p.mu.Unlock()
	opts := hub.NewOptions()
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0"
	// The HyperShift stand-in's failure injection (hypershiftsim.AnnotationDegraded, ...)
	// reaches the HostedCluster like any annotation the admin allows.
	opts.HostedClusterAnnotations += ",hypershiftsim.hcpfleet.io/*"
	if p.opts.Hub != nil {
		p.opts.Hub(opts)
	}
	// Every client of the replica (its manager, the add-on manager) is built
	// from this configuration, so KillHub silences all of them.
	cfg := rest.CopyConfig(p.hubConfig)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return severable{next: next, killed: &r.killed} })
	if p.opts.HubTransport != nil {
		cfg.Wrap(p.opts.HubTransport)
	}
	go func() {
		defer close(r.done)
		// Like a pod, a replica that exits (e.g. it lost its leader lease on
		// an overloaded machine) is restarted; its error is recorded.
		for backoff := time.Second; ; backoff = min(2*backoff, 30*time.Second) {
			err := hub.Run(ctx, cfg, opts)
			if ctx.Err() != nil {
				return
			}
			p.mu.Lock()
			p.errs = append(p.errs, fmt.Errorf("hub replica %d exited (restarted): %w", idx, err))
			p.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
		}
	}()
	return idx
}

// RestartAgent restarts every program on a management cluster (the agent
// and the HyperShift stand-in), as if their pods were deleted.
func (p *Product) RestartAgent(cluster string) { p.kubelets[cluster].RestartAll() }

// KillHub kills hub replica i at once, as SIGKILL would: from this instant
// it sends nothing more (no status write, no lease release), then it stops.
// A standby takes over only once the leader lease expires.
func (p *Product) KillHub(i int) {
	p.mu.Lock()
	r := p.hubs[i]
	p.mu.Unlock()
	r.killed.Store(true)
	r.cancel()
	<-r.done
}

// RegisterNodes registers (or updates) worker Nodes on a management
// cluster, as kubelets joining or being resized would.
func (p *Product) RegisterNodes(ctx context.Context, cluster string, nodes ...kubeletsim.Node) error {
	return p.kubelets[cluster].RegisterNodes(ctx, nodes...)
}

// StopHub stops hub replica i gracefully (its pod deleted: it finishes, and
// releases the leader lease, so a standby takes over at once).
func (p *Product) StopHub(i int) {
	p.mu.Lock()
	r := p.hubs[i]
	p.mu.Unlock()
	r.cancel()
	<-r.done
}

// StopHubs stops every hub replica gracefully (StopHub), as scaling the
// hub's Deployment to zero would: nothing of hcp-fleet's runs on the hub
// until StartHub.
func (p *Product) StopHubs() {
	p.mu.Lock()
	n := len(p.hubs)
	p.mu.Unlock()
	for i := range n {
		p.StopHub(i)
	}
}

// HubExits counts the times a hub replica exited on its own (and was
// restarted), e.g. after losing its leader lease while the API server was
// away.
func (p *Product) HubExits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.errs)
}

// Err reports the first failure of a hub replica.
func (p *Product) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) > 0 {
		return p.errs[0]
	}
	return nil
}

// Stop stops the hub replicas and every program the kubelets run.
func (p *Product) Stop() {
	p.cancel()
	p.mu.Lock()
	hubs := append([]*hubReplica(nil), p.hubs...)
	p.mu.Unlock()
	for _, r := range hubs {
		<-r.done
	}
	p.wg.Wait()
}

// EnableOnAll labels every management cluster for the hcp-fleet-hosts
// Placement, so the add-on's install strategy enables the agent there.
func EnableOnAll(ctx context.Context, fleet *localfleet.Fleet) error {
	clusters, err := clusterclient.NewForConfig(fleet.Hub.Config())
	if err != nil {
		return err
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, HostLabel))
	for _, m := range fleet.Managed {
		if _, err := clusters.ClusterV1().ManagedClusters().Patch(ctx, m.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}
