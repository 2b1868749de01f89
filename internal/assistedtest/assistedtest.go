// Package assistedtest starts the real etcd + kube-apiserver the OpenShift
// assisted providers' tests run against, with every CRD they involve: ours
// (pkg/capi/assistedapi/crds), Cluster API core (pkg/capi/crds/bases/core),
// assisted-service and hive (generated from the pinned types into
// internal/assistedtest/testdata/crds), and the Metal3-shaped infrastructure
// stand-in. It starts the apiserver through internal/testenv and then
// installs our CRDs with crds.Install, as the agent features do. It reads the
// CRD files named above and the binaries internal/testenv finds, and writes
// only to the apiserver it starts. InstallableCRDNames lists every CRD the
// agent can install, for the RBAC tests. Tests only (pkg/capi/assistedcontrolplane);
// the assisted-service stand-in itself is internal/localfleet/assistedsim.
package assistedtest

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hcp-fleet/hcp-fleet/internal/testenv"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/crds"
)

// CRDPaths are the CRD files and directories the tests install from files:
// everything but ours, which Start installs with crds.Install, the path the
// agent features take.
func CRDPaths() []string {
	_, file, _, _ := runtime.Caller(0)
	here := filepath.Dir(file)               // internal/assistedtest
	root := filepath.Dir(filepath.Dir(here)) // the repository
	core := filepath.Join(root, "pkg", "capi", "crds", "bases", "core")
	return []string{
		filepath.Join(here, "testdata", "crds", "assisted"),
		filepath.Join(here, "testdata", "crds", "hive"),
		filepath.Join(here, "testdata", "crds", "metal3sim"),
		filepath.Join(core, "cluster.x-k8s.io_clusters.yaml"),
		filepath.Join(core, "cluster.x-k8s.io_machines.yaml"),
		filepath.Join(core, "cluster.x-k8s.io_machinedeployments.yaml"),
	}
}

// Scheme has every type the providers use.
func Scheme() *k8sruntime.Scheme {
	s := k8sruntime.NewScheme()
	if err := assistedapi.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// Start runs an apiserver with all CRDs for tb and stops it when tb ends.
// It fails (never skips) when the binaries are missing.
func Start(tb testing.TB) (*rest.Config, client.Client) {
	tb.Helper()
	cfg := testenv.Start(tb, testenv.Options{
		CRDPaths:              CRDPaths(),
		ErrorIfCRDPathMissing: true,
		Scheme:                Scheme(),
	})
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		tb.Fatal(err)
	}
	names := append(append([]string{}, crds.Bootstrap...), crds.ControlPlane...)
	if err := crds.Install(context.Background(), c, names...); err != nil {
		tb.Fatalf("installing our CRDs: %v", err)
	}
	ours, err := crds.Get(names...)
	if err != nil {
		tb.Fatal(err)
	}
	if err := envtest.WaitForCRDs(cfg, ours, envtest.CRDInstallOptions{PollInterval: 100 * time.Millisecond, MaxTime: 30 * time.Second}); err != nil {
		tb.Fatalf("waiting for our CRDs: %v", err)
	}
	return cfg, c
}
