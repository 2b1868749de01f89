package releaserollout

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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

// TestPlanMaintenanceWindowsByLabel: with spec.maintenanceWindows, each
// hosted cluster moves only in a window that selects it: the dev ones in
// theirs (open), the prod ones wait for Saturday's, and one no window
// selects is Blocked (NoMaintenanceWindow) and never moves.
func TestPlanMaintenanceWindowsByLabel(t *testing.T) {
	w := newWorld("dev-a", "dev-b", "prod-a", "prod-b", "stray")
	windows := map[string][]int{"dev-a": {0}, "dev-b": {0}, "prod-a": {1}, "prod-b": {1, 2}}
	for i := range w.hcs {
		w.hcs[i].Windows = windows[w.hcs[i].Name]
	}
	s := spec(2, intstr.FromInt32(1))
	// Thursday 2026-01-01 00:00 UTC: the dev window is open for the week;
	// the prod ones open on Saturday 02:00 UTC and Sunday 03:00 Berlin.
	s.MaintenanceWindows = []v1alpha1.SelectedMaintenanceWindow{
		{MaintenanceWindow: v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Thursday"}, Start: "00:00", DurationMinutes: 10080}},
		{MaintenanceWindow: v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Saturday"}, Start: "02:00", DurationMinutes: 240}},
		{MaintenanceWindow: v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Sunday"}, Start: "03:00", DurationMinutes: 60, TimeZone: "Europe/Berlin"}},
	}
	saturday := time.Date(2026, 1, 3, 2, 0, 0, 0, time.UTC)
	var b strings.Builder
	var last Plan
	run := func(from, to int) {
		for step := from; step <= to; step++ {
			last = Compute(Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: w.hcs})
			b.WriteString(log(step, last))
			for _, m := range last.Moves {
				if m.ControlPlane && strings.HasPrefix(m.Name, "prod-") && w.now.Before(saturday) {
					t.Errorf("step %d: moved the control plane of %s outside its window", step, m.Name)
				}
				if m.Name == "stray" {
					t.Errorf("step %d: moved stray, which no window selects", step)
				}
			}
			if last.Completed.Status == metav1.ConditionTrue {
				return
			}
			w.apply(last, step)
			w.advance(step, 30*time.Second)
		}
	}
	run(1, 12)
	if w.get("dev-b").Release != newImage || w.get("prod-a").Release != oldImage {
		t.Fatalf("dev-b at %s, prod-a at %s: want dev-b moved, prod-a not", w.get("dev-b").Release, w.get("prod-a").Release)
	}
	if want := "waits for the maintenance windows of 2 hosted clusters, the first opening at 2026-01-03T02:00:00Z"; !strings.Contains(last.Progressing.Message, want) {
		t.Errorf("Progressing %q, want it to say %q", last.Progressing.Message, want)
	}
	if want := saturday.Sub(w.now.Add(-30 * time.Second)); last.Requeue != want {
		t.Errorf("requeue %s, want %s (the prod window's opening)", last.Requeue, want)
	}
	w.now = saturday
	b.WriteString("Saturday 02:00 UTC: the prod window opens\n")
	run(13, 40)
	if last.Completed.Status != metav1.ConditionTrue || w.get("prod-b").Release != newImage {
		t.Errorf("not completed in the prod window: %s", last.Progressing.Message)
	}
	golden.Compare(t, "maintenance-windows-by-label", b.String())

	// A window the hub cannot read names its entry.
	s.MaintenanceWindows[2].TimeZone = "Mars/Olympus"
	p := Compute(Input{Spec: s, Version: "4.18.9", Now: w.now, HostedClusters: newWorld("x").hcs})
	if len(p.Moves) != 0 || p.Progressing.Reason != v1alpha1.ReasonRolloutInvalid || !strings.Contains(p.Progressing.Message, "spec.maintenanceWindows[2].timeZone") {
		t.Errorf("unknown time zone: moves %v, Progressing %s: %s", p.Moves, p.Progressing.Reason, p.Progressing.Message)
	}
}

func TestWindowSelectors(t *testing.T) {
	sels, problem := windowSelectors([]v1alpha1.SelectedMaintenanceWindow{{},
		{HostedClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}})
	if problem != "" || len(sels) != 2 || !sels[0].Matches(labels.Set{"env": "dev"}) || sels[1].Matches(labels.Set{"env": "dev"}) || !sels[1].Matches(labels.Set{"env": "prod"}) {
		t.Errorf("selectors %v, %q", sels, problem)
	}
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}
	if _, problem := windowSelectors([]v1alpha1.SelectedMaintenanceWindow{{}, {HostedClusterSelector: bad}}); !strings.HasPrefix(problem, "spec.maintenanceWindows[1].hostedClusterSelector: ") {
		t.Errorf("bad selector: %q", problem)
	}
}
