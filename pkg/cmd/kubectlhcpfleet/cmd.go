// Package kubectlhcpfleet is `kubectl hcpfleet` (cmd/kubectl-hcpfleet): the
// fleet view, "why is this hosted cluster (not) there?" and one management
// cluster's detail, and whether a hosted cluster can be relocated or
// adopted, read from a hub with the user's own kubeconfig and RBAC. It only
// reads, but for cordon and uncordon, which taint a ManagedCluster.
//
// explain asks the scheduler itself: it reads the inputs through
// scheduling.Inputs, as the hub does, and decides with scheduling.Explain,
// which runs the hub's Schedule.
package kubectlhcpfleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// options are the flags every command shares.
type options struct {
	config   *genericclioptions.ConfigFlags
	streams  genericiooptions.IOStreams
	output   string
	strategy string
	hubNS    string
	configNS []string
	grace    time.Duration
	// now is the clock (tests fix it).
	now func() time.Time
}

// NewCommand returns the kubectl-hcpfleet command.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{config: genericclioptions.NewConfigFlags(true), streams: streams, now: time.Now}
	root := &cobra.Command{
		Use:   "kubectl-hcpfleet",
		Short: "hcp-fleet on an open-cluster-management hub: the fleet, and why a hosted cluster is (not) where it is",
		Long: `kubectl hcpfleet reads an open-cluster-management hub running hcp-fleet with your kubeconfig and
your permissions: a fleet admin sees the whole fleet, a tenant its own namespace's HostedClusterDeployments.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	o.config.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&o.strategy, "hub-scheduling-strategy", string(scheduling.StrategySpread),
		"the hub's --scheduling-strategy (Spread or BinPack): explain decides with it where no Placement annotation overrides it")
	root.PersistentFlags().StringVar(&o.hubNS, "hub-namespace", addon.DefaultHubNamespace, "the hub's --namespace")
	root.PersistentFlags().StringSliceVar(&o.configNS, "hub-hosting-config-namespaces", nil, "the hub's --hosting-config-namespaces")
	root.PersistentFlags().DurationVar(&o.grace, "hub-host-unavailable-grace", hostmodel.DefaultUnavailableGrace,
		"the hub's --host-unavailable-grace: a management cluster reporting itself unavailable for less is taken as available, as the scheduler takes it")
	root.AddCommand(o.statusCommand(), o.explainCommand(), o.hostsCommand(), o.upgradeCommand(), o.cordonCommand(true), o.cordonCommand(false),
		o.relocateCommand(), o.drainCommand(), o.adoptCommand())
	return root
}

func (o *options) reader() (client.Reader, error) {
	cfg, err := o.config.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return NewReader(cfg)
}

func (o *options) hub() (HubSettings, error) {
	s, err := scheduling.ParseStrategy(o.strategy)
	return HubSettings{Strategy: s, ConfigNamespaces: hostmodel.ConfigNamespaces{Hub: o.hubNS, Allowed: o.configNS}, UnavailableGrace: o.grace}, err
}

// namespace is -n, or the kubeconfig context's namespace; explicit says
// whether -n was given.
func (o *options) namespace() (ns string, explicit bool, err error) {
	return o.config.ToRawKubeConfigLoader().Namespace()
}

func (o *options) statusCommand() *cobra.Command {
	var watch bool
	var interval time.Duration
	var all bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "The fleet: management clusters (add-on, operator, CAPI, load/capacity, score) and HostedClusterDeployments",
		Long: `The fleet view: management clusters with their add-on, HyperShift operator, CAPI types,
hosted count/capacity and free-capacity score, and HostedClusterDeployments with host, phase,
version and conditions. HostedClusterDeployments of all namespaces unless -n is given; one who
may not list them in all namespaces (a tenant) sees the kubeconfig's namespace, and the
management clusters only if allowed to read them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			c, err := o.reader()
			if err != nil {
				return err
			}
			ns, explicit, err := o.namespace()
			if err != nil {
				return err
			}
			if !explicit || all {
				ns = ""
			}
			var last string
			for {
				var b strings.Builder
				if err := o.status(cmd.Context(), c, &b, ns, explicit && !all); err != nil {
					return err
				}
				if frame := stripClock(b.String()); frame != last {
					if _, err := io.WriteString(o.streams.Out, b.String()); err != nil {
						return err
					}
					last = frame
				}
				if !watch {
					return nil
				}
				select {
				case <-cmd.Context().Done():
					return nil
				case <-time.After(interval):
				}
			}
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "keep watching: print the view again whenever it changes")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "how often --watch reads the hub")
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "HostedClusterDeployments of all namespaces (the default without -n)")
	o.addOutputFlag(cmd)
	return cmd
}

