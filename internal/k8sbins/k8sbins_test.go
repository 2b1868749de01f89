package k8sbins

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// repoRoot is where go test runs this package from, two levels down.
const repoRoot = "../.."

// TestBuildScriptAgrees keeps hack/k8s-bins/build.sh and this package on one
// set of versions and one recipe: DefaultDir must name the directory the
// script fills.
func TestBuildScriptAgrees(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(repoRoot, "hack/k8s-bins/build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"KUBE_VERSION": KubeVersion, "ETCD_VERSION": EtcdVersion, "RECIPE": Recipe} {
		m := regexp.MustCompile(`(?m)^` + name + `="([^"]*)"$`).FindSubmatch(script)
		if m == nil {
			t.Errorf("build.sh sets no %s", name)
			continue
		}
		if got := string(m[1]); got != want {
			t.Errorf("build.sh: %s=%q, k8sbins: %q", name, got, want)
		}
	}
}

// TestSharedModulesAtTheProductsVersions checks that every module the
// Kubernetes and etcd builds require at one version and the product at
// another is none: with the same versions (and the same build flags), Go's
// build cache compiles the packages the builds share once, which is about
// 300 CPU-seconds of a cold CI run.
func TestSharedModulesAtTheProductsVersions(t *testing.T) {
	product := requirements(t, filepath.Join(repoRoot, "go.mod"))
	for _, dir := range []string{"hack/k8s-bins/kube", "hack/k8s-bins/etcd"} {
		var fixes []string
		for path, version := range requirements(t, filepath.Join(repoRoot, dir, "go.mod")) {
			if want, ok := product[path]; ok && want != version {
				fixes = append(fixes, path+"@"+want+" (has "+version+")")
			}
		}
		sort.Strings(fixes)
		if len(fixes) > 0 {
			t.Errorf("%s/go.mod requires modules at other versions than the product's go.mod; "+
				"there, run go get for each, then go mod tidy, and bump RECIPE (build.sh) and Recipe:\n  %s",
				dir, strings.Join(fixes, "\n  "))
		}
	}
}

// requirements reads a go.mod's required modules, each at the version a
// replace directive gives it when there is one (how the Kubernetes module
// pins its staging modules).
func requirements(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range f.Replace {
		if _, ok := out[r.Old.Path]; ok && r.New.Version != "" {
			out[r.Old.Path] = r.New.Version
		}
	}
	return out
}
