package archcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const (
	repo   = "../.."
	module = "github.com/hcp-fleet/hcp-fleet"
)

// pkgInfo is what `go list` says of one package of the module.
type pkgInfo struct {
	ImportPath string
	Deps       []string // every package it depends on, transitively (not its tests)
}

// listPackages runs `go list` over patterns from the repository root and
// returns each package's transitive dependencies (what `go list -deps`
// prints for it), keeping the module's own packages only, with paths
// relative to the module ("pkg/cmd/hub").
func listPackages(t *testing.T, patterns ...string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Deps"}, patterns...)...)
	cmd.Dir = repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(patterns, " "), err, stderr.String())
	}
	pkgs := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rel, ok := ownPath(p.ImportPath)
		if !ok {
			continue
		}
		var deps []string
		for _, d := range p.Deps {
			if r, ok := ownPath(d); ok {
				deps = append(deps, r)
			}
		}
		pkgs[rel] = deps
	}
	return pkgs
}

// ownPath is importPath relative to the module, when it is the module's.
func ownPath(importPath string) (string, bool) {
	if importPath == module {
		return "", true
	}
	rel, ok := strings.CutPrefix(importPath, module+"/")
	return rel, ok
}

// under reports whether p is dir or below it.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// capability returns the capability and the side (hub, agent or "" for the
// contract package itself) of a package pkg/<capability>[/<side>[/...]],
// for the capabilities that split by side (all of pkg/ but cmd, capi,
// kubeutil and fleetview).
func capability(p string) (capName, side string, ok bool) {
	parts := strings.Split(p, "/")
	if len(parts) < 2 || parts[0] != "pkg" {
		return "", "", false
	}
	switch parts[1] {
	case "cmd", "capi", "kubeutil", "fleetview":
		return "", "", false
	}
	if len(parts) == 2 {
		return parts[1], "", true
	}
	return parts[1], parts[2], true
}

func isInternal(p string) bool { return under(p, "internal") }

// isHubCode: the hub program's own code (pkg/<capability>/hub/..., pkg/cmd/hub, cmd/hub).
func isHubCode(p string) bool {
	if under(p, "pkg/cmd/hub") || under(p, "cmd/hub") {
		return true
	}
	_, side, ok := capability(p)
	return ok && side == "hub"
}

// isAgentCode: the agent program's own code (pkg/<capability>/agent/...,
// pkg/capi/..., pkg/cmd/agent, cmd/agent).
func isAgentCode(p string) bool {
	if under(p, "pkg/capi") || under(p, "pkg/cmd/agent") || under(p, "cmd/agent") {
		return true
	}
	_, side, ok := capability(p)
	return ok && side == "agent"
}

// isPluginCode: kubectl hcpfleet, a client of the hub.
func isPluginCode(p string) bool {
	return under(p, "cmd/kubectl-hcpfleet") || under(p, "pkg/cmd/kubectlhcpfleet") || under(p, "pkg/fleetview")
}

// isContract: what hub and agent share (docs/architecture.md): the API, the
// manifests, each capability's own package (pkg/addon, pkg/hosting, pkg/olm,
// pkg/extension) and pkg/kubeutil.
func isContract(p string) bool {
	if under(p, "api") || under(p, "manifests") || under(p, "pkg/kubeutil") {
		return true
	}
	_, side, ok := capability(p)
	return ok && side == ""
}

// rule is one side's forbidden dependencies.
type rule struct {
	name      string
	applies   func(p string) bool
	forbidden func(dep string) string // why dep is forbidden, or ""
}

var rules = []rule{
	{"hub", isHubCode, func(d string) string {
		switch {
		case isAgentCode(d):
			return "agent code"
		case isInternal(d):
			return "internal/ (local fleet, stand-ins, fixtures)"
		}
		return ""
	}},
	{"agent", isAgentCode, func(d string) string {
		switch {
		case isHubCode(d):
			return "hub code"
		case isInternal(d):
			return "internal/ (local fleet, stand-ins, fixtures)"
		}
		return ""
	}},
	{"plugin", isPluginCode, func(d string) string {
		switch {
		case isAgentCode(d):
			return "agent code"
		case under(d, "pkg/cmd/hub"):
			return "the hub program (the plugin reads the hub's API; it may use the hub's pure scheduling and hostmodel code)"
		case isInternal(d):
			return "internal/ (local fleet, stand-ins, fixtures)"
		}
		return ""
	}},
	{"contract", isContract, func(d string) string {
		switch {
		case isInternal(d):
			return "internal/ (local fleet, stand-ins, fixtures)"
		case !isContract(d):
			return "not a contract package (a contract package depends on no hub, agent, plugin or program code)"
		}
		return ""
	}},
}

