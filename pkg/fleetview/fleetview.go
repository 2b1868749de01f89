// Package fleetview is the fleet view `kubectl hcpfleet status` and
// `localfleet up` show: the management clusters (availability, add-on and
// HyperShift operator state, hosted count and capacity) and the
// HostedClusterDeployments (host, phase, version and key conditions), read
// from the hub as any client would, with the reader's own permissions.
//
// Collect reads a Snapshot from the hub; Render turns a Snapshot into text.
// Render is a pure function, so what the view shows is tested without a
// fleet. It only reads.
package fleetview

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// conditionOperatorDegraded is the agent's operator Degraded condition on
// the ManagedClusterAddOn (pkg/hosting/agent/operator.ConditionDegraded; the view
// reads the hub API and does not import the agent).
const conditionOperatorDegraded = "HyperShiftOperatorDegraded"

// scoreName is the agent's AddOnPlacementScore in the cluster namespace, and
// scoreFreeCapacity its free-capacity item (pkg/hosting/agent/capacity).
const (
	scoreName         = "hcp-fleet"
	scoreFreeCapacity = "freeCapacity"
)

// Snapshot is what the view shows at one moment.
type Snapshot struct {
	Hosts []Host `json:"managementClusters"`
	// HostsHidden says why Hosts is empty because the reader may not see
	// the management clusters (a tenant); "" when they are shown.
	HostsHidden string `json:"managementClustersHidden,omitempty"`
	// Namespace is the one namespace Deployments come from; "" for all.
	Namespace   string       `json:"namespace,omitempty"`
	Deployments []Deployment `json:"hostedClusterDeployments"`
	// Extensions are the HostedClusterExtensions (none on a hub without
	// the kind, or for a reader who may not list them).
	Extensions []Extension `json:"hostedClusterExtensions,omitempty"`
	// Unmanaged are the HostedClusters the agents report that no
	// HostedClusterDeployment delivered (none for a reader who may not
	// list the inventories).
	Unmanaged []Unmanaged `json:"unmanagedHostedClusters,omitempty"`
}

// Extension is a HostedClusterExtension's rollout.
type Extension struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Revision  int64  `json:"revision"`
	Strategy  string `json:"strategy"`
	Selected  int32  `json:"selected"`
	Updated   int32  `json:"updated"`
	Available int32  `json:"available"`
	Failed    int32  `json:"failed"`
	// Problem is the Degraded (or, for a spec never delivered, Available)
	// condition's "Reason: message" ("" when none).
	Problem string `json:"problem,omitempty"`
}

// ExtensionOf summarizes a HostedClusterExtension.
func ExtensionOf(e *v1alpha1.HostedClusterExtension) Extension {
	x := Extension{Namespace: e.Namespace, Name: e.Name, Revision: e.Status.Revision, Strategy: string(e.Spec.Strategy.Type),
		Selected: e.Status.Selected, Updated: e.Status.Updated, Available: e.Status.Available, Failed: e.Status.Failed}
	if x.Strategy == "" {
		x.Strategy = string(v1alpha1.ExtensionStrategyInstant)
	}
	if r := e.Spec.Strategy.RollingUpgrade; r != nil {
		x.Strategy += " (maxUnavailable " + r.MaxUnavailable.String() + ")"
	}
	if c := meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionDegraded); c != nil && c.Status == metav1.ConditionTrue {
		x.Problem = c.Reason + ": " + c.Message
	}
	return x
}

// Host is a management cluster: a ManagedCluster that is not a hosted
// cluster imported by hcp-fleet.
type Host struct {
	Name string `json:"name"`
	// Available is the ManagedCluster's Available condition status.
	Available string `json:"available"`
	// Cordoned: the fleet admin cordoned it (`kubectl hcpfleet cordon`;
	// the ManagedCluster taint hosting.TaintUnschedulable): nothing new is
	// scheduled there. Shown as "True,Cordoned" in the AVAILABLE column,
	// as kubectl shows a cordoned Node "Ready,SchedulingDisabled".
	Cordoned bool `json:"cordoned,omitempty"`
	// AddOn is the hcp-fleet add-on's state: "-" (not enabled), "Available",
	// "Unavailable", "Deleting".
	AddOn string `json:"addOn"`
	// Operator is the HyperShift operator's state on the cluster, from the
	// add-on's conditions: the Installed reason, and the Degraded reason
	// when degraded ("-" when unknown).
	Operator string `json:"operator"`
	// CAPI is the Cluster API types the agent installed there (its CAPITypes
	// condition's reason: Standard, Private, ...; "-" when unknown).
	CAPI string `json:"capi"`
	// Hosted is the agent-reported HostedCluster count ("-" when unknown).
	Hosted string `json:"hosted"`
	// Capacity is the capacity the scheduler uses (hostmodel.Capacity; 0
	// when the cluster has no add-on).
	Capacity int32 `json:"capacity"`
	// CapacityBasis is what the agent computed the cluster's capacity from
	// (Nodes, allocatable resources, size per hosted control plane); "" when
	// not reported.
	CapacityBasis string `json:"capacityBasis,omitempty"`
	// FreeScore is the AddOnPlacementScore's free-capacity item ("-" when
	// not reported).
	FreeScore string `json:"freeScore"`
	// Platforms and Versions are the claims the scheduler filters on.
	Platforms string `json:"platforms"`
	Versions  string `json:"versions"`
}

