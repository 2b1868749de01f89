package fleetview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// The scheduler's explanation of one HostedClusterDeployment, computed
// here so that `kubectl hcpfleet explain` (with the reader's rights) and
// the hub's console endpoint (with the hub's, for a user the API server
// allowed to get the deployment) give the same answer.

// HubSettings are the hub's flags that shape its decisions, which a reader
// of the API cannot see: they must match the hub's for explain to give its
// answer.
type HubSettings struct {
	// Strategy is the hub's --scheduling-strategy.
	Strategy scheduling.Strategy
	// ConfigNamespaces are the hub's --namespace and
	// --hosting-config-namespaces.
	ConfigNamespaces hostmodel.ConfigNamespaces
	// UnavailableGrace is the hub's --host-unavailable-grace: a management
	// cluster reporting itself unavailable for less counts as available, as
	// the scheduler counts it.
	UnavailableGrace time.Duration
}

// Explanation is what `explain hcd` shows about one HostedClusterDeployment.
type Explanation struct {
	Namespace, Name string
	// Placement and Pinned are spec.placement and spec.hostingCluster.
	Placement, Pinned string
	// BoundTo is status.hostingCluster.
	BoundTo string
	// Scheduled is the hub's Scheduled condition (nil before its first
	// attempt).
	Scheduled *metav1.Condition
	// Reason and Message say why there are no candidates at all (no
	// Placement decisions, pinned cluster not bound to the namespace);
	// Scheduling is nil then.
	Reason, Message string
	// Recovery, for an unbound HostedClusterDeployment whose binding the
	// hub recovers instead of deciding (its status was lost: a backup
	// restore), says where it binds it or why it waits; Scheduling is nil
	// then. Empty when the reader may not list ManifestWorks.
	Recovery string
	// Untolerated are OCM's availability taints the Placement does not
	// tolerate (scheduling.UntoleratedAvailabilityTaints): a management
	// cluster that flaps leaves its decisions at once. Empty without a
	// Placement or when the reader may not get it.
	Untolerated []string
	// Updates are the releases it may go to, and the conditional updates
	// with their risks (nil: its hosted cluster reports none).
	Updates *Updates
	// Scheduling is the scheduler's own decision on the current inputs, with
	// the deployment's own binding left out (as when it was scheduled:
	// scheduling.Inputs.Without).
	Scheduling *scheduling.Explanation
}

// ExplainHCD asks the scheduler, with the hub's inputs as c reads them,
// where the HostedClusterDeployment namespace/name goes and why.
func ExplainHCD(ctx context.Context, c client.Reader, hub HubSettings, namespace, name string) (*Explanation, error) {
	hcd := &v1alpha1.HostedClusterDeployment{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, hcd); err != nil {
		if apierrors.IsNotFound(err) && !isAPIMissing(err) {
			return nil, &HCDNotFoundError{Namespace: namespace, Name: name}
		}
		return nil, err
	}
	x := &Explanation{Namespace: namespace, Name: name, Placement: hcd.Spec.Placement, Pinned: hcd.Spec.HostingCluster,
		BoundTo: hcd.Status.HostingCluster, Scheduled: meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionScheduled)}
	if hcd.Spec.Placement != "" {
		p := &clusterv1beta1.Placement{}
		switch err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: hcd.Spec.Placement}, p); {
		case err == nil:
			x.Untolerated = scheduling.UntoleratedAvailabilityTaints(p.Spec.Tolerations)
		case !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err):
			return nil, err
		}
	}
	updates, err := ReleaseUpdates(ctx, c, hcd)
	if err != nil {
		return x, err
	}
	x.Updates = updates
	if hcd.Status.HostingCluster == "" {
		// What the scheduler does first (scheduling/recover.go). A tenant
		// may not list ManifestWorks: explained without it.
		cluster, reason, message, err := scheduling.RecoverBinding(ctx, c, hcd)
		switch {
		case err != nil && !apierrors.IsForbidden(err):
			return x, err
		case cluster != "":
			x.Recovery = fmt.Sprintf("its binding is recovered, not decided: it binds to %s, where its ManifestWork is or its agent reports its HostedCluster (%s)", cluster, v1alpha1.ReasonBindingRecovered)
			return x, nil
		case reason != "":
			x.Recovery = fmt.Sprintf("nothing is decided: %s: %s", reason, message)
			return x, nil
		}
	}
	in := scheduling.Inputs{Client: c, Strategy: hub.Strategy, ConfigNamespaces: hub.ConfigNamespaces, UnavailableGrace: hub.UnavailableGrace, Bound: BoundLister(c),
		Moving: MovingLister(c)}
	if hcd.Status.HostingCluster != "" {
		in.Without = hcd // as when it was scheduled
	}
	g, err := in.Gather(ctx, hcd)
	if err != nil {
		return x, err
	}
	if g.Candidates == nil {
		x.Reason, x.Message = g.Reason, g.Message
		return x, nil
	}
	e := scheduling.Explain(g.Request, g.Candidates, g.Strategy)
	x.Scheduling = &e
	return x, nil
}

