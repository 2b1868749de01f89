// Package scheduling is the hub's scheduler for HostedClusterDeployments: it
// picks the management cluster a hosted cluster runs on and binds it there,
// once.
//
// The decision is a pure function (Schedule) over a Request (what the hosted
// cluster needs) and Candidates (what each management cluster offers); the
// controller gathers both from the hub's caches and records the binding in
// status.hostingCluster, which the API lets be set only once.
//
// Capacity counts the hub's own bindings, which are never stale, instead of
// trusting the agents' reports alone: a burst of requests spreads across
// clusters rather than herding onto the one whose report still looks
// emptiest.
package scheduling

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// Strategy orders the management clusters that fit.
type Strategy string

const (
	// StrategySpread puts a hosted cluster on the least utilized cluster.
	StrategySpread Strategy = "Spread"
	// StrategyBinPack fills the most utilized cluster that still fits, keeping
	// others empty (to drain or scale them down).
	StrategyBinPack Strategy = "BinPack"
)

// ParseStrategy returns the Strategy named s (case-insensitive).
func ParseStrategy(s string) (Strategy, error) {
	switch strings.ToLower(s) {
	case "", "spread":
		return StrategySpread, nil
	case "binpack":
		return StrategyBinPack, nil
	}
	return "", fmt.Errorf("unknown scheduling strategy %q: use Spread or BinPack", s)
}

// Request is what a hosted cluster needs from its management cluster.
type Request struct {
	// Name and HostingNamespace are where the HostedCluster would live.
	Name             string
	HostingNamespace string
	// NodePools are the NodePool names it brings into HostingNamespace.
	NodePools []string
	// ReleaseMinor is the OpenShift minor version ("4.18") of the requested
	// release, or "" when the release image does not say (a digest).
	ReleaseMinor string
	// Platform is the HostedCluster's platform type ("Agent", "KubeVirt").
	Platform string
	// ToleratesCordon: the hosted cluster may go to a cordoned management
	// cluster (its Placement tolerates hosting.TaintUnschedulable and its
	// tenant policy allows that; cordon.go).
	ToleratesCordon bool
}

// Candidate is a management cluster as the scheduler sees it.
type Candidate struct {
	Name string
	// HostingConfig names ("<namespace>/<name>") the HostingConfig the
	// cluster's add-on runs with; "" while none is resolved (the defaults).
	HostingConfig string
	// HostingNamespaces are the namespaces its HostingConfig allows hosted
	// clusters in (spec.hostingNamespaces); nil for the default, clusters.
	HostingNamespaces []v1alpha1.HostingNamespaceName
	// AgentNamespace is the namespace the hcp-fleet agent runs in there
	// (the ManagedClusterAddOn's status.namespace), never a hosting
	// namespace; "" when unknown.
	AgentNamespace string
	// Cordoned: the ManagedCluster carries the taint
	// hosting.TaintUnschedulable (`kubectl hcpfleet cordon`).
	Cordoned bool
	// ClusterAvailable: the ManagedCluster's agent reports in.
	ClusterAvailable bool
	// AddOnAvailable: the hcp-fleet agent's lease is fresh.
	AddOnAvailable bool
	// OperatorInstalled: the agent reports the HyperShift operator rolled out.
	OperatorInstalled bool
	// SupportedVersions are the minor versions the operator supports; nil
	// when the agent has not reported them yet.
	SupportedVersions []string
	// Platforms are the platforms the cluster can host.
	Platforms []string
	// Load is how many hosted clusters it runs or has been promised.
	Load int32
	// Capacity is its maxHostedClusters.
	Capacity int32
	// Occupied names HostedClusters ("<namespace>/<name>"), NodePools
	// ("<namespace>/nodepool/<name>") and the namespaces they use
	// (ControlPlaneKey, HostingKey) already bound to it, which a new hosted
	// cluster must not collide with.
	Occupied map[string]bool
}