// Deployment is a HostedClusterDeployment.
type Deployment struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Host      string `json:"hostingCluster"`
	Phase     string `json:"phase"`
	// Version is the current version, with "→ desired" while a rollout is
	// under way.
	Version string `json:"version"`
	// Conditions are the key conditions in a fixed order (see keyConditions).
	Conditions []Condition `json:"conditions"`
	// Problem is the first key condition (other than Progressing) that is
	// not as wanted, as
	// "Type Reason: message" ("" when none).
	Problem string `json:"problem,omitempty"`
	// ManagedCluster is the hub ManagedCluster the hosted cluster was
	// imported as.
	ManagedCluster string `json:"managedCluster,omitempty"`
	// Updates are the releases it may go to (nil: its hosted cluster
	// reports no update).
	Updates *Updates `json:"updates,omitempty"`
}

// Condition is one key condition, short.
type Condition struct {
	Type string `json:"type"`
	// Status is the condition status; "" when not reported yet.
	Status metav1.ConditionStatus `json:"status"`
	// Good is whether Status is the healthy one (True, or False for
	// Degraded/Progressing).
	Good bool `json:"good"`
}

// keyConditions are the HCD conditions the view shows, in order; the bool
// is the healthy status (true: True is healthy).
var keyConditions = []struct {
	Type    string
	healthy bool
}{
	{v1alpha1.ConditionScheduled, true},
	{v1alpha1.ConditionDelivered, true},
	{v1alpha1.ConditionAvailable, true},
	{v1alpha1.ConditionProgressing, false},
	{v1alpha1.ConditionDegraded, false},
	{v1alpha1.ConditionNodePoolsReady, true},
	{v1alpha1.ConditionImported, true},
	// A minor upgrade held because installed operators do not support it
	// (pkg/olm): the problem line names them.
	{v1alpha1.ConditionUpgradeBlocked, false},
	// Whether the hosted cluster's OLM catalogs serve (pkg/olm): the
	// problem line names those that do not.
	{v1alpha1.ConditionCatalogsReady, true},
}

