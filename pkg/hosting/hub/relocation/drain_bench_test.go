//go:build integration

package relocation_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/kubectlhcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/relocation"
)

// hubWrites counts the requests that change something the hub replicas
// send (hcpfleet.Options.HubTransport): the hub's own writes, Events
// included, apart from OCM's and the tests', and from the leader-election
// lease renewals (time, not work).
var hubWrites atomic.Int64

func countHubWrites(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		switch req.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			if !strings.Contains(req.URL.Path, "/leases/") {
				hubWrites.Add(1)
			}
		}
		return next.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// BenchmarkDrain is the `drain:` line of `make bench` (issue #35's
// measure): BENCH_DRAIN hosted clusters (default 20) with guests, all on
// one management cluster of the package's fleet, moved off it at once as
// `kubectl hcpfleet drain` moves them (the cluster cordoned, one
// HostedClusterRelocation each without a destination, the hub's
// --relocation-concurrency bounding how many run): the time per hosted
// cluster, from the relocations' creation until the last is Done, and the
// hub's writes per move (every write of the hub's replicas meanwhile:
// relocation, scheduler, delivery, import).
func BenchmarkDrain(b *testing.B) {
	n := 20
	if v, err := strconv.Atoi(os.Getenv("BENCH_DRAIN")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	const ns, from, to = "bench-drain", "cluster-1", "cluster-2"
	if err := fleettest.Tenant(ctx, hubc, ns); err != nil {
		b.Fatal(err)
	}
	if err := fleettest.SetTenantPolicy(ctx, hubc, ns, func(p *v1alpha1.TenantPolicySpec) { p.Hostnames = []string{"example.com"} }); err != nil {
		b.Fatal(err)
	}
	// All on one cluster: the other cordoned while they are placed.
	setCordon(b, to, true)
	decides(b, ns, from)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("drain-%d", i)
		if err := hubc.Create(ctx, fleettest.HCD(ns, names[i], fixedAPIHostname("api."+names[i]+".example.com"))); err != nil {
			b.Fatal(err)
		}
	}
	allOn(b, ns, names, from, 10*time.Minute)
	setCordon(b, to, false)
	setCordon(b, from, true)
	decides(b, ns, to)

	b.ResetTimer()
	writes, start := hubWrites.Load(), time.Now()
	for _, name := range names {
		hcr := &v1alpha1.HostedClusterRelocation{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"hcpfleet.io/drain": from}},
			Spec:       v1alpha1.HostedClusterRelocationSpec{HostedClusterDeployment: name},
		}
		if err := hubc.Create(ctx, hcr); err != nil {
			b.Fatal(err)
		}
	}
	env.Eventually(b, time.Duration(n)*5*time.Minute, "every relocation Done", func(ctx context.Context) error {
		var list v1alpha1.HostedClusterRelocationList
		if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		done := 0
		for _, hcr := range list.Items {
			switch p := relocation.Phase(hcr.Status.Phase); {
			case p == relocation.PhaseDone:
				done++
			case p.Final():
				b.Fatalf("relocation %s ended %s: %v", hcr.Name, p, hcr.Status.Conditions)
			}
		}
		if done < n {
			return fmt.Errorf("%d of %d Done", done, n)
		}
		return nil
	})
	elapsed, written := time.Since(start), hubWrites.Load()-writes
	b.StopTimer()
	allOn(b, ns, names, to, 2*time.Minute)
	fmt.Printf("drain: %d hosted clusters moved off %s in %s: %s per hosted cluster, %.1f hub writes per move (hub --relocation-concurrency %d)\n",
		n, from, elapsed.Round(time.Second), (elapsed / time.Duration(n)).Round(100*time.Millisecond), float64(written)/float64(n), relocation.DefaultMaxActive)

	setCordon(b, from, false)
	for _, name := range names {
		if err := hubc.Delete(ctx, &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); client.IgnoreNotFound(err) != nil {
			b.Fatal(err)
		}
	}
}

// setCordon sets or removes the cordon taint as kubectl hcpfleet cordon
// does (retrying when another writer changed the ManagedCluster).
func setCordon(b *testing.B, cluster string, cordon bool) {
	b.Helper()
	if err := kubectlhcpfleet.Cordon(context.Background(), hubc, io.Discard, cluster, cordon); err != nil {
		b.Fatal(err)
	}
}

// decides waits until the tenant's Placement decides cluster alone (OCM
// saw the cordons).
func decides(b *testing.B, ns, cluster string) {
	b.Helper()
	env.Eventually(b, 2*time.Minute, "Placement "+ns+"/hosts decides "+cluster+" alone", func(ctx context.Context) error {
		var pds clusterv1beta1.PlacementDecisionList
		if err := hubc.List(ctx, &pds, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: "hosts"}); err != nil {
			return err
		}
		var decided []string
		for _, pd := range pds.Items {
			for _, d := range pd.Status.Decisions {
				decided = append(decided, d.ClusterName)
			}
		}
		if len(decided) != 1 || decided[0] != cluster {
			return fmt.Errorf("decided %v", decided)
		}
		return nil
	})
}

// allOn waits until every HCD of names is bound to cluster and Available.
func allOn(b *testing.B, ns string, names []string, cluster string, timeout time.Duration) {
	b.Helper()
	env.Eventually(b, timeout, fmt.Sprintf("%d hosted clusters Available on %s", len(names), cluster), func(ctx context.Context) error {
		for _, name := range names {
			hcd := &v1alpha1.HostedClusterDeployment{}
			if err := hubc.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, hcd); err != nil {
				return err
			}
			if hcd.Status.HostingCluster != cluster || !conditionTrue(hcd, v1alpha1.ConditionAvailable) {
				return fmt.Errorf("%s bound to %q, conditions %v", name, hcd.Status.HostingCluster, hcd.Status.Conditions)
			}
		}
		return nil
	})
}
