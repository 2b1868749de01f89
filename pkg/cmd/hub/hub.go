// Package hub is the hcp-fleet hub process: one controller-runtime manager
// (leader election, metrics, health endpoints) running the addon-framework
// add-on manager for hcp-fleet and the hub controllers. cmd/hub is its
// command line; the local fleet and the tests run the same code in-process.
package hub

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"open-cluster-management.io/addon-framework/pkg/addonmanager"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	addonhub "github.com/hcp-fleet/hcp-fleet/pkg/addon/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/consoleapi"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/delivery"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/importer"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/relocation"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// Options configure the hub process.
type Options struct {
	Kubeconfig         string
	Namespace          string
	LeaderElect        bool
	LeaseDuration      time.Duration
	RenewDeadline      time.Duration
	RetryPeriod        time.Duration
	MetricsBindAddress string
	// MetricsCertDir holds the metrics server's tls.crt and tls.key; empty:
	// a self-signed certificate (kubeutil.SecureMetrics).
	MetricsCertDir         string
	HealthProbeBindAddress string
	DefaultAgentImage      string
	// HyperShiftOperatorImage is this release's default HyperShift
	// operator image; empty leaves it to the agent's built-in default.
	HyperShiftOperatorImage string
	SchedulingStrategy      string
	LostHostTimeout         time.Duration
	// HostUnavailableGrace: see --host-unavailable-grace.
	HostUnavailableGrace time.Duration
	// ImportedClusterLabels: the labels of a HostedClusterDeployment its
	// ManagedCluster carries (importer.ParseLabelPolicy).
	ImportedClusterLabels string
	// ImportedClusterNamePrefix starts the name of every ManagedCluster the
	// hub imports (importer.Options.NamePrefix).
	ImportedClusterNamePrefix string
	// ImportHostedClusters: see --import-hosted-clusters.
	ImportHostedClusters bool
	// KlusterletAddons: see --klusterlet-addons.
	KlusterletAddons string
	// HostedClusterAnnotations: the annotations of a restricted domain that
	// pass from a HostedClusterDeployment onto its HostedCluster
	// (delivery.ParseAnnotationPolicy).
	HostedClusterAnnotations string
	// HostingConfigNamespaces: namespaces besides Namespace whose
	// HostingConfigs a ManagedClusterAddOn may use (comma-separated).
	HostingConfigNamespaces string
	// KubeAPIQPS and KubeAPIBurst bound the hub's requests to its API
	// server (client-go's own defaults, 5 and 10, throttle a fleet's worth
	// of renders and status writes).
	KubeAPIQPS   float64
	KubeAPIBurst int
	// SchedulerWorkers and DeliveryWorkers are how many
	// HostedClusterDeployments the scheduler binds and the delivery
	// delivers at once (as kube-controller-manager's --concurrent-*-syncs):
	// each waits mostly on the hub API server's answers, so a burst moves
	// at workers / answer time while the API server has room.
	SchedulerWorkers int
	DeliveryWorkers  int
	// ReferenceRefreshInterval bounds how often one HostedClusterDeployment's
	// ManifestWork is rewritten because only a Secret or ConfigMap it refers
	// to changed (delivery.Options.RefreshInterval).
	ReferenceRefreshInterval time.Duration
	// RelocationConcurrency, RelocationTimeout and RelocationPauseTimeout:
	// see relocation.Options.MaxActive, Timeout and PauseTimeout.
	RelocationConcurrency  int
	RelocationTimeout      time.Duration
	RelocationPauseTimeout time.Duration
	// ConsoleAPIBindAddress is where the console plugin's endpoint
	// (consoleapi) listens; "0" disables it.
	ConsoleAPIBindAddress string
	// ConsoleAPICertDir holds its serving certificate (tls.crt, tls.key);
	// empty or without them: a self-signed certificate.
	ConsoleAPICertDir string
	// UpgradeReportMaxAge: see delivery.Options.UpgradeReportMaxAge (no
	// flag; nil: the default bound).
	UpgradeReportMaxAge func() time.Duration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Namespace:                "hcp-fleet",
		LeaderElect:              true,
		LeaseDuration:            15 * time.Second,
		RenewDeadline:            10 * time.Second,
		RetryPeriod:              2 * time.Second,
		MetricsBindAddress:       ":8443",
		HealthProbeBindAddress:   ":8081",
		DefaultAgentImage:        addon.DefaultAgentImage,
		SchedulingStrategy:       string(scheduling.StrategySpread),
		LostHostTimeout:          10 * time.Minute,
		HostUnavailableGrace:     hostmodel.DefaultUnavailableGrace,
		ImportedClusterLabels:    importer.DefaultImportedClusterLabels,
		ImportHostedClusters:     true,
		KlusterletAddons:         importer.DefaultKlusterletAddons,
		HostedClusterAnnotations: delivery.DefaultHostedClusterAnnotations,
		KubeAPIQPS:               DefaultKubeAPIQPS,
		KubeAPIBurst:             DefaultKubeAPIBurst,
		SchedulerWorkers:         scheduling.DefaultWorkers,
		DeliveryWorkers:          delivery.DefaultWorkers,
		ReferenceRefreshInterval: delivery.DefaultRefreshInterval,
		RelocationConcurrency:    relocation.DefaultMaxActive,
		RelocationTimeout:        relocation.DefaultTimeout,
		RelocationPauseTimeout:   relocation.DefaultPauseTimeout,
		ConsoleAPIBindAddress:    "0",
	}
}

