package releaserollout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/golden"
)

// liveRollout is a ReleaseRollout as the controller keeps it: its status is
// what the plans recorded.
type liveRollout struct {
	rr      v1alpha1.ReleaseRollout
	version string
	// recomputed plays the controller before completion was recorded: no
	// status.completionTime, RolloutCompleted recomputed at every pass.
	recomputed bool
}

func newLiveRollout(name, image string, created time.Time, recomputed bool) *liveRollout {
	s := spec(4, intstr.FromInt32(2))
	s.Release.Image = image
	s.HostedClusterSelector = metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	s.CanarySelector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
	return &liveRollout{version: versions[image], recomputed: recomputed, rr: v1alpha1.ReleaseRollout{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(created)}, Spec: s}}
}

// plan plans l among all (claims included) and records the plan in l's
// status as applyStatus does.
func (l *liveRollout) plan(w *world, all []*liveRollout) Plan {
	var others []v1alpha1.ReleaseRollout
	for _, o := range all {
		others = append(others, o.rr)
	}
	hcs := append([]HostedCluster(nil), w.hcs...)
	for i := range hcs {
		hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: hcs[i].Name, Labels: map[string]string{"env": "prod"}}}
		hcs[i].ClaimedBy, hcs[i].ClaimedWhy = claimant(&l.rr, others, hcd)
	}
	st := &l.rr.Status
	in := Input{Spec: l.rr.Spec, Version: l.version, Now: w.now, HostedClusters: hcs, Wave: st.Wave}
	if st.WaveStartTime != nil {
		in.WaveStart = st.WaveStartTime.Time
	}
	if !l.recomputed {
		in.CompletedAt = completionTime(&l.rr)
	}
	p := Compute(in)
	if p.Frozen {
		return p
	}
	st.Wave, st.WaveStartTime = p.Wave, &metav1.Time{Time: p.WaveStart}
	if !p.CompletedAt.IsZero() && !l.recomputed {
		st.CompletionTime = &metav1.Time{Time: p.CompletedAt}
	}
	p.Completed.LastTransitionTime = metav1.NewTime(w.now)
	meta.SetStatusCondition(&st.Conditions, p.Completed)
	return p
}

// twoRollouts rolls to-4.18.9 over a, b, c, d (a the canary) to its end,
// then creates to-4.18.10 for the same hosted clusters and plans both at
// every step, as the controller does (a hosted cluster's change enqueues
// every rollout of the namespace). It returns the step log and whether a
// hosted cluster moved to 4.18.10 was ever moved back.
func twoRollouts(t *testing.T, recomputed bool) (log string, movedBack []string, second Plan) {
	t.Helper()
	w := newWorld("a", "b", "c", "d")
	w.get("a").Canary = true
	first := newLiveRollout("to-4.18.9", newImage, w.now, recomputed)
	all := []*liveRollout{first}
	var b strings.Builder
	step := 0
	for ; step < 40; step++ {
		p := first.plan(w, all)
		fmt.Fprintf(&b, "%s ", first.rr.Name)
		b.WriteString(logPlan(step, p))
		w.apply(p, step)
		if p.Completed.Status == metav1.ConditionTrue {
			break
		}
		w.advance(step, 30*time.Second)
	}
	w.advance(step, 30*time.Second)
	next := newLiveRollout("to-4.18.10", nextImage, w.now, recomputed)
	all = append(all, next)
	moved := map[string]bool{}
	// Recomputed, it goes round in circles: a few rounds show it.
	limit := step + 40
	if recomputed {
		limit = step + 14
	}
	for step++; step < limit; step++ {
		for _, l := range all {
			p := l.plan(w, all)
			fmt.Fprintf(&b, "%s ", l.rr.Name)
			b.WriteString(logPlan(step, p))
			for _, m := range p.Moves {
				if m.ControlPlane && m.Image != nextImage && moved[m.Name] {
					movedBack = append(movedBack, fmt.Sprintf("step %d: %s moved %s back to %s", step, l.rr.Name, m.Name, m.Image))
				}
				if m.ControlPlane && m.Image == nextImage {
					moved[m.Name] = true
				}
			}
			w.apply(p, step)
			if l == next {
				second = p
			}
		}
		if second.Completed.Status == metav1.ConditionTrue {
			break
		}
		w.advance(step, 30*time.Second)
	}
	return b.String(), movedBack, second
}

