package feature

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	hiveext "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	bootstrapv1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/agentapi/bootstrap/v1alpha1"
	controlplanev1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/agentapi/controlplane/v1alpha1"
	agentcrds "github.com/hcp-fleet/hcp-fleet/pkg/capi/agentapi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/agentbootstrap"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/agentcontrolplane"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
)

// restartBackoff is how long a failed provider run waits before the next try.
const restartBackoff = 15 * time.Second

// providerRunner runs the agent providers in a manager of their own, which
// it starts and stops as HostingConfig turns them on and off (a running
// controller-runtime manager cannot remove controllers). It is a Runnable of
// the agent's manager: it only runs on the leader, and the providers stop
// with the agent.
type providerRunner struct {
	env     *agent.Env
	opts    Options
	requeue chan<- event.GenericEvent

	started chan struct{}
	base    context.Context // the agent manager's; set before started closes

	mu  sync.Mutex
	cur *providerRun
}

// providerRun is one start of the providers.
type providerRun struct {
	set    ProviderSet
	mode   crds.Mode
	cancel context.CancelFunc
	done   chan struct{}

	// Guarded by providerRunner.mu.
	synced   bool
	exited   bool
	err      error
	exitedAt time.Time
}

func newProviderRunner(env *agent.Env, opts Options, requeue chan<- event.GenericEvent) *providerRunner {
	return &providerRunner{env: env, opts: opts, requeue: requeue, started: make(chan struct{})}
}

// Start records the agent's context and stops the providers when it ends.
func (p *providerRunner) Start(ctx context.Context) error {
	p.base = ctx
	close(p.started)
	<-ctx.Done()
	p.stop()
	return nil
}

// notify requeues the reconciler (a pending requeue is enough).
func (p *providerRunner) notify() {
	select {
	case p.requeue <- event.GenericEvent{Object: &metav1.PartialObjectMetadata{}}:
	default:
	}
}

// stop stops the running providers, if any, and waits for them.
func (p *providerRunner) stop() {
	p.mu.Lock()
	cur := p.cur
	p.cur = nil
	p.mu.Unlock()
	if cur != nil {
		cur.cancel()
		<-cur.done
	}
}

func providersCondition(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: ConditionProviders, Status: status, Reason: reason, Message: msg}
}

func groupsOf(mode crds.Mode) string {
	if mode == crds.ModePrivate {
		return "private CAPI groups, through the CAPI API proxy"
	}
	return "standard cluster.x-k8s.io groups"
}

// ensure brings the providers to want (in the resolved mode d) and says how
// they are, as the CAPIAgentProviders condition, and when to look again.
// The condition is True when the providers are as HostingConfig asks
// (running, or off).
func (p *providerRunner) ensure(ctx context.Context, want ProviderSet, d crds.Decision, live map[string]metav1.Object) (metav1.Condition, time.Duration) {
	select {
	case <-p.started:
	case <-ctx.Done():
		return providersCondition(metav1.ConditionFalse, "Starting", "the agent is starting"), time.Second
	}
	if !want.Any() {
		p.stop()
		return providersCondition(metav1.ConditionTrue, "Disabled",
			"HostingConfig enables no OpenShift Agent CAPI providers (spec.agentProviders)"), 0
	}
	if d.Conflict && !d.Compatible {
		p.stop()
		return providersCondition(metav1.ConditionFalse, "CAPITypesUnusable",
			fmt.Sprintf("the %s providers cannot run: %s", want, d.Reason)), 0
	}
	if miss := missing(providerPrerequisites(want), live); len(miss) > 0 {
		p.stop()
		// The CRD watch brings us back when they appear.
		return providersCondition(metav1.ConditionFalse, "PrerequisitesMissing", fmt.Sprintf(
			"the %s providers need assisted-service and hive on this cluster (multicluster engine installs them); missing CRDs: %v", want, miss)), 0
	}

	p.mu.Lock()
	cur := p.cur
	p.mu.Unlock()
	if cur != nil && (cur.set != want || cur.mode != d.Mode) {
		p.stop()
		cur = nil
	}
	if cur == nil {
		cur = p.start(want, d.Mode)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case cur.exited && cur.err != nil:
		if wait := restartBackoff - time.Since(cur.exitedAt); wait > 0 {
			return providersCondition(metav1.ConditionFalse, "Failed", fmt.Sprintf("the %s providers stopped: %v; retrying", want, cur.err)), wait
		}
		// Backoff over: start afresh on the next reconcile.
		if p.cur == cur {
			p.cur = nil
		}
		return providersCondition(metav1.ConditionFalse, "Failed", fmt.Sprintf("the %s providers stopped: %v; retrying", want, cur.err)), time.Millisecond
	case cur.exited:
		if p.cur == cur {
			p.cur = nil
		}
		return providersCondition(metav1.ConditionFalse, "Stopped", fmt.Sprintf("the %s providers stopped; restarting", want)), time.Millisecond
	case !cur.synced:
		return providersCondition(metav1.ConditionFalse, "Starting", fmt.Sprintf("starting the %s providers (%s)", want, groupsOf(d.Mode))), 0
	default:
		return providersCondition(metav1.ConditionTrue, "Running", fmt.Sprintf("the %s providers run (%s)", want, groupsOf(d.Mode))), 0
	}
}

