package releaserollout

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// Reasons of a hosted cluster's state in a rollout's status.hostedClusters.
const (
	// ReasonWaiting: its wave has not started, or maxUnavailable is used up.
	ReasonWaiting = "WaitingForWave"
	// ReasonControlPlaneUpgrading: its control plane is moving to the release.
	ReasonControlPlaneUpgrading = "ControlPlaneUpgrading"
	// ReasonNodePoolsUpgrading: its control plane is at the release, its node
	// pools are moving.
	ReasonNodePoolsUpgrading = "NodePoolsUpgrading"
	// ReasonUpgraded: control plane and following node pools are healthy at
	// the release.
	ReasonUpgraded = "Upgraded"
	// ReasonDegraded: moved, and the hosted cluster reports Degraded.
	ReasonDegraded = "UpgradeDegraded"
	// ReasonNotReady: not moved because it is not scheduled, delivered and
	// available at its current release; it is moved once it is.
	ReasonNotReady = "HostedClusterNotReady"
	// ReasonDowngrade: the release is older than the one it runs.
	ReasonDowngrade = "Downgrade"
	// ReasonMinorSkip: the release skips a minor, which HyperShift refuses.
	ReasonMinorSkip = "MinorSkip"
	// ReasonClaimed: an older ReleaseRollout, still at work, selects it too.
	ReasonClaimed = "ClaimedByOtherRollout"
	// ReasonRisksNotAccepted: the release is only a conditional update for
	// it, not recommended, and the rollout does not accept every risk of it
	// (spec.acceptRisks).
	ReasonRisksNotAccepted = "UpdateRisksNotAccepted"
	// ReasonAtLatest: with spec.release.latestZStream, it runs the newest
	// release of its minor that is published (and reported available).
	ReasonAtLatest = "AtLatestZStream"
	// ReasonExtensionsNotAvailable: its control plane and node pools are at
	// the release, and a HostedClusterExtension on it is not Available: it
	// holds the wave until it is.
	ReasonExtensionsNotAvailable = "ExtensionsNotAvailable"
	// ReasonMoveFailed: the hub could not write the release (the message
	// has the API server's answer); it tries again.
	ReasonMoveFailed = "MoveFailed"
	// ReasonNoWindow: spec.maintenanceWindows lists windows and none of
	// them selects it, so it never moves.
	ReasonNoWindow = "NoMaintenanceWindow"
)

// HostedCluster is one selected HostedClusterDeployment as the planner
// sees it.
type HostedCluster struct {
	Name string
	// Canary: the rollout's canarySelector selects it.
	Canary bool
	// ClaimedBy names a rollout that selects it too and goes first ("" none),
	// ClaimedWhy why ("older", or a fleet admin's).
	ClaimedBy, ClaimedWhy string
	// Release is spec.hostedCluster.spec.release.image.
	Release string
	// NodePools are spec.nodePools, with their status.
	NodePools []NodePool
	// Current is status.version.current, the version last completely
	// rolled out ("" none).
	Current string
	// Observed: status.observedGeneration is metadata.generation, so the
	// conditions below speak for the spec above.
	Observed bool
	// Ready: scheduled, delivered, Available and not Degraded.
	Ready bool
	// Progressing, Degraded and NodePoolsReady are those conditions' status.
	Progressing, Degraded, NodePoolsReady bool
	// Blocked is the UpgradeBlocked condition when True (nil otherwise).
	Blocked *metav1.Condition
	// Latest is the newest entry of status.version.history (nil: none).
	Latest *v1alpha1.VersionHistoryEntry
	// Extensions are the HostedClusterExtensions on it that are not
	// Available, as "name: state" (none: all are, or there are none).
	Extensions []string
	// Available and Conditional are status.version.availableUpdates and
	// conditionalUpdates, as the hosted cluster reports them.
	Available   []v1alpha1.ReleaseStatus
	Conditional []v1alpha1.ConditionalUpdate
	// Windows are the indexes of the entries of spec.maintenanceWindows
	// that select it.
	Windows []int
}

