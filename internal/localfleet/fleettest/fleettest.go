// Package fleettest runs a package's integration tests against one local
// fleet (internal/localfleet) with hcp-fleet installed and running
// (internal/localfleet/hcpfleet), started once in TestMain and stopped when
// the tests end; the fleet's files live in a temporary directory. It also
// has small helpers those tests share (polling, HostedCluster objects).
// Tests only.
package fleettest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/poll"
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
	MainWith(m, managementClusters, hcpfleet.Options{}, use)
}

// MainWith is Main with the product's options (hub flags, stand-in
// behaviour).
func MainWith(m *testing.M, managementClusters int, opts hcpfleet.Options, use func(*Env)) {
	MainWithFleet(m, managementClusters, func(*localfleet.Fleet) hcpfleet.Options { return opts }, use)
}

// MainWithGuests is MainWith where the HyperShift stand-in runs a real
// guest API server for every available hosted cluster
// (hcpfleet.GuestControlPlanes): tests that read or write inside hosted
// clusters.
func MainWithGuests(m *testing.M, managementClusters int, opts hcpfleet.Options, use func(*Env)) {
	MainWithFleet(m, managementClusters, func(f *localfleet.Fleet) hcpfleet.Options {
		opts.HyperShift.ControlPlanes = hcpfleet.GuestControlPlanes{Fleet: f}
		return opts
	}, use)
}

// MainWithFleet is MainWith with options that need the fleet, such as the
// HyperShift stand-in's control planes (hcpfleet.GuestControlPlanes).
func MainWithFleet(m *testing.M, managementClusters int, options func(*localfleet.Fleet) hcpfleet.Options, use func(*Env)) {
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
		product, err = hcpfleet.Start(fleet, options(fleet))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = run(m, &Env{Fleet: fleet, Product: product}, use)
		product.Stop()
	}
	fleet.Stop()
	os.Exit(code)
}

// run hands env to the package's set-up, then runs its tests. A set-up
// that cannot go on panics: the panic is reported as the package's failure
// and the product and fleet are still stopped by the caller (an os.Exit
// there would leave the fleet's processes and directory behind).
func run(m *testing.M, env *Env, use func(*Env)) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "setting up the tests: %v\n", p)
			code = 1
		}
	}()
	use(env)
	return m.Run()
}

// Eventually polls cond until it returns nil or timeout passes; then the
// test fails with the last real reason (not the deadline's) and the fleet's
// log directory.
func (e *Env) Eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	poll.Until(t, timeout, what, cond, fmt.Sprintf("fleet logs: %s (LOCALFLEET_KEEP=1 keeps them)", e.Fleet.LogDir))
}

// HostedCluster is a minimal HostedCluster that passes the HyperShift CRD's
// validation, for tests that need HostedClusters on a management cluster
// (nothing here runs a control plane for it).
func HostedCluster(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"release":    map[string]any{"image": "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"},
			"pullSecret": map[string]any{"name": "pull-secret"},
			"platform":   map[string]any{"type": "None"},
			"dns":        map[string]any{"baseDomain": "example.com"},
			"networking": map[string]any{"networkType": "OVNKubernetes", "clusterNetwork": []any{map[string]any{"cidr": "10.132.0.0/14"}}, "serviceNetwork": []any{map[string]any{"cidr": "172.31.0.0/16"}}},
			"etcd":       map[string]any{"managementType": "Managed", "managed": map[string]any{"storage": map[string]any{"type": "PersistentVolume"}}},
			"services": []any{
				map[string]any{"service": "APIServer", "servicePublishingStrategy": map[string]any{"type": "NodePort", "nodePort": map[string]any{"address": "10.0.0.1"}}},
				map[string]any{"service": "OAuthServer", "servicePublishingStrategy": map[string]any{"type": "Route"}},
				map[string]any{"service": "Konnectivity", "servicePublishingStrategy": map[string]any{"type": "Route"}},
				map[string]any{"service": "Ignition", "servicePublishingStrategy": map[string]any{"type": "Route"}},
			},
		},
	}}
}