// The hub's client rate limit by default: what OCM's own hub controllers
// use (controllercmd), so the add-on is never the slowest hub component.
const (
	DefaultKubeAPIQPS   = 50
	DefaultKubeAPIBurst = 100
)

// FlagSet returns the hub's flags bound to o.
func (o *Options) FlagSet(output io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("hcp-fleet-hub", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig of the hub. Empty: the in-cluster service account.")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "Namespace the hub runs in: its leader election lease and default HostingConfig live there.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect a leader among hub replicas; only the leader schedules and renders.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "How long a non-leader waits before taking over a lost leader's lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "How long the leader retries renewing before it gives up leadership.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "How often candidates try to acquire or renew leadership.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address of the Prometheus metrics endpoint (HTTPS, authenticated); \"0\" disables it.")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", o.MetricsCertDir, "Directory with the metrics server's serving certificate (tls.crt, tls.key; reloaded when they change). Empty or without them: a self-signed certificate. /metrics is served over HTTPS to callers the API server authenticates and authorizes for GET /metrics (ClusterRole "+kubeutil.MetricsReaderClusterRole+").")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "Address of /healthz and /readyz; \"0\" disables them.")
	fs.StringVar(&o.DefaultAgentImage, "agent-image", o.DefaultAgentImage, "Agent image of this release, written into the AddOnDeploymentConfig "+addon.ReleaseConfigName+" so that OCM rolls it out as the ClusterManagementAddOn's rolloutStrategy says. A HostingConfig's agentImage wins; used directly only for a cluster whose AddOnDeploymentConfig has no "+addon.AgentImageVariable+" variable.")
	fs.StringVar(&o.HyperShiftOperatorImage, "hypershift-operator-image", o.HyperShiftOperatorImage, "Default HyperShift operator image of this release, written into the AddOnDeploymentConfig "+addon.ReleaseConfigName+" (variable "+addon.HyperShiftOperatorImageVariable+") like --agent-image. A HostingConfig's spec.operator.image wins; empty: the agent's built-in default.")
	fs.StringVar(&o.SchedulingStrategy, "scheduling-strategy", o.SchedulingStrategy, "How hosted clusters are placed among fitting management clusters: Spread (least utilized first) or BinPack (most utilized that fits). A Placement's "+scheduling.StrategyAnnotation+" annotation overrides it.")
	fs.DurationVar(&o.LostHostTimeout, "lost-host-deletion-timeout", o.LostHostTimeout, "How long deleting a HostedClusterDeployment waits for an unavailable hosting cluster before it reports DeletionTimedOut and accepts the "+delivery.AbandonAnnotation+" annotation.")
	fs.DurationVar(&o.HostUnavailableGrace, "host-unavailable-grace", o.HostUnavailableGrace, "How long a management cluster (or its hcp-fleet add-on) may report itself unavailable before the hub acts on it: until then it stays a scheduling candidate and the hosted clusters it hosts keep HostingClusterAvailable=True, so that a loaded cluster's short flaps cost no writes. A lease that OCM already found expired (five lease durations without a renewal) counts at once. 0: act on every report.")
	fs.StringVar(&o.ImportedClusterLabels, "imported-cluster-labels", o.ImportedClusterLabels, "Labels of a HostedClusterDeployment that its imported ManagedCluster carries: comma-separated label keys and patterns, where * never crosses the / (\"team\", \"example.com/*\", \"*\" every key without a prefix, \"*/*\" every key with one); empty copies none. "+
		"The default, \"*\", copies the unprefixed labels ACM and MCE users put on clusters and select with Placements (env, team, region), and no tool's or organization's prefixed keys. "+
		"Reserved keys are never copied, even when listed: keys whose prefix is, or is a subdomain of, open-cluster-management.io, hcpfleet.io, kubernetes.io, k8s.io, openshift.io (cluster sets, management clusters, add-on features), and the labels OCM and ACM set themselves (name, vendor, cloud, clusterID, local-cluster, managed-by, openshiftVersion*). "+
		"The keys left out are named in the HostedClusterDeployment's Imported condition.")
	fs.StringVar(&o.HostedClusterAnnotations, "hosted-cluster-annotations", o.HostedClusterAnnotations, "Annotations of a restricted domain that a HostedClusterDeployment's spec.hostedCluster may still put on its HostedCluster: comma-separated keys and patterns, where * never crosses the / (\"hypershift.openshift.io/cleanup-cloud-resources\", \"hypershiftsim.hcpfleet.io/*\"); empty allows none. "+
		"Restricted are keys whose prefix is, or is a subdomain of, hypershift.openshift.io (HyperShift reads control-plane image overrides, PKI, pod-security and resource overrides from them), hcpfleet.io, kubernetes.io, k8s.io, open-cluster-management.io; every other key (\"team\", \"example.com/owner\") always passes. "+
		"The default allows only hypershift.openshift.io/cleanup-cloud-resources, which \"hypershift destroy\" sets and which only removes the cloud resources the hosted cluster created when it is deleted. "+
		"Keys hcp-fleet owns (hcpfleet.io/*, hypershift.openshift.io/migration-in-progress and migration-failed) never pass, even when listed. The keys left out are named in the HostedClusterDeployment's Delivered condition.")
	fs.StringVar(&o.HostingConfigNamespaces, "hosting-config-namespaces", o.HostingConfigNamespaces, "Comma-separated namespaces, besides --namespace, that a ManagedClusterAddOn may take its HostingConfig from. A HostingConfig elsewhere is ignored (neither its spec nor the Secrets it references reach the agent) and named in the agent's credential problems.")
	fs.Float64Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Requests per second the hub may send to its API server (sustained).")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Requests the hub may send to its API server in a burst above --kube-api-qps.")
	fs.IntVar(&o.SchedulerWorkers, "scheduler-workers", o.SchedulerWorkers, "HostedClusterDeployments the scheduler binds at once (decisions stay one at a time; the binding writes run in parallel).")
	fs.IntVar(&o.DeliveryWorkers, "delivery-workers", o.DeliveryWorkers, "HostedClusterDeployments the delivery reconciles at once (ManifestWorks written, status mapped back).")
	fs.StringVar(&o.ImportedClusterNamePrefix, "imported-cluster-name-prefix", o.ImportedClusterNamePrefix, "Prefix of the name of every ManagedCluster the hub imports for a hosted cluster (\"hcp-\": HostedClusterDeployment prod becomes ManagedCluster hcp-prod), so that tenants cannot name a hosted cluster like a cluster the admin has or will have; the name of one imported already never changes. Empty: the HostedClusterDeployment's name.")
	fs.BoolVar(&o.ImportHostedClusters, "import-hosted-clusters", o.ImportHostedClusters, "Import every available hosted cluster as a ManagedCluster (hosted klusterlet mode, as ACM imports HyperShift clusters). false: none is imported (their admin kubeconfigs are still mirrored to the hub); hosted clusters imported before stay imported until their ManagedCluster is deleted. A management cluster's HostingConfig (spec.hostedClusterImport) and a HostedClusterDeployment (spec.import, where its TenantPolicy allows) can turn it off for their hosted clusters only.")
	fs.StringVar(&o.KlusterletAddons, "klusterlet-addons", o.KlusterletAddons, "Comma-separated ACM add-ons the KlusterletAddonConfig of each imported hosted cluster enables, where the hub serves KlusterletAddonConfig (agent.open-cluster-management.io/v1, ACM): applicationManager, certPolicyController, policyController, searchCollector. Empty: a KlusterletAddonConfig that enables none. Ignored where ACM is not installed.")
	fs.DurationVar(&o.ReferenceRefreshInterval, "reference-refresh-interval", o.ReferenceRefreshInterval, "How often, at most, a HostedClusterDeployment's ManifestWork is rewritten because only a Secret or ConfigMap it refers to changed (changes within the interval are coalesced into one write; spec changes are never held back).")
	fs.IntVar(&o.RelocationConcurrency, "relocation-concurrency", o.RelocationConcurrency, "HostedClusterRelocations that run at once, fleet-wide (each pauses a hosted cluster, snapshots its etcd and restores it elsewhere); the others wait with reason Queued.")
	fs.DurationVar(&o.RelocationTimeout, "relocation-timeout", o.RelocationTimeout, "How long a relocation waits for the destination's HostedCluster to be applied, then Available, before it rolls back (the source resumes).")
	fs.DurationVar(&o.RelocationPauseTimeout, "relocation-pause-timeout", o.RelocationPauseTimeout, "How long a relocation waits for the source's HostedCluster to report itself paused, then its etcd snapshot, before it rolls back (the source resumes; nothing was written on the destination).")
	fs.StringVar(&o.ConsoleAPIBindAddress, "console-api-bind-address", o.ConsoleAPIBindAddress, "Address of the console plugin's read-only HTTPS endpoint (the scheduler's explanation of a HostedClusterDeployment, for a caller whose bearer token the API server authenticates and who may get that deployment; docs/console.md); \"0\" disables it.")
	fs.StringVar(&o.ConsoleAPICertDir, "console-api-cert-dir", o.ConsoleAPICertDir, "Directory with the console endpoint's serving certificate (tls.crt, tls.key; picked up when they appear, reloaded when they change), on OpenShift the service CA's for the Service the ConsolePlugin's proxy names. Empty or until they appear: a self-signed certificate.")
	return fs
}

