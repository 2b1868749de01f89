package relocation

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// TestOverdue: each waiting phase has its bound, the others none.
func TestOverdue(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const pause, restore = 15 * time.Minute, 30 * time.Minute
	for _, c := range []struct {
		phase  Phase
		waited time.Duration
		want   string
	}{
		{PhasePausing, 15 * time.Minute, ""},
		{PhasePausing, 16 * time.Minute, ReasonPauseTimedOut},
		{PhaseBackingUp, 14 * time.Minute, ""},
		{PhaseBackingUp, 16 * time.Minute, ReasonSnapshotTimedOut},
		{PhaseRestoring, 16 * time.Minute, ""},
		{PhaseRestoring, 31 * time.Minute, ReasonTimedOut},
		{PhaseVerifying, 31 * time.Minute, ReasonTimedOut},
		// Past the switch a move never rolls back; a rollback is not
		// itself timed out.
		{PhaseSwitching, time.Hour, ""},
		{PhaseCleaningSource, time.Hour, ""},
		{PhaseRollingBack, time.Hour, ""},
	} {
		if got := Overdue(c.phase, start, start.Add(c.waited), pause, restore); got != c.want {
			t.Errorf("%s after %s: %q, want %q", c.phase, c.waited, got, c.want)
		}
	}
}

// TestNextOverdueMessage: an overdue pause or snapshot rolls back with its
// own reason and a message saying the destination was never touched.
func TestNextOverdueMessage(t *testing.T) {
	next, reason, message := Next("cluster-2", PhaseBackingUp, Observed{SourcePaused: true, Overdue: ReasonSnapshotTimedOut})
	if next != PhaseRollingBack || reason != ReasonSnapshotTimedOut || message == "" {
		t.Fatalf("Next = %s, %s, %q", next, reason, message)
	}
}

