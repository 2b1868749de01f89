// Package promrules reads the alerts (PrometheusRule) and the dashboard
// (ACM observability ConfigMap) hcp-fleet ships and parses their PromQL with
// Prometheus' own parser, so that a typo fails a test rather than an
// alert that silently never fires. It also names the metrics each query
// reads, for the tests that look for them on a live scrape. Tests only.
package promrules

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

// Alert is one alerting rule of a PrometheusRule.
type Alert struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// prometheusRule is decoded strictly: a misspelt field (exp: for expr) is
// an error, not an alert without it.
type prometheusRule struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata"`
	Spec       struct {
		Groups []struct {
			Name  string  `json:"name"`
			Rules []Alert `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// Alerts reads the alerting rules of the PrometheusRule in path.
func Alerts(path string) ([]Alert, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pr prometheusRule
	if err := yaml.UnmarshalStrict(data, &pr); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if pr.Kind != "PrometheusRule" {
		return nil, fmt.Errorf("%s: kind %q, want PrometheusRule", path, pr.Kind)
	}
	var out []Alert
	for _, g := range pr.Spec.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}

// DashboardQueries reads the Grafana dashboards in the ConfigMap in path
// and returns every panel target's query, keyed "panel title/refId".
func DashboardQueries(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(data, &cm); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]string{}
	for key, js := range cm.Data {
		var dash struct {
			Panels []struct {
				Title   string `json:"title"`
				Targets []struct {
					RefID string `json:"refId"`
					Expr  string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
		}
		if err := json.Unmarshal([]byte(js), &dash); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, key, err)
		}
		for _, p := range dash.Panels {
			for _, t := range p.Targets {
				out[p.Title+"/"+t.RefID] = t.Expr
			}
		}
	}
	return out, nil
}

// MetricNames parses expr with Prometheus' parser and returns the metric
// names its selectors read, sorted.
func MetricNames(expr string) ([]string, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var missing error
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			if vs.Name == "" {
				missing = fmt.Errorf("selector %s names no metric", vs)
			}
			seen[vs.Name] = true
		}
		return nil
	})
	if missing != nil {
		return nil, missing
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// Missing returns the names a scrape's families do not hold. A histogram's
// or summary's series (_bucket, _sum, _count) count as its family's.
func Missing(names []string, families map[string]*dto.MetricFamily) []string {
	var out []string
	for _, n := range names {
		if families[n] != nil {
			continue
		}
		found := false
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(n, suffix); ok {
				if f := families[base]; f != nil && (f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY) {
					found = true
				}
			}
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}
