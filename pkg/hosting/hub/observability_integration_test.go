//go:build integration

package hub_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// metricsEndpoints hands every hub replica and every start of the first
// management cluster's agent its own free loopback port for /metrics (a
// standby replica runs beside the leader), and remembers the latest.
type metricsEndpoints struct {
	mu   sync.Mutex
	last map[string]string
}

var endpoints = &metricsEndpoints{last: map[string]string{}}

// next returns a free loopback address for who and remembers it.
func (e *metricsEndpoints) next(who string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.last[who] = addr
	return addr
}

func (e *metricsEndpoints) get(who string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last[who]
}

// metricsClient speaks HTTPS to the metrics servers, which serve a
// self-signed certificate (no --metrics-cert-dir), as the shipped
// ServiceMonitor does (insecureSkipVerify).
var metricsClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed, as the ServiceMonitor
}}

// get is GET https://addr/metrics with token as the bearer ("": none); it
// returns the status code and the body.
func get(ctx context.Context, addr, token string) (int, []byte, error) {
	if addr == "" {
		return 0, nil, fmt.Errorf("no metrics address yet")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := metricsClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// scrape reads the Prometheus text exposition of a real listener, as the
// identity of token.
func scrape(ctx context.Context, addr, token string) (map[string]*dto.MetricFamily, error) {
	code, body, err := get(ctx, addr, token)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %d: %s", code, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(body))
}

// sample returns the sum of the series of family that carry the given
// labels (a counter's or gauge's value, a histogram's sample count).
func sample(families map[string]*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	f := families[family]
	if f == nil {
		return 0, false
	}
	sum, found := 0.0, false
	for _, m := range f.GetMetric() {
		if !fleettest.LabelsMatch(m.GetLabel(), labels) {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, found
}

// wantSample is a series a scrape must show, at least min.
type wantSample struct {
	family string
	labels map[string]string
	min    float64
}

func checkSamples(families map[string]*dto.MetricFamily, want []wantSample) error {
	var missing []string
	for _, w := range want {
		if v, ok := sample(families, w.family, w.labels); !ok || v < w.min {
			missing = append(missing, fmt.Sprintf("%s%v >= %g (have %g, found %v)", w.family, w.labels, w.min, v, ok))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("not yet: %s", strings.Join(missing, "; "))
	}
	return nil
}

// TestMetricsAndEvents drives a HostedClusterDeployment through an
// unschedulable pin, a delivery held back by a missing Secret, and on to
// Available and Imported; then scrapes /metrics of the running hub and of
// the first management cluster's agent (real listeners) and finds each
// hcp-fleet metric, and reads the Events the transitions recorded.
func TestMetricsAndEvents(t *testing.T) {
	ctx := context.Background()
	ns := "observed"
	tenant(t, ns)
	const missingSecret = "late-pull-secret-b7f3"

	// Pinned to a cluster that does not exist: unschedulable.
	if err := hubc.Create(ctx, hcd(ns, "nowhere", func(spec map[string]any) {
		delete(spec, "placement")
		spec["hostingCluster"] = "no-such-cluster"
	})); err != nil {
		t.Fatal(err)
	}
	// References a pull secret that does not exist yet: scheduled, not
	// delivered until it does.
	if err := hubc.Create(ctx, hcd(ns, "late", func(spec map[string]any) {
		spec["hostedCluster"].(map[string]any)["spec"].(map[string]any)["pullSecret"] = map[string]any{"name": missingSecret}
	})); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ns, "nowhere", v1alpha1.ConditionScheduled, metav1.ConditionFalse, time.Minute)
	env.Eventually(t, time.Minute, "late: Delivered=False ReferencedObjectNotFound", func(ctx context.Context) error {
		h, err := getHCD(ctx, ns, "late")
		if err != nil {
			return err
		}
		if err := condition(h, v1alpha1.ConditionDelivered, metav1.ConditionFalse); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionDelivered); c.Reason != v1alpha1.ReasonReferencedObjectNotFound {
			return fmt.Errorf("Delivered reason %s", c.Reason)
		}
		return nil
	})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: missingSecret, Namespace: ns}, StringData: map[string]string{".dockerconfigjson": `{"auths":{}}`}}
	if err := hubc.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	h := waitCondition(t, ns, "late", v1alpha1.ConditionImported, metav1.ConditionTrue, 2*time.Minute)
	host := h.Status.HostingCluster

	// /metrics answers only an identity its API server vouches for and
	// authorizes: a ServiceAccount bound to the metrics-reader ClusterRole
	// the manifests ship, on the hub and on the agent's cluster.
	hubToken := metricsToken(t, env.Fleet.Hub.Config(), kubeutil.MetricsReaderClusterRole)
	agentToken := metricsToken(t, env.Fleet.Managed[0].Config(), kubeutil.AgentMetricsReaderClusterRole)
	checkRefused(t, "hub", env.Fleet.Hub.Config())
	checkRefused(t, "agent", env.Fleet.Managed[0].Config())

	started := time.Now()
	hubWant := []wantSample{
		{"hcpfleet_hub_scheduler_attempts_total", nil, 2},
		{"hcpfleet_hub_scheduler_bindings_total", nil, 1},
		{"hcpfleet_hub_scheduler_unschedulable_total", map[string]string{"reason": v1alpha1.ReasonHostingClusterNotFound}, 1},
		{"hcpfleet_hub_scheduler_binding_latency_seconds", nil, 1},
		{"hcpfleet_hub_scheduler_decision_duration_seconds", nil, 2},
		{"hcpfleet_hub_scheduler_binding_write_duration_seconds", nil, 1},
		{"hcpfleet_hub_delivery_problems_total", map[string]string{"reason": v1alpha1.ReasonReferencedObjectNotFound}, 1},
		{"hcpfleet_hub_manifestwork_writes_total", map[string]string{"verb": "create"}, 1},
		{"hcpfleet_hub_imports_total", map[string]string{"result": "imported"}, 1},
		{"hcpfleet_hub_hostedclusterdeployments", map[string]string{"phase": v1alpha1.PhasePending}, 1},
		{"hcpfleet_hub_hostedclusterdeployments", map[string]string{"phase": v1alpha1.PhaseAvailable}, 1},
		{"hcpfleet_hub_hostedclusterdeployment_conditions", map[string]string{"type": v1alpha1.ConditionImported, "status": "True"}, 1},
		{"hcpfleet_hub_management_cluster_bound_hosted_clusters", map[string]string{"cluster": host}, 1},
		{"hcpfleet_hub_management_cluster_capacity", map[string]string{"cluster": host}, 1},
		{"hcpfleet_hub_management_cluster_reported_hosted_clusters", map[string]string{"cluster": host}, 0},
		{"hcpfleet_hub_management_cluster_addon_available", map[string]string{"cluster": host}, 1},
		{"hcpfleet_hub_management_cluster_operator_installed", map[string]string{"cluster": host}, 1},
		{"hcpfleet_hub_fleet_metrics_errors", nil, 0},
	}
	env.Eventually(t, 30*time.Second, "hub /metrics", func(ctx context.Context) error {
		families, err := scrape(ctx, endpoints.get("hub"), hubToken)
		if err != nil {
			return err
		}
		if v, _ := sample(families, "hcpfleet_hub_fleet_metrics_errors", nil); v != 0 {
			return fmt.Errorf("the fleet gauges could not read the cache")
		}
		if err := checkSamples(families, hubWant); err != nil {
			return err
		}
		return checkAlertMetrics(families)
	})
	agentWant := []wantSample{
		{"hcpfleet_agent_hosted_clusters", nil, 0},
		{"hcpfleet_agent_managed_hosted_clusters", nil, 0},
		{"hcpfleet_agent_hosted_cluster_capacity", nil, 1},
		{"hcpfleet_agent_hosted_cluster_free_slots", nil, 0},
		{"hcpfleet_agent_supported_release_versions", nil, 1},
		{"hcpfleet_agent_hypershift_operator_available", nil, 1},
		{"hcpfleet_agent_hypershift_operator_state", map[string]string{"reason": "Installed"}, 1},
		{"hcpfleet_agent_hypershift_operator_apply_writes_total", nil, 1},
		{"hcpfleet_agent_capi_crd_writes_total", nil, 1},
		{"hcpfleet_agent_namespaces_deleted_total", nil, 0},
		{"controller_runtime_reconcile_total", nil, 1},
	}
	env.Eventually(t, 30*time.Second, "agent /metrics on "+firstCluster(), func(ctx context.Context) error {
		families, err := scrape(ctx, endpoints.get("agent"), agentToken)
		if err != nil {
			return err
		}
		return checkSamples(families, agentWant)
	})
	t.Logf("both endpoints showed every metric %s after the import", time.Since(started).Round(time.Millisecond))

	// Events: each transition once, Warnings for the problems, and no
	// Secret's name in any of them.
	env.Eventually(t, 30*time.Second, "events of the transitions", func(ctx context.Context) error {
		var events corev1.EventList
		if err := hubc.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		seen := map[string][]string{}
		var waiting []corev1.Event
		for _, e := range events.Items {
			if e.InvolvedObject.Kind != "HostedClusterDeployment" || e.Source.Component != "hcp-fleet-hub" {
				continue
			}
			if strings.Contains(e.Message, missingSecret) || strings.Contains(e.Message, "pull-secret") || strings.Contains(e.Message, "admin-kubeconfig") {
				t.Errorf("event %s/%s names a Secret: %q", e.InvolvedObject.Name, e.Reason, e.Message)
			}
			seen[e.InvolvedObject.Name] = append(seen[e.InvolvedObject.Name], e.Type+"/"+e.Reason)
			if e.InvolvedObject.Name == "late" && e.Reason == v1alpha1.ReasonWaitingForAvailable {
				waiting = append(waiting, e)
			}
		}
		want := map[string][]string{
			"nowhere": {"Warning/" + v1alpha1.ReasonHostingClusterNotFound},
			"late": {"Normal/" + v1alpha1.ReasonScheduled, "Warning/" + v1alpha1.ReasonReferencedObjectNotFound, "Normal/" + v1alpha1.ReasonApplied,
				"Normal/" + v1alpha1.ReasonWaitingForAvailable, "Normal/" + v1alpha1.ConditionAvailable, "Normal/" + v1alpha1.ReasonImported},
		}
		for name, reasons := range want {
			for _, r := range reasons {
				if !slices.Contains(seen[name], r) {
					return fmt.Errorf("%s: no %s event (have %v)", name, r, seen[name])
				}
			}
		}
		// Imported=False WaitingForAvailable is written by the binding (the
		// delivery's status carries it) and by no one else: one event, and
		// a second recording would have counted up this one (the
		// recorder's aggregation) before Imported's was sent.
		if len(waiting) != 1 || waiting[0].Count > 1 {
			for _, e := range waiting {
				t.Errorf("Imported WaitingForAvailable recorded more than once: %q ×%d", e.Message, e.Count)
			}
		}
		return nil
	})
	for _, name := range []string{"nowhere", "late"} {
		if err := hubc.Delete(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1alpha1.GroupVersion.String(), "kind": "HostedClusterDeployment",
			"metadata": map[string]any{"name": name, "namespace": ns}}}); err != nil {
			t.Error(err)
		}
	}
}

func firstCluster() string { return "cluster-1" }