// NodePool is one of spec.nodePools.
type NodePool struct {
	Name    string
	Release string
	// Version is the version the NodePool reports (status.nodePools[].version,
	// "" not reported).
	Version string
}

// Input is everything Plan decides on.
type Input struct {
	Spec v1alpha1.ReleaseRolloutSpec
	// Version is the release's OpenShift version ("" unknown: no
	// ClusterImageSet names it).
	Version string
	// Published are the releases ClusterImageSets publish that the
	// namespace's policy allows, for spec.release.latestZStream.
	Published []v1alpha1.ReleaseStatus
	// Problem makes the rollout invalid ("" none).
	Problem string
	Now     time.Time
	// CompletedAt is status.completionTime: when the rollout was first
	// seen complete (zero: it is not).
	CompletedAt time.Time
	// Wave and WaveStart are status.wave and status.waveStartTime: the
	// wave last recorded and when it became the current one (zero: never
	// recorded).
	Wave      int32
	WaveStart time.Time
	// HostedClusters are the selected ones, in any order.
	HostedClusters []HostedCluster
}

// Move is one release edit to make now.
type Move struct {
	Name string
	// Image is the release it moves to.
	Image string
	// ControlPlane moves spec.hostedCluster.spec.release; NodePools names
	// the node pools whose release moves.
	ControlPlane bool
	NodePools    []string
}

// Plan is what the rollout does now and how it reports.
type Plan struct {
	HostedClusters []v1alpha1.RolloutHostedClusterStatus
	Moves          []Move
	// Wave is the first wave not finished; Waves how many there are.
	Wave, Waves int32
	// Progressing and Completed are the rollout's conditions (no time set).
	Progressing, Completed metav1.Condition
	// Requeue is when to look again although nothing changed (a soak
	// ends); 0 never.
	Requeue time.Duration
	// WaveStart is when Wave became the current wave, to record.
	WaveStart time.Time
	// CompletedAt is when the rollout completed, to record (zero: it did
	// not).
	CompletedAt time.Time
	// Frozen: the rollout completed before. It has nothing to do and
	// nothing to write: its status stays the record of what it did.
	Frozen bool
	// Restarted: a completed latestZStream rollout goes again, since a
	// newer release is published for a hosted cluster at rest.
	Restarted bool
}

// moveFailed records that the move of name could not be written: it is
// still where it was, and the message says why.
func (p *Plan) moveFailed(name string, err error) {
	for i := range p.HostedClusters {
		h := &p.HostedClusters[i]
		if h.Name != name {
			continue
		}
		if h.Reason == ReasonControlPlaneUpgrading {
			h.State = v1alpha1.RolloutStatePending
		}
		h.Reason, h.Message = ReasonMoveFailed, err.Error()
	}
}

// Counts counts the plan's hosted clusters by state.
func (p *Plan) Counts() map[v1alpha1.RolloutState]int32 {
	out := map[v1alpha1.RolloutState]int32{}
	for _, h := range p.HostedClusters {
		out[h.State]++
	}
	return out
}

// MaxUnavailable resolves maxUnavailable over selected hosted clusters: a
// percentage rounds down, and at least one moves at a time.
func MaxUnavailable(v intstr.IntOrString, selected int) int {
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, selected, false)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// followed are the node pools of h that follow the control plane.
func followed(spec v1alpha1.RolloutNodePools, h *HostedCluster) []NodePool {
	switch spec.Policy {
	case v1alpha1.NodePoolUpgradeNone:
		return nil
	case v1alpha1.NodePoolUpgradeNamed:
		var out []NodePool
		for _, p := range h.NodePools {
			for _, n := range spec.Names {
				if p.Name == n {
					out = append(out, p)
				}
			}
		}
		return out
	}
	return h.NodePools
}

