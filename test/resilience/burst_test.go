//go:build integration

package resilience

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// hubKilledMidBurst: a burst of HostedClusterDeployments while the hub is
// killed again and again (no graceful shutdown, no lease release: the next
// replica waits for the lease to expire), with users deleting hosted
// clusters as they are delivered and recreating one under the same name.
func hubKilledMidBurst(t *testing.T, r *row) {
	ctx := context.Background()
	n, kills := envInt("RESILIENCE_HCDS", 300), envInt("RESILIENCE_KILLS", 3)
	seed := time.Now().UnixNano()
	if s, err := strconv.ParseInt(os.Getenv("RESILIENCE_SEED"), 10, 64); err == nil {
		seed = s
	}
	rng := rand.New(rand.NewSource(seed))
	r.figure("seed %d", seed)
	const ns = "burst"
	if err := fleettest.Tenant(ctx, hubc, ns); err != nil {
		t.Fatal(err)
	}
	// Room for the burst with some to spare on every cluster (the steady
	// hosted clusters are there too).
	capacity := int32(n/len(env.Fleet.Managed) + 20)
	setCapacity(t, capacity)

	moves := watchBindings(t, ns)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("b-%03d", i)
	}
	deletedAfterDelivery, recreated := names[7], names[13]
	churn := make(chan error, 1)
	go func() { churn <- churnDuringBurst(ctx, ns, deletedAfterDelivery, recreated) }()

	began := time.Now()
	createAll(t, ns, names)
	var killedAt []int
	for k := range kills {
		// A random point in the k-th slice of the burst.
		target := (k*n + rng.Intn(n)) / (kills + 1)
		eventually(t, 10*time.Minute, fmt.Sprintf("kill %d: %d bound", k+1, target), func(ctx context.Context) error {
			if b := countBound(ctx, t, ns); b < target {
				return fmt.Errorf("%d bound", b)
			}
			return nil
		})
		killedAt = append(killedAt, countBound(ctx, t, ns))
		env.Product.KillHub(leader)
		leader = env.Product.StartHub()
	}
	r.figure("killed at %v bound", killedAt)
	if err := <-churn; err != nil {
		t.Fatal(err)
	}
	perCluster := boundOnceAndDelivered(t, ns, n-1)
	r.figure("%d bound and delivered in %s", n-1, time.Since(began).Round(time.Second))
	eventually(t, 10*time.Minute, "every hosted cluster Available", func(ctx context.Context) error {
		var list v1alpha1.HostedClusterDeploymentList
		if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		notYet := 0
		var example error
		for i := range list.Items {
			if err := available(&list.Items[i]); err != nil {
				notYet++
				example = err
			}
		}
		if notYet > 0 {
			return fmt.Errorf("%d not Available, e.g. %v", notYet, example)
		}
		return nil
	})
	r.figure("all Available after %s", time.Since(began).Round(time.Second))
	for cluster, count := range perCluster {
		if int32(count) > capacity {
			t.Errorf("%s hosts %d of the burst, over its capacity %d", cluster, count, capacity)
		}
	}
	r.figure("per cluster %v (capacity %d)", perCluster, capacity)
	if m := moves(); len(m) > 0 {
		t.Errorf("HostedClusterDeployments moved to another cluster after being bound: %v", m)
	}
}

// setCapacity sets maxHostedClusters on the default HostingConfig every
// management cluster runs with, and restores it when the test ends.
func setCapacity(t *testing.T, capacity int32) {
	t.Helper()
	ctx := context.Background()
	hc := &v1alpha1.HostingConfig{}
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: "hcp-fleet", Name: "default"}, hc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(hc.DeepCopy())
	hc.Spec.Capacity = &v1alpha1.CapacityConfig{MaxHostedClusters: capacity, AboveThreshold: capacity}
	if err := hubc.Patch(ctx, hc, patch); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		restore := []byte(`{"spec":{"capacity":null}}`)
		if err := hubc.Patch(context.Background(), hc, client.RawPatch(types.MergePatchType, restore)); err != nil {
			t.Error(err)
		}
	})
}

// createAll creates the HostedClusterDeployments at once, from several
// writers as many users would.
func createAll(t *testing.T, ns string, names []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	sem := make(chan struct{}, 8)
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs <- hubc.Create(context.Background(), fleettest.HCD(ns, name, func(spec map[string]any) { delete(spec, "nodePools") }))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func countBound(ctx context.Context, t *testing.T, ns string) int {
	var list v1alpha1.HostedClusterDeploymentList
	if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Logf("listing: %v", err)
		return 0
	}
	bound := 0
	for _, h := range list.Items {
		if h.Status.HostingCluster != "" {
			bound++
		}
	}
	return bound
}

