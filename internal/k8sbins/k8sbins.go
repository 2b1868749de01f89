// Package k8sbins finds the etcd, kube-apiserver, kube-controller-manager and
// kubectl binaries that hack/k8s-bins/build.sh builds, for the local fleet and
// the envtest-based tests (internal/testenv): in $KUBEBUILDER_ASSETS, else in
// the build script's cache. It only reads the environment and stats files.
package k8sbins

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Versions of the binaries and the name of how they are built; hack/k8s-bins/build.sh
// builds the same into the same directory (a unit test checks the two agree).
// Recipe changes with the build's flags or pinned modules, so that a machine's
// cache rebuilds the binaries instead of keeping ones built another way.
const (
	KubeVersion = "v1.34.3"
	EtcdVersion = "v3.6.6"
	Recipe      = "r2"
)

// NoAPIServerEnv, when set, makes Dir fail: `make unit` sets it, so a test
// outside the integration build that would start etcd, a kube-apiserver or a
// local fleet fails at once and says where it belongs.
const NoAPIServerEnv = "HCPFLEET_NO_APISERVER"

// DefaultDir is where hack/k8s-bins/build.sh caches the binaries.
func DefaultDir() string {
	root := os.Getenv("HCP_FLEET_CACHE")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		root = filepath.Join(cache, "hcp-fleet")
	}
	return filepath.Join(root, "k8s-bins", fmt.Sprintf("kube-%s-etcd-%s-%s", KubeVersion, EtcdVersion, Recipe))
}

// Dir returns the directory holding the required binaries:
// $KUBEBUILDER_ASSETS when set (make sets it), else DefaultDir. It fails with
// one error naming what is missing and how to get it, and always under
// `make unit` (NoAPIServerEnv set), which runs no API server.
func Dir(required ...string) (string, error) {
	if os.Getenv(NoAPIServerEnv) != "" {
		return "", fmt.Errorf("%s is set (`make unit`): a test that starts an API server or a local fleet "+
			"belongs in a file with the //go:build integration constraint (`make test` runs it)", NoAPIServerEnv)
	}
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = DefaultDir()
	}
	var missing []string
	for _, b := range required {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%s not found in %s: run `make k8s-bins` (or set KUBEBUILDER_ASSETS)", strings.Join(missing, ", "), dir)
	}
	return dir, nil
}
