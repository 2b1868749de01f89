package tenancy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/keypolicy"
)

// Deployment is what Check reads of a HostedClusterDeployment, as
// unstructured (fields newer than the pinned HyperShift API included).
type Deployment struct {
	Namespace, Name string
	// HostedCluster is spec.hostedCluster: labels, annotations, spec.
	HostedCluster map[string]any
	// NodePools is spec.nodePools: name, labels, annotations, spec.
	NodePools []map[string]any
	// UnknownReferences are the fields (spec.hostedCluster.spec.x) that look
	// like a Secret or ConfigMap reference where the pinned HyperShift types
	// know none, or references that name a namespace
	// (delivery.Spec.UnknownReferences); refused under every policy, since
	// the hub would not copy them and they would resolve in the namespace
	// tenants share on the management cluster.
	UnknownReferences []string
	// Import is spec.import.
	Import string
}

// Fleet is what Check reads of the other HostedClusterDeployments.
type Fleet interface {
	// HostnameOwners are the HostedClusterDeployments that publish hostname
	// (lowercase, without a trailing dot).
	HostnameOwners(hostname string) []types.NamespacedName
	// NodePoolReplicas is the sum of the node-pool replicas of namespace's
	// HostedClusterDeployments other than except.
	NodePoolReplicas(namespace string, except string) int64
}

// Violation is one thing a HostedClusterDeployment sets that its policy
// does not allow.
type Violation struct {
	// Field is where: spec.hostedCluster.spec.etcd.unmanaged.endpoint.
	Field string
	// Why, when the field itself may be set but not to this value.
	Why string
}

func (v Violation) String() string {
	if v.Why == "" {
		return v.Field + " is not a field tenants may set"
	}
	return v.Field + ": " + v.Why
}

// Violations are what Check found; empty when the deployment is allowed.
type Violations struct {
	Policy string
	List   []Violation
}

// maxNamed bounds the violations a message names.
const maxNamed = 8

// Message is the condition message: the policy, and the violations (the
// first maxNamed of them, then how many more). It names fields, never
// values of Secrets.
func (v Violations) Message() string {
	if len(v.List) == 0 {
		return ""
	}
	named := make([]string, 0, maxNamed)
	for i, x := range v.List {
		if i == maxNamed {
			named = append(named, fmt.Sprintf("and %d more", len(v.List)-maxNamed))
			break
		}
		named = append(named, x.String())
	}
	return fmt.Sprintf("refused by %s: %s", v.Policy, strings.Join(named, "; "))
}

// Check lists what d sets that p does not allow. Pure.
func (p *Policy) Check(d Deployment, fleet Fleet) Violations {
	out := Violations{Policy: p.Name}
	if p.conflict != "" {
		out.List = []Violation{{Field: "metadata.namespace", Why: p.conflict}}
		return out
	}
	add := func(field, why string) { out.List = append(out.List, Violation{Field: field, Why: why}) }

	for _, f := range d.UnknownReferences {
		add(f, "a reference the hub does not know how to copy into the hosting namespace (a field newer than the HyperShift API hcp-fleet pins, or one naming a namespace); it would resolve among other tenants' objects")
	}
	if d.Import == string(v1alpha1.ImportDisabled) && !p.importOptOut {
		// Not a field of the HyperShift specs: a hosted cluster that is not
		// imported escapes what the admin aims at ManagedClusters (policies,
		// add-ons), so only the admin lets tenants ask for it.
		add("spec.import", fmt.Sprintf("%s does not let this namespace's hosted clusters opt out of the import as ManagedClusters (spec.allowImportOptOut)", p.Name))
	}
	const hcField = "spec.hostedCluster"
	p.checkLabels(hcField+".labels", stringKeys(d.HostedCluster["labels"]), add)
	defaults, err := loadDefaults()
	if err != nil {
		// The CRD the hub ships does not read: no default is known, so
		// every field a tenant may not set is refused, defaulted or not.
		defaults = schemaDefaults{}
	}
	spec, _ := d.HostedCluster["spec"].(map[string]any)
	platform := ""
	for _, l := range leaves(spec) {
		field := hcField + ".spec." + l.field
		if !p.allowAll && !p.hostedFields.allows(l.steps) && !isDefault(defaults.hostedCluster, l) {
			add(field, "")
			continue
		}
		s, _ := l.value.(string)
		switch {
		case matches(l.steps, "release.image"), matches(l.steps, "controlPlaneRelease.image"):
			if why := p.releaseAllowed(s); why != "" {
				add(field, why)
			}
		case matches(l.steps, "platform.type"):
			platform = s
			if _, ok := p.platforms[s]; !ok {
				add(field, fmt.Sprintf("platform %s is not one %s allows (%s)", s, p.Name, orNone(slices.Sorted(maps.Keys(p.platforms)))))
			}
		case matches(l.steps, "platform.agent.agentNamespace"):
			if allowed := p.platforms["Agent"]; !slices.Contains(allowed, s) {
				add(field, fmt.Sprintf("Agents of namespace %s on the management cluster are not ones %s lets this namespace claim (%s)", s, p.Name, orNone(allowed)))
			}
		case isHostnameField(l.steps):
			p.checkHostname(field, s, d, fleet, add)
		}
	}
	if platform == "" {
		// HyperShift's default platform type.
		if _, ok := p.platforms["None"]; !ok {
			add(hcField+".spec.platform.type", fmt.Sprintf("platform None (the default) is not one %s allows", p.Name))
		}
	}
	if platform == "Agent" && len(p.platforms["Agent"]) == 0 {
		add(hcField+".spec.platform.agent.agentNamespace", fmt.Sprintf("%s names no namespace whose Agents this namespace may claim", p.Name))
	}

	var replicas int64
	for i, np := range d.NodePools {
		field := fmt.Sprintf("spec.nodePools[%d]", i)
		p.checkLabels(field+".labels", stringKeys(np["labels"]), add)
		npSpec, _ := np["spec"].(map[string]any)
		for _, l := range leaves(npSpec) {
			f := field + ".spec." + l.field
			if !p.allowAll && !p.poolFields.allows(l.steps) && !isDefault(defaults.nodePool, l) {
				add(f, "")
				continue
			}
			s, _ := l.value.(string)
			switch {
			case matches(l.steps, "release.image"):
				if why := p.releaseAllowed(s); why != "" {
					add(f, why)
				}
			case matches(l.steps, "platform.type"):
				if _, ok := p.platforms[s]; !ok {
					add(f, fmt.Sprintf("platform %s is not one %s allows", s, p.Name))
				}
			}
		}
		replicas += PoolReplicas(npSpec)
	}
	if p.maxReplicas != nil && fleet != nil {
		if total := replicas + fleet.NodePoolReplicas(d.Namespace, d.Name); total > int64(*p.maxReplicas) {
			add("spec.nodePools", fmt.Sprintf("%d node-pool replicas in namespace %s with this HostedClusterDeployment's %d, above the %d %s allows",
				total, d.Namespace, replicas, *p.maxReplicas, p.Name))
		}
	}
	return out
}

