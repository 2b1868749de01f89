// Package testenv starts the real etcd + kube-apiserver that the pkg/capi
// tests and benchmarks run against (controller-runtime envtest).
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Assets finds kube-apiserver, etcd and kubectl: $KUBEBUILDER_ASSETS (make
// test sets it), else the cache directory hack/k8s-bins/build.sh fills.
func Assets() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		root := os.Getenv("HCP_FLEET_CACHE")
		if root == "" {
			cache, err := os.UserCacheDir()
			if err != nil {
				cache = os.TempDir()
			}
			root = filepath.Join(cache, "hcp-fleet")
		}
		dir = filepath.Join(root, "k8s-bins", "kube-v1.34.3-etcd-v3.6.6")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run `make k8s-bins` to build the Kubernetes binaries these tests run against (or set KUBEBUILDER_ASSETS)", bin, dir)
		}
	}
	return dir, nil
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
