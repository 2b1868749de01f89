package kubectlhcpfleet

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/relocation"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// relocate (one HostedClusterDeployment) and drain (every one of a
// management cluster) check, with the relocation's own rules
// (pkg/hosting/hub/relocation) on the hub's inputs, whether hosted
// clusters can be moved and where to (--dry-run); without it they ask the
// hub to move them (move.go).

// RelocationCheck is what `relocate --dry-run` shows.
type RelocationCheck struct {
	Namespace, Name string
	// Source is where it runs (status.hostingCluster).
	Source string
	// Destination is where it would go; "" when refused.
	Destination string
	// Reason and Message say why it is refused; empty when it would move.
	Reason, Message string
}

// CheckRelocation applies relocation.Ready and relocation.Destination to
// the HostedClusterDeployment namespace/name, with the scheduler's inputs
// as c reads them; to is the named destination ("" for the scheduler's
// choice).
func CheckRelocation(ctx context.Context, c client.Reader, hub HubSettings, namespace, name, to string) (*RelocationCheck, error) {
	hcd := &v1alpha1.HostedClusterDeployment{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, hcd); err != nil {
		if apierrors.IsNotFound(err) && !isAPIMissing(err) {
			return nil, fmt.Errorf("HostedClusterDeployment %s/%s not found (kubectl get hcd -n %s lists them)", namespace, name, namespace)
		}
		return nil, err
	}
	x := &RelocationCheck{Namespace: namespace, Name: name, Source: hcd.Status.HostingCluster}
	if x.Reason, x.Message = relocation.Ready(hcd); x.Reason != "" {
		return x, nil
	}
	// Its own binding left out, as for explain: its slot on the source is
	// not a load on the destination.
	in := scheduling.Inputs{Client: c, Strategy: hub.Strategy, ConfigNamespaces: hub.ConfigNamespaces, UnavailableGrace: hub.UnavailableGrace, Bound: boundLister(c), Without: hcd,
		Moving: fleetview.MovingLister(c)}
	g, err := in.Gather(ctx, hcd)
	if err != nil {
		return x, err
	}
	if g.Candidates == nil {
		x.Reason, x.Message = relocation.ReasonDestinationNotAvailable, g.Message
		return x, nil
	}
	x.Destination, x.Reason, x.Message = relocation.Destination(g.Request, g.Candidates, x.Source, to, g.Strategy)
	if x.Reason == relocation.ReasonDestinationNotAllowed {
		// OCM drops a cordoned cluster from the Placement's decisions:
		// say so rather than "not allowed".
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, types.NamespacedName{Name: to}, mc); err == nil && scheduling.Cordoned(mc) {
			x.Reason, x.Message = relocation.ReasonDestinationCordoned, fmt.Sprintf("%s is cordoned (ManagedCluster taint %s): nothing is moved onto it", to, hosting.TaintUnschedulable)
		}
	}
	return x, nil
}

// RenderRelocationCheck writes x for a reader.
func RenderRelocationCheck(w io.Writer, x *RelocationCheck) error {
	var err error
	if x.Reason != "" {
		_, err = fmt.Fprintf(w, "%s/%s cannot be relocated: %s: %s\n", x.Namespace, x.Name, x.Reason, x.Message)
	} else {
		_, err = fmt.Fprintf(w, "%s/%s is relocation-ready: it would move from %s to %s\n", x.Namespace, x.Name, x.Source, x.Destination)
	}
	return err
}

func (o *options) relocateCommand() *cobra.Command {
	var to string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "relocate hcd NAME [--to CLUSTER] [--dry-run]",
		Short: "Move a HostedClusterDeployment with its data to another management cluster",
		Long: `relocate creates a HostedClusterRelocation: the hub pauses the hosted cluster, snapshots its
etcd, restores it on the destination (the named cluster, or the scheduler's choice without --to,
never the cluster it runs on nor a cordoned one), waits until it is Available there with the same
identity, moves the binding and removes the source (docs/operations.md). Follow it with
kubectl get hcr -n NAMESPACE; deleting the relocation before the binding moved rolls it back.
Needs the hcp-fleet:relocate ClusterRole.

With --dry-run it only reads: whether the HostedClusterDeployment is relocation-ready (managed etcd,
a fixed API server hostname, no KMS encryption, not KubeVirt) and where it would go.`,
		Example: "  kubectl hcpfleet relocate hcd my-cluster -n team-a --to cluster-2 --dry-run\n  kubectl hcpfleet relocate hcd my-cluster -n team-a",
		Args:    hcdArgs("usage: kubectl hcpfleet relocate hcd NAME [-n NAMESPACE] [--to CLUSTER] [--dry-run]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			ns, _, err := o.namespace()
			if err != nil {
				return err
			}
			if !dryRun {
				c, err := o.writer()
				if err != nil {
					return err
				}
				hcr, err := Relocate(cmd.Context(), c, ns, args[1], to, nil)
				if err != nil {
					return err
				}
				return o.print(o.streams.Out, hcr, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "hostedclusterrelocation %s/%s created: kubectl get hcr -n %s %s follows it\n", hcr.Namespace, hcr.Name, hcr.Namespace, hcr.Name)
					return err
				})
			}
			hub, err := o.hub()
			if err != nil {
				return err
			}
			c, err := o.reader()
			if err != nil {
				return err
			}
			x, err := CheckRelocation(cmd.Context(), c, hub, ns, args[1], to)
			if err != nil {
				return err
			}
			return o.print(o.streams.Out, x, func(w io.Writer) error { return RenderRelocationCheck(w, x) })
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the destination management cluster (default: the scheduler's choice)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only check: say whether it can move and where to")
	o.addOutputFlag(cmd)
	return cmd
}

