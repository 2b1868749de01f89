package scheduling

import "sort"

// Explanation is a Decision with the detail behind it: every filter's
// verdict on every candidate and the strategy's ranking of those that fit.
// `kubectl hcpfleet explain` shows it; it is computed by Schedule and the
// same filters and ordering, so it is the scheduler's own answer.
type Explanation struct {
	Request  Request
	Strategy Strategy
	Decision Decision
	// Candidates are in name order.
	Candidates []Evaluation
	// OtherStrategy is what the other strategy would choose ("" for none).
	OtherStrategy         Strategy
	OtherStrategyDecision string
	// Overtake is, when another candidate fits, how many more hosted
	// clusters the chosen one would need before the runner-up (RunnerUp)
	// were chosen instead; 0 when it would never be (or none is left).
	RunnerUp string
	Overtake int32
}

// Evaluation is one candidate's verdicts.
type Evaluation struct {
	Candidate Candidate
	// Filters holds every filter's verdict, in the order the scheduler runs
	// them (it stops at the first failure; these do not).
	Filters []FilterResult
	// Rank is the candidate's place in the strategy's order (1 is chosen);
	// 0 when a filter rejects it.
	Rank int
}

// FilterResult is one filter's verdict on one candidate.
type FilterResult struct {
	// Filter is the filter, named by what it rejects (RejectFull, ...).
	Filter string
	Passed bool
	// Detail is why it failed, or what it saw when it passed ("3/80").
	Detail string
}

// Failed returns the failing filters' results.
func (e Evaluation) Failed() []FilterResult {
	var out []FilterResult
	for _, f := range e.Filters {
		if !f.Passed {
			out = append(out, f)
		}
	}
	return out
}

// FilterNames are the filters in the order the scheduler runs them.
func FilterNames() []string {
	names := make([]string, len(filters))
	for i, f := range filters {
		names[i] = f.category
	}
	return names
}

// Explain runs Schedule on req and candidates and explains the outcome.
func Explain(req Request, candidates []Candidate, strategy Strategy) Explanation {
	x := Explanation{Request: req, Strategy: strategy, Decision: Schedule(req, candidates, strategy)}
	rank := make(map[string]int, len(x.Decision.Ranked))
	for i, name := range x.Decision.Ranked {
		rank[name] = i + 1
	}
	byName := make(map[string]Candidate, len(candidates))
	for _, c := range candidates {
		byName[c.Name] = c
		e := Evaluation{Candidate: c, Rank: rank[c.Name]}
		for _, f := range filters {
			detail, ok := f.check(req, c)
			e.Filters = append(e.Filters, FilterResult{Filter: f.category, Passed: ok, Detail: detail})
		}
		x.Candidates = append(x.Candidates, e)
	}
	sort.Slice(x.Candidates, func(i, j int) bool { return x.Candidates[i].Candidate.Name < x.Candidates[j].Candidate.Name })

	x.OtherStrategy = StrategyBinPack
	if strategy == StrategyBinPack {
		x.OtherStrategy = StrategySpread
	}
	x.OtherStrategyDecision = Schedule(req, candidates, x.OtherStrategy).Cluster

	if len(x.Decision.Ranked) > 1 {
		chosen, next := byName[x.Decision.Ranked[0]], byName[x.Decision.Ranked[1]]
		x.RunnerUp = next.Name
		// The smallest extra load on the chosen cluster that lets the
		// runner-up win, by the scheduler's own ordering (while the chosen
		// one still fits).
		for extra := int32(1); chosen.Load+extra < chosen.Capacity; extra++ {
			more := chosen
			more.Load += extra
			if better(next, more, strategy) {
				x.Overtake = extra
				break
			}
		}
	}
	return x
}
