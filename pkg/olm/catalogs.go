package olm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Catalog health between the agent and the hub.
const (
	// AnnotationCatalogHealth is written by the agent on each delivered
	// HostedCluster on the management cluster: the hosted cluster's
	// catalogs as a JSON CatalogHealth, read back by the hub through the
	// ManifestWork's status feedback (HostedClusterDeployment condition
	// CatalogsReady). An hcpfleet.io key, so no HostedClusterDeployment can
	// set it.
	AnnotationCatalogHealth = "hcpfleet.io/olm-catalog-health"
	// MaxReportedCatalogs bounds CatalogHealth.NotReady.
	MaxReportedCatalogs = 20

	// CatalogNamespace is OpenShift's global catalog namespace, where
	// HyperShift's hosted-cluster-config-operator writes the default
	// CatalogSources and where a catalog serves every namespace of the
	// hosted cluster. Catalog health covers the CatalogSources there.
	CatalogNamespace = "openshift-marketplace"

	// StateReady is the gRPC connectivity state ("READY") OLM's
	// catalog-operator records in a CatalogSource's
	// status.connectionState.lastObservedState once it is connected to the
	// catalog's registry server; anything else (CONNECTING,
	// TRANSIENT_FAILURE, IDLE, SHUTDOWN) means the catalog does not serve.
	StateReady = "READY"
	// StateMissing is hcp-fleet's, not OLM's: a CatalogSource the fleet's
	// policy names (AnnotationCatalogSources) that does not exist in the
	// hosted cluster, so it cannot serve.
	StateMissing = "MISSING"

	// AnnotationCatalogSources is written by the hub on each HostedCluster
	// it delivers: the CatalogSources outside CatalogNamespace whose health
	// the agent reports too ("namespace/name,…", sorted), from
	// HostingConfig spec.olm.catalogSources.
	AnnotationCatalogSources = "hcpfleet.io/olm-catalog-sources"
)

// EncodeCatalogSources is the AnnotationCatalogSources value of refs
// ("namespace/name", sorted, without duplicates; "" for none).
func EncodeCatalogSources(refs []string) string {
	out := slices.Clone(refs)
	slices.Sort(out)
	return strings.Join(slices.Compact(out), ",")
}

// DecodeCatalogSources reads an AnnotationCatalogSources value: the
// namespace/name pairs, skipping anything else.
func DecodeCatalogSources(s string) [][2]string {
	var out [][2]string
	for _, ref := range strings.Split(s, ",") {
		if ns, name, ok := strings.Cut(strings.TrimSpace(ref), "/"); ok && ns != "" && name != "" && !strings.Contains(name, "/") {
			out = append(out, [2]string{ns, name})
		}
	}
	return out
}

// DefaultCatalogs are the CatalogSources HyperShift's
// hosted-cluster-config-operator writes into every hosted cluster's
// openshift-marketplace, each served (with olmCatalogPlacement management)
// by a Deployment and a Service of the same name in the hosted control-plane
// namespace, at <name>:50051.
var DefaultCatalogs = []string{"redhat-operators", "certified-operators", "community-operators", "redhat-marketplace"}

// CatalogHealth is the agent's report of a hosted cluster's catalogs.
type CatalogHealth struct {
	// Total is the number of CatalogSources in CatalogNamespace plus the
	// named ones elsewhere (Named of them, reported by namespace/name).
	Total int `json:"total"`
	Named int `json:"named,omitempty"`
	// NotReady are those whose last observed state is not StateReady, by
	// name, at most MaxReportedCatalogs; Truncated counts the others.
	NotReady  []CatalogState `json:"notReady,omitempty"`
	Truncated int            `json:"truncated,omitempty"`
}

// CatalogState is one CatalogSource that does not serve.
type CatalogState struct {
	Name string `json:"name"`
	// State is its status.connectionState.lastObservedState; "" while
	// nothing has observed it (no connection state yet).
	State string `json:"state,omitempty"`
}

// String is "name (STATE)", or "name (not observed yet)".
func (c CatalogState) String() string {
	if c.State == "" {
		return c.Name + " (no connection state yet)"
	}
	return fmt.Sprintf("%s (%s)", c.Name, c.State)
}

// NewCatalogHealth summarizes catalogs (name, or namespace/name outside
// CatalogNamespace → last observed state, "" when none): the ones not READY sorted by name, failing states before
// unobserved ones so that what MaxReportedCatalogs cuts never hides a
// failure.
func NewCatalogHealth(catalogs map[string]string) CatalogHealth {
	h := CatalogHealth{Total: len(catalogs)}
	for name, state := range catalogs {
		if strings.Contains(name, "/") {
			h.Named++
		}
		if state != StateReady {
			h.NotReady = append(h.NotReady, CatalogState{Name: name, State: state})
		}
	}
	slices.SortFunc(h.NotReady, func(a, b CatalogState) int {
		if (a.State == "") != (b.State == "") {
			if a.State == "" {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(h.NotReady) > MaxReportedCatalogs {
		h.Truncated = len(h.NotReady) - MaxReportedCatalogs
		h.NotReady = h.NotReady[:MaxReportedCatalogs]
	}
	return h
}

// Encode is the report's annotation value.
func (h CatalogHealth) Encode() string {
	b, _ := json.Marshal(h) // plain strings and ints: cannot fail
	return string(b)
}

// DecodeCatalogHealth reads an AnnotationCatalogHealth value.
func DecodeCatalogHealth(s string) (CatalogHealth, error) {
	var h CatalogHealth
	err := json.Unmarshal([]byte(s), &h)
	return h, err
}