// DrainCheck is what `drain --dry-run` shows: the relocation check of every
// HostedClusterDeployment bound to Cluster.
type DrainCheck struct {
	Cluster        string
	HostedClusters []*RelocationCheck
}

// CheckDrain runs CheckRelocation, without a named destination, for every
// HostedClusterDeployment bound to cluster. Each is checked on its own: the
// spreading of a real drain's moves over the destinations is not played.
func CheckDrain(ctx context.Context, c client.Reader, hub HubSettings, cluster string) (*DrainCheck, error) {
	var all v1alpha1.HostedClusterDeploymentList
	if err := c.List(ctx, &all); err != nil {
		return nil, err
	}
	d := &DrainCheck{Cluster: cluster}
	for _, h := range all.Items {
		if h.Status.HostingCluster != cluster {
			continue
		}
		x, err := CheckRelocation(ctx, c, hub, h.Namespace, h.Name, "")
		if err != nil {
			return d, err
		}
		d.HostedClusters = append(d.HostedClusters, x)
	}
	return d, nil
}

// RenderDrainCheck writes d for a reader.
func RenderDrainCheck(w io.Writer, d *DrainCheck) error {
	if len(d.HostedClusters) == 0 {
		_, err := fmt.Fprintf(w, "no HostedClusterDeployment is bound to %s: nothing to move\n", d.Cluster)
		return err
	}
	// The tabwriter buffers; a write error surfaces at Flush.
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "NAMESPACE\tNAME\tDESTINATION\tREASON\tMESSAGE")
	for _, x := range d.HostedClusters {
		dest := x.Destination
		if dest == "" {
			dest = "-"
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", x.Namespace, x.Name, dest, x.Reason, x.Message)
	}
	return tw.Flush()
}

func (o *options) drainCommand() *cobra.Command {
	var dryRun bool
	var opts DrainOptions
	cmd := &cobra.Command{
		Use:   "drain CLUSTER [--concurrency N] [--to CLUSTER] [--dry-run]",
		Short: "Move every hosted cluster off a management cluster",
		Long: `drain cordons CLUSTER, then relocates every HostedClusterDeployment bound to it (as relocate
does), at most --concurrency at once, and waits until each move ended; it prints how each ended and
fails when one was not moved. A move refused because no management cluster can take it stops the
drain from starting more. The cluster stays cordoned. Needs the hcp-fleet:relocate ClusterRole.

With --dry-run it only reads: relocate --dry-run for each (each checked on its own).`,
		Example: "  kubectl hcpfleet drain cluster-1 --dry-run\n  kubectl hcpfleet drain cluster-1 --concurrency 2",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if !dryRun {
				c, err := o.writer()
				if err != nil {
					return err
				}
				ended, err := Drain(cmd.Context(), c, o.streams.Out, args[0], opts)
				if err != nil {
					return err
				}
				return o.print(o.streams.Out, ended, func(w io.Writer) error { return RenderDrain(w, ended) })
			}
			hub, err := o.hub()
			if err != nil {
				return err
			}
			c, err := o.reader()
			if err != nil {
				return err
			}
			d, err := CheckDrain(cmd.Context(), c, hub, args[0])
			if err != nil {
				return err
			}
			return o.print(o.streams.Out, d, func(w io.Writer) error { return RenderDrainCheck(w, d) })
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only check where each would go")
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", 1, "moves of this drain that run at once")
	cmd.Flags().StringVar(&opts.To, "to", "", "the destination of every move (default: the scheduler's choice for each)")
	o.addOutputFlag(cmd)
	return cmd
}
