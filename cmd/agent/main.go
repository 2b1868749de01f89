// Command hcp-fleet-agent is the hcp-fleet add-on agent that runs on each
// management cluster. See --help.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/agent"
)

func main() {
	if err := agent.ProgramMain(ctrl.SetupSignalHandler(), os.Args[1:], os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "hcp-fleet-agent:", err)
		os.Exit(1)
	}
}
