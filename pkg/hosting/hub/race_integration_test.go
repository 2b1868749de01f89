//go:build integration

package hub_test

import (
	"context"
	"sync"
	"testing"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hubindex"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// startRacingScheduler runs one more scheduler, as the hub runs it (its
// identity, parallel workers) but without leader election, until the test
// ends.
func startRacingScheduler(t *testing.T) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Product.HubIdentity(), ctrl.Options{
		Scheme: hub.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		LeaderElection: false, Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := hubindex.AddIndexes(mgr); err != nil {
		t.Fatal(err)
	}
	if err := scheduling.AddIndexes(mgr); err != nil {
		t.Fatal(err)
	}
	if err := scheduling.Setup(mgr, scheduling.Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("racing scheduler: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// TestSchedulersRaceWithoutLeaderElection: two more schedulers without
// leader election race the hub's over one burst, each deciding from its own
// cache and assumptions. The API's rules (a binding is written against the
// resourceVersion it was decided on; status.hostingCluster is set once) let
// exactly one binding per HostedClusterDeployment succeed: as many
// successful binding writes as HostedClusterDeployments, and each delivered
// once, to the cluster it is bound to.
func TestSchedulersRaceWithoutLeaderElection(t *testing.T) {
	const n = 30
	ns := "race"
	tenant(t, ns)
	startRacingScheduler(t)
	startRacingScheduler(t)
	before := fleettest.Metric(t, "hcpfleet_hub_scheduler_bindings_total", nil)
	conflictsBefore := fleettest.Metric(t, "hcpfleet_hub_scheduler_binding_conflicts_total", nil)
	names := createBurst(t, ns, "race", n)
	perCluster := bindings(t, ns, names)
	if got := fleettest.Metric(t, "hcpfleet_hub_scheduler_bindings_total", nil) - before; got != n {
		t.Errorf("%v successful binding writes by three schedulers for %d HostedClusterDeployments, want exactly %d", got, n, n)
	}
	t.Logf("%d hosted clusters bound by three racing schedulers: %v; %v binding conflicts retried", n, perCluster,
		fleettest.Metric(t, "hcpfleet_hub_scheduler_binding_conflicts_total", nil)-conflictsBefore)
	deleteAll(t, ns)
}
