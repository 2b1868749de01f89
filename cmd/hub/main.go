// Command hcp-fleet-hub is the hcp-fleet hub manager. See --help.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
)

func main() {
	opts := hub.NewOptions()
	fs := opts.FlagSet(os.Stderr)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err == nil {
		err = hub.Run(ctrl.SetupSignalHandler(), cfg, opts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hcp-fleet-hub:", err)
		os.Exit(1)
	}
}
