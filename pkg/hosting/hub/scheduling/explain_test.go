package scheduling

import (
	"slices"
	"testing"
)

func TestExplain(t *testing.T) {
	// "broken" fails three filters; Schedule stops at the first, Explain
	// shows all three.
	broken := ready("broken", 80, 80)
	broken.AddOnAvailable = false
	broken.Platforms = []string{"KubeVirt"}
	cands := []Candidate{ready("c", 10, 40), broken, ready("a", 5, 10), ready("b", 2, 40)}

	x := Explain(req, cands, StrategySpread)
	if d := Schedule(req, cands, StrategySpread); x.Decision.Cluster != d.Cluster || !slices.Equal(x.Decision.Ranked, d.Ranked) {
		t.Fatalf("Explain decided %q %v, Schedule %q %v", x.Decision.Cluster, x.Decision.Ranked, d.Cluster, d.Ranked)
	}
	// Spread, utilization after one more: b 3/40, c 11/40, a 6/10.
	if want := []string{"b", "c", "a"}; !slices.Equal(x.Decision.Ranked, want) {
		t.Errorf("ranked %v, want %v", x.Decision.Ranked, want)
	}
	var names []string
	ranks := map[string]int{}
	for _, e := range x.Candidates {
		names = append(names, e.Candidate.Name)
		ranks[e.Candidate.Name] = e.Rank
		if len(e.Filters) != len(FilterNames()) {
			t.Errorf("%s: %d filter results, want %d", e.Candidate.Name, len(e.Filters), len(FilterNames()))
		}
	}
	if !slices.Equal(names, []string{"a", "b", "broken", "c"}) || ranks["b"] != 1 || ranks["c"] != 2 || ranks["a"] != 3 || ranks["broken"] != 0 {
		t.Errorf("candidates %v ranks %v", names, ranks)
	}
	var failed []string
	for _, f := range x.Candidates[2].Failed() {
		failed = append(failed, f.Filter+": "+f.Detail)
	}
	if want := []string{RejectAddOnUnavailable + ": the hcp-fleet add-on is not available",
		RejectPlatform + ": cannot host platform Agent (hosts KubeVirt)", RejectFull + ": full (80/80)"}; !slices.Equal(failed, want) {
		t.Errorf("broken fails %q, want %q", failed, want)
	}
	// c scores 11/40 after one more. With 8 more, b (10) ties at 11/40 and
	// equal load and wins by name; with 9 more (12/40) c wins.
	if x.RunnerUp != "c" || x.Overtake != 9 {
		t.Errorf("runner-up %q overtakes after %d more on b, want c after 9", x.RunnerUp, x.Overtake)
	}
	if x.OtherStrategy != StrategyBinPack || x.OtherStrategyDecision != "a" {
		t.Errorf("other strategy %s would choose %q, want BinPack a", x.OtherStrategy, x.OtherStrategyDecision)
	}
}
