// Package localfleet runs a real OCM fleet on one machine, without Docker:
// one hub and N management clusters, each a real kube-apiserver (sharing one
// etcd under distinct prefixes) with a kube-controller-manager, the real OCM
// hub controllers (registration, placement, addon-manager) in-process, and on
// every management cluster the real OCM registration and work agents
// in-process. Clusters join the hub through a bootstrap token and the CSR
// flow, exactly as on a real hub. Nothing runs pods.
//
// It backs `make run` (cmd/localfleet), the integration and end-to-end tests
// and the benchmarks; it is never part of the product. It reads the etcd,
// kube-apiserver and kube-controller-manager binaries (internal/k8sbins) and
// the OCM CRDs embedded from crds/, and writes each cluster's certificates,
// kubeconfigs, etcd data and logs under Options.Dir (a temporary directory
// that Stop removes, unless one is given).
package localfleet

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"open-cluster-management.io/ocm/pkg/registration/register/csr"
	registrationspoke "open-cluster-management.io/ocm/pkg/registration/spoke"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Options configure a fleet.
type Options struct {
	// ManagementClusters is how many management clusters join the hub
	// (named cluster-1 … cluster-N). Default 2.
	ManagementClusters int
	// Dir holds certificates, kubeconfigs, etcd data and logs. Empty means a
	// temporary directory that Stop removes; a given directory is kept.
	Dir string
	// StatusSyncInterval is the work agents' status feedback poll interval
	// (--status-sync-interval; OCM's default is 10s).
	StatusSyncInterval time.Duration
	// AddOnLeaseSyncInterval is how often the registration agents check
	// add-on health leases (OCM's default is 30s; process-wide).
	AddOnLeaseSyncInterval time.Duration
	// Progress receives one line per start-up step (nil: discarded).
	Progress io.Writer
	// HubAPIServerPort fixes the hub apiserver's port (0: any free port).
	HubAPIServerPort int
	// StartTimeout bounds the whole start-up. Default 5 minutes.
	StartTimeout time.Duration
	// ManagementClusterNice runs the management clusters' and guests'
	// kube-apiservers and kube-controller-managers at this nice value
	// (1–19; 0: as the hub's). On a machine of two cores their work takes
	// most of the CPU the hub's API server needs; on a real fleet they are
	// other machines. Benchmarks set it, so that the hub is measured
	// against its own API server's limit.
	ManagementClusterNice int
}

// Fleet is a running local fleet.
type Fleet struct {
	Hub        *Cluster
	Managed    []*ManagedCluster
	Dir        string
	LogDir     string
	StartupDur time.Duration

	opts      Options
	removeDir bool
	etcd      *etcdServer
	cancel    context.CancelFunc
	ctx       context.Context

	mu     sync.Mutex
	failed []error
	wg     sync.WaitGroup
	// guests are hosted clusters' control planes (see StartGuest).
	guests map[string]*Cluster
}

// Start brings up the fleet and returns once every management cluster has
// joined and is Available on the hub. On any failure it stops everything it
// started and returns one error naming the failed component and its log.
func Start(ctx context.Context, opts Options) (*Fleet, error) {
	began := time.Now()
	if opts.ManagementClusters <= 0 {
		opts.ManagementClusters = 2
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 5 * time.Minute
	}
	if opts.AddOnLeaseSyncInterval > 0 {
		registrationspoke.AddOnLeaseControllerSyncInterval = opts.AddOnLeaseSyncInterval
	}
	binDir, err := binaryDir()
	if err != nil {
		return nil, err
	}
	f := &Fleet{opts: opts, Dir: opts.Dir}
	if f.Dir == "" {
		if f.Dir, err = os.MkdirTemp("", "localfleet-"); err != nil {
			return nil, err
		}
		f.removeDir = true
	}
	f.LogDir = filepath.Join(f.Dir, "logs")
	if err := os.MkdirAll(f.LogDir, 0o700); err != nil {
		return nil, err
	}
	if err := redirectInProcessLogs(filepath.Join(f.LogDir, "in-process.log")); err != nil {
		return nil, err
	}
	// The in-process components live until Stop, not until the caller's
	// start-up context ends.
	f.ctx, f.cancel = context.WithCancel(context.Background())
	startCtx, cancelStart := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancelStart()

	if err := f.start(startCtx, binDir); err != nil {
		f.Stop()
		if ctxErr := startCtx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (start-up: %w)", err, ctxErr)
		}
		return nil, fmt.Errorf("local fleet: %w\n  all logs: %s", err, f.LogDir)
	}
	f.StartupDur = time.Since(began)
	f.progress("fleet ready in %s: hub + %d management clusters", f.StartupDur.Round(100*time.Millisecond), len(f.Managed))
	return f, nil
}

