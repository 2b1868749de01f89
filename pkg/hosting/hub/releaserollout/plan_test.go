package releaserollout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/golden"
)

const (
	oldImage  = "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"
	newImage  = "quay.io/openshift-release-dev/ocp-release:4.18.9-multi"
	nextImage = "quay.io/openshift-release-dev/ocp-release:4.18.10-multi"
)

// versions are the releases' versions, as ClusterImageSets name them.
var versions = map[string]string{oldImage: "4.18.5", newImage: "4.18.9", nextImage: "4.18.10"}

// world plays HyperShift and the hub's delivery for the planner's tests, one
// step at a time, as cluster-api's MachineDeployment rollout tests play the
// MachineSet controller: a moved control plane is Progressing for one step
// and completes (or fails, or is held) on the next; a moved node pool is not
// ready for one step.
type world struct {
	hcs []HostedCluster
	// fail names the hosted clusters whose upgrade degrades, hold those
	// the upgrade gate holds once moved.
	fail, hold map[string]bool
	// poolsMoved is the step a hosted cluster's node pools were moved.
	poolsMoved map[string]int
	now        time.Time
}

func newWorld(names ...string) *world {
	w := &world{fail: map[string]bool{}, hold: map[string]bool{}, poolsMoved: map[string]int{},
		now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, n := range names {
		done := metav1.NewTime(w.now.Add(-time.Hour))
		w.hcs = append(w.hcs, HostedCluster{Name: n, Release: oldImage, Current: "4.18.5", Observed: true, Ready: true,
			NodePoolsReady: true, NodePools: []NodePool{{Name: n + "-workers", Release: oldImage}},
			Latest: &v1alpha1.VersionHistoryEntry{State: v1alpha1.VersionUpdateCompleted, Image: oldImage, Version: "4.18.5", CompletionTime: &done}})
	}
	return w
}

func (w *world) get(name string) *HostedCluster {
	for i := range w.hcs {
		if w.hcs[i].Name == name {
			return &w.hcs[i]
		}
	}
	panic(name)
}

// apply makes the plan's moves.
func (w *world) apply(p Plan, step int) {
	for _, m := range p.Moves {
		h := w.get(m.Name)
		if m.ControlPlane {
			h.Release = m.Image
		}
		for _, name := range m.NodePools {
			for i := range h.NodePools {
				if h.NodePools[i].Name == name {
					h.NodePools[i].Release = m.Image
					h.NodePoolsReady = false
					w.poolsMoved[h.Name] = step
				}
			}
		}
	}
}

// advance lets time pass: what HyperShift and the delivery would report.
func (w *world) advance(step int, d time.Duration) {
	w.now = w.now.Add(d)
	for i := range w.hcs {
		h := &w.hcs[i]
		switch {
		case h.Latest.Image == h.Release && h.Latest.State == v1alpha1.VersionUpdateCompleted:
			// At rest.
		case w.hold[h.Name]:
			h.Blocked = &metav1.Condition{Type: v1alpha1.ConditionUpgradeBlocked, Status: metav1.ConditionTrue,
				Reason: "OperatorIncompatible", Message: "operator example.v1 supports OpenShift up to 4.18"}
		case h.Latest.Image != h.Release:
			// HyperShift starts the release asked for, also over one
			// still in progress.
			h.Latest = &v1alpha1.VersionHistoryEntry{State: v1alpha1.VersionUpdatePartial, Image: h.Release, Version: versions[h.Release]}
			h.Progressing = true
		case h.Latest.State == v1alpha1.VersionUpdatePartial && w.fail[h.Name]:
			h.Degraded, h.Progressing = true, false
		case h.Latest.State == v1alpha1.VersionUpdatePartial:
			done := metav1.NewTime(w.now)
			h.Latest = &v1alpha1.VersionHistoryEntry{State: v1alpha1.VersionUpdateCompleted, Image: h.Release, Version: versions[h.Release], CompletionTime: &done}
			h.Progressing, h.Current = false, versions[h.Release]
		}
		if moved, ok := w.poolsMoved[h.Name]; ok && step > moved {
			h.NodePoolsReady = true
		}
	}
}

// log is one step of the plan, as the golden files hold it.
func log(step int, p Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d: wave %d/%d %s=%s %s: %s\n", step, p.Wave, p.Waves, p.Progressing.Type, p.Progressing.Status, p.Progressing.Reason, p.Progressing.Message)
	for _, m := range p.Moves {
		what := "control plane"
		if !m.ControlPlane {
			what = "node pools " + strings.Join(m.NodePools, ",")
		}
		fmt.Fprintf(&b, "  move %s: %s\n", m.Name, what)
	}
	for _, h := range p.HostedClusters {
		fmt.Fprintf(&b, "  %-8s wave %d %-9s %s: %s\n", h.Name, h.Wave, h.State, h.Reason, h.Message)
	}
	if p.Completed.Status == metav1.ConditionTrue {
		b.WriteString("  completed\n")
	}
	return b.String()
}

// run plans and applies until nothing changes (or steps run out), calling
// each before a step.
func run(t *testing.T, w *world, spec v1alpha1.ReleaseRolloutSpec, steps int, each func(step int, spec *v1alpha1.ReleaseRolloutSpec)) (string, []Plan) {
	t.Helper()
	var b strings.Builder
	var plans []Plan
	// What the controller records in the rollout's status.
	var wave int32
	var waveStart time.Time
	for step := 1; step <= steps; step++ {
		if each != nil {
			each(step, &spec)
		}
		p := Compute(Input{Spec: spec, Version: "4.18.9", Now: w.now, HostedClusters: append([]HostedCluster(nil), w.hcs...),
			Wave: wave, WaveStart: waveStart})
		wave, waveStart = p.Wave, p.WaveStart
		plans = append(plans, p)
		b.WriteString(log(step, p))
		w.apply(p, step)
		if p.Completed.Status == metav1.ConditionTrue || p.Progressing.Status == metav1.ConditionFalse && len(p.Moves) == 0 && each == nil {
			break
		}
		w.advance(step, 30*time.Second)
	}
	return b.String(), plans
}

func spec(waveSize int32, maxUnavailable intstr.IntOrString) v1alpha1.ReleaseRolloutSpec {
	return v1alpha1.ReleaseRolloutSpec{Release: v1alpha1.RolloutRelease{Image: newImage}, WaveSize: waveSize,
		MaxUnavailable: maxUnavailable, NodePools: v1alpha1.RolloutNodePools{Policy: v1alpha1.NodePoolUpgradeAll}}
}

// assertBudget fails when a plan has more hosted clusters upgrading than
// maxUnavailable allows, or moves a hosted cluster of a later wave.
func assertBudget(t *testing.T, plans []Plan, maxUnavailable int) {
	t.Helper()
	for i, p := range plans {
		if n := p.Counts()[v1alpha1.RolloutStateUpgrading]; int(n) > maxUnavailable {
			t.Errorf("step %d: %d upgrading, maxUnavailable %d", i+1, n, maxUnavailable)
		}
		waveOf := map[string]int32{}
		for _, h := range p.HostedClusters {
			waveOf[h.Name] = h.Wave
		}
		for _, m := range p.Moves {
			if m.ControlPlane && waveOf[m.Name] > p.Wave {
				t.Errorf("step %d: moved %s of wave %d during wave %d", i+1, m.Name, waveOf[m.Name], p.Wave)
			}
		}
	}
}

func TestPlanCanaryThenWaves(t *testing.T) {
	w := newWorld("a", "b", "c", "d", "e", "f")
	w.get("d").Canary = true
	s := spec(2, intstr.FromInt32(2))
	got, plans := run(t, w, s, 30, nil)
	assertBudget(t, plans, 2)
	if last := plans[len(plans)-1]; last.Completed.Status != metav1.ConditionTrue {
		t.Errorf("not completed: %s", last.Progressing.Message)
	}
	golden.Compare(t, "canary-then-waves", got)
}

func TestPlanBlockedAndFailed(t *testing.T) {
	w := newWorld("a", "b", "c", "d", "e")
	w.hold["b"] = true
	w.fail["c"] = true
	got, plans := run(t, w, spec(3, intstr.FromString("40%")), 30, nil)
	assertBudget(t, plans, 2)
	last := plans[len(plans)-1]
	if last.Progressing.Reason != v1alpha1.ReasonRolloutWaveFailed {
		t.Errorf("Progressing reason %s, want %s", last.Progressing.Reason, v1alpha1.ReasonRolloutWaveFailed)
	}
	for _, h := range last.HostedClusters {
		if h.Wave > 0 && h.State != v1alpha1.RolloutStatePending {
			t.Errorf("%s of wave %d is %s after the failed wave", h.Name, h.Wave, h.State)
		}
	}
	golden.Compare(t, "blocked-and-failed", got)
}

func TestPlanSoakAndNamedPools(t *testing.T) {
	w := newWorld("a", "b", "c")
	w.get("a").NodePools = append(w.get("a").NodePools, NodePool{Name: "a-infra", Release: oldImage})
	s := spec(1, intstr.FromInt32(1))
	s.SoakSeconds = 120
	s.NodePools = v1alpha1.RolloutNodePools{Policy: v1alpha1.NodePoolUpgradeNamed, Names: []string{"a-infra", "b-workers"}}
	got, plans := run(t, w, s, 30, nil)
	assertBudget(t, plans, 1)
	soaked := false
	for _, p := range plans {
		if p.Requeue > 0 {
			soaked = true
			if len(p.Moves) > 0 && p.Moves[0].ControlPlane {
				t.Errorf("moved %s while wave %d soaks", p.Moves[0].Name, p.Wave-1)
			}
		}
	}
	if !soaked {
		t.Error("no wave soaked")
	}
	if w.get("a").NodePools[0].Release != oldImage || w.get("a").NodePools[1].Release != newImage {
		t.Errorf("node pools of a: %+v, want only a-infra moved", w.get("a").NodePools)
	}
	golden.Compare(t, "soak-and-named-pools", got)
}

func TestPlanPauseAndAbort(t *testing.T) {
	w := newWorld("a", "b", "c", "d")
	got, plans := run(t, w, spec(1, intstr.FromInt32(1)), 12, func(step int, s *v1alpha1.ReleaseRolloutSpec) {
		s.Paused = step >= 3 && step < 6
		s.Abort = step >= 9
	})
	for i, p := range plans {
		if step := i + 1; (step >= 3 && step < 6 || step >= 9) && len(p.Moves) > 0 {
			t.Errorf("step %d: paused or aborted, and moves %v", step, p.Moves)
		}
	}
	if w.get("d").Release != oldImage {
		t.Errorf("d was moved after the abort")
	}
	golden.Compare(t, "pause-and-abort", got)
}

func TestPlanRefusals(t *testing.T) {
	w := newWorld("a", "b", "c", "d", "e")
	w.get("a").Current = "4.19.2" // a downgrade for it
	w.get("b").Current = "4.16.3" // a skip of 4.17
	w.get("c").Ready = false
	w.get("d").ClaimedBy = "older"
	got, _ := run(t, w, spec(5, intstr.FromString("100%")), 10, nil)
	for _, n := range []string{"a", "b", "c", "d"} {
		if w.get(n).Release != oldImage {
			t.Errorf("%s was moved", n)
		}
	}
	// The claimed one holds its wave open: the rollout does not complete.
	w.get("d").ClaimedBy = ""
	if p := Compute(Input{Spec: spec(5, intstr.FromString("100%")), Version: "4.18.9", Now: w.now, HostedClusters: w.hcs}); len(p.Moves) != 1 || p.Moves[0].Name != "d" {
		t.Errorf("released claim: moves %v, want d", p.Moves)
	}
	golden.Compare(t, "refusals", got)

	p := Compute(Input{Spec: spec(1, intstr.FromInt32(1)), Problem: "no ClusterImageSet names " + newImage,
		Now: w.now, HostedClusters: newWorld("x").hcs})
	if len(p.Moves) != 0 || p.Progressing.Reason != v1alpha1.ReasonRolloutInvalid {
		t.Errorf("invalid rollout: moves %v, reason %s", p.Moves, p.Progressing.Reason)
	}
}

// A move the API server refuses leaves the hosted cluster Pending, and the
// status says why, not that it moves.
func TestPlanMoveFailed(t *testing.T) {
	w := newWorld("a", "b")
	p := Compute(Input{Spec: spec(1, intstr.FromInt32(1)), Version: "4.18.9", Now: w.now, HostedClusters: w.hcs})
	if len(p.Moves) != 1 || p.Moves[0].Name != "a" {
		t.Fatalf("moves %v", p.Moves)
	}
	p.moveFailed("a", fmt.Errorf("refused by a validation rule"))
	if c := p.Counts(); c[v1alpha1.RolloutStateUpgrading] != 0 || c[v1alpha1.RolloutStatePending] != 2 {
		t.Errorf("counts %v after a failed move", c)
	}
	if h := p.HostedClusters[0]; h.Reason != ReasonMoveFailed || h.Message != "refused by a validation rule" {
		t.Errorf("a: %+v", h)
	}
}

// A release that is only a not-recommended conditional update for a hosted
// cluster is never taken silently: it is Blocked naming the risks until
// the rollout accepts every one of them; where the release is available (or
// the conditional update recommended), it moves as usual.
func TestPlanConditionalUpdates(t *testing.T) {
	w := newWorld("a", "b", "c", "d")
	risky := v1alpha1.ConditionalUpdate{Release: v1alpha1.ReleaseStatus{Version: "4.18.9", Image: newImage},
		Recommended: metav1.ConditionFalse, Reason: "MultipleReasons",
		Risks: []v1alpha1.UpdateRisk{{Name: "EtcdSlow", Message: "etcd may be slow", URL: "https://example.com/etcd"}, {Name: "OVNDrops"}}}
	w.get("a").Conditional = []v1alpha1.ConditionalUpdate{risky}
	w.get("b").Conditional = []v1alpha1.ConditionalUpdate{risky}
	w.get("b").Available = []v1alpha1.ReleaseStatus{{Version: "4.18.9", Image: newImage}} // recommended for b after all
	recommended := risky
	recommended.Recommended, recommended.Reason = metav1.ConditionTrue, "AsExpected"
	w.get("c").Conditional = []v1alpha1.ConditionalUpdate{recommended}
	// d reports no updates at all: nothing is known against the release.
	s := spec(4, intstr.FromInt32(4))
	got, plans := run(t, w, s, 10, nil)
	last := plans[len(plans)-1]
	if last.Completed.Status != metav1.ConditionTrue || last.Counts()[v1alpha1.RolloutStateBlocked] != 1 || w.get("a").Release != oldImage {
		t.Errorf("without accepted risks: %s, a at %s; want completed with a Blocked and not moved", last.Progressing.Message, w.get("a").Release)
	}
	// One risk of two accepted: still blocked.
	s.AcceptRisks = []string{"EtcdSlow"}
	p := Compute(Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: w.hcs})
	got += "acceptRisks: EtcdSlow\n" + log(1, p)
	if len(p.Moves) != 0 {
		t.Errorf("moves %v with one risk of two accepted", p.Moves)
	}
	// Both accepted: a moves.
	s.AcceptRisks = []string{"EtcdSlow", "OVNDrops"}
	more, _ := run(t, w, s, 10, nil)
	got += "acceptRisks: EtcdSlow, OVNDrops\n" + more
	for _, n := range []string{"a", "b", "c", "d"} {
		if w.get(n).Release != newImage {
			t.Errorf("%s not moved after its risks were accepted", n)
		}
	}
	if !strings.Contains(got, "UpdateRisksNotAccepted") || !strings.Contains(got, "EtcdSlow, OVNDrops") {
		t.Errorf("the log does not name the risks:\n%s", got)
	}
	golden.Compare(t, "conditional-updates", got)
}