// Collect reads a Snapshot from the hub: the HostedClusterDeployments of
// namespace ("" for all) and the management clusters. A reader who may not
// list ManagedClusters (a tenant) gets the deployments and HostsHidden
// saying so; any other error fails.
func Collect(ctx context.Context, c client.Reader, namespace string) (Snapshot, error) {
	s := Snapshot{Namespace: namespace}
	hcds := &v1alpha1.HostedClusterDeploymentList{}
	if err := c.List(ctx, hcds, client.InNamespace(namespace)); err != nil {
		return s, ReadError(err, "list", "hostedclusterdeployments.hcpfleet.io", namespace)
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, clusters); err != nil {
		if !apierrors.IsForbidden(err) {
			return s, ReadError(err, "list", "managedclusters.cluster.open-cluster-management.io", "")
		}
		s.HostsHidden = ReadError(err, "list", "managedclusters.cluster.open-cluster-management.io", "").Error()
		clusters.Items = nil
	}
	for i := range clusters.Items {
		mc := &clusters.Items[i]
		if mc.Labels[hosting.LabelHCDName] != "" {
			continue // a hosted cluster hcp-fleet imported
		}
		h, err := collectHost(ctx, c, mc)
		if err != nil {
			return s, err
		}
		s.Hosts = append(s.Hosts, h)
	}
	for i := range hcds.Items {
		s.Deployments = append(s.Deployments, DeploymentOf(&hcds.Items[i]))
	}
	if err := s.collectUpdates(ctx, c, hcds.Items); err != nil {
		return s, err
	}
	if s.HostsHidden == "" {
		var err error
		if s.Unmanaged, err = collectUnmanaged(ctx, c); err != nil {
			return s, err
		}
	}
	exts := &v1alpha1.HostedClusterExtensionList{}
	switch err := c.List(ctx, exts, client.InNamespace(namespace)); {
	case err == nil:
		for i := range exts.Items {
			s.Extensions = append(s.Extensions, ExtensionOf(&exts.Items[i]))
		}
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		// An older hub, or a reader who may not see them: no section.
	default:
		return s, ReadError(err, "list", "hostedclusterextensions.hcpfleet.io", namespace)
	}
	slices.SortFunc(s.Hosts, func(a, b Host) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Deployments, func(a, b Deployment) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	slices.SortFunc(s.Extensions, func(a, b Extension) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return s, nil
}

func collectHost(ctx context.Context, c client.Reader, mc *clusterv1.ManagedCluster) (Host, error) {
	h := Host{Name: mc.Name, Available: "Unknown", AddOn: "-", Operator: "-", CAPI: "-", Hosted: "-", FreeScore: "-"}
	if cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); cond != nil {
		h.Available = string(cond.Status)
	}
	h.Cordoned = scheduling.Cordoned(mc)
	for _, claim := range mc.Status.ClusterClaims {
		switch claim.Name {
		case hosting.ClaimHostedClusters:
			h.Hosted = claim.Value
		case hosting.ClaimPlatforms:
			h.Platforms = claim.Value
		case hosting.ClaimSupportedVersions:
			h.Versions = claim.Value
		case hosting.ClaimCapacityBasis:
			h.CapacityBasis = claim.Value
		}
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	err := c.Get(ctx, types.NamespacedName{Namespace: mc.Name, Name: addon.Name}, mca)
	switch {
	case err == nil:
		h.AddOn, h.Operator = addOnState(mca)
		if c := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionCAPITypes); c != nil {
			h.CAPI = c.Reason
		}
		capacity, err := hostmodel.Capacity(ctx, c, mc, mca, hostmodel.ConfigNamespaces{})
		if err != nil {
			return h, err
		}
		h.Capacity = capacity
	case client.IgnoreNotFound(err) != nil:
		return h, ReadError(err, "get", "managedclusteraddons.addon.open-cluster-management.io", mc.Name)
	}
	score := &clusterv1alpha1.AddOnPlacementScore{}
	err = c.Get(ctx, types.NamespacedName{Namespace: mc.Name, Name: scoreName}, score)
	switch {
	case err == nil:
		for _, item := range score.Status.Scores {
			if item.Name == scoreFreeCapacity {
				h.FreeScore = strconv.Itoa(int(item.Value))
			}
		}
	case client.IgnoreNotFound(err) != nil:
		return h, ReadError(err, "get", "addonplacementscores.cluster.open-cluster-management.io", mc.Name)
	}
	return h, nil
}

// addOnState summarizes the add-on and the operator it installs.
func addOnState(mca *addonv1alpha1.ManagedClusterAddOn) (addOnState, operatorState string) {
	addOnState = "Unavailable"
	switch {
	case mca.DeletionTimestamp != nil:
		addOnState = "Deleting"
		if c := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionCleanup); c != nil && c.Status != metav1.ConditionTrue {
			addOnState = "Deleting (" + c.Reason + ")"
		}
	case meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable):
		addOnState = "Available"
	}
	operatorState = "-"
	if c := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionHyperShiftOperatorInstalled); c != nil {
		operatorState = c.Reason
	}
	if c := meta.FindStatusCondition(mca.Status.Conditions, conditionOperatorDegraded); c != nil && c.Status == metav1.ConditionTrue {
		operatorState += ", Degraded: " + c.Reason
	}
	return addOnState, operatorState
}

// DeploymentOf summarizes a HostedClusterDeployment.
func DeploymentOf(hcd *v1alpha1.HostedClusterDeployment) Deployment {
	d := Deployment{Namespace: hcd.Namespace, Name: hcd.Name, Host: hcd.Status.HostingCluster, ManagedCluster: hcd.Status.ManagedCluster}
	conds := hcd.Status.Conditions
	for _, k := range keyConditions {
		kc := Condition{Type: k.Type}
		if c := meta.FindStatusCondition(conds, k.Type); c != nil {
			kc.Status = c.Status
			kc.Good = (c.Status == metav1.ConditionTrue) == k.healthy
			// Progressing is a state, not a problem.
			if !kc.Good && d.Problem == "" && c.Status != metav1.ConditionUnknown && k.Type != v1alpha1.ConditionProgressing {
				d.Problem = fmt.Sprintf("%s %s: %s", c.Type, c.Reason, c.Message)
			}
		}
		d.Conditions = append(d.Conditions, kc)
	}
	if v := hcd.Status.Version; v != nil {
		d.Version = v.Current
		if v.Desired.Version != "" && v.Desired.Version != v.Current {
			d.Version = strings.TrimSpace(v.Current + " → " + v.Desired.Version)
		}
	}
	d.Phase = hcd.Phase()
	return d
}