func (f *Fleet) start(ctx context.Context, binDir string) error {
	step := time.Now()
	f.progress("starting etcd")
	etcd, err := startEtcd(ctx, binDir, f.Dir)
	if err != nil {
		return err
	}
	f.etcd = etcd

	names := []string{"hub"}
	for i := 1; i <= f.opts.ManagementClusters; i++ {
		names = append(names, fmt.Sprintf("cluster-%d", i))
	}
	f.progress("starting %d kube-apiservers and kube-controller-managers in parallel", len(names))
	clusters := make([]*Cluster, len(names))
	if err := parallel(len(names), func(i int) error {
		port := 0
		if i == 0 {
			port = f.opts.HubAPIServerPort
		}
		nice := f.opts.ManagementClusterNice
		if i == 0 {
			nice = 0 // the hub
		}
		c, err := startCluster(ctx, binDir, filepath.Join(f.Dir, names[i]), names[i], etcd.clientURL, port, nice)
		clusters[i] = c
		return err
	}); err != nil {
		for _, c := range clusters {
			if c != nil {
				c.stop()
			}
		}
		return err
	}
	f.Hub = clusters[0]
	for _, c := range clusters[1:] {
		f.Managed = append(f.Managed, &ManagedCluster{
			Cluster:          c,
			HubKubeconfigDir: filepath.Join(c.Dir, "hub-kubeconfig"),
			AgentID:          c.Name + "-klusterlet",
		})
	}
	f.progress("control planes up in %s", time.Since(step).Round(100*time.Millisecond))

	step = time.Now()
	if err := installOCMHub(ctx, f.Hub); err != nil {
		return err
	}
	if err := runOCMWebhook(f.ctx, f.Hub, f.report); err != nil {
		return err
	}
	runOCMHub(f.ctx, f.Hub, f.report)
	if err := bootstrapKubeconfig(ctx, f.Hub, f.bootstrapPath()); err != nil {
		return err
	}
	f.progress("OCM hub controllers running; joining %d management clusters", len(f.Managed))

	if err := parallel(len(f.Managed), func(i int) error {
		return f.join(ctx, f.Managed[i])
	}); err != nil {
		return err
	}
	f.progress("management clusters joined and available in %s", time.Since(step).Round(100*time.Millisecond))
	return nil
}

// join registers m with the hub through the real registration agent and CSR
// flow, accepts it as a hub admin would, waits for its hub credentials,
// starts its work agent and waits until the hub reports it Available.
func (f *Fleet) join(ctx context.Context, m *ManagedCluster) error {
	if err := installOCMSpoke(ctx, m.Cluster); err != nil {
		return err
	}
	report := f.scopeAgents(m)
	runRegistrationAgent(m.agentsCtx, m, f.bootstrapPath(), report)
	clusters, err := clusterclient.NewForConfig(f.Hub.Config())
	if err != nil {
		return err
	}
	hubKubeconfig := m.HubKubeconfigPath()
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := f.Err(); err != nil {
			return false, err
		}
		if _, err := os.Stat(hubKubeconfig); err == nil {
			if _, err := os.Stat(filepath.Join(m.HubKubeconfigDir, csr.TLSCertFile)); err == nil {
				return true, nil
			}
		}
		// Not registered yet: accept the cluster (idempotent) once its
		// ManagedCluster exists.
		if _, err := clusters.ClusterV1().ManagedClusters().Get(ctx, m.Name, metav1.GetOptions{}); err == nil {
			if err := AcceptCluster(ctx, f.Hub, m.Name); err != nil {
				return false, fmt.Errorf("accepting %s: %w", m.Name, err)
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("%s did not obtain hub credentials through the registration agent: %w\n  log: %s",
			m.Name, err, filepath.Join(f.LogDir, "in-process.log"))
	}
	runWorkAgent(m.agentsCtx, m, f.opts.StatusSyncInterval, report)
	return f.waitAvailable(ctx, m)
}

// bootstrapPath is the bootstrap kubeconfig the registration agents join
// (and rejoin) with.
func (f *Fleet) bootstrapPath() string { return filepath.Join(f.Hub.Dir, "bootstrap.kubeconfig") }

// scopeAgents gives m's OCM agents a context of their own under the fleet's
// and returns how they report stopping: stopped by Disconnect is expected,
// anything else is a failure of the fleet.
func (f *Fleet) scopeAgents(m *ManagedCluster) func(string, error) {
	agentsCtx, stop := context.WithCancel(f.ctx)
	m.agentsCtx, m.stopAgents = agentsCtx, stop
	return func(component string, err error) {
		if agentsCtx.Err() != nil {
			return
		}
		f.report(component, err)
	}
}

// Disconnect stops the OCM agents (registration and work) of a management
// cluster, as if its klusterlet were gone or cut off from the hub: the hub
// stops hearing from it and, once its lease expires, marks it unavailable.
// The cluster's API server and everything running on it keep running.
func (f *Fleet) Disconnect(name string) error {
	m := f.Cluster(name)
	if m == nil {
		return fmt.Errorf("no management cluster %q", name)
	}
	if m.stopAgents != nil {
		m.stopAgents()
	}
	return nil
}

// Reconnect starts the OCM agents of a cluster Disconnect stopped again,
// with the hub credentials it already has (no new registration), and waits
// until the hub reports the cluster Available.
func (f *Fleet) Reconnect(ctx context.Context, name string) error {
	m := f.Cluster(name)
	if m == nil {
		return fmt.Errorf("no management cluster %q", name)
	}
	if m.agentsCtx != nil && m.agentsCtx.Err() == nil {
		return fmt.Errorf("management cluster %s is connected", name)
	}
	report := f.scopeAgents(m)
	runRegistrationAgent(m.agentsCtx, m, f.bootstrapPath(), report)
	runWorkAgent(m.agentsCtx, m, f.opts.StatusSyncInterval, report)
	return f.waitAvailable(ctx, m)
}

// waitAvailable waits until the hub reports m Available.
func (f *Fleet) waitAvailable(ctx context.Context, m *ManagedCluster) error {
	clusters, err := clusterclient.NewForConfig(f.Hub.Config())
	if err != nil {
		return err
	}
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := f.Err(); err != nil {
			return false, err
		}
		mc, err := clusters.ClusterV1().ManagedClusters().Get(ctx, m.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // poll until available
		}
		return conditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
	})
	if err != nil {
		return fmt.Errorf("%s did not become Available on the hub: %w\n  log: %s", m.Name, err, filepath.Join(f.LogDir, "in-process.log"))
	}
	return nil
}

