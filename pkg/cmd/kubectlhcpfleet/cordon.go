package kubectlhcpfleet

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// cordon and uncordon write the taint
// hosting.TaintUnschedulable on a ManagedCluster, which needs get and patch
// on managedclusters (the hcp-fleet:cordon ClusterRole, docs/security.md).

// writer is a client of the hub for the plugin's few writes (cordon,
// relocate, drain).
func (o *options) writer() (client.Client, error) {
	cfg, err := o.config.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: Scheme})
}

func (o *options) cordonCommand(cordon bool) *cobra.Command {
	use, short := "cordon CLUSTER", "Stop scheduling new hosted clusters onto a management cluster (its hosted clusters keep running)"
	long := `cordon taints the ManagedCluster ` + hosting.TaintUnschedulable + ` (effect NoSelect): OCM Placements
that do not tolerate it stop selecting it, and the hcp-fleet scheduler binds no new
HostedClusterDeployment there, pinned ones included, unless the namespace's TenantPolicy allows
the toleration and the HostedClusterDeployment's Placement tolerates it. Nothing that runs there
is moved or restarted; the hcp-fleet add-on stays installed. Needs get and patch on
managedclusters (the hcp-fleet:cordon ClusterRole).`
	if !cordon {
		use, short = "uncordon CLUSTER", "Let the scheduler place new hosted clusters onto a management cluster again"
		long = `uncordon removes the ManagedCluster taint ` + hosting.TaintUnschedulable + `; HostedClusterDeployments waiting
for a cluster are retried at once.`
	}
	return &cobra.Command{
		Use: use, Short: short, Long: long,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.writer()
			if err != nil {
				return err
			}
			return Cordon(cmd.Context(), c, o.streams.Out, args[0], cordon)
		},
	}
}

// Cordon sets (cordon) or removes the cordon taint on the ManagedCluster
// name and says what it did; it writes nothing when the cluster already is
// as asked. The patch carries the resourceVersion it was computed on, so a
// concurrent change of the taints (OCM's own unreachable/unavailable ones)
// is never overwritten: it is retried on the new copy. The taint carries no
// timeAdded: OCM's ManagedCluster webhook stamps it and refuses a new taint
// that sets one.
func Cordon(ctx context.Context, c client.Client, out io.Writer, name string, cordon bool) error {
	changed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, types.NamespacedName{Name: name}, mc); err != nil {
			if apierrors.IsNotFound(err) && !isAPIMissing(err) {
				return fmt.Errorf("ManagedCluster %s not found (kubectl get managedclusters lists them)", name)
			}
			return err
		}
		has := func(t clusterv1.Taint) bool { return t.Key == hosting.TaintUnschedulable }
		if slices.ContainsFunc(mc.Spec.Taints, has) == cordon {
			changed = false
			return nil
		}
		orig := mc.DeepCopy()
		if cordon {
			mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: hosting.TaintUnschedulable, Effect: clusterv1.TaintEffectNoSelect})
		} else {
			mc.Spec.Taints = slices.DeleteFunc(mc.Spec.Taints, has)
		}
		changed = true
		return c.Patch(ctx, mc, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return err
	}
	switch {
	case !changed && cordon:
		_, err = fmt.Fprintf(out, "managedcluster/%s already cordoned\n", name)
	case !changed:
		_, err = fmt.Fprintf(out, "managedcluster/%s is not cordoned\n", name)
	case cordon:
		_, err = fmt.Fprintf(out, "managedcluster/%s cordoned: nothing new is scheduled there; its hosted clusters keep running\n", name)
	default:
		_, err = fmt.Fprintf(out, "managedcluster/%s uncordoned\n", name)
	}
	return err
}
