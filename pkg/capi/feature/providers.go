package feature

import (
	"context"
	"fmt"
	"time"

	hiveext "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	bootstrapv1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/bootstrap/v1alpha1"
	controlplanev1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/controlplane/v1alpha1"
	agentcrds "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedbootstrap"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedcontrolplane"
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
	subManager[providerRun]
	env  *agent.Env
	opts Options
}

// providerRun is what one start of the providers runs.
type providerRun struct {
	set  ProviderSet
	mode crds.Mode
	// synced: the providers' watches are in sync. Guarded by mu.
	synced bool
}

// newProviderRunner runs the providers; requeue requeues the reconciler when
// they start or stop.
func newProviderRunner(env *agent.Env, opts Options, requeue func()) *providerRunner {
	return &providerRunner{subManager: newSubManager[providerRun]("providers stopped", "the providers' manager ended", requeue), env: env, opts: opts}
}

// Start records the agent's context and stops the providers when it ends.
func (p *providerRunner) Start(ctx context.Context) error {
	p.begin(ctx)
	<-ctx.Done()
	p.stop()
	return nil
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
	if !p.ready(ctx) {
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

	cur := p.current()
	if cur != nil && (cur.info.set != want || cur.info.mode != d.Mode) {
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
	case !cur.info.synced:
		return providersCondition(metav1.ConditionFalse, "Starting", fmt.Sprintf("starting the %s providers (%s)", want, groupsOf(d.Mode))), 0
	default:
		return providersCondition(metav1.ConditionTrue, "Running", fmt.Sprintf("the %s providers run (%s)", want, groupsOf(d.Mode))), 0
	}
}

// start starts a run; a run that cannot start is returned as exited with
// the error.
func (p *providerRunner) start(want ProviderSet, mode crds.Mode) *subRun[providerRun] {
	log := ctrl.Log.WithName("capi-agent-providers").WithValues("cluster", p.env.Options.ClusterName, "providers", want.String(), "mode", mode)
	return p.launch(providerRun{set: want, mode: mode}, log, func(ctx context.Context, run *subRun[providerRun]) (ctrl.Manager, func(), error) {
		cfg := rest.CopyConfig(p.env.Managed)
		closeProxy := func() {}
		if mode == crds.ModePrivate {
			// The providers are unmodified CAPI clients: in Private mode
			// they talk to the management cluster through the API proxy,
			// which maps the standard groups onto our private CRDs.
			pcfg, stop, err := startProxy(p.env.Managed)
			if err != nil {
				return nil, nil, fmt.Errorf("starting the CAPI API proxy: %w", err)
			}
			cfg, closeProxy = pcfg, stop
		}

		mgr, err := newRunManager(cfg, log)
		if err == nil {
			err = setupProviders(mgr, want, p.opts)
		}
		if err == nil {
			// Each provider installed its CRDs just now; watching them
			// needs them served.
			err = crds.WaitEstablished(ctx, mgr.GetAPIReader(), providerCRDs(want), time.Minute)
		}
		if err == nil {
			// Register the watches up front so that WaitForCacheSync
			// below waits for all of them.
			for _, obj := range watchedKinds(want) {
				if _, err = mgr.GetCache().GetInformer(ctx, obj, cache.BlockUntilSynced(false)); err != nil {
					break
				}
			}
		}
		if err != nil {
			closeProxy()
			return nil, nil, err
		}
		// Waits for the manager, which starts right after this returns.
		go p.watchSync(ctx, mgr, run, want)
		providersRunning.Inc()
		return mgr, func() { closeProxy(); providersRunning.Dec() }, nil
	})
}

// watchSync marks run synced once the providers' watches are, or stops it
// saying which watch is stuck after SyncTimeout.
func (p *providerRunner) watchSync(ctx context.Context, mgr ctrl.Manager, run *subRun[providerRun], want ProviderSet) {
	syncCtx, cancelSync := context.WithTimeout(ctx, p.opts.SyncTimeout)
	defer cancelSync()
	if mgr.GetCache().WaitForCacheSync(syncCtx) {
		p.mu.Lock()
		run.info.synced = true
		p.mu.Unlock()
		p.notify() // to report Running
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
	p.fail(run, err) // mgr.Start returns; the run exits with err
}

// setupProviders registers the selected providers with mgr (each installs
// its own CRDs first).
func setupProviders(mgr ctrl.Manager, want ProviderSet, opts Options) error {
	if want.Bootstrap {
		if err := assistedbootstrap.Setup(mgr, opts.Bootstrap); err != nil {
			return fmt.Errorf("bootstrap provider: %w", err)
		}
	}
	if want.ControlPlane {
		if err := assistedcontrolplane.Setup(mgr); err != nil {
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
