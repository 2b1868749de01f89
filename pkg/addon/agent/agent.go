// Package agent is the runtime of the hcp-fleet agent on a management
// cluster: it connects to the hub with the credentials OCM registration
// issued, renews the health lease OCM reads, reports conditions on its
// ManagedClusterAddOn, hands the HostingConfig to the agent's features, and
// runs their controllers (HyperShift operator lifecycle, CAPI, OLM, …) and,
// as the add-on's pre-delete hook, their cleanup. Features build their
// controllers with its SingleRequest and WatchWhenServed.
package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"open-cluster-management.io/addon-framework/pkg/lease"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// Feature is one part of the agent.
type Feature struct {
	// Name identifies the feature in logs and as its condition owner.
	Name string
	// ConfigureCache narrows what the manager's cache watches for the
	// feature's kinds (e.g. Deployments in one namespace only).
	ConfigureCache func(*cache.Options)
	// Setup registers the feature's controllers with the manager of the
	// management cluster.
	Setup func(mgr ctrl.Manager, env *Env) error
	// Cleanup undoes what the feature did on the management cluster; it runs
	// in the add-on's pre-delete hook. An error says why it cannot (yet).
	Cleanup func(ctx context.Context, env *Env) error
	// Flags adds the feature's own flags to those of run and cleanup,
	// bound to the feature's options (so timings are options, not package
	// variables a test overwrites).
	Flags func(fs *flag.FlagSet)
	// Commands are subcommands of the agent binary the feature brings, beside
	// run and cleanup: entry points of helpers that run the agent's own image
	// in other pods (e.g. the CAPI API proxy sidecar).
	Commands []Command
}

// Command is a subcommand of the agent binary. It parses its own flags; none
// of the agent's apply.
type Command struct {
	// Name is the first argument that selects it.
	Name string
	// Summary is one line for the agent's usage text.
	Summary string
	// Main runs it with the arguments after the name.
	Main func(ctx context.Context, args []string, stderr io.Writer) error
}

// Env is what a feature gets from the runtime.
type Env struct {
	Options *Options
	// Hub is the agent's hub identity: only what the add-on's hub RBAC
	// grants in the cluster's own namespace.
	Hub            *rest.Config
	HubAddonClient addonclient.Interface
	// Managed is the management cluster, as the agent's service account.
	Managed       *rest.Config
	ManagedClient kubernetes.Interface
	// HostingConfig is the HostingConfig the hub rendered for this cluster.
	HostingConfig *HostingConfigSource
	// HubEvents records Events in the cluster's namespace on the hub, about
	// the agent's ManagedClusterAddOn.
	HubEvents record.EventRecorder
	events    record.EventBroadcaster

	// lastSeenDeleting is AddonDeleting's last answer read from the hub.
	lastSeenDeleting atomic.Bool
	// healthAnswer is ReportOperatorHealth's last write.
	healthAnswer healthAnswer
}

// EventSource is the component name of the agent's Events.
const EventSource = "hcp-fleet-agent"

// eventScheme resolves the kinds of the objects the agent's Events are
// about.
var eventScheme = runtime.NewScheme()

func init() { utilruntime.Must(addonv1alpha1.Install(eventScheme)) }

// Close flushes and stops what newEnv started.
func (e *Env) Close() {
	if e.events != nil {
		e.events.Shutdown()
	}

}

// AddonDeleting reports whether the add-on is being removed from this
// cluster (its ManagedClusterAddOn has a deletion timestamp, and the
// pre-delete cleanup runs). Features then stop installing things, so they do
// not fight the cleanup.
//
// The answer must not depend on the hub being reachable: the agent keeps
// correcting the management cluster while the hub is away. A transient error
// — and a 404, which a restarting hub API server returns for custom resources
// until its CRD handlers are ready — gives the last answer read, and "not
// deleting" when there is none yet: the cleanup itself is delivered by the
// hub, so nothing is being removed while the hub is away. A 404 after a
// deletion was seen stays "deleting": the add-on is gone.
func (e *Env) AddonDeleting(ctx context.Context) bool {
	mca, err := e.HubAddonClient.AddonV1alpha1().ManagedClusterAddOns(e.Options.ClusterName).Get(ctx, e.Options.AddonName, metav1.GetOptions{})
	if err != nil {
		deleting := e.lastSeenDeleting.Load()
		ctrllog.FromContext(ctx).V(1).Info("ManagedClusterAddOn not readable; using the last answer",
			"reason", apierrors.ReasonForError(err), "deleting", deleting)
		return deleting
	}
	deleting := mca.DeletionTimestamp != nil
	e.lastSeenDeleting.Store(deleting)
	return deleting
}

// Reporter returns the condition reporter of owner on the agent's
// ManagedClusterAddOn.
func (e *Env) Reporter(owner string) *Reporter {
	return NewReporter(e.HubAddonClient, e.Options.ClusterName, e.Options.AddonName, owner).WithEvents(e.HubEvents)
}

// Scheme is the scheme of the management-cluster manager; features add their
// types to it in init.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
}

