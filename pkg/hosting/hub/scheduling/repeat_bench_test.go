//go:build integration

package scheduling_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
)

// BENCH_REPEAT: hcp-fleet's burst run several times on one fleet, and
// each figure's spread over the runs. A single run on a shared 2-core
// machine says little; three in a row say whether a figure reproduces.

// statusApplyKey is the hub API server's count of HCD status applies in
// hubWriteBreakdown.
const statusApplyKey = "APPLY hostedclusterdeployments/status"

// runFigures are one run's outcome and how long, from its start, until
// every hosted cluster rolled out.
type runFigures struct {
	outcome
	rollout time.Duration
}

// rolloutLimit is how long settle waits before it may give up: a multiple
// of the slowest rollout this fleet showed so far, or, before any, of the
// burst's delivery time (a rollout takes the delivery and the hosted
// control planes' start on the management clusters); never less than
// five minutes. settle waits past it while hosted clusters still settle.
func rolloutLimit(delivered, slowestRollout time.Duration) time.Duration {
	return max(5*time.Minute, 2*slowestRollout, 6*delivered)
}

// removeBurst deletes the HostedClusterDeployments in ns and waits until
// they are gone (their HostedClusters removed from the hosts), so that the
// next run starts on empty management clusters. limit is derived from the
// run (twice its rollout); past it, the wait goes on while deletions still
// progress.
func removeBurst(b *testing.B, env *fleettest.Env, hubc client.WithWatch, ns string, limit time.Duration) {
	ctx := context.Background()
	var list v1alpha1.HostedClusterDeploymentList
	if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	parallel(len(list.Items), 8, func(i int) {
		if err := hubc.Delete(ctx, &list.Items[i]); client.IgnoreNotFound(err) != nil {
			b.Error(err)
		}
	})
	start := time.Now()
	untilProgressStops(b, start.Add(max(limit, 5*time.Minute)), func() (done bool, progress int, known bool) {
		if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, 0, false
		}
		return len(list.Items) == 0, -len(list.Items), true
	}, func(int) string {
		return fmt.Sprintf("deleting the burst in %s: %d left after %s", ns, len(list.Items), time.Since(start).Round(time.Second))
	})
	fmt.Printf("burst in %s deleted in %s\n", ns, time.Since(start).Round(time.Second))
}

// untilProgressStops polls check every second until it reports done. Past
// deadline it gives up (failure says why, given the best progress seen)
// once progress has not grown for a minute: a slow machine that still makes
// progress is waited for. A check that could not tell (known false) counts
// as no progress.
func untilProgressStops(b *testing.B, deadline time.Time, check func() (done bool, progress int, known bool), failure func(best int) string) {
	best, seen, lastProgress := 0, false, time.Now()
	for {
		done, progress, known := check()
		if done {
			return
		}
		if known && (!seen || progress > best) {
			best, seen, lastProgress = progress, true, time.Now()
		}
		if time.Now().After(deadline) && time.Since(lastProgress) > time.Minute {
			b.Fatal(failure(best))
		}
		time.Sleep(time.Second)
	}
}

// statusWriteParts reads hcpfleet_hub_hcd_status_writes_total by part from
// this process's registry (the hub runs in it).
func statusWriteParts(b *testing.B) map[string]float64 {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "hcpfleet_hub_hcd_status_writes_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "part" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// partsPerHCD formats after - before per HCD, largest first.
func partsPerHCD(before, after map[string]float64, n int) string {
	type part struct {
		name string
		per  float64
	}
	var parts []part
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			parts = append(parts, part{k, d / float64(n)})
		}
	}
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].per != parts[j].per {
			return parts[i].per > parts[j].per
		}
		return parts[i].name < parts[j].name
	})
	var out []string
	for _, p := range parts {
		out = append(out, fmt.Sprintf("%s %.2f", p.name, p.per))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// printRepeat prints min / median / max of each figure over the runs
// (nothing for one run).
func printRepeat(runs []runFigures, floorBind, floorDeliver time.Duration) {
	if len(runs) < 2 {
		return
	}
	ratio := func(d, f time.Duration) float64 { return d.Seconds() / max(f.Seconds(), 0.001) }
	figure := func(name, unit string, of func(r runFigures) float64) {
		var v []float64
		for _, r := range runs {
			v = append(v, of(r))
		}
		slices.Sort(v)
		// The median of an even count is the lower middle: a value a run
		// really had.
		fmt.Printf("repeat: %-52s min %8.2f  median %8.2f  max %8.2f %s\n", name, v[0], v[(len(v)-1)/2], v[len(v)-1], unit)
	}
	fmt.Printf("repeat: %d runs of the burst on one fleet, each in a fresh namespace (floor measured once: %s / %s)\n",
		len(runs), floorBind.Round(time.Millisecond), floorDeliver.Round(time.Millisecond))
	figure("time until all bound", "s", func(r runFigures) float64 { return r.bound.Seconds() })
	figure("time until all bound, x floor", "x", func(r runFigures) float64 { return ratio(r.bound, floorBind) })
	figure("time until all delivered", "s", func(r runFigures) float64 { return r.elapsed.Seconds() })
	figure("time until all delivered, x floor", "x", func(r runFigures) float64 { return ratio(r.elapsed, floorDeliver) })
	figure("time until all rolled out and imported", "s", func(r runFigures) float64 { return r.rollout.Seconds() })
	figure("spread (max - min hosted per cluster)", "", func(r runFigures) float64 { return float64(r.spread) })
	figure("clusters over capacity", "", func(r runFigures) float64 { return float64(r.overCapacity) })
	figure("hcp-fleet writes per HCD until its Delivered", "", func(r runFigures) float64 { return r.ownWritesPerHCD })
	figure("hub writes per HCD until all delivered", "", func(r runFigures) float64 { return r.writesPerHCD })
	figure("HCD status applies per HCD until all delivered", "", func(r runFigures) float64 { return r.statusApplies })
	for i, r := range runs {
		fmt.Printf("repeat: run %d: delivery status writes per HCD by part: %s\n", i+1, r.statusParts)
	}
}
