package releaserollout

import (
	"time"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// Compute plans the rollout: each hosted cluster's state, and which release
// edits to make now.
//
// Completion is sticky, as a Job's: a rollout completed before (its
// recorded completion time) is Frozen, whatever the hosted clusters look
// like now. Recomputing it from live state made a completed rollout claim
// and move hosted clusters again as soon as a newer rollout moved one of
// them (to it, a hosted cluster moving away from its release is pending
// again), and the two then moved the same hosted clusters back and forth.
// Only a latestZStream rollout, a standing one, goes again (Restarted),
// once a newer release is published for a hosted cluster at rest that no
// other rollout claims.
func Compute(in Input) Plan {
	if in.CompletedAt.IsZero() {
		return compute(in)
	}
	if !in.Spec.Release.LatestZStream {
		return Plan{Frozen: true}
	}
	again := in
	again.CompletedAt, again.Wave, again.WaveStart = time.Time{}, 0, time.Time{}
	// The restart is not held by a soak: the wave before it was done long
	// ago.
	again.Spec.SoakSeconds = 0
	p := compute(again)
	for _, m := range p.Moves {
		if h := find(in.HostedClusters, m.Name); m.ControlPlane && h != nil && atRest(h) {
			p.Restarted = true
			return p
		}
	}
	return Plan{Frozen: true}
}

// atRest: h runs the release it asks for, completely, and nothing moves it.
func atRest(h *HostedCluster) bool {
	return h.Latest != nil && h.Latest.Image == h.Release && h.Latest.State == v1alpha1.VersionUpdateCompleted && !h.Progressing
}

func find(hcs []HostedCluster, name string) *HostedCluster {
	for i := range hcs {
		if hcs[i].Name == name {
			return &hcs[i]
		}
	}
	return nil
}
