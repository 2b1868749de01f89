//go:build integration

package scheduling_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
)

// upgradeRelease is the z-stream the benchmark's rollout moves the burst's
// hosted clusters to (they run fleettest.Release, 4.18.5).
const upgradeRelease = "quay.io/openshift-release-dev/ocp-release:4.18.6-multi"

// upgradeFigures are the `upgrade:` line's.
type upgradeFigures struct {
	hcds, clusters, waveSize, waves int
	elapsed                         time.Duration
	// standIn is the HyperShift stand-in's own time for the waves, one
	// upgrade duration each (the burst's hosted clusters have no node
	// pools): the floor no rollout can go below.
	standIn      time.Duration
	writes       int
	writesBy     []string
	waveDuration []time.Duration
}

func (u upgradeFigures) String() string {
	overhead := (u.elapsed - u.standIn) / time.Duration(max(u.waves, 1))
	return fmt.Sprintf("upgrade: %d HCDs / %d clusters to a new z-stream in %d waves of %d (maxUnavailable %d) in %s; "+
		"the stand-in's upgrades alone %s, the rollout's overhead %s per wave (waves: %s); hub writes %.2f per HCD (%s)",
		u.hcds, u.clusters, u.waves, u.waveSize, u.waveSize, u.elapsed.Round(100*time.Millisecond),
		u.standIn.Round(100*time.Millisecond), overhead.Round(100*time.Millisecond), waveDurations(u.waveDuration),
		float64(u.writes)/float64(max(u.hcds, 1)), strings.Join(u.writesBy, ", "))
}

// waveDurations lists each wave's time, in order.
func waveDurations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Round(100 * time.Millisecond).String()
	}
	return strings.Join(parts, " ")
}

// benchUpgrade rolls the burst's hosted clusters of ns (all rolled out) to
// a new z-stream with one ReleaseRollout, waves of BENCH_UPGRADE_WAVE
// (default 50) and as many at once, and measures how long it takes against
// the stand-in's own upgrade time and how many writes hcp-fleet's hub sends
// for it (every write from the rollout's creation to its completion: the
// rollout's moves and status, the delivery's ManifestWork updates and HCD
// status, Events).
func benchUpgrade(b *testing.B, env *fleettest.Env, hubc client.WithWatch, own *hubRequests, ns string, hcds int) upgradeFigures {
	b.Helper()
	ctx := context.Background()
	env.ServeClusterImageSets(b)
	set := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "hive.openshift.io/v1", "kind": "ClusterImageSet",
		"metadata": map[string]any{"name": "img4.18.6-multi-appsub"}, "spec": map[string]any{"releaseImage": upgradeRelease}}}
	if err := hubc.Create(ctx, set); client.IgnoreAlreadyExists(err) != nil {
		b.Fatal(err)
	}
	wave := envInt("BENCH_UPGRADE_WAVE", 50)
	rr := &v1alpha1.ReleaseRollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bench-upgrade"},
		Spec: v1alpha1.ReleaseRolloutSpec{Release: v1alpha1.RolloutRelease{Image: upgradeRelease},
			WaveSize: int32(wave), MaxUnavailable: intstr.FromInt32(int32(wave))}}
	// Quiet first: the writes counted are the rollout's, not the tail of
	// the burst's status.
	own.quiet(5 * time.Second)
	start := time.Now()
	if err := hubc.Create(ctx, rr); err != nil {
		b.Fatal(err)
	}
	var waveEnds []time.Time
	lastWave := int32(0)
	env.Eventually(b, 60*time.Minute, "the benchmark's ReleaseRollout Completed", func(ctx context.Context) error {
		live := &v1alpha1.ReleaseRollout{}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: ns, Name: rr.Name}, live); err != nil {
			return err
		}
		for ; lastWave < live.Status.Wave; lastWave++ {
			waveEnds = append(waveEnds, time.Now())
		}
		c := meta.FindStatusCondition(live.Status.Conditions, v1alpha1.ConditionRolloutCompleted)
		if c == nil || c.Status != metav1.ConditionTrue || live.Status.ObservedGeneration != live.Generation {
			return fmt.Errorf("wave %d of %d: %d done, %d upgrading, %d blocked, %d failed", live.Status.Wave, live.Status.Waves,
				live.Status.Done, live.Status.Upgrading, live.Status.Blocked, live.Status.Failed)
		}
		if live.Status.Done != int32(hcds) {
			return fmt.Errorf("completed with %d done of %d: %+v", live.Status.Done, hcds, live.Status.HostedClusters)
		}
		return nil
	})
	end := time.Now()
	for len(waveEnds) < (hcds+wave-1)/wave {
		waveEnds = append(waveEnds, end)
	}
	u := upgradeFigures{hcds: hcds, clusters: len(env.Fleet.Managed), waveSize: wave, waves: len(waveEnds), elapsed: end.Sub(start)}
	u.standIn = time.Duration(u.waves) * hypershiftsim.DefaultRolloutDuration
	prev := start
	for _, at := range waveEnds {
		u.waveDuration = append(u.waveDuration, at.Sub(prev))
		prev = at
	}
	// The rollout's last status and Events go out after Completed is seen.
	own.quiet(5 * time.Second)
	u.writes, u.writesBy = own.writesBetween(start, time.Now(), hcds)
	return u
}

// writesBetween counts the writes hcp-fleet's hub sent from start to end
// (leader-election leases apart), and per HCD of hcds by verb and
// resource, most first.
func (h *hubRequests) writesBetween(start, end time.Time, hcds int) (int, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	by := map[string]int{}
	total := 0
	for _, w := range h.writes {
		if w.at.Before(start) || w.at.After(end) || w.resource == "leases" {
			continue
		}
		by[w.key()]++
		total++
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if by[a] != by[b] {
			return by[b] - by[a]
		}
		return strings.Compare(a, b)
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s %.2f", k, float64(by[k])/float64(max(hcds, 1)))
	}
	return total, out
}