// PoolReplicas is what a NodePool spec may grow to: autoScaling.max, else
// replicas.
func PoolReplicas(spec map[string]any) int64 {
	if n, ok := number(nested(spec, "autoScaling", "max")); ok {
		return n
	}
	n, _ := number(spec["replicas"])
	return n
}

// Hostnames are the DNS names d publishes, lowercase without a trailing
// dot: its services' route and load-balancer hostnames, its API server DNS
// name and its ingress domain. (dns.baseDomain is not one: HyperShift
// publishes records under it in the hosted cluster's own zone, and the
// routes of services without a hostname are named after the control-plane
// namespace, which the hub keeps unique on each management cluster.)
func Hostnames(hostedCluster map[string]any) []string {
	spec, _ := hostedCluster["spec"].(map[string]any)
	var out []string
	for _, l := range leaves(spec) {
		if s, ok := l.value.(string); ok && s != "" && isHostnameField(l.steps) {
			out = append(out, normalHost(s))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (p *Policy) checkHostname(field, hostname string, d Deployment, fleet Fleet, add func(string, string)) {
	if why := p.hostnameAllowed(hostname); why != "" {
		add(field, why)
		return
	}
	p.checkUnique(field, hostname, d, fleet, add)
}

// checkUnique refuses a hostname another HostedClusterDeployment publishes.
// The other one is not named: it may be another tenant's.
func (p *Policy) checkUnique(field, hostname string, d Deployment, fleet Fleet, add func(string, string)) {
	if fleet == nil {
		return
	}
	self := types.NamespacedName{Namespace: d.Namespace, Name: d.Name}
	for _, owner := range fleet.HostnameOwners(normalHost(hostname)) {
		if owner != self {
			add(field, fmt.Sprintf("%s is published by another HostedClusterDeployment already; hostnames are unique across the fleet", normalHost(hostname)))
			return
		}
	}
}

func (p *Policy) checkLabels(field string, keys []string, add func(string, string)) {
	for _, k := range keys {
		if keypolicy.InDomain(k, reservedLabelDomains...) && !p.labels.Match(k) {
			add(field, fmt.Sprintf("label %s is of a reserved domain (%s) that %s does not allow", k, strings.Join(reservedLabelDomains, ", "), p.Name))
		}
	}
}

func isHostnameField(steps []string) bool {
	return slices.ContainsFunc(hostnameFields, func(p string) bool { return matches(steps, p) })
}

func normalHost(s string) string { return strings.ToLower(strings.TrimSuffix(s, ".")) }

func nested(m map[string]any, path ...string) any {
	var v any = m
	for _, step := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[step]
	}
	return v
}

func number(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}

func stringKeys(v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return slices.Sorted(maps.Keys(m))
}
