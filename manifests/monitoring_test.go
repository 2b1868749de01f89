package manifests_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hcp-fleet/hcp-fleet/internal/promrules"
)

const (
	rulePath      = "deploy/73-prometheusrule.yaml"
	dashboardPath = "observability/80-dashboard-configmap.yaml"
	runbookBase   = "https://github.com/hcp-fleet/hcp-fleet/blob/main/docs/troubleshooting.md#"
)

// The signals issue #37 asks alerts for; each must have one.
var wantAlerts = []string{
	"HCPFleetHubDown", "HCPFleetFleetMetricsFailing", "HCPFleetHostedClustersUnschedulable", "HCPFleetHostedClustersUndelivered",
	"HCPFleetManifestWorkApplyFailing", "HCPFleetAgentUnavailable", "HCPFleetHyperShiftOperatorUnavailable", "HCPFleetManagementClusterNearCapacity",
}

// githubAnchors are the anchors GitHub gives the headings of a markdown
// file: lowercased, punctuation other than - and _ dropped, spaces to -.
func githubAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			h = strings.TrimSpace(strings.TrimLeft(h, "#"))
			out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")] = true
		}
	}
	return out
}

// documentedMetrics are the metric names docs/configuration.md's table lists.
func documentedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(hcpfleet_[a-z_]+)` \\|").FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = true
	}
	return out
}

// checkHubMetrics: every metric a query reads is the hub's (the only
// component the shipped ServiceMonitor scrapes) and documented. A
// histogram's _bucket series counts as its family.
func checkHubMetrics(t *testing.T, what, expr string, documented map[string]bool) {
	t.Helper()
	names, err := promrules.MetricNames(expr)
	if err != nil {
		t.Errorf("%s: %q does not parse: %v", what, expr, err)
		return
	}
	for _, n := range names {
		base := strings.TrimSuffix(n, "_bucket")
		if !strings.HasPrefix(n, "hcpfleet_hub_") || !documented[base] {
			t.Errorf("%s reads %s: not a documented hub metric (docs/configuration.md)", what, n)
		}
	}
}

// TestPrometheusRule: every alert parses with Prometheus' own parser, reads
// only documented hub metrics, waits (for), has a severity, a summary and a
// description, and a runbook_url whose anchor is a heading of
// docs/troubleshooting.md; the alerts the issue asks for are all there.
func TestPrometheusRule(t *testing.T) {
	alerts, err := promrules.Alerts(rulePath)
	if err != nil {
		t.Fatal(err)
	}
	anchors := githubAnchors(t, "../docs/troubleshooting.md")
	documented := documentedMetrics(t)
	var names []string
	for _, a := range alerts {
		names = append(names, a.Alert)
		checkHubMetrics(t, a.Alert, a.Expr, documented)
		if a.For == "" {
			t.Errorf("%s: no for: it would fire on one scrape", a.Alert)
		}
		if !slices.Contains([]string{"critical", "warning", "info"}, a.Labels["severity"]) {
			t.Errorf("%s: severity %q", a.Alert, a.Labels["severity"])
		}
		if a.Annotations["summary"] == "" || a.Annotations["description"] == "" {
			t.Errorf("%s: no summary or description", a.Alert)
		}
		anchor, ok := strings.CutPrefix(a.Annotations["runbook_url"], runbookBase)
		if !ok || !anchors[anchor] {
			t.Errorf("%s: runbook_url %q is not a section of docs/troubleshooting.md", a.Alert, a.Annotations["runbook_url"])
		}
		if anchor != strings.ToLower(a.Alert) {
			t.Errorf("%s: runbook anchor %q, want the alert's own section", a.Alert, anchor)
		}
	}
	for _, w := range wantAlerts {
		if !slices.Contains(names, w) {
			t.Errorf("no alert %s", w)
		}
	}
}

// The parser really refuses broken PromQL (the check above could not fail
// otherwise), and a selector without a metric name is refused too.
func TestMetricNamesRefuses(t *testing.T) {
	for _, bad := range []string{`max(hcpfleet_hub_x{type="a"`, `hcpfleet_hub_x >`, `{type="a"}`, `rate(hcpfleet_hub_x)`} {
		if names, err := promrules.MetricNames(bad); err == nil {
			t.Errorf("%q parsed: %v", bad, names)
		}
	}
	names, err := promrules.MetricNames(`a / on (c) b{x="y"} > 0 and absent(c)`)
	if err != nil || !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Errorf("names %v, %v; want [a b c]", names, err)
	}
}

// TestDashboard: ACM observability loads the ConfigMap (its label and
// namespace) and every panel's query parses and reads documented hub
// metrics.
func TestDashboard(t *testing.T) {
	var objs []*unstructured.Unstructured
	for _, obj := range readDir(t, "observability") {
		if obj.GetKind() != "Kustomization" {
			objs = append(objs, obj)
		}
	}
	if len(objs) != 1 {
		t.Fatalf("%d objects in observability/, want the dashboard only", len(objs))
	}
	cm := objs[0]
	if cm.GetKind() != "ConfigMap" || cm.GetNamespace() != "open-cluster-management-observability" || cm.GetLabels()["grafana-custom-dashboard"] != "true" {
		t.Errorf("dashboard %s %s/%s labels %v: not what ACM observability loads", cm.GetKind(), cm.GetNamespace(), cm.GetName(), cm.GetLabels())
	}
	queries, err := promrules.DashboardQueries(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) < 8 {
		t.Errorf("%d panel queries", len(queries))
	}
	documented := documentedMetrics(t)
	for what, q := range queries {
		checkHubMetrics(t, what, q, documented)
	}
	if got := kustomizeBuild(t, "observability"); len(got) != 1 {
		t.Errorf("kustomize build observability: %d objects", len(got))
	}
}

// TestServiceMonitor: it selects the hub's metrics Service, scrapes its
// metrics port over HTTPS with a bearer token, as the hub requires.
func TestServiceMonitor(t *testing.T) {
	var sm, svc map[string]any
	var others []map[string]any // the hub's other Services (its console endpoint's)
	for _, obj := range readDir(t, "deploy") {
		switch {
		case obj.GetKind() == "ServiceMonitor":
			sm = obj.Object
		case obj.GetKind() == "Service" && obj.GetName() == "hcp-fleet-hub-metrics":
			svc = obj.Object
		case obj.GetKind() == "Service":
			others = append(others, obj.Object)
		}
	}
	if sm == nil || svc == nil {
		t.Fatal("no ServiceMonitor or Service in deploy/")
	}
	get := func(o map[string]any, path ...string) any {
		var cur any = o
		for _, p := range path {
			m, _ := cur.(map[string]any)
			cur = m[p]
		}
		return cur
	}
	svcLabels, _ := get(svc, "metadata", "labels").(map[string]any)
	sel, _ := get(sm, "spec", "selector", "matchLabels").(map[string]any)
	if len(sel) == 0 {
		t.Error("ServiceMonitor selects nothing")
	}
	for k, v := range sel {
		if svcLabels[k] != v {
			t.Errorf("ServiceMonitor selects %s=%v; the Service has %v", k, v, svcLabels[k])
		}
	}
	for _, o := range others {
		labels, _ := get(o, "metadata", "labels").(map[string]any)
		selected := true
		for k, v := range sel {
			selected = selected && labels[k] == v
		}
		if selected {
			t.Errorf("ServiceMonitor selects Service %v too, which serves no metrics", get(o, "metadata", "name"))
		}
	}
	eps, _ := get(sm, "spec", "endpoints").([]any)
	if len(eps) != 1 {
		t.Fatalf("%d endpoints", len(eps))
	}
	ep := eps[0].(map[string]any)
	ports, _ := get(svc, "spec", "ports").([]any)
	if ep["port"] != ports[0].(map[string]any)["name"] || ep["scheme"] != "https" || ep["bearerTokenFile"] == nil || ep["tlsConfig"] == nil {
		t.Errorf("endpoint %v: want the Service's port %v, https, a bearer token and a TLS config", ep, ports[0])
	}
}