// logPlan is log, or "frozen" for a completed rollout's pass.
func logPlan(step int, p Plan) string {
	if p.Frozen {
		return fmt.Sprintf("step %d: frozen (completed)\n", step)
	}
	return log(step, p)
}

// A second rollout created right after the first completed, for the same
// hosted clusters. Recomputing completion from live state (as the
// controller did) reproduces the live test's failure: the second
// rollout's first move makes the first look not complete, so the first
// claims the hosted clusters again (the second shows
// ClaimedByOtherRollout) and moves the moved canary back, over and over.
// With completion recorded the first is frozen and the second rolls to
// its end in its own waves.
func TestPlanSecondRolloutAfterCompletion(t *testing.T) {
	got, back, _ := twoRollouts(t, true)
	if len(back) == 0 || !strings.Contains(got, ReasonClaimed) {
		t.Errorf("recomputed completion: want the first rollout to claim again and move back, got moves back %v", back)
	}
	golden.Compare(t, "second-rollout-recomputed", got)

	got, back, last := twoRollouts(t, false)
	if len(back) > 0 {
		t.Errorf("recorded completion: %v", back)
	}
	if strings.Contains(got, ReasonClaimed) {
		t.Errorf("recorded completion: the completed rollout still claims:\n%s", got)
	}
	if last.Completed.Status != metav1.ConditionTrue || last.Counts()[v1alpha1.RolloutStateDone] != 4 {
		t.Errorf("second rollout: %s, want completed with 4 done", last.Progressing.Message)
	}
	golden.Compare(t, "second-rollout", got)
}

// A completed rollout is Frozen whatever happens to its hosted clusters;
// a completed latestZStream rollout restarts only for a newer release of a
// hosted cluster at rest.
func TestPlanCompletedIsSticky(t *testing.T) {
	w := newWorld("a", "b")
	s := spec(1, intstr.FromInt32(1))
	done := w.now.Add(-time.Hour)
	// b moved on by someone else: a fresh pass would count it pending.
	w.get("b").Release = nextImage
	if p := Compute(Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: w.hcs, CompletedAt: done}); !p.Frozen || len(p.Moves) > 0 {
		t.Errorf("completed rollout: frozen %v, moves %v", p.Frozen, p.Moves)
	}
	if p := Compute(Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: w.hcs}); len(p.Moves) == 0 {
		t.Errorf("the same rollout not completed: no move, so the case proves nothing")
	}

	z := spec(1, intstr.FromInt32(1))
	z.Release = v1alpha1.RolloutRelease{LatestZStream: true}
	z.SoakSeconds = 3600
	published := []v1alpha1.ReleaseStatus{{Version: "4.18.5", Image: oldImage}}
	in := Input{Spec: z, Published: published, Now: w.now, HostedClusters: w.hcs, CompletedAt: done, Wave: 1, WaveStart: done}
	if p := Compute(in); !p.Frozen {
		t.Errorf("latestZStream, nothing newer: %+v, want frozen", p.Moves)
	}
	// 4.18.9 published: a (at rest) restarts it at once, soak or not; b,
	// moving elsewhere, alone would not.
	in.Published = append(published, v1alpha1.ReleaseStatus{Version: "4.18.9", Image: newImage})
	p := Compute(in)
	if !p.Restarted || len(p.Moves) != 1 || p.Moves[0].Name != "a" || !p.CompletedAt.IsZero() {
		t.Errorf("latestZStream, 4.18.9 published: restarted %v, moves %v, completed %v; want a moved", p.Restarted, p.Moves, p.CompletedAt)
	}
	in.HostedClusters = []HostedCluster{*w.get("b")}
	if p := Compute(in); !p.Frozen {
		t.Errorf("latestZStream, only b moving elsewhere: moves %v, want frozen", p.Moves)
	}
}

