// Package golden compares a test's output with a file under testdata/
// (testdata/<name>.golden), rewritten by `go test -update` after a wanted
// change. For tests only.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the output under test")

// Compare fails t when got differs from testdata/name.golden; with -update
// it writes got there first.
func Compare(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it after a wanted change):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
