// Command kubectl-hcpfleet is the kubectl plugin for hcp-fleet hubs
// (`kubectl hcpfleet status|explain|hosts`); see pkg/cmd/kubectlhcpfleet.
// Install it on the PATH: go install ./cmd/kubectl-hcpfleet
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/kubectlhcpfleet"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := kubectlhcpfleet.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
