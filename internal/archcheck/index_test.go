package archcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// schedulingPkg is the scheduler's package, whose own cache indexes
// (IndexInfraID, IndexNamespaces) no other package names.
const schedulingPkg = module + "/pkg/hosting/hub/scheduling"

// TestSharedIndexesLiveInHubindex: an index that more than the scheduler
// reads belongs in pkg/hosting/hub/hubindex (docs/architecture.md, "The
// rule, and what keeps it"), so no Go file outside the scheduler's package,
// tests included, names one of scheduling's Index* identifiers. Other uses
// of the scheduler (its pure decisions, AddIndexes for the indexes behind
// its own functions) stay allowed; the import graph alone cannot tell them
// apart, hence a look at the selectors.
func TestSharedIndexesLiveInHubindex(t *testing.T) {
	importers := 0
	for _, root := range []string{"api", "cmd", "internal", "pkg", "test", "hack"} {
		if _, err := os.Stat(filepath.Join(repo, root)); err != nil {
			continue
		}
		err := filepath.WalkDir(filepath.Join(repo, root), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || p == filepath.Join(repo, "pkg", "hosting", "hub", "scheduling") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") {
				return nil
			}
			uses, imports := schedulingIndexUses(t, p)
			if imports {
				importers++
			}
			for _, u := range uses {
				t.Errorf("%s: names scheduling.%s; a shared index goes in pkg/hosting/hub/hubindex", u.pos, u.name)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The scheduler has many importers (the delivery, the plugin, ...): so
	// few means the walk or the import matching broke.
	if importers < 10 {
		t.Errorf("found only %d files importing %s: the check is broken", importers, schedulingPkg)
	}
}

type indexUse struct {
	pos  token.Position
	name string
}

// schedulingIndexUses parses file and returns its selectors
// <scheduling import>.Index*, and whether it imports the scheduler at all.
func schedulingIndexUses(t *testing.T, file string) ([]indexUse, bool) {
	t.Helper()
	fset := token.NewFileSet()
	// The imports first: most files do not import the scheduler.
	f, err := parser.ParseFile(fset, file, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == schedulingPkg {
			name = "scheduling"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" || name == "_" {
		return nil, name != ""
	}
	if f, err = parser.ParseFile(fset, file, nil, parser.SkipObjectResolution); err != nil {
		t.Fatal(err)
	}
	var uses []indexUse
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && strings.HasPrefix(sel.Sel.Name, "Index") {
			uses = append(uses, indexUse{fset.Position(sel.Pos()), sel.Sel.Name})
		}
		return true
	})
	return uses, true
}
