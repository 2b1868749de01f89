package docscheck

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	addonagent "github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
)

const (
	repo   = "../.."
	module = "github.com/hcp-fleet/hcp-fleet"
)

// firstCell is the first cell of a Markdown table row when it is one
// backquoted word.
var firstCell = regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|")

// tableKeys returns the backquoted first cells of every table row of doc.
func tableKeys(t *testing.T, doc string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "docs", doc))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if m := firstCell.FindStringSubmatch(line); m != nil {
			keys[m[1]] = true
		}
	}
	return keys
}

func TestTroubleshootingCoversEveryReason(t *testing.T) {
	found, err := ConditionReasons(repo, module, "api", "pkg")
	if err != nil {
		t.Fatal(err)
	}
	// Reasons the code computes rather than writes: the CAPITypes
	// condition's reason is the resolved CAPI mode.
	for _, m := range []crds.Mode{crds.ModeStandard, crds.ModePrivate} {
		found[string(m)] = "pkg/capi/crds/mode.go (the resolved mode)"
	}
	if len(found) < 50 {
		t.Fatalf("found only %d reasons in the code: the extraction is broken", len(found))
	}
	documented := tableKeys(t, "troubleshooting.md")
	var undocumented, stale []string
	for r, where := range found {
		if !documented[r] {
			undocumented = append(undocumented, r+" ("+where+")")
		}
	}
	for r := range documented {
		if _, ok := found[r]; !ok {
			stale = append(stale, r)
		}
	}
	sort.Strings(undocumented)
	sort.Strings(stale)
	if len(undocumented) > 0 {
		t.Errorf("condition reasons the code sets that docs/troubleshooting.md does not explain:\n  %s", strings.Join(undocumented, "\n  "))
	}
	if len(stale) > 0 {
		t.Errorf("docs/troubleshooting.md explains reasons the code no longer sets: %v", stale)
	}
	t.Logf("%d reasons found in the code", len(found))
}

// TestReasonExtraction checks the extractor on the forms it claims to find,
// so a refactoring of it cannot silently find nothing.
func TestReasonExtraction(t *testing.T) {
	dir := t.TempDir()
	src := `package x

import "example.com/m/y"

const ReasonConst = "FromConst"
const local = "FromLocalConst"

type problem struct{ Reason string }

func set(status, reason, message string) {}

func f(reason string) {
	_ = problem{Reason: "FromLiteral"}
	_ = problem{Reason: local}
	_ = problem{Reason: y.Other}
	var p problem
	p.Reason = "FromAssign"
	degradedReason := "FromVar"
	_ = degradedReason
	switch reason {
	case "FromCase":
	}
	set("True", "FromParam", "not a reason: has spaces")
	cond := func(t, reason string) {}
	cond("x", "FromFuncLit")
	_ = problem{Reason: orDefault(reason, "FromFallback")}
	_ = problem{Reason: "a human sentence"}
}

func orDefault(a, b string) string { return a }
`
	other := `package y

const Other = "FromOtherPackage"
`
	for path, content := range map[string]string{"x/x.go": src, "y/y.go": other} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found, err := ConditionReasons(dir, "example.com/m", "x", "y")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"FromConst", "FromLocalConst", "FromLiteral", "FromOtherPackage", "FromAssign", "FromVar", "FromCase", "FromParam", "FromFuncLit", "FromFallback"}
	var got []string
	for r := range found {
		got = append(got, r)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("found %v, want %v", got, want)
	}
}

func TestConfigurationReference(t *testing.T) {
	documented := tableKeys(t, "configuration.md")
	check := func(what string, names []string) {
		t.Helper()
		var missing []string
		for _, n := range names {
			if !documented[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s not in a table of docs/configuration.md: %v", what, missing)
		}
	}
	flags := func(fs *flag.FlagSet) []string {
		var out []string
		fs.VisitAll(func(f *flag.Flag) { out = append(out, "--"+f.Name) })
		return out
	}
	// The hub's flags as cmd/hub builds them: its options and zap's.
	hubFlags := hub.NewOptions().FlagSet(io.Discard)
	(&zap.Options{}).BindFlags(hubFlags)
	check("hub flags", flags(hubFlags))
	check("agent flags", flags(addonagent.NewOptions().FlagSet("hcp-fleet-agent", io.Discard)))

	// Every field of the HostingConfig CRD's spec.
	data, err := os.ReadFile(filepath.Join(repo, "manifests/crds/hcpfleet.io_hostingconfigs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema schema `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	var fields []string
	var walk func(s schema, path string)
	walk = func(s schema, path string) {
		if s.Items != nil {
			walk(*s.Items, path+"[]")
			return
		}
		for name, p := range s.Properties {
			fields = append(fields, path+"."+name)
			walk(p, path+"."+name)
		}
	}
	walk(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"], "spec")
	if len(fields) < 30 {
		t.Fatalf("only %d HostingConfig fields found: the CRD walk is broken", len(fields))
	}
	check("HostingConfig fields", fields)
}

type schema struct {
	Properties map[string]schema `json:"properties"`
	Items      *schema           `json:"items"`
}

// conditionType finds the HostedClusterDeployment condition types declared
// in api/v1alpha1/conditions.go (`ConditionX = "X"`).
var conditionType = regexp.MustCompile(`(?m)^\s*Condition[A-Za-z]+\s*=\s*"([A-Za-z]+)"`)

// TestStatusWritersCoverEveryCondition: docs/architecture.md names the one
// writer of every condition.
func TestStatusWritersCoverEveryCondition(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repo, "api", "v1alpha1", "conditions.go"))
	if err != nil {
		t.Fatal(err)
	}
	documented := tableKeys(t, "architecture.md")
	types := conditionType.FindAllStringSubmatch(string(src), -1)
	if len(types) < 5 {
		t.Fatalf("found only %d condition types in conditions.go: the pattern no longer matches", len(types))
	}
	for _, m := range types {
		if !documented[m[1]] {
			t.Errorf("condition %s has no row in docs/architecture.md's status writers table", m[1])
		}
	}
}