// hostingConfigNamespaces splits the --hosting-config-namespaces list.
func (o *Options) hostingConfigNamespaces() []string {
	var out []string
	for _, ns := range strings.Split(o.HostingConfigNamespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// Validate reports invalid options.
func (o *Options) Validate() error {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("--namespace is required"))
	}
	if o.LeaderElect && o.RenewDeadline >= o.LeaseDuration {
		errs = append(errs, fmt.Errorf("--leader-elect-renew-deadline (%s) must be shorter than --leader-elect-lease-duration (%s)", o.RenewDeadline, o.LeaseDuration))
	}
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps (%g) and --kube-api-burst (%d) must be positive", o.KubeAPIQPS, o.KubeAPIBurst))
	}
	if p := o.ImportedClusterNamePrefix; p != "" && len(validation.IsDNS1123Label(p+"x")) > 0 {
		errs = append(errs, fmt.Errorf("--imported-cluster-name-prefix %q: lowercase letters, digits and '-', starting with a letter or digit", p))
	}
	if o.ReferenceRefreshInterval <= 0 {
		errs = append(errs, fmt.Errorf("--reference-refresh-interval (%s) must be positive", o.ReferenceRefreshInterval))
	}
	if o.RelocationConcurrency <= 0 || o.RelocationTimeout <= 0 || o.RelocationPauseTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--relocation-concurrency (%d), --relocation-timeout (%s) and --relocation-pause-timeout (%s) must be positive",
			o.RelocationConcurrency, o.RelocationTimeout, o.RelocationPauseTimeout))
	}
	if o.SchedulerWorkers <= 0 || o.DeliveryWorkers <= 0 {
		errs = append(errs, fmt.Errorf("--scheduler-workers (%d) and --delivery-workers (%d) must be positive", o.SchedulerWorkers, o.DeliveryWorkers))
	}
	if _, err := scheduling.ParseStrategy(o.SchedulingStrategy); err != nil {
		errs = append(errs, fmt.Errorf("--scheduling-strategy: %w", err))
	}
	if _, err := importer.ParseLabelPolicy(o.ImportedClusterLabels); err != nil {
		errs = append(errs, fmt.Errorf("--imported-cluster-labels: %w", err))
	}
	if _, err := importer.ParseKlusterletAddons(o.KlusterletAddons); err != nil {
		errs = append(errs, fmt.Errorf("--klusterlet-addons: %w", err))
	}
	if _, err := delivery.ParseAnnotationPolicy(o.HostedClusterAnnotations); err != nil {
		errs = append(errs, fmt.Errorf("--hosted-cluster-annotations: %w", err))
	}
	if o.DefaultAgentImage == "" {
		errs = append(errs, errors.New("--agent-image is required"))
	}
	return errors.Join(errs...)
}

