package kubectlhcpfleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// HostDetail is what `hosts NAME` shows about one management cluster.
type HostDetail struct {
	Name string `json:"name"`
	// Available is the ManagedCluster's Available condition status.
	Available string `json:"available"`
	// ClusterSet is the ManagedClusterSet it belongs to.
	ClusterSet string `json:"clusterSet,omitempty"`
	// Claims are its hcp-fleet ClusterClaims (what its agent reports).
	Claims []clusterv1.ManagedClusterClaim `json:"claims"`
	// AddOn is false when the hcp-fleet add-on is not enabled there.
	AddOn bool `json:"addOn"`
	// HostingConfig names the HostingConfig in effect and where it comes
	// from.
	HostingConfig string `json:"hostingConfig"`
	// Capacity inputs: the candidate as the scheduler sees it.
	Load            int32  `json:"load"`
	Capacity        int32  `json:"capacity"`
	Bound           int32  `json:"bound"`
	ReportedTotal   string `json:"reportedHostedClusters"`
	ReportedForeign string `json:"reportedUnmanagedHostedClusters"`
	// Deployments are the HostedClusterDeployments bound to it.
	Deployments []fleetview.Deployment `json:"hostedClusterDeployments"`
	// Conditions are the add-on's conditions, the latest change first.
	Conditions []metav1.Condition `json:"addOnConditions"`
}

// CollectHost reads one management cluster's detail from the hub.
func CollectHost(ctx context.Context, c client.Reader, hub HubSettings, name string) (*HostDetail, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, types.NamespacedName{Name: name}, mc); err != nil {
		if apierrors.IsNotFound(err) && !isAPIMissing(err) {
			return nil, fmt.Errorf("ManagedCluster %s not found (kubectl hcpfleet status lists the management clusters)", name)
		}
		return nil, err
	}
	if mc.Labels[hosting.LabelHCDName] != "" {
		return nil, fmt.Errorf("ManagedCluster %s is a hosted cluster hcp-fleet imported (HostedClusterDeployment %s/%s), not a management cluster",
			name, mc.Labels[hosting.LabelHCDNamespace], mc.Labels[hosting.LabelHCDName])
	}
	h := &HostDetail{Name: name, Available: "Unknown", ClusterSet: mc.Labels[clusterv1beta2.ClusterSetLabel],
		HostingConfig: "-", ReportedTotal: "-", ReportedForeign: "-"}
	if cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); cond != nil {
		h.Available = string(cond.Status)
	}
	for _, claim := range mc.Status.ClusterClaims {
		if strings.HasSuffix(claim.Name, hosting.ClaimHostingCluster) {
			h.Claims = append(h.Claims, claim)
		}
		switch claim.Name {
		case hosting.ClaimHostedClusters:
			h.ReportedTotal = claim.Value
		case hosting.ClaimUnmanagedHostedClusters:
			h.ReportedForeign = claim.Value
		}
	}
	slices.SortFunc(h.Claims, func(a, b clusterv1.ManagedClusterClaim) int { return strings.Compare(a.Name, b.Name) })

	mca := &addonv1alpha1.ManagedClusterAddOn{}
	switch err := c.Get(ctx, types.NamespacedName{Namespace: name, Name: addon.Name}, mca); {
	case err == nil:
		h.AddOn = true
		h.HostingConfig = hostingConfigInEffect(mca, hub.ConfigNamespaces)
		h.Conditions = slices.Clone(mca.Status.Conditions)
		slices.SortStableFunc(h.Conditions, func(a, b metav1.Condition) int { return b.LastTransitionTime.Compare(a.LastTransitionTime.Time) })
	case !apierrors.IsNotFound(err) || isAPIMissing(err):
		return nil, err
	}

	var all v1alpha1.HostedClusterDeploymentList
	if err := c.List(ctx, &all); err != nil {
		return nil, err
	}
	var bound []v1alpha1.HostedClusterDeployment
	for i := range all.Items {
		if all.Items[i].Status.HostingCluster == name {
			bound = append(bound, all.Items[i])
			h.Deployments = append(h.Deployments, fleetview.DeploymentOf(&all.Items[i]))
		}
	}
	in := scheduling.Inputs{Client: c, ConfigNamespaces: hub.ConfigNamespaces, UnavailableGrace: hub.UnavailableGrace,
		Bound:  func(context.Context, string) ([]v1alpha1.HostedClusterDeployment, error) { return bound, nil },
		Moving: fleetview.MovingLister(c)}
	cand, err := in.Candidate(ctx, name)
	if err != nil {
		return nil, err
	}
	h.Load, h.Capacity, h.Bound = cand.Load, cand.Capacity, int32(len(bound))
	return h, nil
}

