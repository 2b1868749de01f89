package kubectlhcpfleet

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8swait "k8s.io/apimachinery/pkg/util/wait"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/adoption"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
)

// adopt checks, with the adoption's own rules (pkg/hosting/hub/adoption)
// on the hub's inputs, whether a HostedCluster running on a management
// cluster outside hcp-fleet can be brought under a HostedClusterDeployment,
// and says what that deployment would be; with --dry-run=false it asks the
// hub to adopt it, with a HostedClusterAdoption (docs/operations.md, "Adopt
// a HostedCluster that already runs").

// CheckAdoption reads what adoption.Check decides on — the management
// cluster, every HostedClusterInventory and HostedClusterDeployment, the
// HostingConfig the cluster's add-on runs with — as c may, and asks it. It
// needs the fleet admin's read access: a tenant, who may read no
// inventory, gets the API server's refusal.
func CheckAdoption(ctx context.Context, c client.Reader, hub HubSettings, req adoption.Request) (*adoption.Plan, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, types.NamespacedName{Name: req.Cluster}, mc); err != nil {
		if apierrors.IsNotFound(err) && !isAPIMissing(err) {
			return nil, fmt.Errorf("ManagedCluster %s not found (kubectl hcpfleet status lists the management clusters)", req.Cluster)
		}
		return nil, err
	}
	var in adoption.Inputs
	var invs v1alpha1.HostedClusterInventoryList
	if err := c.List(ctx, &invs); err != nil {
		return nil, err
	}
	in.Inventories = invs.Items
	var hcds v1alpha1.HostedClusterDeploymentList
	if err := c.List(ctx, &hcds); err != nil {
		return nil, err
	}
	in.Deployments = hcds.Items
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	switch err := c.Get(ctx, types.NamespacedName{Namespace: req.Cluster, Name: addon.Name}, mca); {
	case err == nil:
		cfg, err := hostmodel.HostingConfigOf(ctx, c, mca, hub.ConfigNamespaces)
		if err != nil {
			return nil, err
		}
		if cfg != nil {
			in.HostingConfig, in.HostingConfigName = &cfg.Spec, cfg.Namespace+"/"+cfg.Name
		}
	case !apierrors.IsNotFound(err) || isAPIMissing(err):
		return nil, err
	}
	// Without the add-on the cluster has no agent and so no inventory:
	// Check says so.
	return adoption.Check(req, in), nil
}

