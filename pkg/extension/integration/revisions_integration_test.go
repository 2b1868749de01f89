//go:build integration

package integration_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	extensionhub "github.com/hcp-fleet/hcp-fleet/pkg/extension/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// These checks run at the end of TestRollingRollout, on its seven hosted
// clusters (roll-0 … roll-5, roll-late) and its extension "roll" (rolling,
// maxUnavailable 2), which by then has had two revisions: 1 (with a
// Deployment that never becomes available) and 2 (the fix, one ConfigMap
// audit-operator).

func controlPlane(hcd string) string {
	return extension.ControlPlaneNamespace(v1alpha1.DefaultHostingNamespace, hcd)
}

// waitRoll waits until the status of "roll" describes its current
// generation and check passes.
func waitRoll(t *testing.T, ns, what string, timeout time.Duration, check func(e *v1alpha1.HostedClusterExtension) error) *v1alpha1.HostedClusterExtension {
	t.Helper()
	var got *v1alpha1.HostedClusterExtension
	env.Eventually(t, timeout, what, func(ctx context.Context) error {
		e, err := getExtension(ctx, ns, "roll")
		if err != nil {
			return err
		}
		if e.Status.ObservedGeneration != e.Generation {
			return fmt.Errorf("status of generation %d, want %d", e.Status.ObservedGeneration, e.Generation)
		}
		got = e
		return check(e)
	})
	return got
}

func allAvailable(e *v1alpha1.HostedClusterExtension) error {
	if e.Status.Available != 7 || e.Status.Selected != 7 {
		return fmt.Errorf("revision %d available on %d of %d (updated %d)", e.Status.Revision, e.Status.Available, e.Status.Selected, e.Status.Updated)
	}
	return nil
}

func objectState(s v1alpha1.ExtensionHostedClusterStatus, kind, name string) v1alpha1.ExtensionObjectState {
	for _, o := range s.Objects {
		if o.Kind == kind && o.Name == name {
			return o.State
		}
	}
	return ""
}