// hostingConfigInEffect names the HostingConfig the add-on runs with and
// whether it is the default or this cluster's override.
func hostingConfigInEffect(mca *addonv1alpha1.ManagedClusterAddOn, namespaces hostmodel.ConfigNamespaces) string {
	key, ok := hostmodel.HostingConfigKey(mca)
	if !ok {
		return "none resolved yet: the API defaults"
	}
	source := "the ClusterManagementAddOn's default"
	for _, cfg := range mca.Spec.Configs {
		if cfg.Group == v1alpha1.GroupVersion.Group && cfg.Resource == "hostingconfigs" {
			source = "this cluster's override (ManagedClusterAddOn spec.configs)"
		}
	}
	if !namespaces.Allows(key.Namespace) {
		return fmt.Sprintf("%s, %s, IGNORED: namespace %s is not one the hub takes HostingConfigs from; the API defaults apply", key, source, key.Namespace)
	}
	return fmt.Sprintf("%s (%s)", key, source)
}

// RenderHost writes h as seen at now.
func RenderHost(w io.Writer, h *HostDetail, now time.Time) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Management cluster %s\n", h.Name)
	fmt.Fprintf(&b, "  available: %s; cluster set: %s\n", h.Available, orDash(h.ClusterSet))
	if !h.AddOn {
		b.WriteString("  hcp-fleet add-on: not enabled (no ManagedClusterAddOn hcp-fleet in its namespace)\n")
	} else {
		fmt.Fprintf(&b, "  HostingConfig: %s\n", h.HostingConfig)
	}
	fmt.Fprintf(&b, "  capacity: load %d of %d (load = max(reported %s, reported unmanaged %s + %d bound by the hub))\n",
		h.Load, h.Capacity, h.ReportedTotal, h.ReportedForeign, h.Bound)

	fmt.Fprintf(&b, "\nHOSTED CLUSTER DEPLOYMENTS (%d)\n", len(h.Deployments))
	if len(h.Deployments) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "  NAMESPACE/NAME\tPHASE\tVERSION\tIMPORTED AS")
		for _, d := range h.Deployments {
			_, _ = fmt.Fprintf(tw, "  %s/%s\t%s\t%s\t%s\n", d.Namespace, d.Name, d.Phase, orDash(d.Version), orDash(d.ManagedCluster))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	fmt.Fprintf(&b, "\nCLAIMS (%d)\n", len(h.Claims))
	for _, c := range h.Claims {
		fmt.Fprintf(&b, "  %s = %s\n", c.Name, c.Value)
	}

	fmt.Fprintf(&b, "\nADD-ON CONDITIONS (%d, latest change first)\n", len(h.Conditions))
	if len(h.Conditions) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "  TYPE\tSTATUS\tREASON\tAGE\tMESSAGE")
		for _, c := range h.Conditions {
			age := "-"
			if !c.LastTransitionTime.IsZero() {
				age = duration.HumanDuration(now.Sub(c.LastTransitionTime.Time))
			}
			_, _ = fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, age, truncate(c.Message, 100))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func isAPIMissing(err error) bool {
	var missing *fleetview.APIMissingError
	return errors.As(err, &missing)
}