// RenderAdoptionPlan writes p for a reader.
func RenderAdoptionPlan(w io.Writer, p *adoption.Plan) error {
	hc := fmt.Sprintf("HostedCluster %s/%s on %s", p.Namespace, p.Name, p.Cluster)
	if !p.Adoptable() {
		_, err := fmt.Fprintf(w, "%s cannot be adopted into HostedClusterDeployment %s/%s: %s: %s\n", hc, p.IntoNamespace, p.IntoName, p.Reason, p.Message)
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s can be adopted into HostedClusterDeployment %s/%s:\n", hc, p.IntoNamespace, p.IntoName)
	fmt.Fprintf(&b, "  bound to %s, where it runs (annotation hcpfleet.io/adopted-from), never scheduled elsewhere\n", p.Cluster)
	fmt.Fprintf(&b, "  hostingNamespace %s and name %s kept\n", p.HostingNamespace, p.Name)
	if p.InfraID != "" {
		fmt.Fprintf(&b, "  infraID %s kept\n", p.InfraID)
	}
	if p.OrphanOf != nil {
		fmt.Fprintf(&b, "  left running by HostedClusterDeployment %s/%s, which is gone (deletionPolicy Orphan)\n", p.OrphanOf.Namespace, p.OrphanOf.Name)
	}
	for _, u := range p.Unchecked {
		fmt.Fprintf(&b, "  not checked here: %s\n", u)
	}
	b.WriteString("dry-run: nothing was written; --dry-run=false adopts it (docs/operations.md, \"Adopt a HostedCluster that already runs\")\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// parseAdoptArgs reads CLUSTER NAMESPACE/NAME and --into NS[/HCD].
func parseAdoptArgs(args []string, into string) (adoption.Request, error) {
	req := adoption.Request{Cluster: args[0]}
	var ok bool
	if req.Namespace, req.Name, ok = strings.Cut(args[1], "/"); !ok || req.Namespace == "" || req.Name == "" || strings.Contains(req.Name, "/") {
		return req, fmt.Errorf("%q: want the HostedCluster as NAMESPACE/NAME", args[1])
	}
	req.IntoNamespace, req.IntoName, _ = strings.Cut(into, "/")
	if req.IntoNamespace == "" || strings.Contains(req.IntoName, "/") {
		return req, fmt.Errorf("--into %q: want NAMESPACE or NAMESPACE/NAME of the HostedClusterDeployment", into)
	}
	return req, nil
}

func (o *options) adoptCommand() *cobra.Command {
	var into, deletionPolicy string
	var wait time.Duration
	dryRun := true
	cmd := &cobra.Command{
		Use:   "adopt CLUSTER NAMESPACE/NAME --into NAMESPACE[/NAME]",
		Short: "Check whether a HostedCluster running outside hcp-fleet can be adopted into a HostedClusterDeployment",
		Long: `adopt checks whether the HostedCluster NAMESPACE/NAME on management cluster CLUSTER, which no
HostedClusterDeployment manages (kubectl hcpfleet status lists them), can be brought under a
HostedClusterDeployment in the hub namespace given by --into without restarting its control plane:
listed by the cluster's agent, not managed, the deployment named as the HostedCluster and not there
yet, its infraID no other hosted cluster's, its namespace one the cluster's HostingConfig allows and
no bound deployment's. It says what the deployment would be or why not. It only reads, and needs
the fleet admin's read access. It is a dry-run by default.

With --dry-run=false it creates a HostedClusterAdoption in the management cluster's namespace: the
cluster's agent reports the HostedCluster's and its NodePools' specs, the hub checks them (the
TenantPolicy of the namespace included), creates the HostedClusterDeployment, binds it where it runs
and takes the HostedCluster over without restarting it. It waits (--wait) until Adopted or refused
and prints how it ended. Needs the hcp-fleet:adopt ClusterRole.`,
		Example: "  kubectl hcpfleet adopt cluster-1 clusters/prod --into team-a\n  kubectl hcpfleet adopt cluster-1 clusters/prod --into team-a --dry-run=false",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			req, err := parseAdoptArgs(args, into)
			if err != nil {
				return err
			}
			if !dryRun {
				c, err := o.writer()
				if err != nil {
					return err
				}
				hca, err := Adopt(cmd.Context(), c, req, v1alpha1.DeletionPolicy(deletionPolicy), wait)
				if hca != nil {
					if perr := o.print(o.streams.Out, hca, func(w io.Writer) error { return RenderAdoption(w, hca) }); perr != nil {
						return perr
					}
				}
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
			p, err := CheckAdoption(cmd.Context(), c, hub, req)
			if err != nil {
				return err
			}
			return o.print(o.streams.Out, p, func(w io.Writer) error { return RenderAdoptionPlan(w, p) })
		},
	}
	cmd.Flags().StringVar(&into, "into", "", "the HostedClusterDeployment to adopt it into: NAMESPACE, or NAMESPACE/NAME (the name must be the HostedCluster's)")
	_ = cmd.MarkFlagRequired("into")
	cmd.Flags().BoolVar(&dryRun, "dry-run", true, "only check and say what it would do (the default); --dry-run=false adopts")
	cmd.Flags().StringVar(&deletionPolicy, "deletion-policy", string(v1alpha1.DeletionPolicyOrphan),
		"the deletionPolicy of the HostedClusterDeployment created: Orphan (deleting it leaves the HostedCluster running) or Delete")
	cmd.Flags().DurationVar(&wait, "wait", 10*time.Minute, "with --dry-run=false, how long to wait until it is adopted or refused (0: do not wait)")
	o.addOutputFlag(cmd)
	return cmd
}

// adoptionPoll is how often Adopt reads the adoption while it waits.
const adoptionPoll = time.Second

// AdoptionName is the name of the HostedClusterAdoption `adopt` creates for
// the HostedCluster namespace/name: one per HostedCluster and cluster.
func AdoptionName(namespace, name string) string { return namespace + "-" + name }

// Adopt creates the HostedClusterAdoption for req in the management
// cluster's namespace and, for up to wait, waits until its Adopted
// condition is True or a refusal (any reason but the waiting ones). It
// returns the adoption as last read, and an error when it was refused or
// the wait ran out.
func Adopt(ctx context.Context, c client.Client, req adoption.Request, policy v1alpha1.DeletionPolicy, wait time.Duration) (*v1alpha1.HostedClusterAdoption, error) {
	hca := &v1alpha1.HostedClusterAdoption{
		ObjectMeta: metav1.ObjectMeta{Namespace: req.Cluster, Name: AdoptionName(req.Namespace, req.Name)},
		Spec: v1alpha1.HostedClusterAdoptionSpec{
			HostedCluster:  v1alpha1.AdoptionHostedCluster{Namespace: req.Namespace, Name: req.Name},
			Into:           v1alpha1.AdoptionInto{Namespace: req.IntoNamespace, Name: req.IntoName},
			DeletionPolicy: policy,
		},
	}
	if err := c.Create(ctx, hca); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("HostedClusterAdoption %s/%s exists already: kubectl get hca -n %s %s shows it; delete it to adopt again", hca.Namespace, hca.Name, hca.Namespace, hca.Name)
		}
		return nil, err
	}
	if wait <= 0 {
		return hca, nil
	}
	var last *v1alpha1.HostedClusterAdoption
	err := k8swait.PollUntilContextTimeout(ctx, adoptionPoll, wait, true, func(ctx context.Context) (bool, error) {
		got := &v1alpha1.HostedClusterAdoption{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(hca), got); err != nil {
			return false, err
		}
		last = got
		return AdoptionEnded(got), nil
	})
	if last == nil {
		last = hca
	}
	if err != nil {
		return last, fmt.Errorf("HostedClusterAdoption %s/%s: not adopted within %s (kubectl get hca -n %s %s follows it): %w", hca.Namespace, hca.Name, wait, hca.Namespace, hca.Name, err)
	}
	if cond := meta.FindStatusCondition(last.Status.Conditions, v1alpha1.ConditionAdopted); cond.Status != metav1.ConditionTrue {
		return last, fmt.Errorf("not adopted: %s: %s", cond.Reason, cond.Message)
	}
	return last, nil
}

// AdoptionEnded reports whether hca's Adopted condition is True or a
// refusal: the hub waits no further on its own.
func AdoptionEnded(hca *v1alpha1.HostedClusterAdoption) bool {
	c := meta.FindStatusCondition(hca.Status.Conditions, v1alpha1.ConditionAdopted)
	if c == nil || c.ObservedGeneration != hca.Generation {
		return false
	}
	return c.Status == metav1.ConditionTrue || (c.Reason != adoption.ReasonWaitingForAgent && c.Reason != adoption.ReasonTakingOver)
}

// RenderAdoption writes how an adoption stands for a reader.
func RenderAdoption(w io.Writer, hca *v1alpha1.HostedClusterAdoption) error {
	hc := fmt.Sprintf("HostedCluster %s/%s on %s", hca.Spec.HostedCluster.Namespace, hca.Spec.HostedCluster.Name, hca.Namespace)
	c := meta.FindStatusCondition(hca.Status.Conditions, v1alpha1.ConditionAdopted)
	var err error
	switch {
	case c == nil:
		_, err = fmt.Fprintf(w, "hostedclusteradoption %s/%s created for %s: kubectl get hca -n %s %s follows it\n", hca.Namespace, hca.Name, hc, hca.Namespace, hca.Name)
	case c.Status == metav1.ConditionTrue:
		_, err = fmt.Fprintf(w, "%s adopted into HostedClusterDeployment %s: %s\n", hc, hca.Status.HostedClusterDeployment, c.Message)
	default:
		_, err = fmt.Fprintf(w, "%s not adopted (yet): %s: %s\n", hc, c.Reason, c.Message)
	}
	return err
}