// Main is the agent's command line: `run` (the default), `cleanup`, or a
// feature's Command. The logging flags (--zap-log-level, ...) are parsed
// but the process's logger is left as it is: the local fleet runs several
// agents in one process. ProgramMain is the program's own entry point.
func Main(ctx context.Context, args []string, stderr io.Writer, features ...Feature) error {
	return runMain(ctx, args, stderr, false, features)
}

// ProgramMain is Main for the agent binary: it also installs the process's
// logger (controller-runtime's zap, configured by the logging flags:
// --zap-log-level=debug|info|error or a number, --zap-devel,
// --zap-encoder=json|console, --zap-stacktrace-level).
func ProgramMain(ctx context.Context, args []string, stderr io.Writer, features ...Feature) error {
	return runMain(ctx, args, stderr, true, features)
}

func runMain(ctx context.Context, args []string, stderr io.Writer, setLogger bool, features []Feature) error {
	var extra []Command
	for _, f := range features {
		extra = append(extra, f.Commands...)
	}
	if len(args) > 0 {
		for _, c := range extra {
			if args[0] == c.Name {
				if setLogger {
					// A subcommand's flags are its own: the default level.
					ctrl.SetLogger(zap.New(zap.WriteTo(stderr)))
				}
				return c.Main(ctx, args[1:], stderr)
			}
		}
	}
	cmd := "run"
	if len(args) > 0 && (args[0] == "run" || args[0] == "cleanup") {
		cmd, args = args[0], args[1:]
	}
	opts := NewOptions()
	fs := opts.FlagSet("hcp-fleet-agent "+cmd, stderr)
	for _, f := range features {
		if f.Flags != nil {
			f.Flags(fs)
		}
	}
	fs.Usage = func() {
		_, _ = fmt.Fprintf(stderr, `hcp-fleet-agent runs on a management cluster as the hcp-fleet OCM add-on agent.

Usage:
  hcp-fleet-agent [run] [flags]   run the agent (default)
  hcp-fleet-agent cleanup [flags] undo everything the agent did on this cluster (the add-on's pre-delete hook)
`)
		for _, c := range extra {
			_, _ = fmt.Fprintf(stderr, "  hcp-fleet-agent %s [flags]  %s (see its --help)\n", c.Name, c.Summary)
		}
		_, _ = fmt.Fprintf(stderr, "\nFlags of run and cleanup:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if setLogger {
		ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts.Log), zap.WriteTo(stderr)))
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	if cmd == "cleanup" {
		return Cleanup(ctx, opts, features...)
	}
	return Run(ctx, opts, features...)
}

// Run runs the agent until ctx ends. When the hub credentials rotate, it
// stops everything and starts again with the new ones.
func Run(ctx context.Context, opts *Options, features ...Feature) error {
	log := ctrl.Log.WithName("agent").WithValues("cluster", opts.ClusterName)
	for {
		fingerprint, err := waitForCredentials(ctx, opts)
		if err != nil {
			return err
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- runOnce(runCtx, opts, features)
			cancel() // ends the watch on the credentials below
		}()
		// Watch the credentials until they change, the run ends or ctx does.
		rotated := wait.PollUntilContextCancel(runCtx, opts.CredentialPollPeriod, false, func(context.Context) (bool, error) {
			now, err := credentialFingerprint(opts.HubKubeconfig)
			return err == nil && now != fingerprint, nil
		}) == nil
		if rotated {
			log.Info("hub credentials changed; reconnecting")
		}
		cancel()
		err = <-done
		if ctx.Err() != nil {
			return nil //nolint:nilerr // asked to stop: what the run returned on its way out is not a failure
		}
		if !rotated || err != nil {
			return err // !rotated: the run ended on its own
		}
	}
}

// waitForCredentials waits until the hub kubeconfig exists (OCM registration
// writes it once the add-on's CSR is approved and signed).
func waitForCredentials(ctx context.Context, opts *Options) (string, error) {
	var fp string
	err := wait.PollUntilContextCancel(ctx, opts.CredentialPollPeriod, true, func(context.Context) (bool, error) {
		var err error
		fp, err = credentialFingerprint(opts.HubKubeconfig)
		return err == nil, nil
	})
	return fp, err
}

// credentialFingerprint hashes the hub kubeconfig and the certificate and key
// files beside it.
func credentialFingerprint(kubeconfig string) (string, error) {
	h := sha256.New()
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		return "", err
	}
	h.Write(data)
	for _, f := range []string{"tls.crt", "tls.key"} {
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(kubeconfig), f)); err == nil {
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func newEnv(opts *Options) (*Env, error) {
	hub, err := clientcmd.BuildConfigFromFlags("", opts.HubKubeconfig)
	if err != nil {
		return nil, fmt.Errorf("hub kubeconfig %s: %w", opts.HubKubeconfig, err)
	}
	managed, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("management cluster kubeconfig: %w", err)
	}
	for _, cfg := range []*rest.Config{hub, managed} {
		cfg.QPS, cfg.Burst = float32(opts.KubeAPIQPS), opts.KubeAPIBurst
	}
	addonClient, err := addonclient.NewForConfig(hub)
	if err != nil {
		return nil, err
	}
	managedClient, err := kubernetes.NewForConfig(managed)
	if err != nil {
		return nil, err
	}
	hubClient, err := kubernetes.NewForConfig(hub)
	if err != nil {
		return nil, err
	}
	// Events go to the cluster's namespace on the hub only: the agent's hub
	// RBAC grants events there and nowhere else.
	broadcaster := record.NewBroadcaster()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: hubClient.CoreV1().Events(opts.ClusterName)})
	return &Env{
		Options: opts, Hub: hub, HubAddonClient: addonClient, Managed: managed, ManagedClient: managedClient,
		HostingConfig: newHostingConfigSource(),
		HubEvents:     broadcaster.NewRecorder(eventScheme, corev1.EventSource{Component: EventSource, Host: opts.ClusterName}),
		events:        broadcaster,
	}, nil
}