// churnDuringBurst deletes one HostedClusterDeployment as soon as its
// ManifestWork exists, and deletes another as soon as it is bound and
// creates it again under the same name the moment the first is gone (before
// every cache has caught up). The first must leave nothing behind; the
// second must be bound and delivered again as a new object.
func churnDuringBurst(ctx context.Context, ns, deleteAfterDelivery, recreate string) error {
	// Polled closely: the churn must hit the moment a state is reached.
	poll := func(what string, cond func(h *v1alpha1.HostedClusterDeployment, err error) bool) error {
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
			h, err := getHCD(ctx, ns, what)
			return cond(h, err), nil
		})
		if err != nil {
			return fmt.Errorf("%s/%s: %w", ns, what, err)
		}
		return nil
	}
	if err := poll(deleteAfterDelivery, func(h *v1alpha1.HostedClusterDeployment, err error) bool {
		// status.manifestWork is written with the binding: the ManifestWork
		// itself is what must exist.
		return err == nil && h.Status.HostingCluster != "" &&
			hubc.Get(ctx, types.NamespacedName{Namespace: h.Status.HostingCluster, Name: hosting.WorkName(ns, deleteAfterDelivery)}, &workv1.ManifestWork{}) == nil
	}); err != nil {
		return err
	}
	if err := hubc.Delete(ctx, &v1alpha1.HostedClusterDeployment{ObjectMeta: objectMeta(ns, deleteAfterDelivery)}); err != nil {
		return err
	}
	var oldUID types.UID
	if err := poll(recreate, func(h *v1alpha1.HostedClusterDeployment, err error) bool {
		oldUID = h.UID
		return err == nil && h.Status.HostingCluster != ""
	}); err != nil {
		return err
	}
	if err := hubc.Delete(ctx, &v1alpha1.HostedClusterDeployment{ObjectMeta: objectMeta(ns, recreate)}); err != nil {
		return err
	}
	if err := poll(recreate, func(_ *v1alpha1.HostedClusterDeployment, err error) bool { return apierrors.IsNotFound(err) }); err != nil {
		return err
	}
	if err := hubc.Create(ctx, fleettest.HCD(ns, recreate, func(spec map[string]any) { delete(spec, "nodePools") })); err != nil {
		return err
	}
	h, err := getHCD(ctx, ns, recreate)
	if err != nil {
		return err
	}
	if h.UID == oldUID {
		return fmt.Errorf("%s/%s: recreated with the same UID", ns, recreate)
	}
	// The deleted one is gone with its ManifestWork.
	return poll(deleteAfterDelivery, func(_ *v1alpha1.HostedClusterDeployment, err error) bool {
		if !apierrors.IsNotFound(err) {
			return false
		}
		var works workv1.ManifestWorkList
		if err := hubc.List(ctx, &works, client.MatchingLabels{hosting.LabelHCDNamespace: ns, hosting.LabelHCDName: deleteAfterDelivery}); err != nil {
			return false
		}
		return len(works.Items) == 0
	})
}

// watchBindings records, until the test ends, every binding it sees change
// from one cluster to another for the same object (a HostedClusterDeployment
// recreated under its name is another object). The returned function
// reports the moves seen so far.
func watchBindings(t *testing.T, ns string) func() []string {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	first := map[types.UID]string{}
	var moves []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var list v1alpha1.HostedClusterDeploymentList
			if err := hubc.List(ctx, &list, client.InNamespace(ns)); err == nil {
				mu.Lock()
				for _, h := range list.Items {
					c := h.Status.HostingCluster
					if c == "" {
						continue
					}
					if was, ok := first[h.UID]; !ok {
						first[h.UID] = c
					} else if was != c {
						moves = append(moves, fmt.Sprintf("%s: %s -> %s", h.Name, was, c))
						first[h.UID] = c
					}
				}
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(moves)
	}
}

// boundOnceAndDelivered waits until want HostedClusterDeployments are bound
// and delivered, then checks each has exactly one ManifestWork, in its
// cluster's namespace, and no ManifestWork is left without one. It returns
// the count per cluster.
func boundOnceAndDelivered(t *testing.T, ns string, want int) map[string]int {
	t.Helper()
	perCluster := map[string]int{}
	eventually(t, 10*time.Minute, fmt.Sprintf("%d bound and delivered", want), func(ctx context.Context) error {
		var list v1alpha1.HostedClusterDeploymentList
		if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		// status.manifestWork is written with the binding; delivered is
		// when the ManifestWork exists.
		var works workv1.ManifestWorkList
		if err := hubc.List(ctx, &works, client.MatchingLabels{hosting.LabelHCDNamespace: ns}); err != nil {
			return err
		}
		written := map[string]bool{}
		for _, w := range works.Items {
			written[w.Labels[hosting.LabelHCDName]] = true
		}
		count := map[string]int{}
		delivered := 0
		for _, h := range list.Items {
			if h.Status.HostingCluster != "" && written[h.Name] {
				delivered++
				count[h.Status.HostingCluster]++
			}
		}
		if len(list.Items) != want || delivered != want {
			return fmt.Errorf("%d of %d delivered (%d exist)", delivered, want, len(list.Items))
		}
		perCluster = count
		return nil
	})
	works, problems, err := fleettest.OneManifestWorkEach(context.Background(), hubc, ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if works != want {
		t.Errorf("%d ManifestWorks for %d HostedClusterDeployments", works, want)
	}
	return perCluster
}
