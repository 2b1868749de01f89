// Package fleettest runs a package's integration tests against one local
// fleet with hcp-fleet installed and running, started once in TestMain.
package fleettest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
)

// Env is the fleet the tests share.
type Env struct {
	Fleet   *localfleet.Fleet
	Product *hcpfleet.Product
}

// Main starts a fleet with the given number of management clusters and
// fast status feedback, installs and starts hcp-fleet, hands the
// environment to use, runs the tests, stops everything and exits.
func Main(m *testing.M, managementClusters int, use func(*Env)) {
	ctx := context.Background()
	fleet, err := localfleet.Start(ctx, localfleet.Options{
		ManagementClusters: managementClusters, StatusSyncInterval: time.Second, AddOnLeaseSyncInterval: time.Second,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("local fleet start-up took %s (hub + %d management clusters)\n", fleet.StartupDur.Round(time.Millisecond), len(fleet.Managed))
	code := 1
	var product *hcpfleet.Product
	if err = hcpfleet.Install(ctx, fleet); err == nil {
		product, err = hcpfleet.Start(fleet, hcpfleet.Options{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		use(&Env{Fleet: fleet, Product: product})
		code = m.Run()
		product.Stop()
	}
	fleet.Stop()
	os.Exit(code)
}

// Eventually polls cond until it returns nil or timeout passes; then the
// test fails with the last real reason (not the deadline's) and the fleet's
// log directory.
func (e *Env) Eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err := cond(ctx)
		if err == nil || ctx.Err() == nil {
			last = err
		}
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not after %s: %v\n  fleet logs: %s (LOCALFLEET_KEEP=1 keeps them)", what, timeout, last, e.Fleet.LogDir)
	}
}