// Rejection categories, in the order the filters run.
const (
	// RejectCordoned runs first: the fleet admin took the cluster out of
	// scheduling, whatever else it offers.
	RejectCordoned           = "cordoned"
	RejectHostingNamespace   = "hosting namespace not allowed"
	RejectClusterUnavailable = "cluster unavailable"
	RejectAddOnUnavailable   = "add-on unavailable"
	RejectOperatorMissing    = "HyperShift operator not installed"
	RejectRelease            = "release not supported"
	RejectPlatform           = "platform not supported"
	RejectNameTaken          = "name taken"
	// RejectControlPlaneNamespace: HyperShift's control-plane namespace
	// <hostingNamespace>-<name> would be a hosting namespace the cluster's
	// HostingConfig allows, or another bound hosted cluster's (names.go).
	RejectControlPlaneNamespace = "control-plane namespace taken"
	RejectFull                  = "full"
)

// Rejection is why one candidate was not chosen.
type Rejection struct {
	Cluster  string
	Category string
	Detail   string
}

// Decision is Schedule's outcome.
type Decision struct {
	// Cluster is the chosen management cluster; "" when none fits.
	Cluster string
	// Rejected lists every candidate that does not fit, by name.
	Rejected []Rejection
	// Ranked names the candidates that fit, best first, in the strategy's
	// order (Cluster is the first).
	Ranked []string
}

// Schedule picks the management cluster for req among candidates. The
// result is deterministic for the same input.
func Schedule(req Request, candidates []Candidate, strategy Strategy) Decision {
	var d Decision
	var fit []Candidate
	for _, c := range candidates {
		if r, ok := filter(req, c); !ok {
			d.Rejected = append(d.Rejected, r)
			continue
		}
		fit = append(fit, c)
	}
	sort.Slice(d.Rejected, func(i, j int) bool { return d.Rejected[i].Cluster < d.Rejected[j].Cluster })
	if len(fit) == 0 {
		return d
	}
	sort.Slice(fit, func(i, j int) bool { return better(fit[i], fit[j], strategy) })
	d.Cluster = fit[0].Name
	d.Ranked = make([]string, len(fit))
	for i, c := range fit {
		d.Ranked[i] = c.Name
	}
	return d
}

// filter says whether c can host req, and if not, why. The first failing
// filter wins, so the reason is the most fundamental one.
func filter(req Request, c Candidate) (Rejection, bool) {
	for _, f := range filters {
		if detail, ok := f.check(req, c); !ok {
			return Rejection{Cluster: c.Name, Category: f.category, Detail: detail}, false
		}
	}
	return Rejection{}, true
}