// start starts a run; a run that cannot start is returned as exited with
// the error.
func (p *providerRunner) start(want ProviderSet, mode crds.Mode) *providerRun {
	ctx, cancel := context.WithCancel(p.base)
	run := &providerRun{set: want, mode: mode, cancel: cancel, done: make(chan struct{})}
	p.mu.Lock()
	p.cur = run
	p.mu.Unlock()
	log := ctrl.Log.WithName("capi-agent-providers").WithValues("cluster", p.env.Options.ClusterName, "providers", want.String(), "mode", mode)
	exit := func(err error) {
		if err != nil {
			log.Error(err, "providers stopped")
		}
		p.mu.Lock()
		run.exited, run.exitedAt = true, time.Now()
		if run.err == nil { // a sync failure recorded its reason first
			run.err = err
		}
		p.mu.Unlock()
		cancel()
		close(run.done)
		p.notify()
	}

	cfg := rest.CopyConfig(p.env.Managed)
	closeProxy := func() {}
	if mode == crds.ModePrivate {
		// The providers are unmodified CAPI clients: in Private mode they
		// talk to the management cluster through the API proxy, which maps
		// the standard groups onto our private CRDs.
		pcfg, stop, err := startProxy(p.env.Managed)
		if err != nil {
			exit(fmt.Errorf("starting the CAPI API proxy: %w", err))
			return run
		}
		cfg, closeProxy = pcfg, stop
	}

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 agent.Scheme,
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// The agent's manager elected us already: this runs on its leader.
		LeaderElection: false,
		Controller:     config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err == nil {
		err = setupProviders(mgr, want, p.opts)
	}
	if err == nil {
		// Each provider installed its CRDs just now; watching them needs
		// them served.
		err = crds.WaitEstablished(ctx, mgr.GetAPIReader(), providerCRDs(want), time.Minute)
	}
	if err == nil {
		// Register the watches up front so that WaitForCacheSync below
		// waits for all of them.
		for _, obj := range watchedKinds(want) {
			if _, err = mgr.GetCache().GetInformer(ctx, obj, cache.BlockUntilSynced(false)); err != nil {
				break
			}
		}
	}
	if err != nil {
		closeProxy()
		exit(err)
		return run
	}

	go func() {
		err := mgr.Start(ctx)
		closeProxy()
		if err == nil && ctx.Err() == nil {
			err = errors.New("the providers' manager ended")
		}
		exit(err)
	}()
	go func() {
		syncCtx, cancelSync := context.WithTimeout(ctx, p.opts.SyncTimeout)
		defer cancelSync()
		if mgr.GetCache().WaitForCacheSync(syncCtx) {
			p.mu.Lock()
			run.synced = true
			p.mu.Unlock()
			p.notify()
			return
		}
		if ctx.Err() != nil {
			return // stopped on purpose
		}
		// Say which watch is stuck and why (Forbidden: missing RBAC).
		err := fmt.Errorf("watches not in sync after %s", p.opts.SyncTimeout)
		for _, obj := range watchedKinds(want) {
			list, lerr := listOf(mgr, obj)
			if lerr == nil {
				lerr = mgr.GetAPIReader().List(ctx, list, client.Limit(1))
			}
			if lerr != nil {
				err = fmt.Errorf("%w: listing %T: %w", err, obj, lerr)
				break
			}
		}
		p.mu.Lock()
		run.err = err
		p.mu.Unlock()
		cancel() // mgr.Start returns; exit records the error above
	}()
	return run
}

// setupProviders registers the selected providers with mgr (each installs
// its own CRDs first).
func setupProviders(mgr ctrl.Manager, want ProviderSet, opts Options) error {
	if want.Bootstrap {
		if err := agentbootstrap.Setup(mgr, opts.Bootstrap); err != nil {
			return fmt.Errorf("bootstrap provider: %w", err)
		}
	}
	if want.ControlPlane {
		if err := agentcontrolplane.Setup(mgr); err != nil {
			return fmt.Errorf("control-plane provider: %w", err)
		}
	}
	return nil
}

// providerCRDs are the CRDs the selected providers install.
func providerCRDs(want ProviderSet) []string {
	var out []string
	if want.Bootstrap || want.ControlPlane {
		out = append(out, agentcrds.Bootstrap...)
	}
	if want.ControlPlane {
		out = append(out, agentcrds.ControlPlane...)
	}
	return out
}

// watchedKinds are the kinds the providers' controllers watch.
func watchedKinds(want ProviderSet) []client.Object {
	var out []client.Object
	if want.Bootstrap {
		out = append(out, &bootstrapv1.OpenshiftAssistedConfig{}, &clusterv1.Machine{}, &aiv1beta1.InfraEnv{},
			&aiv1beta1.Agent{}, &hiveext.AgentClusterInstall{})
	}
	if want.ControlPlane {
		out = append(out, &controlplanev1.OpenshiftAssistedControlPlane{}, &hivev1.ClusterDeployment{},
			&clusterv1.MachineDeployment{}, &clusterv1.Cluster{})
		if !want.Bootstrap {
			out = append(out, &clusterv1.Machine{}, &aiv1beta1.Agent{}, &hiveext.AgentClusterInstall{})
		}
	}
	return out
}

// listOf returns an empty list of obj's kind.
func listOf(mgr ctrl.Manager, obj client.Object) (client.ObjectList, error) {
	gvk, err := mgr.GetClient().GroupVersionKindFor(obj)
	if err != nil {
		return nil, err
	}
	gvk.Kind += "List"
	o, err := mgr.GetScheme().New(gvk)
	if err != nil {
		return nil, err
	}
	list, ok := o.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("%s is not a list", gvk)
	}
	return list, nil
}
