package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedFileUpToDate: the checked-in file is exactly what the
// generator writes (the delivery's tests compare the lists; this also
// catches a hand edit): run `make generate`.
func TestGeneratedFileUpToDate(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../pkg/hosting/hub/delivery/zz_generated.references.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("pkg/hosting/hub/delivery/zz_generated.references.go is stale: run `make generate`")
	}
}
