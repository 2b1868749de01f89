package kubectlhcpfleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
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
// and says what that deployment would be. Only the dry-run is built: the
// hub does not adopt yet (docs/operations.md, "Adopt a HostedCluster that
// already runs").

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
	fmt.Fprintf(&b, "  bound to %s (annotation hcpfleet.io/bound-to), never scheduled elsewhere\n", p.Cluster)
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
	b.WriteString("dry-run: nothing was written; the hub does not adopt yet (docs/operations.md, \"Adopt a HostedCluster that already runs\")\n")
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
	var into string
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
the fleet admin's read access. It is a dry-run by default; adopting is not built yet.`,
		Example: "  kubectl hcpfleet adopt cluster-1 clusters/prod --into team-a",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !dryRun {
				return errors.New("only the dry-run is built: the hub does not adopt yet (docs/operations.md, \"Adopt a HostedCluster that already runs\")")
			}
			if err := checkOutput(o.output); err != nil {
				return err
			}
			req, err := parseAdoptArgs(args, into)
			if err != nil {
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
	cmd.Flags().BoolVar(&dryRun, "dry-run", true, "only check and say what it would do (the default; adopting is not built yet)")
	o.addOutputFlag(cmd)
	return cmd
}