// member is a hosted cluster with what the planner derived for it.
type member struct {
	*HostedCluster
	wave      int32
	state     v1alpha1.RolloutState
	reason    string
	message   string
	poolMoves []string
	// target and version are the release it goes to; atLatest: with
	// latestZStream, no newer release is there for it.
	target, version string
	atLatest        bool
}

// classify sets m's state from what is observed; pending hosted clusters
// are not moved here.
func classify(in *Input, m *member) {
	m.target, m.version, m.atLatest = targetOf(in, m.HostedCluster)
	target := m.target
	h := m.HostedCluster
	var poolsBehind, poolsNotAt []string
	for _, p := range followed(in.Spec.NodePools, h) {
		if p.Release != target {
			poolsBehind = append(poolsBehind, p.Name)
		}
		// A pool that reports its version must report the release's: ready
		// at an older version is not done (the feedback of a pool's
		// readiness and of its version can arrive apart).
		if p.Version != "" && m.version != "" && p.Version != m.version {
			poolsNotAt = append(poolsNotAt, p.Name)
		}
	}
	cpMoved := h.Release == target
	latestAtTarget := h.Latest != nil && h.Latest.Image == target
	cpDone := cpMoved && h.Observed && latestAtTarget && h.Latest.State == v1alpha1.VersionUpdateCompleted &&
		h.Ready && !h.Progressing
	set := func(s v1alpha1.RolloutState, reason, format string, args ...any) {
		m.state, m.reason, m.message = s, reason, fmt.Sprintf(format, args...)
	}
	switch {
	case h.ClaimedBy != "":
		// Pending, not Blocked: this rollout waits for the other one to
		// finish with it rather than count it as skipped.
		set(v1alpha1.RolloutStatePending, ReasonClaimed, "ReleaseRollout %s, %s, selects it too; this one waits until it is done", h.ClaimedBy, orDefault(h.ClaimedWhy, "older"))
	case h.Blocked != nil:
		// The upgrade gate holds it (before or after the move): skipped,
		// never forced.
		set(v1alpha1.RolloutStateBlocked, h.Blocked.Reason, "held by the upgrade gate (UpgradeBlocked): %s", h.Blocked.Message)
	case cpMoved && h.Observed && h.Degraded:
		// Degraded covers what HyperShift refuses of the release too
		// (ValidReleaseImage False): the delivery folds it in.
		set(v1alpha1.RolloutStateFailed, ReasonDegraded, "the hosted cluster is Degraded after the move to %s", target)
	case cpDone && len(poolsBehind) == 0 && len(poolsNotAt) == 0 && (len(followed(in.Spec.NodePools, h)) == 0 || h.NodePoolsReady) &&
		len(h.Extensions) > 0:
		// The extensions' health gate: the wave waits for them.
		set(v1alpha1.RolloutStateUpgrading, ReasonExtensionsNotAvailable, "at %s; extensions not Available: %s", target, strings.Join(h.Extensions, ", "))
	case cpDone && len(poolsBehind) == 0 && len(poolsNotAt) == 0 && (len(followed(in.Spec.NodePools, h)) == 0 || h.NodePoolsReady):
		if m.atLatest {
			set(v1alpha1.RolloutStateDone, ReasonAtLatest, "at %s, the newest release of its minor published", orDefault(m.version, target))
		} else {
			set(v1alpha1.RolloutStateDone, ReasonUpgraded, "at %s", target)
		}
	case cpDone:
		m.poolMoves = poolsBehind
		set(v1alpha1.RolloutStateUpgrading, ReasonNodePoolsUpgrading, "control plane at %s; node pools moving", target)
	case cpMoved:
		set(v1alpha1.RolloutStateUpgrading, ReasonControlPlaneUpgrading, "control plane moving to %s", target)
	default:
		pendingReason(in, m)
	}
}

