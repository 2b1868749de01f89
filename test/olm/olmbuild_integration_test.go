//go:build integration

package olm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// buildScript builds olm-operator and olm-installplan into the user cache
// (once per machine) and prints their directory on its last line.
const buildScript = "../../hack/olm/build.sh"

// buildOLM starts hack/olm/build.sh and returns a function that waits for
// the directory it prints, unless $HCPFLEET_OLM_DIR already names one. The
// script is instant when the cache holds the build and, when another
// caller (CI's background build) is building it, waits for that build
// under the script's lock. The caller starts its fleet meanwhile, so a
// first build on a machine overlaps the fleet's start.
func buildOLM(ctx context.Context) func() (string, error) {
	if dir := os.Getenv(OLMDirEnv); dir != "" {
		return func() (string, error) { return dir, nil }
	}
	type result struct {
		dir string
		err error
	}
	done := make(chan result, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, buildScript)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			// A failed build fails the test: a skip would pass `make
			// test` with OLM's install never checked.
			done <- result{err: fmt.Errorf("building olm-operator with %s (or set $%s to a build): %w\n%s", buildScript, OLMDirEnv, err, stderr.String())}
			return
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		done <- result{dir: lines[len(lines)-1]}
	}()
	return func() (string, error) {
		r := <-done
		return r.dir, r.err
	}
}
