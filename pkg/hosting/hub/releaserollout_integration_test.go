//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/releaserollout"
)

const (
	rel4189  = "quay.io/openshift-release-dev/ocp-release:4.18.9-multi"
	rel41810 = "quay.io/openshift-release-dev/ocp-release:4.18.10-multi"
)

// TestReleaseRollout rolls 4.18.9 over twelve hosted clusters spread over
// the three management clusters: a canary first, then waves of four with
// maxUnavailable 2, control plane first and node pools after.
//
//   - rw-04's upgrade fails (the HyperShift stand-in's failing-release:
//     Degraded, history Partial) → the rollout stops in wave 1
//     (WaveFailed); waves 2 and 3 are never touched.
//   - Paused, and rw-04 fixed: its control plane completes, and nothing
//     moves while paused.
//   - Resumed into a maintenance window, by label, that is closed (the
//     window is edited to one that is not open now, so the hub's clock need
//     not be played with; the planner's goldens let time pass): the hosted
//     clusters already moving finish, node pools included, and wave 2
//     waits.
//   - The window lifted: to the end. rw-10 is held by the upgrade gate (a
//     release no ClusterImageSet names: ReleaseVersionUnknown, the gate
//     reason this fleet without guest control planes can produce; OLM's
//     own holds are the gate's tests in pkg/olm/hub) and is skipped, named
//     and never forced.
//   - Right after the first completed: a rollout to 4.18.10, paused from
//     the start, is aborted (nothing moves, abort cannot be undone, and it
//     claims nothing), and a second rollout to 4.18.10 with a one-hour
//     soak moves the canary and then soaks: wave 1 is not moved. Its soak
//     shortened, it moves the rest in its waves to 4.18.10. The first
//     rollout, completed, never claims or moves a hosted cluster again,
//     its status stays as it was, and its spec can no longer change.
//
// From watches: never more than maxUnavailable upgrading, waves in order,
// and every node pool moved only once its control plane had completed the
// release. A release no ClusterImageSet names moves nothing.
func TestReleaseRollout(t *testing.T) {
	ctx := context.Background()
	const ns = "rollout"
	tenant(t, ns)
	env.ServeClusterImageSets(t)
	for _, set := range []struct{ name, image string }{{"img4.18.9-multi-appsub", rel4189}, {"img4.18.10-multi-appsub", rel41810}} {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "hive.openshift.io/v1", "kind": "ClusterImageSet",
			"metadata": map[string]any{"name": set.name}, "spec": map[string]any{"releaseImage": set.image}}}
		if err := hubc.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	const canary, failing, held = "rw-00", "rw-04", "rw-10"
	names := make([]string, 12)
	for i := range names {
		names[i] = fmt.Sprintf("rw-%02d", i)
		u := hcd(ns, names[i], func(spec map[string]any) {
			if names[i] == failing {
				spec["hostedCluster"].(map[string]any)["annotations"] = map[string]any{hypershiftsim.AnnotationFailingRelease: rel4189}
			}
		})
		u.SetLabels(map[string]string{"fleet": "prod", "canary": fmt.Sprint(names[i] == canary)})
		if err := hubc.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	on := map[string]bool{}
	for _, n := range names {
		on[waitCondition(t, ns, n, v1alpha1.ConditionAvailable, metav1.ConditionTrue, 4*time.Minute).Status.HostingCluster] = true
	}
	if len(on) != 3 {
		t.Errorf("the twelve hosted clusters are on %v, want all three management clusters", on)
	}
	// The gate holds rw-10 at 4.18.5: its release is pinned by a digest no
	// ClusterImageSet names (ReleaseVersionUnknown).
	digest := "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("b2", 32)
	setRelease(t, ns, held, digest)
	waitCondition(t, ns, held, v1alpha1.ConditionUpgradeBlocked, metav1.ConditionTrue, 2*time.Minute)

	// Every status the rollouts write, in order; every node-pool move.
	history := watchRollouts(t, ns)
	poolMoves := watchPoolMoves(t, ns, rel4189)

	// A release no ClusterImageSet names: refused, nothing moved.
	unnamed := rollout(ns, "unnamed", "quay.io/openshift-release-dev/ocp-release:4.18.7-multi")
	unnamed.Spec.HostedClusterSelector.MatchLabels = map[string]string{"fleet": "none"}
	createRollout(t, unnamed)
	waitRollout(t, ns, "unnamed", "InvalidRollout", func(rr *v1alpha1.ReleaseRollout) bool {
		return strings.Contains(meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRolloutProgressing).Message, "no ClusterImageSet")
	})

	rr := rollout(ns, "to-4-18-9", rel4189)
	rr.Spec.WaveSize, rr.Spec.MaxUnavailable = 4, intstr.FromInt32(2)
	createRollout(t, rr)
	later := map[string]string{} // waves 2 and 3, never touched until the end
	for _, n := range names[5:] {
		if n != held {
			later[n] = release
		}
	}

	// 1. rw-04 fails: the rollout stops in wave 1.
	stopped := waitRollout(t, ns, rr.Name, v1alpha1.ReasonRolloutWaveFailed, func(rr *v1alpha1.ReleaseRollout) bool {
		return state(rr, failing) == v1alpha1.RolloutStateFailed
	})
	if h := hostedCluster(stopped, failing); h.Reason != releaserollout.ReasonDegraded || stopped.Status.Wave != 1 || stopped.Status.Failed != 1 {
		t.Errorf("stopped at wave %d, %d failed, %s: %s %s; want wave 1, 1 failed, %s", stopped.Status.Wave, stopped.Status.Failed, failing, h.Reason, h.Message, releaserollout.ReasonDegraded)
	}
	if msg := meta.FindStatusCondition(stopped.Status.Conditions, v1alpha1.ConditionRolloutProgressing).Message; !strings.Contains(msg, failing) {
		t.Errorf("WaveFailed message %q does not name %s", msg, failing)
	}
	wantReleases(t, ns, later)
	wantEvent(t, ns, failing, releaserollout.EventHostedClusterFailed, rr.Name)
	// The delivery reads HyperShift's ClusterVersionSucceeding=False
	// (the stand-in writes it with the failing release) into Degraded.
	env.Eventually(t, time.Minute, failing+" Degraded names the cluster version", func(ctx context.Context) error {
		h, err := getHCD(ctx, ns, failing)
		if err != nil {
			return err
		}
		if c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionDegraded); c == nil || !strings.Contains(c.Message, "cluster version: Cluster operator kube-apiserver is degraded") {
			return fmt.Errorf("Degraded: %+v", c)
		}
		return nil
	})
	wantEvent(t, ns, held, releaserollout.EventHostedClusterBlocked, v1alpha1.ReasonReleaseVersionUnknown)

	// 2. Paused, then rw-04 fixed: its control plane completes the release,
	// and nothing moves while paused.
	patchRollout(t, ns, rr.Name, `{"spec":{"paused":true}}`)
	h := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: failing}}
	fix := fmt.Sprintf(`{"spec":{"hostedCluster":{"annotations":{%q:null}}}}`, hypershiftsim.AnnotationFailingRelease)
	if err := hubc.Patch(ctx, h, client.RawPatch(types.MergePatchType, []byte(fix))); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, ns, rr.Name, v1alpha1.ReasonRolloutPaused, func(rr *v1alpha1.ReleaseRollout) bool {
		return hostedCluster(rr, failing).Reason == releaserollout.ReasonNodePoolsUpgrading
	})
	wantReleases(t, ns, later)

	// 3. Resumed while the maintenance window of the prod hosted clusters
	// is closed: wave 1 finishes (node pools move outside the window), wave
	// 2 waits.
	closedDay := time.Now().UTC().AddDate(0, 0, 3).Weekday().String()
	patchRollout(t, ns, rr.Name, fmt.Sprintf(`{"spec":{"paused":false,"maintenanceWindows":[`+
		`{"hostedClusterSelector":{"matchLabels":{"fleet":"prod"}},"days":[%q],"start":"00:00","durationMinutes":60}]}}`, closedDay))
	waiting := waitRollout(t, ns, rr.Name, v1alpha1.ReasonRolloutInProgress, func(rr *v1alpha1.ReleaseRollout) bool {
		for _, n := range names[:5] {
			if state(rr, n) != v1alpha1.RolloutStateDone {
				return false
			}
		}
		return strings.Contains(meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRolloutProgressing).Message, "maintenance window")
	})
	if h := hostedCluster(waiting, "rw-05"); h.State != v1alpha1.RolloutStatePending || !strings.Contains(h.Message, "maintenance window") || waiting.Status.Wave != 2 {
		t.Errorf("wave %d, rw-05 %s: %s; want wave 2, Pending waiting for the maintenance window", waiting.Status.Wave, h.State, h.Message)
	}
	wantReleases(t, ns, later)

	// 4. The window lifted: to the end, rw-10 skipped with the gate's reason.
	patchRollout(t, ns, rr.Name, `{"spec":{"maintenanceWindows":null}}`)
	final := waitRollout(t, ns, rr.Name, v1alpha1.ReasonRolloutCompleted, nil)
	if final.Status.Done != 11 || final.Status.Blocked != 1 || final.Status.Failed != 0 {
		t.Errorf("status counts done %d, blocked %d, failed %d; want 11, 1, 0", final.Status.Done, final.Status.Blocked, final.Status.Failed)
	}
	if h := hostedCluster(final, held); h.State != v1alpha1.RolloutStateBlocked || h.Reason != v1alpha1.ReasonReleaseVersionUnknown {
		t.Errorf("%s: %s %s (%s), want Blocked %s", held, h.State, h.Reason, h.Message, v1alpha1.ReasonReleaseVersionUnknown)
	}
	upgraded := map[string]string{held: digest}
	for _, n := range names {
		if n != held {
			upgraded[n] = rel4189
		}
	}
	wantReleases(t, ns, upgraded)
	checkHistory(t, history(rr.Name), 2, 11)
	moves := poolMoves()
	for _, n := range names {
		m, ok := moves[n]
		switch {
		case n == held && ok:
			t.Errorf("%s: node pools moved although the gate holds it", n)
		case n != held && !ok:
			t.Errorf("%s: no node-pool move to %s seen", n, rel4189)
		case ok && (m.Image != rel4189 || m.State != v1alpha1.VersionUpdateCompleted):
			t.Errorf("%s: node pools moved while its control plane's newest release was %s %s, want %s Completed", n, m.Image, m.State, rel4189)
		}
	}

	// 5. Right after the first completed. A rollout paused from the
	// start, then aborted: nothing moves, and it claims nothing.
	aborted := rollout(ns, "aborted", rel41810)
	aborted.Spec.Paused = true
	createRollout(t, aborted)
	waitRollout(t, ns, aborted.Name, v1alpha1.ReasonRolloutPaused, nil)
	patchRollout(t, ns, aborted.Name, `{"spec":{"abort":true,"paused":false}}`)
	waitRollout(t, ns, aborted.Name, v1alpha1.ReasonRolloutAborted, nil)
	wantReleases(t, ns, upgraded)
	// Abort cannot be undone (CEL at admission).
	if err := rawPatchRollout(ns, aborted.Name, `{"spec":{"abort":false}}`); err == nil || !strings.Contains(err.Error(), "cannot be undone") {
		t.Errorf("undoing abort: %v, want refused", err)
	}

	// A second rollout to 4.18.10: the canary, then a soak of an hour
	// holds wave 1.
	rr2 := rollout(ns, "to-4-18-10", rel41810)
	rr2.Spec.WaveSize, rr2.Spec.MaxUnavailable, rr2.Spec.SoakSeconds = 4, intstr.FromInt32(2), 3600
	createRollout(t, rr2)
	soaking := waitRollout(t, ns, rr2.Name, v1alpha1.ReasonRolloutInProgress, func(rr *v1alpha1.ReleaseRollout) bool {
		return rr.Status.Wave == 1 && state(rr, canary) == v1alpha1.RolloutStateDone &&
			strings.Contains(meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRolloutProgressing).Message, "soaks until")
	})
	if soaking.Status.WaveStartTime == nil {
		t.Errorf("soaking without status.waveStartTime: %+v", soaking.Status)
	}
	rest := maps.Clone(upgraded)
	delete(rest, canary)
	wantReleases(t, ns, rest)
	wantReleases(t, ns, map[string]string{canary: rel41810})
	// The soak shortened: the rest moves, in waves.
	patchRollout(t, ns, rr2.Name, `{"spec":{"soakSeconds":0}}`)
	final2 := waitRollout(t, ns, rr2.Name, v1alpha1.ReasonRolloutCompleted, nil)
	if final2.Status.Done != 11 || final2.Status.Blocked != 1 || final2.Status.CompletionTime == nil {
		t.Errorf("second rollout: done %d, blocked %d, completed at %v; want 11, 1, set", final2.Status.Done, final2.Status.Blocked, final2.Status.CompletionTime)
	}
	moved := map[string]string{held: digest}
	for _, n := range names {
		if n != held {
			moved[n] = rel41810
		}
	}
	wantReleases(t, ns, moved)
	checkHistory(t, history(rr2.Name), 2, 11)
	claimed := 0
	for _, s := range history(rr2.Name) {
		for _, h := range s.HostedClusters {
			if h.Reason == releaserollout.ReasonClaimed {
				claimed++
			}
		}
	}
	t.Logf("second rollout: %d hosted-cluster statuses ClaimedByOtherRollout (a cache behind the first's completion)", claimed)
	// The first rollout, completed, wrote nothing after its completion.
	var after []string
	completed := false
	for _, s := range history(rr.Name) {
		c := meta.FindStatusCondition(s.Conditions, v1alpha1.ConditionRolloutCompleted)
		done := c != nil && c.Status == metav1.ConditionTrue && s.CompletionTime != nil
		if completed && (!done || !s.CompletionTime.Equal(final.Status.CompletionTime) || s.Done != final.Status.Done) {
			after = append(after, fmt.Sprintf("%+v", s))
		}
		completed = completed || done
	}
	if !completed || len(after) > 0 {
		t.Errorf("first rollout: completed %v, statuses after completion that differ: %v", completed, after)
	}
	// And its spec can no longer change (CEL).
	if err := rawPatchRollout(ns, rr.Name, `{"spec":{"paused":true}}`); err == nil || !strings.Contains(err.Error(), "completed ReleaseRollout cannot change") {
		t.Errorf("changing a completed rollout: %v, want refused", err)
	}
}