// status writes one view. Without an explicit namespace it reads all
// namespaces, and falls back to the kubeconfig's namespace when that is
// forbidden (a tenant).
func (o *options) status(ctx context.Context, c client.Reader, w io.Writer, ns string, explicit bool) error {
	s, err := fleetview.Collect(ctx, c, ns)
	if ns == "" && !explicit && apierrors.IsForbidden(err) {
		own, _, nsErr := o.namespace()
		if nsErr != nil {
			return nsErr
		}
		s, err = fleetview.Collect(ctx, c, own)
	}
	if err != nil {
		return err
	}
	return o.print(w, s, func(w io.Writer) error { return fleetview.Render(w, "hcp-fleet", s, o.now()) })
}

func (o *options) explainCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain hcd NAME",
		Short: "Why a HostedClusterDeployment is (not) on a management cluster, as the scheduler decides",
		Long: `Every candidate management cluster with each scheduling filter's verdict, its load, capacity and
the score the strategy ranks it by, decided by the hub's own scheduler on the hub's current inputs.
For a bound HostedClusterDeployment its own binding is left out, as when it was scheduled; what would
change the decision follows. Needs read access to the fleet (management clusters, their add-ons and
all HostedClusterDeployments), as the scheduler has.`,
		Example: "  kubectl hcpfleet explain hcd my-cluster -n team-a",
		Args:    hcdArgs("usage: kubectl hcpfleet explain hcd NAME [-n NAMESPACE]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			hub, err := o.hub()
			if err != nil {
				return err
			}
			c, err := o.reader()
			if err != nil {
				return err
			}
			ns, _, err := o.namespace()
			if err != nil {
				return err
			}
			x, err := ExplainHCD(cmd.Context(), c, hub, ns, args[1])
			if err != nil {
				if x != nil && x.Scheduled != nil {
					// What the reader may see: the hub's own summary.
					err = fmt.Errorf("%w\nthe hub's Scheduled condition: %s %s: %s", err, x.Scheduled.Status, x.Scheduled.Reason, x.Scheduled.Message)
				}
				return err
			}
			return o.print(o.streams.Out, x, func(w io.Writer) error { return RenderExplanation(w, x) })
		},
	}
	o.addOutputFlag(cmd)
	return cmd
}

func (o *options) hostsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hosts NAME",
		Short: "One management cluster: its hosted clusters, claims, HostingConfig in effect, capacity inputs, add-on conditions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			hub, err := o.hub()
			if err != nil {
				return err
			}
			c, err := o.reader()
			if err != nil {
				return err
			}
			h, err := CollectHost(cmd.Context(), c, hub, args[0])
			if err != nil {
				return err
			}
			return o.print(o.streams.Out, h, func(w io.Writer) error { return RenderHost(w, h, o.now()) })
		},
	}
	o.addOutputFlag(cmd)
	return cmd
}

func (o *options) addOutputFlag(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output format: json or yaml (default: the table view)")
}

func checkOutput(format string) error {
	switch format {
	case "", "json", "yaml":
		return nil
	}
	return fmt.Errorf("unknown output format %q: use json or yaml", format)
}

// print writes v as o.output asks, or as text by render.
func (o *options) print(w io.Writer, v any, render func(io.Writer) error) error {
	switch o.output {
	case "json":
		out, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", out)
		return err
	case "yaml":
		out, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	return render(w)
}

// stripClock drops the view's first line (its time), so an unchanged
// fleet is not printed again by --watch.
func stripClock(frame string) string {
	if _, rest, ok := strings.Cut(frame, "\n"); ok {
		return rest
	}
	return frame
}

// hcdArgs accepts the arguments "hcd NAME" (or the kind's full singular or
// plural name instead of hcd), as kubectl names a resource; anything else
// gets usage.
func hcdArgs(usage string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 2 || (args[0] != "hcd" && args[0] != "hostedclusterdeployment" && args[0] != "hostedclusterdeployments") {
			return errors.New(usage)
		}
		return nil
	}
}
