package releaserollout

import (
	"github.com/blang/semver/v4"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// targetOf is the release h goes to: the rollout's image, or, with
// spec.release.latestZStream, the newest z-stream of the minor h runs.
// atLatest: with latestZStream, nothing newer is there for it (its own
// release is the target then).
func targetOf(in *Input, h *HostedCluster) (image, version string, atLatest bool) {
	if !in.Spec.Release.LatestZStream {
		return in.Spec.Release.Image, in.Version, false
	}
	cur, err := semver.ParseTolerant(h.Current)
	if err != nil {
		// Its version is not known yet (nothing completed): it stays where
		// it is, and is not ready to move anyway.
		return h.Release, h.Current, false
	}
	newer := func(p v1alpha1.ReleaseStatus) (semver.Version, bool) {
		v, err := semver.ParseTolerant(p.Version)
		return v, err == nil && v.Major == cur.Major && v.Minor == cur.Minor && v.GT(cur)
	}
	// Already moved to a newer z-stream (by this rollout, or by hand): it
	// keeps going there, so a release published meanwhile does not move it
	// twice in one upgrade.
	for _, p := range in.Published {
		if _, ok := newer(p); ok && p.Image == h.Release {
			return p.Image, p.Version, false
		}
	}
	var best *v1alpha1.ReleaseStatus
	var bestV semver.Version
	for i := range in.Published {
		p := &in.Published[i]
		v, ok := newer(*p)
		if !ok || !reported(h, *p) {
			continue
		}
		if best == nil || v.GT(bestV) {
			best, bestV = p, v
		}
	}
	if best == nil {
		return h.Release, h.Current, true
	}
	return best.Image, best.Version, false
}

// reported: h reports no updates at all (nothing is known against p), or
// lists p among its available or conditional updates. A conditional one
// still needs its risks accepted (unaccepted).
func reported(h *HostedCluster, p v1alpha1.ReleaseStatus) bool {
	if len(h.Available) == 0 && len(h.Conditional) == 0 {
		return true
	}
	same := func(u v1alpha1.ReleaseStatus) bool {
		return u.Image == p.Image || u.Version != "" && u.Version == p.Version
	}
	for _, a := range h.Available {
		if same(a) {
			return true
		}
	}
	for _, c := range h.Conditional {
		if same(c.Release) {
			return true
		}
	}
	return false
}
