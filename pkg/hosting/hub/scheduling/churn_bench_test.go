//go:build integration

package scheduling_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// benchTolerations are the tolerations of every Placement the benchmark
// makes (placementTolerations).
var benchTolerations []clusterv1beta1.Toleration

// placementTolerations are what the benchmark's Placements tolerate:
// OCM's availability taints for as long as the hub holds a reported
// unavailability (grace), as examples/20-placement.yaml recommends, so that
// a management cluster under load that flaps stays a candidate for that
// long, as it stays available to the hub. BENCH_PLACEMENT_TOLERATIONS=0
// leaves them out (the Placements of the runs before 2026-11-27).
func placementTolerations(grace time.Duration) []clusterv1beta1.Toleration {
	if os.Getenv("BENCH_PLACEMENT_TOLERATIONS") == "0" || grace <= 0 {
		return nil
	}
	return fleettest.AvailabilityTolerationsFor(grace)
}

// hostChurn records, per management cluster, what changed under the
// scheduler during a burst: its ManagedCluster's Available condition
// leaving True (the klusterlet's probe of its own API server timing out,
// or its lease late), OCM's availability taints added to it, and how often
// it left the burst's PlacementDecisions. With an uneven spread, no churn
// points at the scheduler; churn with decisions left, at what the
// Placement selects.
type hostChurn struct {
	mu                    sync.Mutex
	names                 map[string]bool
	available             map[string]bool
	taints                map[string]map[string]bool
	decided               map[string]map[string]bool // PlacementDecision name → clusters
	flaps, tainted, lefts map[string]int
	cancel                context.CancelFunc
	done                  sync.WaitGroup
}

func startHostChurn(b *testing.B, hubc client.WithWatch, ns string, clusters []string) *hostChurn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &hostChurn{names: map[string]bool{}, available: map[string]bool{}, taints: map[string]map[string]bool{},
		decided: map[string]map[string]bool{}, flaps: map[string]int{}, tainted: map[string]int{}, lefts: map[string]int{}, cancel: cancel}
	for _, n := range clusters {
		c.names[n] = true
	}
	var mcs clusterv1.ManagedClusterList
	if err := hubc.List(ctx, &mcs); err != nil {
		b.Fatal(err)
	}
	for i := range mcs.Items {
		c.cluster(&mcs.Items[i])
	}
	var pds clusterv1beta1.PlacementDecisionList
	if err := hubc.List(ctx, &pds, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	for i := range pds.Items {
		c.decisions(&pds.Items[i])
	}
	mw, err := retryWatch(ctx, hubc, &clusterv1.ManagedClusterList{})
	if err != nil {
		b.Fatal(err)
	}
	pw, err := retryWatch(ctx, hubc, &clusterv1beta1.PlacementDecisionList{}, client.InNamespace(ns))
	if err != nil {
		b.Fatal(err)
	}
	c.done.Add(2)
	go func() {
		defer c.done.Done()
		for ev := range mw.ResultChan() {
			if mc, ok := ev.Object.(*clusterv1.ManagedCluster); ok {
				c.cluster(mc)
			}
		}
	}()
	go func() {
		defer c.done.Done()
		for ev := range pw.ResultChan() {
			if pd, ok := ev.Object.(*clusterv1beta1.PlacementDecision); ok {
				c.decisions(pd)
			}
		}
	}()
	go func() {
		<-ctx.Done()
		mw.Stop()
		pw.Stop()
	}()
	return c
}

func (c *hostChurn) cluster(mc *clusterv1.ManagedCluster) {
	if !c.names[mc.Name] {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	available := meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	if was, seen := c.available[mc.Name]; seen && was && !available {
		c.flaps[mc.Name]++
	}
	c.available[mc.Name] = available
	now := map[string]bool{}
	for _, t := range mc.Spec.Taints {
		if slices.Contains(scheduling.AvailabilityTaints, t.Key) {
			now[t.Key] = true
			if before, seen := c.taints[mc.Name]; seen && !before[t.Key] {
				c.tainted[mc.Name]++
			}
		}
	}
	c.taints[mc.Name] = now
}

func (c *hostChurn) decisions(pd *clusterv1beta1.PlacementDecision) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := map[string]bool{}
	for _, d := range pd.Status.Decisions {
		now[d.ClusterName] = true
	}
	for name := range c.decided[pd.Name] {
		if !now[name] {
			c.lefts[name]++
		}
	}
	c.decided[pd.Name] = now
}

// stop ends the watches and says what changed, per cluster that changed:
// "cluster-3 Available left True 2×, tainted 1×, left the decisions 1×".
func (c *hostChurn) stop() string {
	c.cancel()
	c.done.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	var flapped, left int
	for name := range c.names {
		if c.flaps[name]+c.tainted[name]+c.lefts[name] == 0 {
			continue
		}
		if c.flaps[name] > 0 {
			flapped++
		}
		if c.lefts[name] > 0 {
			left++
		}
		parts = append(parts, fmt.Sprintf("%s Available left True %d×, tainted %d×, left the decisions %d×", name, c.flaps[name], c.tainted[name], c.lefts[name]))
	}
	if len(parts) == 0 {
		return "none: no management cluster left Available=True or the Placement's decisions"
	}
	slices.Sort(parts)
	return fmt.Sprintf("%d of %d clusters left Available=True, %d left the Placement's decisions: %s", flapped, len(c.names), left, strings.Join(parts, "; "))
}

// tolerationsNote says what the Placements tolerated, for the summary.
func tolerationsNote(tols []clusterv1beta1.Toleration) string {
	if len(tols) == 0 {
		return "none"
	}
	return fmt.Sprintf("OCM's availability taints for %ds", *tols[0].TolerationSeconds)
}