// TestImportRule: the rule of docs/architecture.md ("The rule, and what
// keeps it"), on the transitive dependencies `go list` reports, so also
// through packages in between. golangci-lint's depguard rules
// (.golangci.yml) say the same per import; this runs in `make unit`.
func TestImportRule(t *testing.T) {
	pkgs := listPackages(t, "./api/...", "./manifests/...", "./pkg/...", "./cmd/...")
	checked := map[string]int{}
	var names []string
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		deps := pkgs[p]
		for _, r := range rules {
			if !r.applies(p) {
				continue
			}
			checked[r.name]++
			for _, d := range deps {
				if why := r.forbidden(d); why != "" {
					t.Errorf("%s (%s code) depends on %s: %s", p, r.name, d, why)
				}
			}
		}
		// Every product package is on one side or shared: a new package
		// under pkg/ must fit the layout (or the layout and this test
		// change together).
		if under(p, "pkg") && !isHubCode(p) && !isAgentCode(p) && !isPluginCode(p) && !isContract(p) && !testOnly(t, p) {
			t.Errorf("%s is neither hub, agent, plugin nor contract code: see docs/architecture.md", p)
		}
	}
	// The programs themselves, by name, so that a rename cannot make the
	// rule vacuous.
	for _, want := range []string{"cmd/hub", "cmd/agent", "cmd/kubectl-hcpfleet", "pkg/addon", "pkg/hosting", "pkg/olm", "pkg/extension", "pkg/kubeutil", "api/v1alpha1", "manifests"} {
		if _, ok := pkgs[want]; !ok {
			t.Errorf("go list found no package %s", want)
		}
	}
	for _, r := range rules {
		if checked[r.name] == 0 {
			t.Errorf("rule %s applied to no package", r.name)
		}
	}
	t.Logf("packages checked per rule: %v", checked)
}

// testOnly reports whether the package directory p has only tests and doc.go
// (e.g. pkg/extension/integration).
func testOnly(t *testing.T, p string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repo, p, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if b := filepath.Base(f); b != "doc.go" && !strings.HasSuffix(b, "_test.go") {
			return false
		}
	}
	return true
}

// TestClassification pins the classification on known packages, so that a
// change to the helpers above cannot quietly exempt one.
func TestClassification(t *testing.T) {
	for p, want := range map[string]string{
		"cmd/hub":                         "hub",
		"pkg/cmd/hub":                     "hub",
		"pkg/hosting/hub/scheduling":      "hub",
		"pkg/hosting/hub/hostmodel":       "hub",
		"pkg/olm/hub":                     "hub",
		"pkg/extension/hub":               "hub",
		"cmd/agent":                       "agent",
		"pkg/cmd/agent":                   "agent",
		"pkg/capi":                        "agent",
		"pkg/capi/proxy":                  "agent",
		"pkg/hosting/agent/operator":      "agent",
		"pkg/olm/agent/guests":            "agent",
		"pkg/extension/agent":             "agent",
		"cmd/kubectl-hcpfleet":            "plugin",
		"pkg/cmd/kubectlhcpfleet":         "plugin",
		"pkg/fleetview":                   "plugin",
		"pkg/addon":                       "contract",
		"pkg/hosting":                     "contract",
		"pkg/olm":                         "contract",
		"pkg/extension":                   "contract",
		"pkg/kubeutil":                    "contract",
		"api/v1alpha1":                    "contract",
		"api/v1alpha1/applyconfiguration": "contract",
		"manifests":                       "contract",
		"internal/localfleet":             "",
		"cmd/localfleet":                  "",
	} {
		var got []string
		for _, r := range rules {
			if r.applies(p) {
				got = append(got, r.name)
			}
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: rules %v, want %q", p, got, want)
		}
	}
}

// tableRow is a row of docs/architecture.md's package table: `path` | ...
var tableRow = regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|")

