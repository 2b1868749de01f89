//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
)

const (
	rel4189  = "quay.io/openshift-release-dev/ocp-release:4.18.9-multi"
	rel41810 = "quay.io/openshift-release-dev/ocp-release:4.18.10-multi"
)

// TestReleaseRollout rolls 4.18.9 over five hosted clusters on the local
// fleet: a canary first, then waves of two with maxUnavailable 1; one
// hosted cluster is held by the upgrade gate (a release no ClusterImageSet
// names) and is skipped, never forced. A soak holds the wave after the
// canary, a pause holds it too, and after the rollout a second one to
// 4.18.10, paused, is aborted without moving anything. A rollout to a release no
// ClusterImageSet names moves nothing.
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
	names := []string{"ru-canary", "ru-a", "ru-b", "ru-c", "ru-held"}
	for _, n := range names {
		u := hcd(ns, n)
		u.SetLabels(map[string]string{"fleet": "prod", "canary": fmt.Sprint(n == "ru-canary")})
		if err := hubc.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names {
		waitCondition(t, ns, n, v1alpha1.ConditionAvailable, metav1.ConditionTrue, 3*time.Minute)
	}
	// ru-held asks for a release pinned by a digest no ClusterImageSet
	// names: the upgrade gate holds it at 4.18.5 (ReleaseVersionUnknown).
	digest := "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("b2", 32)
	setRelease(t, ns, "ru-held", digest)
	waitCondition(t, ns, "ru-held", v1alpha1.ConditionUpgradeBlocked, metav1.ConditionTrue, 2*time.Minute)

	// Every status the rollout writes, in order, from a watch.
	history := watchRollouts(t, ns)

	// A release no ClusterImageSet names: refused, nothing moved.
	unnamed := rollout(ns, "unnamed", "quay.io/openshift-release-dev/ocp-release:4.18.7-multi")
	unnamed.Spec.HostedClusterSelector.MatchLabels = map[string]string{"fleet": "none"}
	createRollout(t, unnamed)
	waitRollout(t, ns, "unnamed", "InvalidRollout", func(rr *v1alpha1.ReleaseRollout) bool {
		return strings.Contains(meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRolloutProgressing).Message, "no ClusterImageSet")
	})

	// The canary goes first; the soak then holds the next wave.
	rr := rollout(ns, "to-4-18-9", rel4189)
	rr.Spec.SoakSeconds = 3600
	createRollout(t, rr)
	waitRollout(t, ns, rr.Name, v1alpha1.ReasonRolloutInProgress, func(rr *v1alpha1.ReleaseRollout) bool {
		return rr.Status.Wave == 1 && state(rr, "ru-canary") == v1alpha1.RolloutStateDone &&
			strings.Contains(meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRolloutProgressing).Message, "soaks until")
	})
	wantReleases(t, ns, map[string]string{"ru-canary": rel4189, "ru-a": release, "ru-b": release, "ru-c": release, "ru-held": digest})

	// Paused (and the soak lifted in the same edit): still nothing moves.
	patchRollout(t, ns, rr.Name, `{"spec":{"paused":true,"soakSeconds":0}}`)
	waitRollout(t, ns, rr.Name, v1alpha1.ReasonRolloutPaused, nil)
	wantReleases(t, ns, map[string]string{"ru-a": release, "ru-b": release, "ru-c": release})

	// Resumed: to the end, ru-held skipped with the gate's reason.
	patchRollout(t, ns, rr.Name, `{"spec":{"paused":false}}`)
	final := waitRollout(t, ns, rr.Name, v1alpha1.ReasonRolloutCompleted, nil)
	if final.Status.Done != 4 || final.Status.Blocked != 1 || final.Status.Failed != 0 {
		t.Errorf("status counts done %d, blocked %d, failed %d; want 4, 1, 0", final.Status.Done, final.Status.Blocked, final.Status.Failed)
	}
	for _, h := range final.Status.HostedClusters {
		if h.Name == "ru-held" && (h.State != v1alpha1.RolloutStateBlocked || h.Reason != v1alpha1.ReasonReleaseVersionUnknown) {
			t.Errorf("ru-held: %s %s (%s), want Blocked %s", h.State, h.Reason, h.Message, v1alpha1.ReasonReleaseVersionUnknown)
		}
	}
	wantReleases(t, ns, map[string]string{"ru-canary": rel4189, "ru-a": rel4189, "ru-b": rel4189, "ru-c": rel4189, "ru-held": digest})
	checkHistory(t, history(rr.Name), 1)

	// A second rollout, paused from the start, then aborted: nothing moves.
	rr2 := rollout(ns, "to-4-18-10", rel41810)
	rr2.Spec.Paused = true
	createRollout(t, rr2)
	waitRollout(t, ns, rr2.Name, v1alpha1.ReasonRolloutPaused, nil)
	patchRollout(t, ns, rr2.Name, `{"spec":{"abort":true,"paused":false}}`)
	waitRollout(t, ns, rr2.Name, v1alpha1.ReasonRolloutAborted, nil)
	wantReleases(t, ns, map[string]string{"ru-canary": rel4189, "ru-a": rel4189, "ru-b": rel4189, "ru-c": rel4189})
	// Abort cannot be undone (CEL at admission).
	live := &v1alpha1.ReleaseRollout{}
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: ns, Name: rr2.Name}, live); err != nil {
		t.Fatal(err)
	}
	if err := hubc.Patch(ctx, live, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"abort":false}}`))); err == nil || !strings.Contains(err.Error(), "cannot be undone") {
		t.Errorf("undoing abort: %v, want refused", err)
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
// than maxUnavailable hosted clusters were upgrading, and that hosted
// clusters left Pending in wave order (canary first).
func checkHistory(t *testing.T, history []v1alpha1.ReleaseRolloutStatus, maxUnavailable int32) {
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
	if len(started) != 4 {
		t.Errorf("started %v, want the four not held", started)
	}
	t.Logf("%d statuses seen; started at %v", len(history), started)
}