// pendingReason classifies a hosted cluster not moved yet: one that cannot
// go to the release is Blocked, one that may later is Pending.
func pendingReason(in *Input, m *member) {
	h := m.HostedCluster
	m.state, m.reason, m.message = v1alpha1.RolloutStatePending, ReasonWaiting, "waiting for its wave"
	cur, errC := semver.ParseTolerant(h.Current)
	want, errW := semver.ParseTolerant(m.version)
	if errC == nil && errW == nil {
		switch {
		case want.LT(cur):
			m.state, m.reason = v1alpha1.RolloutStateBlocked, ReasonDowngrade
			m.message = fmt.Sprintf("it runs %s; %s would be a downgrade", h.Current, m.version)
			return
		case want.Major != cur.Major || want.Minor > cur.Minor+1:
			m.state, m.reason = v1alpha1.RolloutStateBlocked, ReasonMinorSkip
			m.message = fmt.Sprintf("it runs %s; HyperShift does not upgrade across more than one minor to %s", h.Current, m.version)
			return
		}
	}
	if risks := unaccepted(in, m); len(risks) > 0 {
		m.state, m.reason = v1alpha1.RolloutStateBlocked, ReasonRisksNotAccepted
		m.message = fmt.Sprintf("%s is only a conditional update for it, not recommended (%s); risks not accepted in spec.acceptRisks: %s",
			orDefault(m.version, m.target), recommendedReason(m), strings.Join(risks, ", "))
		return
	}
	if in.Spec.MaintenanceWindow == nil && len(in.Spec.MaintenanceWindows) > 0 && len(h.Windows) == 0 {
		m.state, m.reason = v1alpha1.RolloutStateBlocked, ReasonNoWindow
		m.message = "no entry of spec.maintenanceWindows selects it, so there is no time it may move in"
		return
	}
	if !h.Ready || !h.Observed {
		m.state, m.reason = v1alpha1.RolloutStateBlocked, ReasonNotReady
		m.message = "not moved while it is not scheduled, delivered and available at its current release"
	}
}

// waves assigns waves: the canaries (in name order) are wave 0, the others
// follow in name order, waveSize at a time. It returns the number of waves.
func waves(spec v1alpha1.ReleaseRolloutSpec, members []*member) int32 {
	sort.SliceStable(members, func(i, j int) bool {
		if members[i].Canary != members[j].Canary {
			return members[i].Canary
		}
		return members[i].Name < members[j].Name
	})
	size := int(spec.WaveSize)
	if size < 1 {
		size = 1
	}
	var wave, inWave int32 = 0, 0
	canaries := len(members) > 0 && members[0].Canary
	for i, m := range members {
		if i > 0 && canaries && members[i-1].Canary && !m.Canary {
			wave, inWave = wave+1, 0
		} else if inWave == int32(size) && (!canaries || !m.Canary) {
			wave, inWave = wave+1, 0
		}
		m.wave = wave
		inWave++
	}
	if len(members) == 0 {
		return 0
	}
	return wave + 1
}

