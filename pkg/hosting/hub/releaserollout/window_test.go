package releaserollout

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/golden"
)

func TestWindowAt(t *testing.T) {
	thu := time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC) // a Thursday
	for _, c := range []struct {
		name    string
		w       v1alpha1.MaintenanceWindow
		now     time.Time
		open    bool
		change  time.Time
		problem string
	}{
		{"open", v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Thursday"}, Start: "00:00", DurationMinutes: 60}, thu,
			true, time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC), ""},
		{"over midnight", v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Wednesday"}, Start: "23:00", DurationMinutes: 120}, thu,
			true, time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC), ""},
		{"next week", v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Thursday"}, Start: "00:00", DurationMinutes: 10}, thu,
			false, time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC), ""},
		{"later today", v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Monday", "Thursday"}, Start: "22:00", DurationMinutes: 10}, thu,
			false, time.Date(2026, 1, 1, 22, 0, 0, 0, time.UTC), ""},
		// 00:30 UTC is 01:30 in Berlin (CET, UTC+1).
		{"time zone", v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Thursday"}, Start: "01:00", DurationMinutes: 60, TimeZone: "Europe/Berlin"}, thu,
			true, time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC), ""},
		{"unknown zone", v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Thursday"}, Start: "01:00", DurationMinutes: 60, TimeZone: "Mars/Olympus"}, thu,
			false, time.Time{}, "unknown time zone"},
		{"no day", v1alpha1.MaintenanceWindow{Start: "01:00", DurationMinutes: 60}, thu, false, time.Time{}, "never opens"},
	} {
		open, change, problem := WindowAt(&c.w, c.now)
		if open != c.open || !change.Equal(c.change) || (c.problem == "") != (problem == "") || !strings.Contains(problem, c.problem) {
			t.Errorf("%s: open %v, change %v, problem %q; want %v, %v, %q", c.name, open, change, problem, c.open, c.change, c.problem)
		}
	}
}

// A window that closes mid-rollout holds the next hosted cluster; the one
// moving finishes (node pools included). The plan asks to look again when
// the window opens, and then goes on.
func TestPlanMaintenanceWindow(t *testing.T) {
	w := newWorld("a", "b", "c")
	s := spec(1, intstr.FromInt32(1))
	// The world starts on Thursday 2026-01-01 00:00 UTC; 30 s a step.
	s.MaintenanceWindow = &v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Thursday"}, Start: "00:00", DurationMinutes: 2, TimeZone: "UTC"}
	var b strings.Builder
	var last Plan
	var planned time.Time
	for step := 1; step <= 10; step++ {
		planned = w.now
		last = Compute(Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: w.hcs})
		b.WriteString(log(step, last))
		for _, m := range last.Moves {
			if m.ControlPlane && !w.now.Before(time.Date(2026, 1, 1, 0, 2, 0, 0, time.UTC)) {
				t.Errorf("step %d: moved the control plane of %s after the window closed", step, m.Name)
			}
		}
		w.apply(last, step)
		w.advance(step, 30*time.Second)
	}
	if w.get("a").Release != newImage || w.get("c").Release != oldImage {
		t.Fatalf("a at %s, c at %s: want a moved, c not", w.get("a").Release, w.get("c").Release)
	}
	if !strings.Contains(last.Progressing.Message, "waits for the maintenance window, which opens at 2026-01-08T00:00:00Z") {
		t.Errorf("Progressing %q, want it to name the next opening", last.Progressing.Message)
	}
	if want := time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC).Sub(planned); last.Requeue != want {
		t.Errorf("requeue %s, want %s (the next opening)", last.Requeue, want)
	}
	// A week later the window opens again: the rollout goes on.
	w.now = time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC)
	b.WriteString("the window opens again\n")
	for step := 11; step <= 30; step++ {
		last = Compute(Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: w.hcs})
		b.WriteString(log(step, last))
		if last.Completed.Status == metav1.ConditionTrue || len(last.Moves) == 0 && last.Counts()[v1alpha1.RolloutStateUpgrading] == 0 && step > 11 {
			break
		}
		w.apply(last, step)
		w.advance(step, 30*time.Second)
	}
	if w.get("b").Release != newImage {
		t.Errorf("b not moved once the window opened again")
	}
	golden.Compare(t, "maintenance-window", b.String())

	// A window the hub cannot read: invalid, nothing moves.
	s.MaintenanceWindow.TimeZone = "Mars/Olympus"
	p := Compute(Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: newWorld("x").hcs})
	if len(p.Moves) != 0 || p.Progressing.Reason != v1alpha1.ReasonRolloutInvalid {
		t.Errorf("unknown time zone: moves %v, Progressing %s", p.Moves, p.Progressing.Reason)
	}
}
