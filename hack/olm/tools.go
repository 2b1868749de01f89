//go:build tools

// Package olm pins OLM's olm-operator (cmd/olm), which hack/olm/build.sh builds
// for the test that installs hcp-fleet's bundle with real OLM (test/olm).
package olm

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
)