// docPaths expands the first cells of docs/architecture.md's table:
// `pkg/x/{a,b}` is pkg/x/a and pkg/x/b; `pkg/capi/...` is pkg/capi and
// everything below (a trailing "/..." entry, returned in trees).
func docPaths(t *testing.T) (exact []string, trees []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	brace := regexp.MustCompile(`^(.*)\{([^}]*)\}(.*)$`)
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = h
			continue
		}
		if section != "The tree" {
			// Other sections' tables (status writers, say) list no paths.
			continue
		}
		m := tableRow.FindStringSubmatch(line)
		if m == nil || m[1] == "path" {
			continue
		}
		paths := []string{m[1]}
		if b := brace.FindStringSubmatch(m[1]); b != nil {
			paths = nil
			for _, alt := range strings.Split(b[2], ",") {
				paths = append(paths, b[1]+strings.TrimSpace(alt)+b[3])
			}
		}
		for _, p := range paths {
			if tree, ok := strings.CutSuffix(p, "/..."); ok {
				trees = append(trees, tree)
			} else {
				exact = append(exact, p)
			}
		}
	}
	return exact, trees
}

// goDirs returns every directory under root (relative to the repository)
// holding a .go file, testdata and hidden directories excepted.
func goDirs(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(repo, root), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, err := filepath.Rel(repo, filepath.Dir(p))
			if err != nil {
				return err
			}
			seen[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for d := range seen {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs
}

// TestArchitectureTable: docs/architecture.md's table lists every directory
// of Go code under pkg/ (by itself, in a {a,b} list or under a /... entry),
// and every path it lists exists.
func TestArchitectureTable(t *testing.T) {
	exact, trees := docPaths(t)
	if len(exact)+len(trees) < 10 {
		t.Fatalf("found only %d paths in docs/architecture.md's table: the parsing is broken", len(exact)+len(trees))
	}
	for _, p := range append(append([]string{}, exact...), trees...) {
		if _, err := os.Stat(filepath.Join(repo, p)); err != nil {
			t.Errorf("docs/architecture.md lists %s, which does not exist", p)
		}
	}
	listed := map[string]bool{}
	for _, p := range exact {
		listed[p] = true
	}
	for _, d := range goDirs(t, "pkg") {
		if listed[d] {
			continue
		}
		covered := false
		for _, tree := range trees {
			if under(d, tree) {
				covered = true
				break
			}
		}
		if !covered {
			t.Errorf("docs/architecture.md's table does not list %s (add a row, or add it to a {a,b} list)", d)
		}
	}
}

// TestIntegrationFilesAreTagged keeps the test layout readable (README,
// docs/architecture.md "Tests"): a test file that starts an API server or a
// local fleet is built only with the integration tag, and its name says
// so. Every *_integration_test.go and every test file under test/ carries
// `//go:build integration`; every file carrying it is one of those or a
// fleet benchmark (*bench_test.go). (`make unit` checks the other half at
// run time: a unit test that reaches for the Kubernetes binaries fails.)
func TestIntegrationFilesAreTagged(t *testing.T) {
	cmd := exec.Command("go", "list", "-tags", "integration", "-json=ImportPath,Dir,TestGoFiles,XTestGoFiles", "./...")
	cmd.Dir = repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	tagged := 0
	for {
		var p struct {
			ImportPath, Dir           string
			TestGoFiles, XTestGoFiles []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rel, _ := ownPath(p.ImportPath)
		for _, f := range append(p.TestGoFiles, p.XTestGoFiles...) {
			name := path.Join(rel, f)
			hasTag := integrationTagged(t, filepath.Join(p.Dir, f))
			named := strings.HasSuffix(f, "_integration_test.go") || under(rel, "test")
			if hasTag {
				tagged++
			}
			switch {
			case named && !hasTag:
				t.Errorf("%s: an integration test file without the //go:build integration line", name)
			case hasTag && !named && !strings.HasSuffix(f, "bench_test.go"):
				t.Errorf("%s: built only with the integration tag, so name it *_integration_test.go", name)
			}
		}
	}
	if tagged < 20 {
		t.Errorf("only %d test files carry the integration tag: the check is broken", tagged)
	}
}

// integrationTagged reports whether file's build constraint is exactly
// `//go:build integration`.
func integrationTagged(t *testing.T, file string) bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "package ") {
			return false
		}
		if strings.HasPrefix(line, "//go:build ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "//go:build ")) == "integration"
		}
	}
	return false
}