// TestLeftovers walks a move a restored hub has no record of, step by step,
// from what is left: before the switch (bound to the source) the copy goes,
// keeping the cloud resources, then the source resumes; after it (bound to
// the destination) the paused source goes, its pause work first. What is
// not a relocation's is never touched.
func TestLeftovers(t *testing.T) {
	const workName, pauseName = "hcd-team-a.app", "relocate-team-a.app"
	never := func(string) bool { return false }
	delivered := func(t *testing.T, cluster string) workv1.ManifestWork {
		w := sourceWork(t)
		w.Namespace = cluster
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "x"})
		return *w
	}
	copyOf := func(t *testing.T, cluster, source string) workv1.ManifestWork {
		w := delivered(t, cluster)
		w.Annotations = map[string]string{hosting.AnnotationRelocationCopy: source}
		return w
	}
	keptCloud := func(t *testing.T, w workv1.ManifestWork) workv1.ManifestWork {
		marked, _, err := MarkKeepCloud(&w, "clusters")
		if err != nil {
			t.Fatal(err)
		}
		return *marked
	}
	pause := func(t *testing.T, cluster string, running bool) workv1.ManifestWork {
		w, err := PauseWork(cluster, "hcp-fleet-agent", "team-a", "app", "clusters", "app", true)
		if err != nil {
			t.Fatal(err)
		}
		if running {
			str := func(s string) workv1.FieldValue { return workv1.FieldValue{Type: workv1.String, String: ptr.To(s)} }
			num := workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(int64(2))}
			w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{ResourceMeta: workv1.ManifestResourceMeta{Resource: "hostedclusters", Name: "app"},
				StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{
					{Name: fbReconciliationActive, Value: str("True")}, {Name: fbReconciliationGeneration, Value: num}, {Name: fbGeneration, Value: num}}}}}
		}
		return *w
	}
	deleting := func(w workv1.ManifestWork) workv1.ManifestWork {
		w.DeletionTimestamp = ptr.To(metav1.Now())
		return w
	}
	for _, c := range []struct {
		name       string
		bound      string
		works      func(t *testing.T) []workv1.ManifestWork
		lost       func(string) bool
		action     string
		namespace  string
		workName   string
		keepsCloud bool
	}{
		{"nothing of a move", "cluster-1", func(t *testing.T) []workv1.ManifestWork {
			return []workv1.ManifestWork{delivered(t, "cluster-1")}
		}, never, LeftoverNone, "", "", false},
		{"a ManifestWork elsewhere that is no relocation's", "cluster-1", func(t *testing.T) []workv1.ManifestWork {
			return []workv1.ManifestWork{delivered(t, "cluster-1"), delivered(t, "cluster-3")}
		}, never, LeftoverNone, "", "", false},
		{"before the switch: the copy is marked to keep the cloud", "cluster-1", func(t *testing.T) []workv1.ManifestWork {
			return []workv1.ManifestWork{delivered(t, "cluster-1"), pause(t, "cluster-1", false), copyOf(t, "cluster-2", "cluster-1")}
		}, never, LeftoverUpdate, "cluster-2", workName, true},
		{"then deleted once that is applied", "cluster-1", func(t *testing.T) []workv1.ManifestWork {
			return []workv1.ManifestWork{delivered(t, "cluster-1"), pause(t, "cluster-1", false), keptCloud(t, copyOf(t, "cluster-2", "cluster-1"))}
		}, never, LeftoverDelete, "cluster-2", workName, true},
		{"the source waits for the copy to go", "cluster-1", func(t *testing.T) []workv1.ManifestWork {
			return []workv1.ManifestWork{delivered(t, "cluster-1"), pause(t, "cluster-1", false), deleting(keptCloud(t, copyOf(t, "cluster-2", "cluster-1")))}
		}, never, LeftoverWait, "cluster-2", workName, true},
		{"a lost destination's copy is released once its deletion is asked", "cluster-1", func(t *testing.T) []workv1.ManifestWork {
			return []workv1.ManifestWork{delivered(t, "cluster-1"), pause(t, "cluster-1", false), deleting(keptCloud(t, copyOf(t, "cluster-2", "cluster-1")))}
		}, func(c string) bool { return c == "cluster-2" }, LeftoverResume, "cluster-1", pauseName, false},
		{"the source resumes", "cluster-1", func(t *testing.T) []workv1.ManifestWork {
			return []workv1.ManifestWork{delivered(t, "cluster-1"), pause(t, "cluster-1", false)}
		}, never, LeftoverResume, "cluster-1", pauseName, false},
		{"its pause work goes once it reconciles", "cluster-1", func(t *testing.T) []workv1.ManifestWork {
			return []workv1.ManifestWork{delivered(t, "cluster-1"), pause(t, "cluster-1", true)}
		}, never, LeftoverDelete, "cluster-1", pauseName, false},
		{"after the switch: the paused source is marked first", "cluster-2", func(t *testing.T) []workv1.ManifestWork {
			return []workv1.ManifestWork{delivered(t, "cluster-1"), pause(t, "cluster-1", false), copyOf(t, "cluster-2", "cluster-1")}
		}, never, LeftoverUpdate, "cluster-1", workName, true},
		{"then its pause work goes", "cluster-2", func(t *testing.T) []workv1.ManifestWork {
			return []workv1.ManifestWork{keptCloud(t, delivered(t, "cluster-1")), pause(t, "cluster-1", false), copyOf(t, "cluster-2", "cluster-1")}
		}, never, LeftoverDelete, "cluster-1", pauseName, false},
		{"then the source", "cluster-2", func(t *testing.T) []workv1.ManifestWork {
			return []workv1.ManifestWork{keptCloud(t, delivered(t, "cluster-1")), copyOf(t, "cluster-2", "cluster-1")}
		}, never, LeftoverDelete, "cluster-1", workName, true},
		{"a pause work alone off the binding goes", "cluster-2", func(t *testing.T) []workv1.ManifestWork {
			return []workv1.ManifestWork{pause(t, "cluster-1", false), delivered(t, "cluster-2")}
		}, never, LeftoverDelete, "cluster-1", pauseName, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			step, err := Leftovers(c.bound, "clusters", workName, pauseName, c.works(t), c.lost)
			if err != nil {
				t.Fatal(err)
			}
			if step.Action != c.action {
				t.Fatalf("action %q, want %q", step.Action, c.action)
			}
			if c.action == LeftoverNone {
				return
			}
			if step.Work.Namespace != c.namespace || step.Work.Name != c.workName {
				t.Fatalf("on %s/%s, want %s/%s", step.Work.Namespace, step.Work.Name, c.namespace, c.workName)
			}
			if _, changed, _ := MarkKeepCloud(step.Work, "clusters"); c.keepsCloud && changed {
				t.Fatalf("%s on a ManifestWork not marked to keep the cloud resources", step.Action)
			}
			if c.action != LeftoverWait && step.Message == "" {
				t.Fatal("no message")
			}
		})
	}
}
