package agent

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// Options configure the agent. Every field has a flag; --help explains each.
type Options struct {
	HubKubeconfig      string
	Kubeconfig         string
	ClusterName        string
	AddonName          string
	AddonNamespace     string
	HostingConfigMap   string
	LeaderElect        bool
	MetricsBindAddress string
	// MetricsCertDir holds the metrics server's tls.crt and tls.key; empty:
	// a self-signed certificate (kubeutil.SecureMetrics).
	MetricsCertDir       string
	HealthProbeAddress   string
	CredentialPollPeriod time.Duration
	CleanupTimeout       time.Duration
	// KubeAPIQPS and KubeAPIBurst bound the agent's requests to each API
	// server it talks to (the management cluster's and the hub's).
	KubeAPIQPS   float64
	KubeAPIBurst int
	// Log configures the agent binary's logger (the --zap-* flags).
	Log zap.Options
}

// The agent's client rate limit by default: above client-go's 5/10, which
// a management cluster with hundreds of hosted clusters (capacity reports,
// kubeconfig exports, CAPI providers) would wait on; below the hub's.
const (
	DefaultKubeAPIQPS   = 20
	DefaultKubeAPIBurst = 40
)

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		HubKubeconfig:        "/var/run/hcp-fleet/hub/kubeconfig",
		AddonName:            addon.Name,
		AddonNamespace:       addon.DefaultInstallNamespace,
		HostingConfigMap:     addon.HostingConfigMap,
		LeaderElect:          true,
		MetricsBindAddress:   ":8443",
		HealthProbeAddress:   ":8081",
		CredentialPollPeriod: 5 * time.Second,
		CleanupTimeout:       10 * time.Minute,
		KubeAPIQPS:           DefaultKubeAPIQPS,
		KubeAPIBurst:         DefaultKubeAPIBurst,
	}
}

// FlagSet returns the agent's flags bound to o.
func (o *Options) FlagSet(name string, output io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&o.HubKubeconfig, "hub-kubeconfig", o.HubKubeconfig,
		"Kubeconfig of the agent's own hub identity: the file from the "+addon.HubKubeconfigSecret+" Secret that OCM registration "+
			"issues through a CSR. The agent watches it and reconnects when the certificate rotates.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig,
		"Kubeconfig of the management cluster the agent runs on. Empty: the in-cluster service account.")
	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName,
		"Name of this management cluster on the hub (its ManagedCluster and cluster namespace). Required.")
	fs.StringVar(&o.AddonName, "addon-name", o.AddonName, "Name of the ManagedClusterAddOn the agent reports on.")
	fs.StringVar(&o.AddonNamespace, "addon-namespace", o.AddonNamespace,
		"Namespace the agent is installed in on the management cluster: its health lease, leader election lease and hosting config live there.")
	fs.StringVar(&o.HostingConfigMap, "hosting-config-configmap", o.HostingConfigMap,
		"ConfigMap (in --addon-namespace) holding the HostingConfig spec the hub rendered for this cluster.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"Elect a leader among agent replicas (lease in --addon-namespace); only the leader acts.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		"Address of the Prometheus metrics endpoint (HTTPS, authenticated); \"0\" disables it.")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", o.MetricsCertDir,
		"Directory with the metrics server's serving certificate (tls.crt, tls.key; reloaded when they change). Empty or without them: a self-signed certificate. "+
			"/metrics is served over HTTPS to callers the management cluster's API server authenticates and authorizes for GET /metrics (ClusterRole "+kubeutil.AgentMetricsReaderClusterRole+").")
	fs.StringVar(&o.HealthProbeAddress, "health-probe-bind-address", o.HealthProbeAddress,
		"Address of the /healthz and /readyz endpoints; \"0\" disables them.")
	fs.DurationVar(&o.CredentialPollPeriod, "credential-poll-period", o.CredentialPollPeriod,
		"How often the agent checks the hub kubeconfig files for rotated credentials.")
	fs.DurationVar(&o.CleanupTimeout, "cleanup-timeout", o.CleanupTimeout,
		"cleanup only: how long one cleanup attempt may take before it fails and reports why.")
	fs.Float64Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS,
		"Requests per second the agent may send to each API server (the management cluster's, the hub's), sustained.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst,
		"Requests the agent may send to each API server in a burst above --kube-api-qps.")
	o.Log.BindFlags(fs)
	return fs
}

// Validate reports missing or invalid options.
func (o *Options) Validate() error {
	var errs []error
	if o.ClusterName == "" {
		errs = append(errs, errors.New("--cluster-name is required"))
	}
	if o.HubKubeconfig == "" {
		errs = append(errs, errors.New("--hub-kubeconfig is required"))
	}
	if o.AddonNamespace == "" {
		errs = append(errs, errors.New("--addon-namespace is required"))
	}
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps (%g) and --kube-api-burst (%d) must be positive", o.KubeAPIQPS, o.KubeAPIBurst))
	}
	if o.CredentialPollPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--credential-poll-period must be positive, got %s", o.CredentialPollPeriod))
	}
	return errors.Join(errs...)
}