// Cluster returns the management cluster with the given name, or nil.
func (f *Fleet) Cluster(name string) *ManagedCluster {
	for _, m := range f.Managed {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Err reports the first failure of a component since start: an in-process
// OCM component that returned, or a child process that exited.
func (f *Fleet) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.failed) > 0 {
		return f.failed[0]
	}
	if f.etcd != nil {
		if gone, why := f.etcd.proc.exited(); gone && f.ctx.Err() == nil {
			return f.etcd.proc.failure("exited", why)
		}
	}
	for _, c := range f.clusters() {
		if err := c.checkAlive(); err != nil && f.ctx.Err() == nil {
			return err
		}
	}
	return nil
}

func (f *Fleet) clusters() []*Cluster {
	var cs []*Cluster
	if f.Hub != nil {
		cs = append(cs, f.Hub)
	}
	for _, m := range f.Managed {
		cs = append(cs, m.Cluster)
	}
	return cs
}

// report records an in-process component that stopped before Stop.
func (f *Fleet) report(component string, err error) {
	if f.ctx.Err() != nil {
		return // stopping: components returning is expected
	}
	if err == nil {
		err = errors.New("returned unexpectedly")
	}
	f.mu.Lock()
	f.failed = append(f.failed, fmt.Errorf("%s stopped: %w (log: %s)", component, err, filepath.Join(f.LogDir, "in-process.log")))
	f.mu.Unlock()
}

// Stop stops every in-process component and child process and removes the
// temporary directory. Safe to call more than once and on a partial start.
func (f *Fleet) Stop() {
	if f.cancel != nil {
		f.cancel()
	}
	f.wg.Wait()
	f.mu.Lock()
	clusters := f.clusters()
	for _, g := range f.guests {
		clusters = append(clusters, g)
	}
	f.guests = nil
	f.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range clusters {
		wg.Add(1)
		go func() { defer wg.Done(); c.stop() }()
	}
	wg.Wait()
	if f.etcd != nil {
		f.etcd.proc.stop(5 * time.Second)
	}
	// LOCALFLEET_KEEP=1 keeps a temporary fleet's logs for debugging.
	if f.removeDir && f.Dir != "" && os.Getenv("LOCALFLEET_KEEP") == "" {
		_ = os.RemoveAll(f.Dir)
	}
}

func (f *Fleet) progress(format string, args ...any) {
	if f.opts.Progress != nil {
		_, _ = fmt.Fprintf(f.opts.Progress, "localfleet: "+format+"\n", args...)
	}
}

// parallel runs fn(0..n-1) concurrently and returns the first error.
func parallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = fn(i) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func conditionTrue(conds []metav1.Condition, t string) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

var klogOnce sync.Once

// redirectInProcessLogs sends the in-process OCM components' klog output to
// a file instead of the terminal or test log.
func redirectInProcessLogs(path string) error {
	out, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	klogOnce.Do(func() {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("alsologtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		_ = fs.Set("one_output", "true")
	})
	klog.SetOutput(out)
	ctrl.SetLogger(klog.NewKlogr())
	return nil
}
