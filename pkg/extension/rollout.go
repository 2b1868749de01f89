package extension

import (
	"sort"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// Target is one selected hosted cluster as the hub's rollout sees it.
type Target struct {
	// Name is the HostedClusterDeployment's name.
	Name string
	// Ready: the hosted cluster is available and not being deleted, so an
	// extension can be delivered to it.
	Ready bool
	// Delivered is the revision its ManifestWork carries (0: none).
	Delivered int64
	// Observed is the revision the agent reports on, and State its state.
	Observed int64
	State    v1alpha1.ExtensionState
}

// availableAt: the agent reports revision available.
func (t Target) availableAt(revision int64) bool {
	return t.Delivered == revision && t.Observed == revision && t.State == v1alpha1.ExtensionStateAvailable
}

func (t Target) failedAt(revision int64) bool {
	return t.Delivered == revision && t.Observed == revision && t.State == v1alpha1.ExtensionStateFailed
}

// MaxUnavailable resolves a rolling upgrade's maxUnavailable for selected
// hosted clusters: a percentage rounds down, and at least one may be
// updated at a time.
func MaxUnavailable(r *v1alpha1.RollingUpgradeStrategy, selected int) int {
	if r == nil {
		return selected
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&r.MaxUnavailable, selected, false)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// Rollout decides which targets get revision now; the others keep what
// they have. Instant: every ready target. RollingUpgrade, counted as a
// Deployment counts unavailable pods: a target is unavailable while the
// revision it was delivered (current or older) is not reported available;
// targets already at revision keep it; ready targets unavailable at an older
// revision get revision at once (moving them takes nothing more away, and a
// fix must reach the hosted clusters the broken revision failed on); more
// ready targets get it, in name order, while fewer than maxUnavailable are
// unavailable; none while one failed at revision (the rollout stops, and a
// fix of the extension is a new revision).
//
// A paused rollout (strategy.paused, as PKO's paused ObjectDeployment)
// keeps revision where it was delivered and delivers nothing anywhere else:
// neither the current revision to more targets nor any to new ones.
func Rollout(strategy v1alpha1.ExtensionRolloutStrategy, revision int64, targets []Target) map[string]bool {
	deliver := map[string]bool{}
	if strategy.Paused {
		for _, t := range targets {
			if t.Delivered == revision {
				deliver[t.Name] = true
			}
		}
		return deliver
	}
	if strategy.Type != v1alpha1.ExtensionStrategyRollingUpgrade {
		for _, t := range targets {
			if t.Ready || t.Delivered == revision {
				deliver[t.Name] = true
			}
		}
		return deliver
	}
	budget := MaxUnavailable(strategy.RollingUpgrade, len(targets))
	stopped := false
	var healthy []Target
	for _, t := range targets {
		unavailable := t.Delivered != 0 && !t.availableAt(t.Delivered)
		if unavailable {
			budget--
		}
		switch {
		case t.Delivered == revision:
			deliver[t.Name] = true
			stopped = stopped || t.failedAt(revision)
		case t.Ready && unavailable:
			deliver[t.Name] = true
		case t.Ready:
			healthy = append(healthy, t)
		}
	}
	if stopped {
		// Keep what has revision; hosted clusters still on an older one
		// keep theirs.
		for _, t := range targets {
			if t.Delivered != revision {
				delete(deliver, t.Name)
			}
		}
		return deliver
	}
	sort.Slice(healthy, func(i, j int) bool { return healthy[i].Name < healthy[j].Name })
	for _, t := range healthy {
		if budget <= 0 {
			break
		}
		deliver[t.Name] = true
		budget--
	}
	return deliver
}
