package relocation

import "testing"

// TestNextHappyPath walks a relocation from start to Done, one observed
// fact at a time, and checks that no phase moves on before its fact.
func TestNextHappyPath(t *testing.T) {
	id := Identity{InfraID: "app-x7k2p", ClusterID: "0d6e…"}
	var o Observed
	o.Source = id
	steps := []struct {
		fact func()
		want Phase
	}{
		{func() {}, PhasePausing},
		{func() { o.SourcePaused = true }, PhaseBackingUp},
		{func() { o.SnapshotURL = "http://127.0.0.1/snapshots/app.db" }, PhaseRestoring},
		{func() { o.DestinationApplied = true }, PhaseVerifying},
		{func() { o.DestinationAvailable, o.Destination = true, id }, PhaseSwitching},
		{func() { o.Switched, o.BoundTo = true, "cluster-2" }, PhaseCleaningSource},
		{func() { o.SourceGone = true }, PhaseDone},
	}
	cur := Phase("")
	for i, s := range steps {
		// Nothing new observed: the phase holds.
		if next, reason, _ := Next("cluster-2", cur, o); cur != "" && (next != cur || reason != "") {
			t.Fatalf("step %d: %s moved on to %s (%s) with nothing new observed", i, cur, next, reason)
		}
		s.fact()
		next, reason, message := Next("cluster-2", cur, o)
		if next != s.want {
			t.Fatalf("step %d: from %q got %s, want %s", i, cur, next, s.want)
		}
		if next != cur && cur != "" && (reason == "" || message == "") {
			t.Fatalf("step %d: transition %s → %s without reason and message", i, cur, next)
		}
		cur = next
	}
	if next, _, _ := Next("cluster-2", PhaseDone, Observed{Cancelled: true}); next != PhaseDone {
		t.Fatalf("Done moved on to %s", next)
	}
}

// TestNextRollsBackOnlyBeforeTheSwitch: a cancel, a lost destination or a
// timeout before the binding moves rolls back, and the rollback ends only
// once the destination is gone and the source runs; after the switch the
// same facts change nothing (the destination runs the hosted cluster).
func TestNextRollsBackOnlyBeforeTheSwitch(t *testing.T) {
	for _, fault := range []struct {
		name   string
		set    func(*Observed)
		reason string
	}{
		{"cancelled", func(o *Observed) { o.Cancelled = true }, ReasonCancelled},
		{"destination lost", func(o *Observed) { o.DestinationLost = true }, ReasonDestinationLost},
		{"timed out", func(o *Observed) { o.Overdue = ReasonTimedOut }, ReasonTimedOut},
		{"never paused", func(o *Observed) { o.Overdue = ReasonPauseTimedOut }, ReasonPauseTimedOut},
		{"no snapshot", func(o *Observed) { o.Overdue = ReasonSnapshotTimedOut }, ReasonSnapshotTimedOut},
	} {
		t.Run(fault.name, func(t *testing.T) {
			for _, cur := range []Phase{PhasePausing, PhaseBackingUp, PhaseRestoring, PhaseVerifying} {
				o := Observed{SourcePaused: true}
				fault.set(&o)
				if next, reason, _ := Next("cluster-2", cur, o); next != PhaseRollingBack || reason != fault.reason {
					t.Fatalf("from %s: %s (%s), want RollingBack (%s)", cur, next, reason, fault.reason)
				}
			}
			for _, cur := range []Phase{PhaseSwitching, PhaseCleaningSource} {
				o := Observed{Switched: true, BoundTo: "cluster-1"}
				fault.set(&o)
				if next, _, _ := Next("cluster-2", cur, o); next != cur {
					t.Fatalf("after the switch, from %s: %s; want it to hold", cur, next)
				}
			}
		})
	}

	// The rollback ends when the destination is gone and the source resumed.
	o := Observed{Cancelled: true, SourcePaused: true, DestinationGone: true}
	if next, _, _ := Next("cluster-2", PhaseRollingBack, o); next != PhaseRollingBack {
		t.Fatalf("rolled back while the source is still paused: %s", next)
	}
	o.SourcePaused = false
	if next, _, _ := Next("cluster-2", PhaseRollingBack, o); next != PhaseRolledBack {
		t.Fatalf("got %s, want RolledBack", next)
	}
}

// TestNextIdentityMismatch: a destination with another identity is never
// switched to.
func TestNextIdentityMismatch(t *testing.T) {
	o := Observed{SourcePaused: true, SnapshotURL: "u", DestinationApplied: true, DestinationAvailable: true,
		Source: Identity{InfraID: "app-x7k2p", ClusterID: "a"}, Destination: Identity{InfraID: "app-x7k2p", ClusterID: "b"}}
	if next, reason, _ := Next("cluster-2", PhaseVerifying, o); next != PhaseRollingBack || reason != ReasonIdentityMismatch {
		t.Fatalf("got %s (%s), want RollingBack (IdentityMismatch)", next, reason)
	}
}

// TestNextSwitchWaitsForTheBinding: the source is not cleaned until the
// HostedClusterDeployment is bound to the destination.
func TestNextSwitchWaitsForTheBinding(t *testing.T) {
	o := Observed{Switched: true, BoundTo: "cluster-1"}
	if next, _, _ := Next("cluster-2", PhaseSwitching, o); next != PhaseSwitching {
		t.Fatalf("moved on to %s while still bound to the source", next)
	}
}

// TestNextSourceUnavailable: a source that stops reporting holds the move,
// with a reason, while the hub cannot know what it did (before the
// snapshot, and a rollback, which must unpause it); from the snapshot on
// the move goes on, as HyperShift's disaster recovery does, and never
// switches without the destination Available.
func TestNextSourceUnavailable(t *testing.T) {
	for _, cur := range []Phase{PhasePausing, PhaseBackingUp, PhaseRollingBack, PhaseCleaningSource} {
		o := Observed{SourceLost: true, SourcePaused: cur == PhaseRollingBack, Switched: cur == PhaseCleaningSource, BoundTo: "cluster-2"}
		next, reason, message := Next("cluster-2", cur, o)
		if next != cur || reason != ReasonSourceUnavailable || message == "" {
			t.Fatalf("from %s: %s (%s: %s), want it to hold with %s", cur, next, reason, message, ReasonSourceUnavailable)
		}
	}
	// What it reported before it went away still counts.
	if next, _, _ := Next("cluster-2", PhasePausing, Observed{SourceLost: true, SourcePaused: true}); next != PhaseBackingUp {
		t.Fatalf("a pause reported before the source went away: %s, want BackingUp", next)
	}
	id := Identity{InfraID: "app-x7k2p"}
	o := Observed{SourceLost: true, SnapshotURL: "u", Source: id}
	for _, s := range []struct {
		cur, want Phase
		fact      func()
	}{
		{PhaseBackingUp, PhaseRestoring, func() {}},
		{PhaseRestoring, PhaseRestoring, func() {}},
		{PhaseRestoring, PhaseVerifying, func() { o.DestinationApplied = true }},
		{PhaseVerifying, PhaseVerifying, func() {}},
		{PhaseVerifying, PhaseSwitching, func() { o.DestinationAvailable, o.Destination = true, id }},
	} {
		s.fact()
		if next, reason, _ := Next("cluster-2", s.cur, o); next != s.want || next == s.cur && reason != "" {
			t.Fatalf("source lost, from %s: %s (%s), want %s", s.cur, next, reason, s.want)
		}
	}
}
