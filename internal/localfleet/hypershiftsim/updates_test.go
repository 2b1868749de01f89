package hypershiftsim

import (
	"slices"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func rel(v string) string { return "quay.io/openshift-release-dev/ocp-release:" + v + "-multi" }

func always(name string) configv1.ConditionalUpdateRisk {
	return configv1.ConditionalUpdateRisk{Name: name, Message: name + " bites", URL: "https://example.com/" + name,
		MatchingRules: []configv1.ClusterCondition{{Type: "Always"}}}
}

func promql(name, q string) configv1.ConditionalUpdateRisk {
	return configv1.ConditionalUpdateRisk{Name: name, Message: name + " bites", URL: "https://example.com/" + name,
		MatchingRules: []configv1.ClusterCondition{{Type: "PromQL", PromQL: &configv1.PromQLClusterCondition{PromQL: q}}}}
}

// TestUpdates plays the CVO over a small graph: edges from the running
// version are available, conditional edges carry their risks and a
// Recommended condition, and a conditional update no risk applies to is
// available too; everything newest first.
func TestUpdates(t *testing.T) {
	g := &UpdateGraph{
		Nodes: []GraphNode{{"4.18.5", rel("4.18.5")}, {"4.18.9", rel("4.18.9")}, {"4.18.10", rel("4.18.10")},
			{"4.18.11", rel("4.18.11")}, {"4.18.12", rel("4.18.12")}, {"4.18.13", rel("4.18.13")}},
		Edges: [][2]int{{0, 1}, {0, 2}, {1, 2}},
		ConditionalEdges: []ConditionalEdges{
			{Edges: []GraphEdge{{"4.18.5", "4.18.11"}}, Risks: []configv1.ConditionalUpdateRisk{always("EtcdSlow")}},
			{Edges: []GraphEdge{{"4.18.5", "4.18.12"}}, Risks: []configv1.ConditionalUpdateRisk{promql("NotHere", "vector(0)")}},
			{Edges: []GraphEdge{{"4.18.5", "4.18.13"}}, Risks: []configv1.ConditionalUpdateRisk{always("A"), promql("B", "vector(1)")}},
			{Edges: []GraphEdge{{"4.18.9", "4.18.13"}}, Risks: []configv1.ConditionalUpdateRisk{promql("Unknowable", "up == 0")}},
		},
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	available, conditional := updates(g, "4.18.5", nil, now)
	var got []string
	for _, r := range available {
		got = append(got, r.Version)
	}
	if want := []string{"4.18.12", "4.18.10", "4.18.9"}; !slices.Equal(got, want) {
		t.Errorf("available %v, want %v", got, want)
	}
	want := map[string][2]string{"4.18.13": {"False", "MultipleReasons"}, "4.18.12": {"True", "AsExpected"}, "4.18.11": {"False", "EtcdSlow"}}
	if len(conditional) != len(want) || conditional[0].Release.Version != "4.18.13" {
		t.Fatalf("conditional %+v, want 4.18.13, 4.18.12, 4.18.11", conditional)
	}
	for _, cu := range conditional {
		c := meta.FindStatusCondition(cu.Conditions, recommendedCondition)
		if c == nil || string(c.Status) != want[cu.Release.Version][0] || c.Reason != want[cu.Release.Version][1] {
			t.Errorf("%s: Recommended %+v, want %v", cu.Release.Version, c, want[cu.Release.Version])
		}
		if cu.Release.Image != rel(cu.Release.Version) || len(cu.Risks) == 0 {
			t.Errorf("%s: release %q, risks %v", cu.Release.Version, cu.Release.Image, cu.Risks)
		}
	}
	// The transition time stays while the status does.
	_, again := updates(g, "4.18.5", conditional, now.Add(time.Hour))
	if c := meta.FindStatusCondition(again[0].Conditions, recommendedCondition); !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("transition time moved to %v", c.LastTransitionTime)
	}
	// A risk that cannot be evaluated: Unknown, not available.
	available, conditional = updates(g, "4.18.9", nil, now)
	if len(available) != 1 || len(conditional) != 1 ||
		meta.FindStatusCondition(conditional[0].Conditions, recommendedCondition).Status != metav1.ConditionUnknown {
		t.Errorf("from 4.18.9: available %v, conditional %+v; want 4.18.10 and an Unknown 4.18.13", available, conditional)
	}
	// No graph (no channel): none, and available is not nil.
	if available, conditional := updates(nil, "4.18.5", nil, now); available == nil || len(available) != 0 || conditional != nil {
		t.Errorf("without a graph: %v %v", available, conditional)
	}
}