// The soak counts from when the controller saw the wave before finish,
// not from completion times that come back late, change, or are missing.
func TestPlanSoakFromRecordedStart(t *testing.T) {
	w := newWorld("a", "b", "c")
	s := spec(1, intstr.FromInt32(1))
	s.SoakSeconds = 120
	s.NodePools.Policy = v1alpha1.NodePoolUpgradeNone
	a := w.get("a")
	a.Release = newImage
	// Done, the completion time not back yet.
	a.Latest = &v1alpha1.VersionHistoryEntry{State: v1alpha1.VersionUpdateCompleted, Image: newImage, Version: "4.18.9"}
	in := Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: w.hcs}
	p := Compute(in)
	if len(p.Moves) > 0 || p.Wave != 1 || !p.WaveStart.Equal(w.now) || p.Requeue != 2*time.Minute {
		t.Fatalf("wave 0 just finished: moves %v, wave %d from %v, requeue %s; want none, 1 from now, 2m", p.Moves, p.Wave, p.WaveStart, p.Requeue)
	}
	in.Wave, in.WaveStart = p.Wave, p.WaveStart
	// The history changes: a completion time an hour ago.
	hourAgo := metav1.NewTime(w.now.Add(-time.Hour))
	a.Latest.CompletionTime = &hourAgo
	in.Now = w.now.Add(time.Minute)
	if p = Compute(in); len(p.Moves) > 0 || p.Requeue != time.Minute {
		t.Errorf("a minute into the soak, history changed: moves %v, requeue %s; want none, 1m", p.Moves, p.Requeue)
	}
	// b, of wave 1, not ready: its wave is Blocked, so wave 2 is current
	// and soaks from now (no Done hosted cluster to take a time from).
	w.get("b").Ready = false
	if p = Compute(in); len(p.Moves) > 0 || p.Wave != 2 || !p.WaveStart.Equal(in.Now) {
		t.Errorf("wave 1 all blocked: moves %v, wave %d from %v; want none, 2 from %v", p.Moves, p.Wave, p.WaveStart, in.Now)
	}
	in.Wave, in.WaveStart = p.Wave, p.WaveStart
	in.Now = in.Now.Add(2 * time.Minute)
	if p = Compute(in); len(p.Moves) != 1 || p.Moves[0].Name != "c" {
		t.Errorf("after the soak: moves %v, want c", p.Moves)
	}
	// A start in the middle of a second is kept rounded up.
	in.WaveStart, in.Now = time.Time{}, w.now.Add(1500*time.Millisecond)
	if p = Compute(in); !p.WaveStart.Equal(w.now.Add(2 * time.Second)) {
		t.Errorf("recorded start %v, want rounded up to %v", p.WaveStart, w.now.Add(2*time.Second))
	}
}

// A hosted cluster not ready does not hold the waves, but keeps the
// rollout from completing for good: not ready is often for a moment.
func TestPlanNotReadyKeepsItOpen(t *testing.T) {
	w := newWorld("a", "b")
	s := spec(1, intstr.FromInt32(1))
	s.NodePools.Policy = v1alpha1.NodePoolUpgradeNone
	a := w.get("a")
	a.Release, a.Current = newImage, "4.18.9"
	a.Latest = &v1alpha1.VersionHistoryEntry{State: v1alpha1.VersionUpdateCompleted, Image: newImage, Version: "4.18.9"}
	w.get("b").Ready = false
	p := Compute(Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: w.hcs})
	if p.Completed.Status == metav1.ConditionTrue || !p.CompletedAt.IsZero() || !strings.Contains(p.Progressing.Message, "waits for b to be ready") {
		t.Errorf("b not ready: completed %s at %v, %q; want not completed, waiting for b", p.Completed.Status, p.CompletedAt, p.Progressing.Message)
	}
	w.get("b").Ready = true
	if p = Compute(Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: w.hcs}); len(p.Moves) != 1 || p.Moves[0].Name != "b" {
		t.Errorf("b ready: moves %v, want b", p.Moves)
	}
}
