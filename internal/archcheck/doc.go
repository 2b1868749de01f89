// Package archcheck holds the tests that keep the architecture
// (docs/architecture.md) true: from `go list`, hub code depends on no agent
// code and the reverse, the kubectl plugin on neither program, the contract
// packages on nothing of either side, and product code never on internal/;
// the package table of docs/architecture.md names every package under pkg/
// and nothing that is not there; and the test files built only with the
// integration tag are the ones named so. Tests only; they start no API
// server and run in `make unit`.
package archcheck
