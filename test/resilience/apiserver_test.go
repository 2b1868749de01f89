//go:build integration

package resilience

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

var hostingAvailable = conditionIs(v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionTrue)

// hubAPIServerRestart: the hub's API server goes away and comes back (an
// upgrade, a crash). Nobody helps the hub, the OCM agents or hcp-fleet's
// agents reconnect: they must, by themselves.
func hubAPIServerRestart(t *testing.T, r *row) {
	ctx := context.Background()
	exits0 := env.Product.HubExits()
	env.Fleet.Hub.StopAPIServer()
	// The outage itself; nothing is asserted about this time.
	time.Sleep(20 * time.Second)
	if err := env.Fleet.Hub.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	if err := hubc.Create(ctx, fleettest.HCD("steady", "after-hub-restart")); err != nil {
		t.Fatal(err)
	}
	h := waitHCD(t, 5*time.Minute, "steady", "after-hub-restart", available)
	r.figure("new HCD Available %s after the API server was back (on %s)", time.Since(back).Round(100*time.Millisecond), h.Status.HostingCluster)
	for _, m := range env.Fleet.Managed {
		waitHCD(t, 2*time.Minute, "steady", m.Name, available, hostingAvailable)
	}
	// A replica that lost its leader lease while the API server was away
	// exits and is restarted, as a pod is; that is the documented way.
	r.figure("hub process restarted by its kubelet %d times (it exits when it cannot renew its lease or start)", env.Product.HubExits()-exits0)
}

// managementOutage: a management cluster's API server is down for a while.
// Its hosted clusters say so, nothing is moved off it, nothing elsewhere
// notices, and everything recovers when it is back.
func managementOutage(t *testing.T, r *row) {
	ctx := context.Background()
	const down = "cluster-3"
	before := placements(t, "steady")

	// Watch the hosted clusters on the other management clusters for the
	// whole outage: any moment one is not Available counts.
	var others []string
	for name, p := range before {
		if p.cluster != down {
			others = append(others, name)
		}
	}
	var mu sync.Mutex
	disturbed := map[string]string{}
	watchCtx, stopWatching := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for watchCtx.Err() == nil {
			for _, name := range others {
				h, err := getHCD(watchCtx, "steady", name)
				if err != nil {
					continue // the hub is fine; a cancelled poll at the end
				}
				for _, check := range []hcdCheck{available, hostingAvailable} {
					if err := check(h); err != nil {
						mu.Lock()
						disturbed[name] = err.Error()
						mu.Unlock()
					}
				}
			}
			select {
			case <-watchCtx.Done():
			case <-time.After(time.Second):
			}
		}
	}()

	began := time.Now()
	env.Fleet.Cluster(down).StopAPIServer()
	// OCM's registration agent checks its cluster's API server every 10s
	// (ClusterHealthCheckPeriod in the local fleet) and reports the cluster
	// unavailable; the hub carries that to the hosted clusters on it once
	// it has lasted the hub's --host-unavailable-grace.
	waitHCD(t, unavailableGrace+2*time.Minute, "steady", down, conditionIs(v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionFalse))
	r.figure("unavailability reported in %s (grace %s)", time.Since(began).Round(time.Second), unavailableGrace)
	// The rest of the outage; nothing is asserted about this time.
	time.Sleep(time.Until(began.Add(outage())))
	if err := env.Fleet.Cluster(down).StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	waitHCD(t, 5*time.Minute, "steady", down, available, hostingAvailable)
	r.figure("recovered %s after the API server was back", time.Since(back).Round(time.Second))
	stopWatching()
	<-watched

	if len(disturbed) > 0 {
		t.Errorf("hosted clusters on other management clusters were disturbed during the outage: %v", disturbed)
	}
	after := placements(t, "steady")
	for name, p := range before {
		if after[name] != p {
			t.Errorf("%s moved during the outage: %+v -> %+v", name, p, after[name])
		}
	}
	r.figure("%d HCDs elsewhere watched every second: %d disturbed; %d bindings and ManifestWorks unchanged", len(others), len(disturbed), len(before))
}

// placement is where a HostedClusterDeployment runs: its binding and the
// identity of its ManifestWork.
type placement struct {
	cluster string
	work    types.UID
}

func placements(t *testing.T, ns string) map[string]placement {
	t.Helper()
	ctx := context.Background()
	var list v1alpha1.HostedClusterDeploymentList
	if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var works workv1.ManifestWorkList
	if err := hubc.List(ctx, &works, client.MatchingLabels{hosting.LabelHCDNamespace: ns}); err != nil {
		t.Fatal(err)
	}
	workOf := map[string]types.UID{}
	for _, w := range works.Items {
		workOf[w.Labels[hosting.LabelHCDName]] = w.UID
	}
	out := map[string]placement{}
	for _, h := range list.Items {
		if h.Status.HostingCluster == "" {
			t.Fatalf("%s/%s is not bound", ns, h.Name)
		}
		out[h.Name] = placement{cluster: h.Status.HostingCluster, work: workOf[h.Name]}
	}
	if len(out) == 0 {
		t.Fatal(fmt.Errorf("no HostedClusterDeployments in %s", ns))
	}
	return out
}