// compute plans a rollout that has not completed.
//
// The current wave is the first one with a hosted cluster neither Done nor
// Blocked. Its pending hosted clusters (and pending ones of earlier waves
// that became ready) have their control plane moved, in wave and name
// order, while fewer than maxUnavailable are Upgrading; the node pools of a
// hosted cluster whose control plane is done move right after, without
// more budget. The next wave starts once the current one is finished and,
// with soakSeconds, once it has been the current wave that long (Input's
// WaveStart). A Failed hosted cluster stops the rollout: no
// edit at all, anywhere, from then on (what was moved stays). Paused and
// abort make no edit either.
func compute(in Input) Plan {
	members := make([]*member, len(in.HostedClusters))
	for i := range in.HostedClusters {
		members[i] = &member{HostedCluster: &in.HostedClusters[i]}
	}
	var p Plan
	p.Waves = waves(in.Spec, members)
	failed := []string{}
	upgrading := 0
	for _, m := range members {
		classify(&in, m)
		switch m.state {
		case v1alpha1.RolloutStateFailed:
			failed = append(failed, m.Name)
		case v1alpha1.RolloutStateUpgrading:
			upgrading++
		}
	}
	// The first unfinished wave.
	p.Wave = p.Waves
	for _, m := range members {
		if m.state != v1alpha1.RolloutStateDone && m.state != v1alpha1.RolloutStateBlocked {
			p.Wave = m.wave
			break
		}
	}
	// The soak counts from when the wave became the current one, as the
	// controller recorded it, not from the control planes' completion
	// times: those come back apart from their state, belong to whichever
	// hosted clusters the wave holds now (a hosted cluster selected or
	// unselected shifts the waves), and are missing for a wave whose hosted
	// clusters were all Blocked; each made the next wave go early. A wave
	// reached again after a later one was recorded keeps that record.
	p.WaveStart = in.WaveStart
	if p.Wave > in.Wave || in.WaveStart.IsZero() {
		p.WaveStart = ceilSecond(in.Now)
	}
	soakUntil := p.WaveStart.Add(time.Duration(in.Spec.SoakSeconds) * time.Second)
	soaking := in.Spec.SoakSeconds > 0 && p.Wave > 0 && p.Wave < p.Waves && in.Now.Before(soakUntil)

	ws := windowsAt(&in)
	heldByWindow, firstOpening := 0, time.Time{}
	stopped := in.Problem != "" || in.Spec.Abort || in.Spec.Paused || len(failed) > 0
	if !stopped {
		budget := MaxUnavailable(in.Spec.MaxUnavailable, len(members)) - upgrading
		for _, m := range members {
			held, opens := ws.held(m.HostedCluster)
			switch {
			case len(m.poolMoves) > 0:
				p.Moves = append(p.Moves, Move{Name: m.Name, Image: m.target, NodePools: m.poolMoves})
			case m.state != v1alpha1.RolloutStatePending || m.ClaimedBy != "" || m.wave > p.Wave || (m.wave == p.Wave && soaking):
			case held:
				// Outside its maintenance window: those moving finish (the
				// node pools above), no other one moves.
				heldByWindow++
				if firstOpening.IsZero() || opens.Before(firstOpening) {
					firstOpening = opens
				}
				m.message = "waiting for the maintenance window"
				if !ws.shared {
					m.message = "waiting for its maintenance window, which opens at " + opens.UTC().Format(time.RFC3339)
				}
			case budget <= 0:
				m.message = fmt.Sprintf("waiting: %d hosted clusters are upgrading (maxUnavailable)", upgrading)
			default:
				budget--
				upgrading++
				p.Moves = append(p.Moves, Move{Name: m.Name, Image: m.target, ControlPlane: true})
				m.state, m.reason, m.message = v1alpha1.RolloutStateUpgrading, ReasonControlPlaneUpgrading,
					"control plane moving to "+m.target
			}
		}
	}
	if soaking {
		p.Requeue = soakUntil.Sub(in.Now)
	}
	if next := ws.next(in.Now); !next.IsZero() && (p.Requeue == 0 || next.Sub(in.Now) < p.Requeue) {
		p.Requeue = next.Sub(in.Now)
	}
	for _, m := range members {
		p.HostedClusters = append(p.HostedClusters, v1alpha1.RolloutHostedClusterStatus{
			Name: m.Name, Wave: m.wave, State: m.state, Reason: m.reason, Message: m.message})
	}
	sort.Slice(p.HostedClusters, func(i, j int) bool { return p.HostedClusters[i].Name < p.HostedClusters[j].Name })
	soak := ""
	if soaking {
		soak = "soaks until " + soakUntil.UTC().Format(time.RFC3339)
	}
	if note := windowNote(ws, heldByWindow, firstOpening); note != "" {
		soak = strings.TrimSpace(soak + " " + note)
	}
	p.Progressing, p.Completed = conditions(&in, &p, failed, soak)
	if p.Completed.Status == metav1.ConditionTrue {
		p.CompletedAt = ceilSecond(in.Now)
	}
	return p
}

