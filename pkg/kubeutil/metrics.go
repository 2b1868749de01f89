package kubeutil

import (
	"crypto/tls"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The ClusterRoles (nonResourceURLs /metrics, get) a scraper's identity is
// bound to: on the hub (manifests/hub) and on every management cluster
// (manifests/agent). Two names, so that a hub that is also a management
// cluster holds both and removing the add-on there deletes only the agent's.
const (
	MetricsReaderClusterRole      = "hcp-fleet-metrics-reader"
	AgentMetricsReaderClusterRole = "hcp-fleet-agent-metrics-reader"
)

// SecureMetrics returns the metrics server options both programs use: HTTPS
// on bindAddress, and only for callers the API server of the manager's
// rest.Config authenticates (TokenReview) and authorizes for GET on the
// non-resource URL /metrics (SubjectAccessReview), as kubebuilder scaffolds
// it. The metrics name management clusters and reveal the fleet's load, so
// they are not for anyone who reaches the port.
//
// certDir holds tls.crt and tls.key (a mounted serving-cert Secret,
// reloaded when they change); empty, or without those files,
// controller-runtime serves a self-signed certificate, which still encrypts
// the bearer token a scraper sends (ServiceMonitors then skip verification).
func SecureMetrics(bindAddress, certDir string) metricsserver.Options {
	return metricsserver.Options{
		BindAddress:    bindAddress,
		SecureServing:  true,
		FilterProvider: filters.WithAuthenticationAndAuthorization,
		CertDir:        certDir,
		// HTTP/2 off: its stream-reset and rapid-reset flaws
		// (CVE-2023-44487, CVE-2023-39325) let a caller who has not
		// authenticated yet tie the server up; /metrics gains nothing from it.
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }},
	}
}
