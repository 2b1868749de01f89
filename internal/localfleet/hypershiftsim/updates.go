package hypershiftsim

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Available and conditional updates, as a HostedCluster reports them in
// status.version.availableUpdates and conditionalUpdates. Upstream, the
// hosted cluster-version operator asks the update service for the graph of
// spec.channel and fills its ClusterVersion's status from the edges leaving
// the version it runs (cluster-version-operator pkg/cvo/availableupdates.go);
// HyperShift copies both lists to the HostedControlPlane and on to the
// HostedCluster (control-plane-operator hostedclusterconfigoperator
// controllers/hcpstatus/hcpstatus.go, hypershift-operator hostedcluster
// controller computeClusterVersionStatus). The stand-in has no update
// service: a test or the fleet's config serves a small graph per channel
// with ServeUpdateGraph, and the stand-in plays the CVO's part:
//
//   - an edge from the desired version is an available update;
//   - a conditional edge is a conditional update carrying its risks, with
//     the Recommended condition the CVO sets: True (AsExpected) when none of
//     the risks applies to the cluster — then it is an available update too —,
//     False with the risk's name as reason (MultipleReasons for several)
//     when one does, Unknown (EvaluationFailed) when a risk cannot be
//     evaluated;
//   - a risk applies when its first matching rule that can be evaluated
//     matches: Always always does; PromQL has no Prometheus here, so the
//     stand-in evaluates only the constant queries "vector(1)" (matches) and
//     "vector(0)" (does not) and cannot evaluate any other;
//   - no channel, or a channel without a graph, gives no updates (upstream:
//     RetrievedUpdates=False, NoChannel / VersionNotFound).
//
// Both lists are newest first.

// UpdateGraph is one channel's graph, in the update service's (Cincinnati's)
// JSON form: nodes are releases, edges are recommended updates between
// node indices, conditionalEdges are updates with known risks.
type UpdateGraph struct {
	Nodes            []GraphNode        `json:"nodes"`
	Edges            [][2]int           `json:"edges"`
	ConditionalEdges []ConditionalEdges `json:"conditionalEdges,omitempty"`
}

// GraphNode is one release of the graph.
type GraphNode struct {
	Version string `json:"version"`
	Payload string `json:"payload"`
}

// ConditionalEdges are updates (by version) that share risks.
type ConditionalEdges struct {
	Edges []GraphEdge                      `json:"edges"`
	Risks []configv1.ConditionalUpdateRisk `json:"risks"`
}

// GraphEdge is one conditional update, from version to version.
type GraphEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// updateGraphs are the graphs served, by channel.
var updateGraphs sync.Map

// ServeUpdateGraph makes the stand-ins of this process serve g for
// channel, as an update service would (nil stops serving it). HostedClusters
// already reconciled pick it up on their next reconcile.
func ServeUpdateGraph(channel string, g *UpdateGraph) {
	if g == nil {
		updateGraphs.Delete(channel)
		return
	}
	updateGraphs.Store(channel, g)
}

// graphFor is the graph served for channel, nil when none.
func graphFor(channel string) *UpdateGraph {
	if channel == "" {
		return nil
	}
	g, ok := updateGraphs.Load(channel)
	if !ok {
		return nil
	}
	return g.(*UpdateGraph)
}

// Reasons of the Recommended condition, as the CVO writes them.
const (
	recommendedCondition   = "Recommended"
	reasonAsExpected       = "AsExpected"
	reasonMultipleReasons  = "MultipleReasons"
	reasonEvaluationFailed = "EvaluationFailed"
)

// updates computes the available and conditional updates from version in
// g at now; previous are the conditional updates reported before, whose
// Recommended transition times stay while its status does. Never nil
// available (the field is required and nullable upstream; null would be
// dropped by a merge patch).
func updates(g *UpdateGraph, version string, previous []configv1.ConditionalUpdate, now time.Time) ([]configv1.Release, []configv1.ConditionalUpdate) {
	available := []configv1.Release{}
	if g == nil || version == "" {
		return available, nil
	}
	from := -1
	for i, n := range g.Nodes {
		if n.Version == version {
			from = i
		}
	}
	payload := map[string]string{}
	for _, n := range g.Nodes {
		payload[n.Version] = n.Payload
	}
	for _, e := range g.Edges {
		if e[0] == from && e[1] >= 0 && e[1] < len(g.Nodes) {
			available = append(available, configv1.Release{Version: g.Nodes[e[1]].Version, Image: g.Nodes[e[1]].Payload})
		}
	}
	var conditional []configv1.ConditionalUpdate
	for _, ce := range g.ConditionalEdges {
		for _, e := range ce.Edges {
			if e.From != version || payload[e.To] == "" {
				continue
			}
			release := configv1.Release{Version: e.To, Image: payload[e.To]}
			cu := configv1.ConditionalUpdate{Release: release, Risks: append([]configv1.ConditionalUpdateRisk(nil), ce.Risks...)}
			for _, p := range previous {
				if p.Release.Version == e.To {
					cu.Conditions = append([]metav1.Condition(nil), p.Conditions...)
				}
			}
			c := recommended(ce.Risks)
			c.LastTransitionTime = metav1.NewTime(now)
			meta.SetStatusCondition(&cu.Conditions, c)
			if c.Status == metav1.ConditionTrue {
				available = append(available, release)
			}
			conditional = append(conditional, cu)
		}
	}
	newestFirst := func(a, b string) bool {
		va, errA := semver.ParseTolerant(a)
		vb, errB := semver.ParseTolerant(b)
		if errA != nil || errB != nil {
			return a > b
		}
		return va.GT(vb)
	}
	sort.SliceStable(available, func(i, j int) bool { return newestFirst(available[i].Version, available[j].Version) })
	sort.SliceStable(conditional, func(i, j int) bool {
		return newestFirst(conditional[i].Release.Version, conditional[j].Release.Version)
	})
	return available, conditional
}

// recommended is the CVO's Recommended condition for an update with risks.
func recommended(risks []configv1.ConditionalUpdateRisk) metav1.Condition {
	var applying, failed []string
	var messages []string
	for _, r := range risks {
		match, err := riskApplies(r)
		switch {
		case err != nil:
			failed = append(failed, fmt.Sprintf("could not evaluate exposure to %s: %v", r.Name, err))
		case match:
			applying = append(applying, r.Name)
			messages = append(messages, r.Message+" "+r.URL)
		}
	}
	c := metav1.Condition{Type: recommendedCondition}
	switch {
	case len(applying) == 1 && len(failed) == 0:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, applying[0], messages[0]
	case len(applying) > 0:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, reasonMultipleReasons, strings.Join(append(messages, failed...), "\n\n")
	case len(failed) > 0:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, reasonEvaluationFailed, strings.Join(failed, "\n\n")
	default:
		c.Status, c.Reason = metav1.ConditionTrue, reasonAsExpected
		c.Message = "The update is recommended, because none of the conditional update risks apply to this cluster."
	}
	return c
}

// riskApplies evaluates a risk's matching rules in order: the first one that
// can be evaluated decides.
func riskApplies(r configv1.ConditionalUpdateRisk) (bool, error) {
	for _, rule := range r.MatchingRules {
		switch rule.Type {
		case "Always":
			return true, nil
		case "PromQL":
			if rule.PromQL == nil {
				continue
			}
			switch strings.TrimSpace(rule.PromQL.PromQL) {
			case "vector(1)":
				return true, nil
			case "vector(0)":
				return false, nil
			}
		}
	}
	return false, fmt.Errorf("no matching rule of risk %s can be evaluated", r.Name)
}