// BoundLister lists the HostedClusterDeployments bound to a cluster from
// one list of all of them (the hub's index is not an API field selector),
// for scheduling.Inputs.Bound.
func BoundLister(c client.Reader) func(context.Context, string) ([]v1alpha1.HostedClusterDeployment, error) {
	var once sync.Once
	var byCluster map[string][]v1alpha1.HostedClusterDeployment
	var listErr error
	return func(ctx context.Context, cluster string) ([]v1alpha1.HostedClusterDeployment, error) {
		once.Do(func() {
			var all v1alpha1.HostedClusterDeploymentList
			if listErr = c.List(ctx, &all); listErr != nil {
				return
			}
			byCluster = map[string][]v1alpha1.HostedClusterDeployment{}
			for _, h := range all.Items {
				if h.Status.HostingCluster != "" {
					byCluster[h.Status.HostingCluster] = append(byCluster[h.Status.HostingCluster], h)
				}
			}
		})
		return byCluster[cluster], listErr
	}
}

// MovingLister is an Inputs.Moving for the plugin and the console: the
// relocations c may list, listed once, and what the deployments they move
// onto a cluster occupy there, as the scheduler counts them. A reader that
// may not list relocations sees no moves, as it sees no other namespace's
// deployments.
func MovingLister(c client.Reader) func(context.Context, string) (map[types.UID][]string, error) {
	var once sync.Once
	var relocations []v1alpha1.HostedClusterRelocation
	var listErr error
	return func(ctx context.Context, cluster string) (map[types.UID][]string, error) {
		once.Do(func() {
			var list v1alpha1.HostedClusterRelocationList
			switch err := c.List(ctx, &list); {
			case err == nil:
				relocations = list.Items
			case apierrors.IsForbidden(err) || isAPIMissing(err):
			default:
				listErr = err
			}
		})
		if listErr != nil {
			return nil, listErr
		}
		return scheduling.Occupying(ctx, c, relocations, cluster)
	}
}

// filterHeaders are the candidate table's columns for the filters, in the
// scheduler's order (scheduling.FilterNames).
var filterHeaders = map[string]string{
	scheduling.RejectCordoned:              "CORDON",
	scheduling.RejectHostingNamespace:      "HOSTING-NS",
	scheduling.RejectClusterUnavailable:    "CLUSTER",
	scheduling.RejectAddOnUnavailable:      "ADD-ON",
	scheduling.RejectOperatorMissing:       "OPERATOR",
	scheduling.RejectRelease:               "RELEASE",
	scheduling.RejectPlatform:              "PLATFORM",
	scheduling.RejectNameTaken:             "NAMES",
	scheduling.RejectControlPlaneNamespace: "CP-NS",
	scheduling.RejectFull:                  "CAPACITY",
}