func runOnce(ctx context.Context, opts *Options, features []Feature) error {
	env, err := newEnv(opts)
	if err != nil {
		return err
	}
	defer env.Close()
	// The agent reads ConfigMaps and Secrets only in its own namespace; its
	// RBAC grants no more. Features narrow their own kinds.
	cacheOpts := cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{opts.AddonNamespace: {}}},
		&corev1.Secret{}:    {Namespaces: map[string]cache.Config{opts.AddonNamespace: {}}},
	}}
	for _, f := range features {
		if f.ConfigureCache != nil {
			f.ConfigureCache(&cacheOpts)
		}
	}
	mgr, err := ctrl.NewManager(env.Managed, ctrl.Options{
		Scheme:                        Scheme,
		Metrics:                       kubeutil.SecureMetrics(opts.MetricsBindAddress, opts.MetricsCertDir),
		HealthProbeBindAddress:        opts.HealthProbeAddress,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              opts.AddonName + "-agent",
		LeaderElectionNamespace:       opts.AddonNamespace,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOpts,
		// Controller names are checked for uniqueness process-wide; the agent
		// builds a new manager after each credential rotation (and the local
		// fleet runs one agent per cluster in one process).
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return err
	}
	if opts.HealthProbeAddress != "0" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return err
		}
	}
	// The health lease OCM's registration agent reads to mark the add-on
	// Available. Only the leader renews it.
	updater := lease.NewLeaseUpdater(env.ManagedClient, opts.AddonName, opts.AddonNamespace)
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { updater.Start(ctx); return nil })); err != nil {
		return err
	}
	if err := setupHostingConfig(mgr, env); err != nil {
		return err
	}
	for _, f := range features {
		if f.Setup == nil {
			continue
		}
		if err := f.Setup(mgr, env); err != nil {
			return fmt.Errorf("setting up %s: %w", f.Name, err)
		}
	}
	return mgr.Start(ctx)
}

// CleanupBlockedError is a cleanup that must wait for something (e.g. hosted
// clusters still running); its Reason becomes the condition reason.
type CleanupBlockedError struct {
	Reason  string
	Message string
}

func (e *CleanupBlockedError) Error() string { return e.Message }

// Cleanup runs every feature's cleanup (in reverse order of setup) once,
// reporting progress and the outcome on the ManagedClusterAddOn. An error
// makes the hook Job fail and be retried; the condition says why.
func Cleanup(ctx context.Context, opts *Options, features ...Feature) error {
	if _, err := waitForCredentials(ctx, opts); err != nil {
		return err
	}
	env, err := newEnv(opts)
	if err != nil {
		return err
	}
	defer env.Close()
	reporter := env.Reporter("cleanup")
	_ = reporter.Set(ctx, metav1.Condition{Type: conditionCleanup, Status: metav1.ConditionFalse,
		Reason: "CleanupInProgress", Message: "the add-on is being removed from this cluster; cleaning up"})
	ctx, cancel := context.WithTimeout(ctx, opts.CleanupTimeout)
	defer cancel()
	for i := len(features) - 1; i >= 0; i-- {
		f := features[i]
		if f.Cleanup == nil {
			continue
		}
		if err := f.Cleanup(ctx, env); err != nil {
			reason, msg := "CleanupFailed", fmt.Sprintf("%s: %v", f.Name, err)
			var blocked *CleanupBlockedError
			if errors.As(err, &blocked) {
				reason = blocked.Reason
			} else if errors.Is(err, context.DeadlineExceeded) {
				reason, msg = "CleanupTimedOut", fmt.Sprintf("%s: did not finish within %s: %v", f.Name, opts.CleanupTimeout, err)
			}
			// Report with a fresh context: ctx may be the one that expired.
			reportCtx, cancelReport := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancelReport()
			if rerr := reporter.Set(reportCtx, metav1.Condition{Type: conditionCleanup, Status: metav1.ConditionFalse, Reason: reason, Message: msg}); rerr != nil {
				return errors.Join(err, rerr)
			}
			return err
		}
	}
	return reporter.Set(ctx, metav1.Condition{Type: conditionCleanup, Status: metav1.ConditionTrue,
		Reason: "CleanupSucceeded", Message: "everything the agent created on this cluster was removed"})
}