// checkPaused: a paused rollout with a new revision reaches none of the
// seven hosted clusters, and changes nothing on any of them: once every
// agent confirms the pause, an object of the running revision deleted on
// roll-0 is reported missing (the agent saw it) and not made again.
// Unpaused, the new revision reaches all of them and the object is back.
func checkPaused(t *testing.T, ns string, paused map[string]any) map[string]any {
	t.Helper()
	ctx := context.Background()
	paused["phases"] = []any{phase("operator", "", obj(cpConfig), obj(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"paused-extra","labels":{"app":"audit"}},"data":{"level":"debug"}}`))}
	paused["strategy"].(map[string]any)["paused"] = true
	applyExtension(t, ns, "roll", paused)
	e := waitRoll(t, ns, "the pause confirmed by every agent", time.Minute, func(e *v1alpha1.HostedClusterExtension) error {
		c := meta.FindStatusCondition(e.Status.Conditions, "Progressing")
		if c == nil || c.ObservedGeneration != e.Generation || c.Reason != "Paused" {
			return fmt.Errorf("Progressing %+v", c)
		}
		if e.Status.Updated != 0 || e.Status.Selected != 7 {
			return fmt.Errorf("paused, yet updated %d of %d", e.Status.Updated, e.Status.Selected)
		}
		for _, h := range e.Status.HostedClusters {
			if !h.Paused {
				return fmt.Errorf("%s: the agent has not confirmed the pause", h.Name)
			}
		}
		return nil
	})
	var works workv1.ManifestWorkList
	if err := hubc.List(ctx, &works, client.MatchingLabels{extension.LabelExtension: "roll", hosting.LabelHCDNamespace: ns}); err != nil {
		t.Fatal(err)
	}
	for _, w := range works.Items {
		if w.Annotations[extensionhub.AnnotationRevision] == fmt.Sprint(e.Status.Revision) {
			t.Fatalf("paused, yet work %s carries revision %d", w.Name, e.Status.Revision)
		}
	}
	// Paused: the agent leaves a deleted object of the running revision
	// deleted. It reports it missing first — the signal that it looked.
	live := &corev1.ConfigMap{}
	if err := mgmt.Get(ctx, types.NamespacedName{Namespace: controlPlane("roll-0"), Name: "audit-operator"}, live); err != nil {
		t.Fatal(err)
	}
	if err := mgmt.Delete(ctx, live); err != nil {
		t.Fatal(err)
	}
	waitRoll(t, ns, "roll-0's agent reports the deleted object", time.Minute, func(e *v1alpha1.HostedClusterExtension) error {
		for _, h := range e.Status.HostedClusters {
			if h.Name == "roll-0" && h.Paused && objectState(h, "ConfigMap", "audit-operator") == v1alpha1.ObjectStatePending {
				return nil
			}
		}
		return fmt.Errorf("roll-0 still reports audit-operator present")
	})
	if ok, err := exists(ctx, mgmt, "v1", "ConfigMap", controlPlane("roll-0"), "audit-operator"); ok || err != nil {
		t.Fatalf("paused, yet the deleted object was made again (%v)", err)
	}

	paused["strategy"].(map[string]any)["paused"] = false
	applyExtension(t, ns, "roll", paused)
	e = waitRoll(t, ns, "the unpaused revision available everywhere", 3*time.Minute, allAvailable)
	if e.Status.Revision != e.Generation-1 {
		t.Fatalf("unpausing made revision %d (generation %d): an edit of the strategy is no new revision", e.Status.Revision, e.Generation)
	}
	for hcd, name := range map[string]string{"roll-5": "paused-extra", "roll-0": "audit-operator"} {
		if ok, err := exists(ctx, mgmt, "v1", "ConfigMap", controlPlane(hcd), name); !ok {
			t.Fatalf("unpaused, %s is not in %s's control-plane namespace (%v)", name, hcd, err)
		}
	}
	return paused
}

// revisionsOnHub are the numbers of roll's ControllerRevisions, read from
// the API server.
func revisionsOnHub(t *testing.T, ns string) []int64 {
	t.Helper()
	var list appsv1.ControllerRevisionList
	if err := hubc.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{extension.LabelExtension: "roll"}); err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, cr := range list.Items {
		out = append(out, cr.Revision)
	}
	slices.Sort(out)
	return out
}

func archived(e *v1alpha1.HostedClusterExtension) []int64 {
	var out []int64
	for _, a := range e.Status.ArchivedRevisions {
		out = append(out, a.Revision)
	}
	return out
}

// checkRevisions (spec: checkPaused's, revision 3's): the history keeps
// revisions 1 and 2 behind 3; a limit of
// one prunes the oldest; a rollback to 2 rolls its template out as a new
// revision over the seven hosted clusters, hands the object both revisions
// have over in place (same UID) and deletes the one only 3 had; a rollback
// to a pruned revision is refused with a condition and changes nothing.
func checkRevisions(t *testing.T, ns string, spec map[string]any) {
	t.Helper()
	ctx := context.Background()
	e, err := getExtension(ctx, ns, "roll")
	if err != nil {
		t.Fatal(err)
	}
	current := e.Status.Revision
	if got := archived(e); !slices.Equal(got, []int64{2, 1}) || e.Status.ControllerRevision != extensionhub.RevisionName("roll", current) {
		t.Fatalf("revision %d (%s), archived %v, want 2 and 1", current, e.Status.ControllerRevision, got)
	}
	if got := revisionsOnHub(t, ns); !slices.Equal(got, []int64{1, 2, current}) {
		t.Fatalf("ControllerRevisions %v", got)
	}

	spec["revisionHistoryLimit"] = int64(1)
	applyExtension(t, ns, "roll", spec)
	waitRoll(t, ns, "the history cut to one archived revision", time.Minute, func(e *v1alpha1.HostedClusterExtension) error {
		if got := archived(e); !slices.Equal(got, []int64{2}) {
			return fmt.Errorf("archived %v", got)
		}
		return nil
	})
	if got := revisionsOnHub(t, ns); !slices.Equal(got, []int64{2, current}) {
		t.Fatalf("ControllerRevisions after the limit %v, want 2 and %d", got, current)
	}

	// Roll back to revision 2: audit-operator alone.
	before := &corev1.ConfigMap{}
	if err := mgmt.Get(ctx, types.NamespacedName{Namespace: controlPlane("roll-0"), Name: "audit-operator"}, before); err != nil {
		t.Fatal(err)
	}
	spec["rollbackTo"] = map[string]any{"revision": int64(2)}
	applyExtension(t, ns, "roll", spec)
	e = waitRoll(t, ns, "the rollback available everywhere", 3*time.Minute, func(e *v1alpha1.HostedClusterExtension) error {
		if e.Status.Revision != e.Generation {
			return fmt.Errorf("revision %d, want a new one (%d)", e.Status.Revision, e.Generation)
		}
		return allAvailable(e)
	})
	rolled := e.Status.Revision
	cr := &appsv1.ControllerRevision{}
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: ns, Name: e.Status.ControllerRevision}, cr); err != nil || cr.Annotations[extensionhub.AnnotationRollbackOf] != "2" {
		t.Fatalf("the rollback's ControllerRevision %v (%v)", cr.Annotations, err)
	}
	// Archived: the newest one within the limit (the one rolled back
	// from), and 2, which rollbackTo still names.
	if got := archived(e); !slices.Equal(got, []int64{current, 2}) {
		t.Fatalf("archived after the rollback %v, want %d and 2", got, current)
	}
	for _, hcd := range []string{"roll-0", "roll-3", "roll-5", "roll-late"} {
		if ok, err := exists(ctx, mgmt, "v1", "ConfigMap", controlPlane(hcd), "paused-extra"); ok || err != nil {
			t.Fatalf("the object only revision %d had is still in %s (%v)", current, hcd, err)
		}
	}
	after := &corev1.ConfigMap{}
	if err := mgmt.Get(ctx, client.ObjectKeyFromObject(before), after); err != nil || after.UID != before.UID {
		t.Fatalf("audit-operator, in both revisions, was not handed over in place: UID %s, was %s (%v)", after.UID, before.UID, err)
	}

	// A pruned revision cannot be rolled back to: said, nothing changes.
	spec["rollbackTo"] = map[string]any{"revision": int64(1)}
	applyExtension(t, ns, "roll", spec)
	e = waitRoll(t, ns, "the rollback to a pruned revision refused", time.Minute, func(e *v1alpha1.HostedClusterExtension) error {
		if c := meta.FindStatusCondition(e.Status.Conditions, "Degraded"); c == nil || c.Reason != "InvalidSpec" ||
			!strings.Contains(c.Message, "spec.rollbackTo.revision: revision 1 is not kept") {
			return fmt.Errorf("Degraded %+v", c)
		}
		return nil
	})
	if e.Status.Revision != rolled || e.Status.Updated != 7 {
		t.Fatalf("after a refused rollback: revision %d (was %d), updated %d", e.Status.Revision, rolled, e.Status.Updated)
	}
	// Revision 2's phases copied into spec and rollbackTo unset in one
	// edit: that is what runs, so nothing new is made.
	spec["phases"] = []any{phase("operator", "", obj(cpConfig))}
	delete(spec, "rollbackTo")
	applyExtension(t, ns, "roll", spec)
	e = waitRoll(t, ns, "rollbackTo unset", time.Minute, allAvailable)
	if e.Status.Revision != rolled {
		t.Fatalf("rollbackTo unset with spec equal to the rolled-back revision made revision %d (was %d)", e.Status.Revision, rolled)
	}
}