// filters are the scheduler's filters in the order they run; each returns
// what it found (why it failed, or for some what it saw when it passed).
var filters = []struct {
	category string
	check    func(req Request, c Candidate) (detail string, ok bool)
}{
	{RejectCordoned, func(req Request, c Candidate) (string, bool) {
		switch {
		case !c.Cordoned:
			return "", true
		case req.ToleratesCordon:
			return "cordoned (tolerated: the Placement tolerates " + hosting.TaintUnschedulable + " and the tenant policy allows it)", true
		}
		return "the fleet admin cordoned it (ManagedCluster taint " + hosting.TaintUnschedulable + "); nothing new is scheduled there", false
	}},
	{RejectHostingNamespace, func(req Request, c Candidate) (string, bool) {
		policy := v1alpha1.HostingConfigSpec{HostingNamespaces: c.HostingNamespaces}
		switch {
		case !policy.AllowsHostingNamespace(req.HostingNamespace):
			return fmt.Sprintf("hosting namespace %s is not allowed by %s (allows %s)",
				req.HostingNamespace, hostingConfigName(c.HostingConfig), strings.Join(policy.AllowedHostingNamespaces(), ", ")), false
		case c.AgentNamespace != "" && req.HostingNamespace == c.AgentNamespace:
			return fmt.Sprintf("hosting namespace %s is the hcp-fleet agent's namespace there", req.HostingNamespace), false
		}
		return "", true
	}},
	{RejectClusterUnavailable, func(_ Request, c Candidate) (string, bool) {
		return "the ManagedCluster is not available", c.ClusterAvailable
	}},
	{RejectAddOnUnavailable, func(_ Request, c Candidate) (string, bool) {
		return "the hcp-fleet add-on is not available", c.AddOnAvailable
	}},
	{RejectOperatorMissing, func(_ Request, c Candidate) (string, bool) {
		return "the HyperShift operator is not installed yet", c.OperatorInstalled
	}},
	{RejectRelease, func(req Request, c Candidate) (string, bool) {
		switch {
		case req.ReleaseMinor == "":
			return "the release image names no version (not checked)", true
		case c.SupportedVersions == nil:
			return "the HyperShift operator has not reported its supported versions yet", false
		case !slices.Contains(c.SupportedVersions, req.ReleaseMinor):
			return fmt.Sprintf("does not support OpenShift %s (supports %s)", req.ReleaseMinor, versionRange(c.SupportedVersions)), false
		}
		return "", true
	}},
	{RejectPlatform, func(req Request, c Candidate) (string, bool) {
		if req.Platform != "" && !slices.Contains(c.Platforms, req.Platform) {
			return fmt.Sprintf("cannot host platform %s (hosts %s)", req.Platform, orNone(c.Platforms)), false
		}
		return "", true
	}},
	{RejectNameTaken, func(req Request, c Candidate) (string, bool) {
		if k := HostedClusterKey(req.HostingNamespace, req.Name); c.Occupied[k] {
			return fmt.Sprintf("a HostedCluster %s from another HostedClusterDeployment is bound there", k), false
		}
		for _, np := range req.NodePools {
			if k := NodePoolKey(req.HostingNamespace, np); c.Occupied[k] {
				return fmt.Sprintf("a NodePool %s/%s from another HostedClusterDeployment is bound there", req.HostingNamespace, np), false
			}
		}
		return "", true
	}},
	{RejectControlPlaneNamespace, func(req Request, c Candidate) (string, bool) {
		policy := v1alpha1.HostingConfigSpec{HostingNamespaces: c.HostingNamespaces}
		if why := controlPlaneIsHostingNamespace(req.HostingNamespace, req.Name, policy.AllowedHostingNamespaces(), hostingConfigName(c.HostingConfig)); why != "" {
			return why, false
		}
		for _, clash := range namespaceClashes(req.HostingNamespace, req.Name) {
			if c.Occupied[clash.key] {
				return clash.what + " a hosted cluster from another HostedClusterDeployment bound there", false
			}
		}
		return "", true
	}},
	{RejectFull, func(_ Request, c Candidate) (string, bool) {
		if c.Load >= c.Capacity {
			return fmt.Sprintf("full (%d/%d)", c.Load, c.Capacity), false
		}
		return fmt.Sprintf("%d/%d", c.Load, c.Capacity), true
	}},
}

// HostedClusterKey and NodePoolKey name the objects in Candidate.Occupied.
func HostedClusterKey(namespace, name string) string { return namespace + "/" + name }

// NodePoolKey: see HostedClusterKey.
func NodePoolKey(namespace, name string) string { return namespace + "/nodepool/" + name }

// better orders fitting candidates: the first is chosen.
func better(a, b Candidate, strategy Strategy) bool {
	// Compare utilization after placing one more (a/b vs c/d by cross
	// multiplication, so capacities of different sizes compare fairly).
	ua := int64(a.Load+1) * int64(b.Capacity)
	ub := int64(b.Load+1) * int64(a.Capacity)
	if ua != ub {
		if strategy == StrategyBinPack {
			return ua > ub
		}
		return ua < ub
	}
	if a.Load != b.Load {
		if strategy == StrategyBinPack {
			return a.Load > b.Load
		}
		return a.Load < b.Load
	}
	return a.Name < b.Name
}

