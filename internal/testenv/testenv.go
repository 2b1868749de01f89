// Package testenv is the one way tests start a single real etcd +
// kube-apiserver (controller-runtime envtest): the pkg/capi tests and
// benchmarks, internal/assistedtest, the api/v1alpha1 schema tests and the
// kubelet and HyperShift stand-ins' tests. It reads the binaries from
// $KUBEBUILDER_ASSETS or the cache hack/k8s-bins/build.sh fills (see
// internal/k8sbins) and, when asked, CRDs from files or memory; it writes
// only the temporary etcd data and certificates envtest creates and removes.
// Tests only: the local fleet starts its apiservers itself
// (internal/localfleet).
package testenv

import (
	"fmt"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hcp-fleet/hcp-fleet/internal/k8sbins"
)

// Assets finds kube-apiserver and etcd (see internal/k8sbins).
func Assets() (string, error) {
	return k8sbins.Dir("kube-apiserver", "etcd")
}

// Options are what the apiserver starts with; the zero value is a bare
// apiserver.
type Options struct {
	// CRDPaths are CRD files and directories installed before Start
	// returns, each CRD established.
	CRDPaths []string
	// CRDs are CRDs installed the same way, from memory.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// ErrorIfCRDPathMissing fails the start when a CRDPaths entry does not
	// exist (instead of skipping it).
	ErrorIfCRDPathMissing bool
	// Scheme is the scheme envtest installs the CRDs with; nil means
	// client-go's.
	Scheme *k8sruntime.Scheme
}

// Start runs an apiserver for tb, with opts (at most one) when given, and
// stops it when tb ends. It fails (never skips) when the binaries are
// missing.
func Start(tb testing.TB, opts ...Options) *rest.Config {
	tb.Helper()
	if len(opts) > 1 {
		tb.Fatalf("testenv.Start: %d Options, want at most one", len(opts))
	}
	var o Options
	if len(opts) == 1 {
		o = opts[0]
	}
	cfg, stop, err := StartMain(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := stop(); err != nil {
			tb.Logf("stopping kube-apiserver: %v", err)
		}
	})
	return cfg
}

// StartMain is Start for a TestMain, which has no testing.TB: it returns
// the apiserver's config and the function that stops it, or an error (the
// binaries are missing, the apiserver or a CRD did not come up) the caller
// must turn into a failing exit status.
func StartMain(opts Options) (*rest.Config, func() error, error) {
	dir, err := Assets()
	if err != nil {
		return nil, nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDDirectoryPaths:     opts.CRDPaths,
		CRDs:                  opts.CRDs,
		ErrorIfCRDPathMissing: opts.ErrorIfCRDPathMissing,
		Scheme:                opts.Scheme,
	}
	cfg, err := env.Start()
	if err != nil {
		// envtest may have started some of it (etcd, the apiserver) before
		// failing on a CRD.
		_ = env.Stop()
		return nil, nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", dir, err)
	}
	return cfg, env.Stop, nil
}