func rawPatchRollout(ns, name, patch string) error {
	rr := &v1alpha1.ReleaseRollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	return hubc.Patch(context.Background(), rr, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// hostedCluster is rr's status of one hosted cluster (zero: none).
func hostedCluster(rr *v1alpha1.ReleaseRollout, name string) v1alpha1.RolloutHostedClusterStatus {
	for _, h := range rr.Status.HostedClusters {
		if h.Name == name {
			return h
		}
	}
	return v1alpha1.RolloutHostedClusterStatus{}
}

// wantEvent waits for an Event of reason on the HCD name whose message
// contains part.
func wantEvent(t *testing.T, ns, name, reason, part string) {
	t.Helper()
	env.Eventually(t, time.Minute, fmt.Sprintf("Event %s on %s", reason, name), func(ctx context.Context) error {
		var list corev1.EventList
		if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		var seen []string
		for _, e := range list.Items {
			if e.InvolvedObject.Kind != "HostedClusterDeployment" || e.InvolvedObject.Name != name {
				continue
			}
			if e.Reason == reason && strings.Contains(e.Message, part) {
				return nil
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return fmt.Errorf("events on it: %v", seen)
	})
}

// watchPoolMoves records, per HCD of ns, the newest control-plane release
// in its version history (image, state) when its first node pool was
// first seen asking for image; the function returns them.
func watchPoolMoves(t *testing.T, ns, image string) func() map[string]v1alpha1.VersionHistoryEntry {
	t.Helper()
	wc, err := client.NewWithWatch(env.Fleet.Hub.Config(), client.Options{Scheme: hub.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &v1alpha1.HostedClusterDeploymentList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	seen := map[string]v1alpha1.VersionHistoryEntry{}
	go func() {
		for ev := range w.ResultChan() {
			h, ok := ev.Object.(*v1alpha1.HostedClusterDeployment)
			if !ok || len(h.Spec.NodePools) == 0 || h.Spec.NodePools[0].Spec.Release.Image != image {
				continue
			}
			mu.Lock()
			if _, done := seen[h.Name]; !done {
				var latest v1alpha1.VersionHistoryEntry
				if v := h.Status.Version; v != nil && len(v.History) > 0 {
					latest = v.History[0]
				}
				seen[h.Name] = latest
			}
			mu.Unlock()
		}
	}()
	return func() map[string]v1alpha1.VersionHistoryEntry {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}

func rollout(ns, name, image string) *v1alpha1.ReleaseRollout {
	return &v1alpha1.ReleaseRollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ReleaseRolloutSpec{
			HostedClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "prod"}},
			CanarySelector:        &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}},
			Release:               v1alpha1.RolloutRelease{Image: image}, WaveSize: 2, MaxUnavailable: intstr.FromInt32(1)}}
}

func createRollout(t *testing.T, rr *v1alpha1.ReleaseRollout) {
	t.Helper()
	if err := hubc.Create(context.Background(), rr); err != nil {
		t.Fatal(err)
	}
}

func patchRollout(t *testing.T, ns, name, patch string) {
	t.Helper()
	rr := &v1alpha1.ReleaseRollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := hubc.Patch(context.Background(), rr, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

func setRelease(t *testing.T, ns, name, image string) {
	t.Helper()
	h := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := fmt.Sprintf(`{"spec":{"hostedCluster":{"spec":{"release":{"image":%q}}}}}`, image)
	if err := hubc.Patch(context.Background(), h, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

func state(rr *v1alpha1.ReleaseRollout, name string) v1alpha1.RolloutState {
	for _, h := range rr.Status.HostedClusters {
		if h.Name == name {
			return h.State
		}
	}
	return ""
}

// waitRollout waits until the rollout's status describes its generation
// with RolloutProgressing's reason and ok (nil: any).
func waitRollout(t *testing.T, ns, name, reason string, ok func(*v1alpha1.ReleaseRollout) bool) *v1alpha1.ReleaseRollout {
	t.Helper()
	rr := &v1alpha1.ReleaseRollout{}
	env.Eventually(t, 4*time.Minute, fmt.Sprintf("ReleaseRollout %s %s", name, reason), func(ctx context.Context) error {
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, rr); err != nil {
			return err
		}
		c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRolloutProgressing)
		if rr.Status.ObservedGeneration != rr.Generation || c == nil || c.Reason != reason || ok != nil && !ok(rr) {
			return fmt.Errorf("generation %d, status %+v", rr.Generation, rr.Status)
		}
		return nil
	})
	return rr
}

// wantReleases asserts the control-plane release each HCD asks for.
func wantReleases(t *testing.T, ns string, want map[string]string) {
	t.Helper()
	for name, image := range want {
		h, err := getHCD(context.Background(), ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Spec.HostedCluster.Spec.Release.Image; got != image {
			t.Errorf("%s asks for %s, want %s", name, got, image)
		}
	}
}

// watchRollouts records every status the rollouts of ns are seen with, in
// order; the function returned gives one rollout's.
func watchRollouts(t *testing.T, ns string) func(name string) []v1alpha1.ReleaseRolloutStatus {
	t.Helper()
	wc, err := client.NewWithWatch(env.Fleet.Hub.Config(), client.Options{Scheme: hub.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &v1alpha1.ReleaseRolloutList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	seen := map[string][]v1alpha1.ReleaseRolloutStatus{}
	go func() {
		for ev := range w.ResultChan() {
			if rr, ok := ev.Object.(*v1alpha1.ReleaseRollout); ok {
				mu.Lock()
				seen[rr.Name] = append(seen[rr.Name], rr.Status)
				mu.Unlock()
			}
		}
	}()
	return func(name string) []v1alpha1.ReleaseRolloutStatus {
		mu.Lock()
		defer mu.Unlock()
		return append([]v1alpha1.ReleaseRolloutStatus(nil), seen[name]...)
	}
}

// checkHistory asserts from a rollout's status history that never more
// than maxUnavailable hosted clusters were upgrading, that hosted clusters
// left Pending in wave order (canary first), and that wantStarted did.
func checkHistory(t *testing.T, history []v1alpha1.ReleaseRolloutStatus, maxUnavailable int32, wantStarted int) {
	t.Helper()
	if len(history) == 0 {
		t.Fatal("no status seen")
	}
	started := map[string]int{}
	waveOf := map[string]int32{}
	for i, s := range history {
		if s.Upgrading > maxUnavailable {
			t.Errorf("status %d: %d upgrading, maxUnavailable %d", i, s.Upgrading, maxUnavailable)
		}
		for _, h := range s.HostedClusters {
			waveOf[h.Name] = h.Wave
			if _, ok := started[h.Name]; !ok && (h.State == v1alpha1.RolloutStateUpgrading || h.State == v1alpha1.RolloutStateDone) {
				started[h.Name] = i
			}
		}
	}
	for a, ia := range started {
		for b, ib := range started {
			if waveOf[a] < waveOf[b] && ia > ib {
				t.Errorf("%s (wave %d) started after %s (wave %d)", a, waveOf[a], b, waveOf[b])
			}
		}
	}
	if len(started) != wantStarted {
		t.Errorf("started %v, want the %d not held", started, wantStarted)
	}
	t.Logf("%d statuses seen; started at %v", len(history), started)
}
