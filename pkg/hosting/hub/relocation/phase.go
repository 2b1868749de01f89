package relocation

import (
	"fmt"
	"time"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// Phase is where a relocation is.
type Phase string

// The phases, in order (v1alpha1's RelocationPhase constants, which the
// scheduler reads too). Done, Failed and RolledBack are final.
const (
	PhasePausing        Phase = v1alpha1.RelocationPhasePausing
	PhaseBackingUp      Phase = v1alpha1.RelocationPhaseBackingUp
	PhaseRestoring      Phase = v1alpha1.RelocationPhaseRestoring
	PhaseVerifying      Phase = v1alpha1.RelocationPhaseVerifying
	PhaseSwitching      Phase = v1alpha1.RelocationPhaseSwitching
	PhaseCleaningSource Phase = v1alpha1.RelocationPhaseCleaningSource
	PhaseRollingBack    Phase = v1alpha1.RelocationPhaseRollingBack
	PhaseDone           Phase = v1alpha1.RelocationPhaseDone
	PhaseFailed         Phase = v1alpha1.RelocationPhaseFailed
	PhaseRolledBack     Phase = v1alpha1.RelocationPhaseRolledBack
)

// Final says whether nothing follows p.
func (p Phase) Final() bool { return v1alpha1.RelocationEnded(string(p)) }

// Reasons a running relocation rolls back.
const (
	ReasonCancelled        = "Cancelled"
	ReasonDestinationLost  = "DestinationLost"
	ReasonTimedOut         = "TimedOut"
	ReasonIdentityMismatch = "IdentityMismatch"
	// ReasonPauseTimedOut and ReasonSnapshotTimedOut: the source did not
	// report itself paused, or then its etcd snapshot, within the pause
	// timeout (Options.PauseTimeout).
	ReasonPauseTimedOut    = "PauseTimedOut"
	ReasonSnapshotTimedOut = "SnapshotTimedOut"
)

// overdueMessages are the messages of the rollbacks Overdue starts.
var overdueMessages = map[string]string{
	ReasonTimedOut:         "the destination did not become Available in time: the source resumes",
	ReasonPauseTimedOut:    "the source did not report its reconciliation paused in time: it resumes, nothing was written on the destination",
	ReasonSnapshotTimedOut: "the source did not report an etcd snapshot in time: it resumes, nothing was written on the destination",
}

// Overdue is the reason a relocation in phase since since has waited too
// long at now ("" when it has not): Pausing and BackingUp each wait at
// most pause (the source pauses and snapshots its etcd by itself; one that
// never does would stay paused, serving nothing), Restoring and Verifying
// each at most restore (the destination applies, then becomes Available).
// Pure.
func Overdue(phase Phase, since, now time.Time, pause, restore time.Duration) string {
	waited := now.Sub(since)
	switch phase {
	case PhasePausing:
		if waited > pause {
			return ReasonPauseTimedOut
		}
	case PhaseBackingUp:
		if waited > pause {
			return ReasonSnapshotTimedOut
		}
	case PhaseRestoring, PhaseVerifying:
		if waited > restore {
			return ReasonTimedOut
		}
	}
	return ""
}

// ReasonSourceUnavailable: the phase holds while the source's management
// cluster does not report (the relocation waits; it does not give up).
const ReasonSourceUnavailable = "SourceUnavailable"

// Identity is what must be the same on both sides of a move.
type Identity struct {
	InfraID   string
	ClusterID string
}

// Observed is what the hub reads before each step: the ManifestWorks'
// feedback from both management clusters, the HostedClusterDeployment's
// binding and the relocation's own record. Zero values mean "not seen".
type Observed struct {
	// SourcePaused: the source's HostedCluster reports
	// ReconciliationActive=False (ReconciliationPaused) for the generation
	// that carries pausedUntil.
	SourcePaused bool
	// SnapshotURL is the snapshot the source reported while paused.
	SnapshotURL string
	// DestinationApplied: the destination's ManifestWork is Applied.
	DestinationApplied bool
	// DestinationAvailable: the destination's HostedCluster is Available.
	DestinationAvailable bool
	// Source and Destination are the identities each side reports.
	Source, Destination Identity
	// DestinationGone: no ManifestWork, and no HostedCluster, on the
	// destination (after a rollback).
	DestinationGone bool
	// Switched is the relocation's record that the binding moves (written
	// before the scheduler rebinds, so it happens once).
	Switched bool
	// BoundTo is the HostedClusterDeployment's status.hostingCluster.
	BoundTo string
	// SourceGone: the source's HostedCluster is gone.
	SourceGone bool
	// Cancelled: the relocation is being deleted.
	Cancelled bool
	// DestinationLost: the destination's ManagedCluster is unavailable.
	DestinationLost bool
	// SourceLost: the source's ManagedCluster is unavailable.
	SourceLost bool
	// Overdue: the phase waited too long, and why (Overdue).
	Overdue string
}

// Next is the phase that follows cur given what is observed, with the
// reason and message of the transition ("" when cur still holds). Pure:
// the controller calls it on every reconcile, so a hub restarted at any
// point continues from the recorded phase and the facts.
//
// The order keeps one control plane running at every instant: the
// destination is created only from a snapshot taken while the source was
// paused, the source stays paused (not deleted) until the destination is
// Available and the binding has moved, and once the binding has moved
// there is no way back, only forward (CleaningSource is retried).
//
// A source that stops reporting holds the move where it is until it
// reports again, before the snapshot: the hub cannot know whether it
// paused, and unpausing it (a rollback) needs it as much as going on does.
// From the snapshot on, the move goes on without it, as HyperShift's
// disaster recovery restores a lost management cluster's hosted cluster
// elsewhere: the snapshot was taken while the source was paused, a paused
// source serves nothing, and it is removed once it reports again.
func Next(destination string, cur Phase, o Observed) (next Phase, reason, message string) {
	if cur.Final() {
		return cur, "", ""
	}
	if cur == "" {
		cur = PhasePausing
	}
	beforeSwitch := !o.Switched && cur != PhaseSwitching && cur != PhaseCleaningSource
	if beforeSwitch && cur != PhaseRollingBack {
		switch {
		case o.Cancelled:
			return PhaseRollingBack, ReasonCancelled, "the relocation was deleted before the binding moved: the source resumes"
		case o.DestinationLost:
			return PhaseRollingBack, ReasonDestinationLost, destination + " became unavailable before the binding moved: the source resumes"
		case o.Overdue != "":
			return PhaseRollingBack, o.Overdue, overdueMessages[o.Overdue]
		}
	}
	switch cur {
	case PhasePausing:
		if o.SourcePaused {
			return PhaseBackingUp, string(PhaseBackingUp), "the source is paused; waiting for its etcd snapshot"
		}
	case PhaseBackingUp:
		if o.SnapshotURL != "" {
			return PhaseRestoring, string(PhaseRestoring), "snapshot taken; restoring it on " + destination
		}
	case PhaseRestoring:
		if o.DestinationApplied {
			return PhaseVerifying, string(PhaseVerifying), "waiting for the hosted cluster on " + destination + " to be Available"
		}
	case PhaseVerifying:
		if !o.DestinationAvailable {
			break
		}
		if o.Destination != o.Source {
			return PhaseRollingBack, ReasonIdentityMismatch, fmt.Sprintf("the destination reports infraID %q, clusterID %q; the source %q, %q",
				o.Destination.InfraID, o.Destination.ClusterID, o.Source.InfraID, o.Source.ClusterID)
		}
		return PhaseSwitching, string(PhaseSwitching), "the hosted cluster is Available on " + destination + "; moving the binding"
	case PhaseSwitching:
		if o.Switched && o.BoundTo == destination {
			return PhaseCleaningSource, string(PhaseCleaningSource), "bound to " + destination + "; removing the paused source"
		}
	case PhaseCleaningSource:
		if o.SourceGone {
			return PhaseDone, string(PhaseDone), "relocated to " + destination
		}
	case PhaseRollingBack:
		if o.DestinationGone && !o.SourcePaused {
			return PhaseRolledBack, string(PhaseRolledBack), "the destination is removed and the source runs again"
		}
	}
	if o.SourceLost {
		switch cur {
		case PhasePausing, PhaseBackingUp:
			return cur, ReasonSourceUnavailable, "the source's management cluster does not report: the move waits for it (nothing is written on " + destination + " before its snapshot)"
		case PhaseRollingBack:
			return cur, ReasonSourceUnavailable, "the source's management cluster does not report: it resumes once it reports again"
		case PhaseCleaningSource:
			return cur, ReasonSourceUnavailable, "the source's management cluster does not report: its paused copy is removed once it reports again"
		}
	}
	return cur, "", ""
}