// RenderExplanation writes x for a reader.
func RenderExplanation(w io.Writer, x *Explanation) error {
	var b strings.Builder
	fmt.Fprintf(&b, "HostedClusterDeployment %s/%s\n", x.Namespace, x.Name)
	switch {
	case x.Placement != "" && x.Pinned != "":
		fmt.Fprintf(&b, "  candidates: spec.hostingCluster %s, if Placement %s/%s selects it\n", x.Pinned, x.Namespace, x.Placement)
	case x.Pinned != "":
		fmt.Fprintf(&b, "  candidates: spec.hostingCluster %s, if a cluster set bound to %s holds it\n", x.Pinned, x.Namespace)
	default:
		fmt.Fprintf(&b, "  candidates: the decisions of Placement %s/%s\n", x.Namespace, x.Placement)
	}
	if len(x.Untolerated) > 0 {
		fmt.Fprintf(&b, "  note: Placement %s/%s does not tolerate %s: a management cluster that reports itself unavailable for a moment leaves its decisions at once, before the hub's --host-unavailable-grace (tolerate them for that long; docs/hosting.md)\n",
			x.Namespace, x.Placement, strings.Join(x.Untolerated, " or "))
	}
	if x.Recovery != "" {
		fmt.Fprintf(&b, "  %s\n", x.Recovery)
	}
	if s := x.Scheduling; s != nil {
		r := s.Request
		fmt.Fprintf(&b, "  request: HostedCluster %s/%s, node pools %s, release %s, platform %s\n", r.HostingNamespace, r.Name,
			orDash(strings.Join(r.NodePools, ", ")), orWord(r.ReleaseMinor, "unknown (not checked)"), orWord(r.Platform, "any"))
	}
	if x.Updates != nil {
		fmt.Fprintf(&b, "  releases: %s\n", x.Updates)
	}
	switch c := x.Scheduled; {
	case x.BoundTo != "":
		fmt.Fprintf(&b, "  hub: bound to %s", x.BoundTo)
		if c != nil && c.Status == metav1.ConditionTrue {
			fmt.Fprintf(&b, " (%s)", c.Message)
		}
		b.WriteString("\n")
	case c == nil:
		b.WriteString("  hub: not scheduled yet (no Scheduled condition)\n")
	default:
		fmt.Fprintf(&b, "  hub: Scheduled=%s %s: %s\n", c.Status, c.Reason, c.Message)
	}
	s := x.Scheduling
	if s == nil {
		if x.Recovery == "" {
			fmt.Fprintf(&b, "\nNo candidates: %s: %s\n", x.Reason, x.Message)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "\nCANDIDATES (%d; strategy %s: %s)\n", len(s.Candidates), s.Strategy, strategyRule(s.Strategy))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	header := []string{"  NAME", "RANK", "LOAD", "SCORE"}
	for _, f := range scheduling.FilterNames() {
		header = append(header, filterHeaders[f])
	}
	_, _ = fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, e := range s.Candidates {
		c := e.Candidate
		rank := "-"
		if e.Rank > 0 {
			rank = fmt.Sprint(e.Rank)
		}
		row := []string{"  " + c.Name, rank, fmt.Sprintf("%d/%d", c.Load, c.Capacity), score(c)}
		for _, f := range e.Filters {
			row = append(row, map[bool]string{true: "ok", false: "FAIL"}[f.Passed])
		}
		_, _ = fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range s.Candidates {
		for _, f := range e.Failed() {
			fmt.Fprintf(&b, "  %s: %s: %s\n", e.Candidate.Name, f.Filter, f.Detail)
		}
	}

	b.WriteString("\n")
	d := s.Decision
	switch {
	case d.Cluster == "":
		fmt.Fprintf(&b, "DECISION: none fits: %s: %s\n", d.Reason(), d.Message())
	case x.BoundTo == "":
		fmt.Fprintf(&b, "DECISION: %s\n", d.Cluster)
	case x.BoundTo == d.Cluster:
		fmt.Fprintf(&b, "DECISION: %s, where it is bound (scheduled now, its own binding left out)\n", d.Cluster)
	default:
		fmt.Fprintf(&b, "DECISION: %s if scheduled now (its own binding left out); it is bound to %s: the inputs changed since, and a binding never moves\n", d.Cluster, x.BoundTo)
	}

	b.WriteString("\nWHAT WOULD CHANGE IT\n")
	switch {
	case d.Cluster == "":
	case s.RunnerUp == "":
		fmt.Fprintf(&b, "  %s is the only candidate that fits\n", d.Cluster)
	case s.Overtake > 0:
		fmt.Fprintf(&b, "  %s would be chosen instead once %s hosts %d more\n", s.RunnerUp, d.Cluster, s.Overtake)
	default:
		fmt.Fprintf(&b, "  %s stays first while it fits; then %s\n", d.Cluster, s.RunnerUp)
	}
	if s.OtherStrategyDecision != d.Cluster {
		fmt.Fprintf(&b, "  strategy %s would choose %s (Placement annotation %s=%s)\n", s.OtherStrategy, orWord(s.OtherStrategyDecision, "none"),
			scheduling.StrategyAnnotation, s.OtherStrategy)
	}
	for _, e := range s.Candidates {
		if failed := e.Failed(); len(failed) > 0 {
			var names []string
			for _, f := range failed {
				names = append(names, f.Filter)
			}
			fmt.Fprintf(&b, "  %s fits once it passes: %s\n", e.Candidate.Name, strings.Join(names, ", "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func strategyRule(s scheduling.Strategy) string {
	if s == scheduling.StrategyBinPack {
		return "the most utilized after placement first"
	}
	return "the least utilized after placement first"
}

// score is the utilization after placing one more, which the strategies
// order by (scheduling.Schedule).
func score(c scheduling.Candidate) string {
	if c.Capacity <= 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%d%%)", c.Load+1, c.Capacity, int64(c.Load+1)*100/int64(c.Capacity))
}

func orDash(s string) string { return orWord(s, "-") }

func orWord(s, word string) string {
	if s == "" {
		return word
	}
	return s
}

// isAPIMissing: the API (CRD) itself is not served, not the object.
func isAPIMissing(err error) bool {
	var missing *APIMissingError
	return errors.As(err, &missing)
}

// HCDNotFoundError: the HostedClusterDeployment asked about does not exist.
type HCDNotFoundError struct{ Namespace, Name string }

func (e *HCDNotFoundError) Error() string {
	return fmt.Sprintf("HostedClusterDeployment %s/%s not found (kubectl get hcd -n %s lists them)", e.Namespace, e.Name, e.Namespace)
}