// Run runs the hub until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts *Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(opts.KubeAPIQPS), opts.KubeAPIBurst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: Scheme,
		Cache:  cacheOptions(),
		// HostedClusterDeployments are read unstructured (spec fields newer
		// than our types must survive), from the cache like typed reads.
		Client:                        client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Metrics:                       kubeutil.SecureMetrics(opts.MetricsBindAddress, opts.MetricsCertDir),
		HealthProbeBindAddress:        opts.HealthProbeBindAddress,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              addon.Name + "-hub",
		LeaderElectionNamespace:       opts.Namespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &opts.LeaseDuration,
		RenewDeadline:                 &opts.RenewDeadline,
		RetryPeriod:                   &opts.RetryPeriod,
		// Tests and the local fleet run several hubs in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return err
	}
	if opts.HealthProbeBindAddress != "0" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return err
		}
	}
	agentAddon, err := addonhub.NewAgentAddon(cfg, addonhub.Options{DefaultAgentImage: opts.DefaultAgentImage, HubNamespace: opts.Namespace, HostingConfigNamespaces: opts.hostingConfigNamespaces()})
	if err != nil {
		return err
	}
	addonManager, err := addonmanager.New(cfg)
	if err != nil {
		return err
	}
	if err := addonManager.AddAgent(agentAddon); err != nil {
		return err
	}
	if err := setupControllers(mgr, opts); err != nil {
		return err
	}
	if err := setupConsoleAPI(mgr, cfg, opts); err != nil {
		return err
	}
	// Re-render agents when a Secret their HostingConfig references changes.
	renders := addonhub.NewRenderTrigger(addonManager)
	if err := addonhub.SetupCredentialsWatch(mgr, renders); err != nil {
		return err
	}
	// The release's images become the release config, which the
	// ClusterManagementAddOn names as its default AddOnDeploymentConfig.
	releaseClient, err := addonclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		// Retried until written: a failure (e.g. an admin's conflicting
		// pin) is logged, never a reason to stop the hub.
		images := addonhub.ReleaseImages{Agent: opts.DefaultAgentImage, HyperShiftOperator: opts.HyperShiftOperatorImage}
		_ = wait.PollUntilContextCancel(ctx, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := addonhub.ApplyReleaseConfig(ctx, releaseClient, opts.Namespace, images); err != nil {
				ctrl.Log.WithName("release-config").Error(err, "writing the release images")
				return false, nil
			}
			return true, nil
		})
		return nil
	})); err != nil {
		return err
	}
	// Only the leader renders and registers agents.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if err := addonManager.Start(ctx); err != nil {
			return fmt.Errorf("add-on manager: %w", err)
		}
		renders.Started()
		<-ctx.Done()
		return nil
	})); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// setupConsoleAPI serves the console plugin's endpoint on every replica.
// It explains with live reads (the manager's API reader): the
// ClusterImageSets it reads are the hub's to get and list, never to watch,
// and an answer once per page view needs no cache of its own.
func setupConsoleAPI(mgr manager.Manager, cfg *rest.Config, opts *Options) error {
	if opts.ConsoleAPIBindAddress == "0" || opts.ConsoleAPIBindAddress == "" {
		return nil
	}
	strategy, err := scheduling.ParseStrategy(opts.SchedulingStrategy)
	if err != nil {
		return err
	}
	settings := fleetview.HubSettings{Strategy: strategy, UnavailableGrace: opts.HostUnavailableGrace, ConfigNamespaces: opts.configNamespaces()}
	h, err := consoleapi.NewHandler(cfg, mgr.GetAPIReader(), settings)
	if err != nil {
		return err
	}
	return mgr.Add(&consoleapi.Server{BindAddress: opts.ConsoleAPIBindAddress, CertDir: opts.ConsoleAPICertDir, Handler: h})
}