// Render writes the view of s, taken at now, under title ("hcp-fleet local
// fleet").
func Render(w io.Writer, title string, s Snapshot, now time.Time) error {
	// Writes to b and to tabwriters over b cannot fail; Flush reports
	// anything else.
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s\n\n", title, now.Format("15:04:05"))
	if s.HostsHidden != "" {
		fmt.Fprintf(&b, "MANAGEMENT CLUSTERS: not shown (%s)\n", s.HostsHidden)
	} else if err := renderHosts(&b, s.Hosts); err != nil {
		return err
	}
	scope := ""
	if s.Namespace != "" {
		scope = ", namespace " + s.Namespace
	}
	fmt.Fprintf(&b, "\nHOSTED CLUSTER DEPLOYMENTS (%d%s)\n", len(s.Deployments), scope)
	if len(s.Deployments) == 0 {
		b.WriteString("  none yet: kubectl apply --server-side -f examples/\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "  NAMESPACE/NAME\tHOST\tPHASE\tVERSION\tIMPORTED AS\tCONDITIONS")
		for _, d := range s.Deployments {
			_, _ = fmt.Fprintf(tw, "  %s/%s\t%s\t%s\t%s\t%s\t%s\n", d.Namespace, d.Name, dash(d.Host), d.Phase, dash(d.Version),
				dash(d.ManagedCluster), conditionSummary(d.Conditions))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, d := range s.Deployments {
			if d.Problem != "" {
				fmt.Fprintf(&b, "  %s/%s: %s\n", d.Namespace, d.Name, truncate(d.Problem, 160))
			}
		}
		for _, d := range s.Deployments {
			if d.Updates != nil {
				fmt.Fprintf(&b, "  %s/%s updates: %s\n", d.Namespace, d.Name, truncate(d.Updates.String(), 240))
			}
		}
	}
	if len(s.Unmanaged) > 0 {
		if err := renderUnmanaged(&b, s.Unmanaged); err != nil {
			return err
		}
	}
	if len(s.Extensions) > 0 {
		if err := renderExtensions(&b, s.Extensions); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func renderExtensions(b *strings.Builder, exts []Extension) error {
	fmt.Fprintf(b, "\nHOSTED CLUSTER EXTENSIONS (%d)\n", len(exts))
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "  NAMESPACE/NAME\tREVISION\tSTRATEGY\tSELECTED\tUPDATED\tAVAILABLE\tFAILED")
	for _, x := range exts {
		_, _ = fmt.Fprintf(tw, "  %s/%s\t%d\t%s\t%d\t%d\t%d\t%d\n", x.Namespace, x.Name, x.Revision, x.Strategy, x.Selected, x.Updated, x.Available, x.Failed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, x := range exts {
		if x.Problem != "" {
			fmt.Fprintf(b, "  %s/%s: %s\n", x.Namespace, x.Name, truncate(x.Problem, 160))
		}
	}
	return nil
}

func renderHosts(b *strings.Builder, hosts []Host) error {
	fmt.Fprintf(b, "MANAGEMENT CLUSTERS (%d)\n", len(hosts))
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "  NAME\tAVAILABLE\tADD-ON\tHYPERSHIFT OPERATOR\tCAPI\tHOSTED\tFREE SCORE\tPLATFORMS\tVERSIONS")
	for _, h := range hosts {
		available := h.Available
		if h.Cordoned {
			available += ",Cordoned"
		}
		hosted := h.Hosted
		if h.Capacity > 0 {
			hosted = fmt.Sprintf("%s/%d", h.Hosted, h.Capacity)
		}
		_, _ = fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Name, available, h.AddOn, h.Operator, dash(h.CAPI), hosted, h.FreeScore,
			dash(h.Platforms), dash(h.Versions))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, h := range hosts {
		if h.CapacityBasis != "" {
			fmt.Fprintf(b, "  %s capacity: %s\n", h.Name, truncate(h.CapacityBasis, 160))
		}
	}
	return nil
}

// conditionSummary names the key conditions that are True, and those that
// should be True but are False with a "!" ("Scheduled !Delivered").
// Progressing and Degraded appear only while True; a condition not reported
// yet is left out.
func conditionSummary(conds []Condition) string {
	var out []string
	for _, c := range conds {
		switch {
		case c.Status == metav1.ConditionTrue:
			out = append(out, c.Type)
		case c.Status == metav1.ConditionFalse && !c.Good:
			out = append(out, "!"+c.Type)
		}
	}
	return dash(strings.Join(out, " "))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
