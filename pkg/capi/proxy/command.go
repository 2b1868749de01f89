package proxy

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// SidecarCommand is the agent subcommand that runs the proxy (Main): the
	// entry point of the sidecar the CAPI migration adds to CAPI workloads,
	// which runs the agent's own image.
	SidecarCommand = "capi-api-proxy"
	// DefaultListenAddress is where the sidecar listens unless told
	// otherwise: the enhancement's localhost:8080.
	DefaultListenAddress = "127.0.0.1:8080"
)

// Main is the sidecar entry point: it serves the proxy on --listen (loopback
// only) in front of the apiserver of --kubeconfig, or of the pod's service
// account when --kubeconfig is empty, until ctx ends. The translation is the
// proxy's one direction: clients speak the standard `*.cluster.x-k8s.io`
// groups, the objects live in the private `*.cluster.hypershift.openshift.io`
// ones (the private CRDs must be installed; the agent installs them in
// Private mode). Once listening it writes the address to stderr.
func Main(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("hcp-fleet-agent "+SidecarCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "",
		"Kubeconfig of the apiserver the proxy forwards to, with the identity it forwards as. Empty: the pod's service account (in-cluster). "+
			"The KUBECONFIG environment variable is ignored: in the CAPI workloads' pods it points every container at this proxy.")
	listen := fs.String("listen", DefaultListenAddress,
		"host:port the proxy listens on; loopback only (127.0.0.0/8, ::1, localhost), because it lends its identity to whoever connects. Port 0 picks a free one.")
	fs.Usage = func() {
		_, _ = fmt.Fprintf(stderr, `hcp-fleet-agent %s serves the Kubernetes API with Cluster API objects in the standard
cluster.x-k8s.io groups, keeping them in HyperShift's private cluster.hypershift.openshift.io groups
(openshift/enhancements#1927, private CAPI types): the sidecar of CAPI workloads after their migration.

Flags:
`, SidecarCommand)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected arguments %q", SidecarCommand, fs.Args())
	}
	cfg, err := upstreamConfig(*kubeconfig)
	if err != nil {
		return fmt.Errorf("%s: %w", SidecarCommand, err)
	}
	cfg.UserAgent = "hcp-fleet-" + SidecarCommand
	err = Run(ctx, cfg, *listen, func(a net.Addr) {
		_, _ = fmt.Fprintf(stderr, "%s: serving on http://%s for %s\n", SidecarCommand, a, cfg.Host)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", SidecarCommand, err)
	}
	return nil
}

// upstreamConfig is the kubeconfig's rest.Config, or the in-cluster one.
func upstreamConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
		}
		return cfg, nil
	}
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		return nil, errors.New("not running in a pod and no --kubeconfig given")
	}
	return cfg, err
}