// Reason and Message summarize a Decision that found no cluster, for the
// Scheduled=False condition: "3 clusters: 1 full (cluster-a 80/80), 1 add-on
// unavailable (cluster-b), 1 release not supported (cluster-c: does not
// support OpenShift 4.16 (supports 4.17-4.19))".
func (d Decision) Reason() string {
	if len(d.Rejected) == 0 {
		return v1alpha1.ReasonNoPlacementDecisions
	}
	category := d.Rejected[0].Category
	for _, r := range d.Rejected[1:] {
		if r.Category != category {
			return v1alpha1.ReasonNoSuitableHostingCluster
		}
	}
	switch category {
	case RejectFull:
		return v1alpha1.ReasonCapacityExhausted
	case RejectRelease:
		return v1alpha1.ReasonReleaseNotSupported
	case RejectPlatform:
		return v1alpha1.ReasonPlatformNotSupported
	case RejectAddOnUnavailable, RejectOperatorMissing:
		return v1alpha1.ReasonAddOnNotAvailable
	case RejectClusterUnavailable:
		return v1alpha1.ReasonHostingClusterUnavailable
	case RejectHostingNamespace:
		return v1alpha1.ReasonHostingNamespaceNotAllowed
	case RejectCordoned:
		return v1alpha1.ReasonHostingClusterCordoned
	case RejectControlPlaneNamespace:
		return v1alpha1.ReasonControlPlaneNamespaceConflict
	}
	return v1alpha1.ReasonNoSuitableHostingCluster
}

// maxNamed is how many clusters a message names per category.
const maxNamed = 3

// Message: see Reason.
func (d Decision) Message() string {
	if len(d.Rejected) == 0 {
		return "no candidate management clusters"
	}
	order := []string{RejectFull, RejectCordoned, RejectHostingNamespace, RejectClusterUnavailable, RejectAddOnUnavailable, RejectOperatorMissing,
		RejectRelease, RejectPlatform, RejectNameTaken, RejectControlPlaneNamespace}
	byCategory := map[string][]Rejection{}
	for _, r := range d.Rejected {
		byCategory[r.Category] = append(byCategory[r.Category], r)
	}
	parts := make([]string, 0, len(byCategory))
	for _, cat := range order {
		rs := byCategory[cat]
		if len(rs) == 0 {
			continue
		}
		named := make([]string, 0, maxNamed)
		for i, r := range rs {
			if i == maxNamed {
				named = append(named, fmt.Sprintf("and %d more", len(rs)-maxNamed))
				break
			}
			named = append(named, r.Cluster+": "+r.Detail)
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s)", len(rs), cat, strings.Join(named, "; ")))
	}
	noun := "clusters"
	if len(d.Rejected) == 1 {
		noun = "cluster"
	}
	return fmt.Sprintf("no management cluster fits; %d %s: %s", len(d.Rejected), noun, strings.Join(parts, ", "))
}

func versionRange(vs []string) string {
	if len(vs) == 0 {
		return "none"
	}
	sorted := slices.Clone(vs)
	slices.SortFunc(sorted, compareMinor)
	if len(sorted) == 1 {
		return sorted[0]
	}
	return sorted[0] + "-" + sorted[len(sorted)-1]
}

// compareMinor orders "4.9" before "4.10".
func compareMinor(a, b string) int {
	var am, an, bm, bn int
	_, _ = fmt.Sscanf(a, "%d.%d", &am, &an)
	_, _ = fmt.Sscanf(b, "%d.%d", &bm, &bn)
	if am != bm {
		return am - bm
	}
	return an - bn
}

func hostingConfigName(name string) string {
	if name == "" {
		return "the default HostingConfig"
	}
	return "HostingConfig " + name
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
