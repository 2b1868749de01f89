package extension

import (
	"sort"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// PlannedPhase is a phase with its objects decoded.
type PlannedPhase struct {
	Name    string
	Class   v1alpha1.PhaseClass
	Objects []Object
}

// Plan decodes the phases of a release in order. Objects that do not decode
// are reported by Validate; Plan leaves them out.
func Plan(phases []v1alpha1.ExtensionPhase) []PlannedPhase {
	out := make([]PlannedPhase, 0, len(phases))
	for _, p := range phases {
		pp := PlannedPhase{Name: p.Name, Class: p.Class}
		for _, o := range p.Objects {
			if obj, err := Decode(p, o); err == nil {
				pp.Objects = append(pp.Objects, obj)
			}
		}
		out = append(out, pp)
	}
	return out
}

// Refs are the objects of a plan, in apply order.
func Refs(plan []PlannedPhase) []ObjectRef {
	var out []ObjectRef
	for _, p := range plan {
		for _, o := range p.Objects {
			out = append(out, o.Ref)
		}
	}
	return out
}

// Removed are the applied objects not among desired (the objects of the
// current revision, as placed: with the namespace they were applied in), in
// teardown order: applied is in apply order, and teardown reverses it, so
// the objects of a later phase go before those of an earlier one.
func Removed(applied, desired []ObjectRef) []ObjectRef {
	keep := map[string]bool{}
	for _, r := range desired {
		keep[r.Key()] = true
	}
	var gone []ObjectRef
	for _, r := range applied {
		if !keep[r.Key()] {
			gone = append(gone, r)
		}
	}
	return Teardown(gone)
}

// Teardown is the order in which applied objects are deleted: the reverse
// of the order they were applied in.
func Teardown(applied []ObjectRef) []ObjectRef {
	out := make([]ObjectRef, 0, len(applied))
	for i := len(applied) - 1; i >= 0; i-- {
		out = append(out, applied[i])
	}
	return out
}

// TeardownPhases groups a teardown order by phase, keeping the order: each
// group is deleted, and must be gone, before the next one starts.
func TeardownPhases(order []ObjectRef) [][]ObjectRef {
	var out [][]ObjectRef
	for _, r := range order {
		if n := len(out); n > 0 && out[n-1][0].Phase == r.Phase && out[n-1][0].Class == r.Class {
			out[n-1] = append(out[n-1], r)
			continue
		}
		out = append(out, []ObjectRef{r})
	}
	return out
}

// Merge records newly applied objects after those applied before, each
// once, keeping the first position of an object: the apply order the
// teardown reverses.
func Merge(applied []ObjectRef, more ...ObjectRef) []ObjectRef {
	out := append([]ObjectRef(nil), applied...)
	index := map[string]int{}
	for i, r := range out {
		index[r.Key()] = i
	}
	for _, r := range more {
		if i, ok := index[r.Key()]; ok {
			out[i] = r // the newest phase and version of the same object
			continue
		}
		index[r.Key()] = len(out)
		out = append(out, r)
	}
	return out
}

// Without drops refs from applied.
func Without(applied []ObjectRef, refs ...ObjectRef) []ObjectRef {
	drop := map[string]bool{}
	for _, r := range refs {
		drop[r.Key()] = true
	}
	var out []ObjectRef
	for _, r := range applied {
		if !drop[r.Key()] {
			out = append(out, r)
		}
	}
	return out
}

// InPhaseOrder orders applied objects as the current phases are, so that a
// removal reverses the current phase order even after a revision reordered
// the phases: objects by the position of their phase (same name and class)
// among phases, keeping their order within a phase; objects of phases the
// revision no longer has come last, so they are torn down first (they are
// on their way out anyway). Stable, and a no-op on an ordered list.
func InPhaseOrder(applied []ObjectRef, phases []v1alpha1.ExtensionPhase) []ObjectRef {
	position := map[string]int{}
	for i, p := range phases {
		position[string(p.Class)+"|"+p.Name] = i
	}
	rank := func(r ObjectRef) int {
		if i, ok := position[string(r.Class)+"|"+r.Phase]; ok {
			return i
		}
		return len(phases)
	}
	out := append([]ObjectRef(nil), applied...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}
