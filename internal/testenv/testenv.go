// Package testenv starts the real etcd + kube-apiserver that the pkg/capi
// tests and benchmarks run against (controller-runtime envtest).
package testenv

import (
	"testing"

	"github.com/hcp-fleet/hcp-fleet/internal/k8sbins"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Assets finds kube-apiserver, etcd and kubectl (see internal/k8sbins).
func Assets() (string, error) {
	return k8sbins.Dir("kube-apiserver", "etcd")
}

// Start runs an apiserver for tb and stops it when tb ends. It fails (never
// skips) when the binaries are missing.
func Start(tb testing.TB) *rest.Config {
	tb.Helper()
	dir, err := Assets()
	if err != nil {
		tb.Fatal(err)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: dir}
	cfg, err := env.Start()
	if err != nil {
		tb.Fatalf("starting kube-apiserver: %v", err)
	}
	tb.Cleanup(func() {
		if err := env.Stop(); err != nil {
			tb.Logf("stopping kube-apiserver: %v", err)
		}
	})
	return cfg
}