// ceilSecond is t rounded up to the second a metav1.Time keeps, so that a
// recorded start never makes a soak shorter, and reading it back changes
// nothing.
func ceilSecond(t time.Time) time.Time {
	if s := t.Truncate(time.Second); !s.Equal(t) {
		return s.Add(time.Second)
	}
	return t
}

// conditions are the rollout's RolloutProgressing and RolloutCompleted.
func conditions(in *Input, p *Plan, failed []string, soak string) (progressing, completed metav1.Condition) {
	c := p.Counts()
	counts := fmt.Sprintf("%d done, %d upgrading, %d pending, %d blocked, %d failed of %d",
		c[v1alpha1.RolloutStateDone], c[v1alpha1.RolloutStateUpgrading], c[v1alpha1.RolloutStatePending],
		c[v1alpha1.RolloutStateBlocked], c[v1alpha1.RolloutStateFailed], len(p.HostedClusters))
	// Not ready is the one Blocked reason that passes: the waves go on
	// without such a hosted cluster, but the rollout does not complete
	// while there is one, since completion is for good (Compute) and a
	// hosted cluster is not ready for a moment, say while its status
	// catches up with its spec.
	var notReady []string
	for _, h := range p.HostedClusters {
		if h.State == v1alpha1.RolloutStateBlocked && h.Reason == ReasonNotReady {
			notReady = append(notReady, h.Name)
		}
	}
	settled := c[v1alpha1.RolloutStateDone]+c[v1alpha1.RolloutStateBlocked] == int32(len(p.HostedClusters))
	finished := settled && len(notReady) == 0
	if settled && !finished {
		soak = strings.TrimSpace(soak + " waits for " + strings.Join(notReady, ", ") + " to be ready")
	}
	progressing = metav1.Condition{Type: v1alpha1.ConditionRolloutProgressing, Status: metav1.ConditionFalse}
	switch {
	case in.Problem != "":
		progressing.Reason, progressing.Message = v1alpha1.ReasonRolloutInvalid, in.Problem
	case len(failed) > 0:
		progressing.Reason = v1alpha1.ReasonRolloutWaveFailed
		progressing.Message = fmt.Sprintf("stopped: the upgrade of %s failed; no further hosted cluster is moved (%s)", strings.Join(failed, ", "), counts)
	case in.Spec.Abort:
		progressing.Reason, progressing.Message = v1alpha1.ReasonRolloutAborted, "aborted; hosted clusters already moved keep the release ("+counts+")"
	case finished:
		progressing.Reason, progressing.Message = v1alpha1.ReasonRolloutCompleted, counts
	case in.Spec.Paused:
		progressing.Reason, progressing.Message = v1alpha1.ReasonRolloutPaused, "paused at wave "+fmt.Sprint(p.Wave)+" ("+counts+")"
	default:
		progressing.Status, progressing.Reason = metav1.ConditionTrue, v1alpha1.ReasonRolloutInProgress
		progressing.Message = fmt.Sprintf("wave %d of %d: %s", p.Wave, p.Waves, counts)
		if soak != "" {
			progressing.Message = fmt.Sprintf("wave %d of %d %s: %s", p.Wave, p.Waves, soak, counts)
		}
	}
	completed = metav1.Condition{Type: v1alpha1.ConditionRolloutCompleted, Status: metav1.ConditionFalse,
		Reason: progressing.Reason, Message: progressing.Message}
	if finished && in.Problem == "" {
		completed.Status, completed.Reason, completed.Message = metav1.ConditionTrue, v1alpha1.ReasonRolloutCompleted, counts
	}
	return progressing, completed
}
