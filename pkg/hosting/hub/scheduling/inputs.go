package scheduling

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	clustersdkv1beta2 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
)

// Inputs reads what Schedule decides on from the hub: the Request, the
// candidate management clusters and the strategy. The scheduler reads
// through it from its cache; `kubectl hcpfleet explain` reads through it
// from the API server with the user's identity, so that what explain shows
// is what the scheduler would decide.
type Inputs struct {
	Client client.Reader
	// Strategy is the default Strategy (a Placement's annotation overrides
	// it); StrategySpread when empty.
	Strategy Strategy
	// ConfigNamespaces are where a cluster's HostingConfig may come from.
	ConfigNamespaces hostmodel.ConfigNamespaces
	// Bound lists the HostedClusterDeployments bound to a management
	// cluster (status.hostingCluster).
	Bound func(ctx context.Context, cluster string) ([]v1alpha1.HostedClusterDeployment, error)
	// Snapshot, if set, is read instead of Bound: the scheduler's
	// incrementally kept bound HostedClusterDeployments per cluster. With it,
	// a Candidate's Occupied holds only the keys of the request Gather reads
	// for (Candidate leaves it empty).
	Snapshot *BoundSnapshot
	// Assumed, if set, returns bindings made but not yet seen by Bound, and
	// what each occupies (the scheduler's assume cache).
	// Keyed by object (UID): a name may be reused before the cache shows it.
	Assumed func(cluster string) map[types.UID][]string
	// Moving, if set, returns the HostedClusterDeployments relocations are
	// moving onto a cluster (MovingInto), and what each occupies: counted
	// there as assumed bindings are.
	Moving func(ctx context.Context, cluster string) (map[types.UID][]string, error)
	// Without, if set, is a bound HostedClusterDeployment to read the
	// inputs as if it were not bound (to explain its binding): it is left
	// out of Bound, and, once delivered, out of its host's reported count.
	// The scheduler never sets it.
	Without *v1alpha1.HostedClusterDeployment
	// UnavailableGrace is how long a cluster or add-on that reports itself
	// unavailable stays a candidate (availability.go); 0: none.
	UnavailableGrace time.Duration
}

// Gathered is what Inputs.Gather read for one HostedClusterDeployment.
type Gathered struct {
	Request  Request
	Strategy Strategy
	// Candidates are the candidate management clusters; nil when there are
	// none, and then Reason and Message say why (the Scheduled=False
	// condition's).
	Candidates      []Candidate
	Reason, Message string
}

// Gather reads the scheduler's inputs for hcd.
func (in Inputs) Gather(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) (Gathered, error) {
	g := Gathered{Request: RequestFor(hcd)}
	names, strategy, reason, message, err := in.candidateNames(ctx, hcd)
	if err != nil {
		return g, err
	}
	g.Strategy = strategy
	if names == nil {
		g.Reason, g.Message = reason, message
		return g, nil
	}
	g.Candidates = make([]Candidate, 0, len(names))
	requestKeys := requestKeys(g.Request)
	cordoned := false
	for _, name := range names {
		c, err := in.candidate(ctx, name, requestKeys)
		if err != nil {
			return g, err
		}
		cordoned = cordoned || c.Cordoned
		g.Candidates = append(g.Candidates, c)
	}
	if cordoned {
		// Read only when it matters: most decisions see no cordon.
		if g.Request.ToleratesCordon, err = in.toleratesCordon(ctx, hcd); err != nil {
			return g, err
		}
	}
	return g, nil
}

// candidateNames returns the management clusters hcd may go to and the
// strategy to order them by, or nil and why there are none.
func (in Inputs) candidateNames(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) (names []string, strategy Strategy, reason, message string, err error) {
	strategy = in.Strategy
	if strategy == "" {
		strategy = StrategySpread
	}
	var decided []string
	if p := hcd.Spec.Placement; p != "" {
		placement := &clusterv1beta1.Placement{}
		if err := in.Client.Get(ctx, types.NamespacedName{Namespace: hcd.Namespace, Name: p}, placement); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, "", v1alpha1.ReasonPlacementNotFound,
					fmt.Sprintf("spec.placement names Placement %s/%s, which does not exist", hcd.Namespace, p), nil
			}
			return nil, "", "", "", err
		}
		if s, ok := placement.Annotations[StrategyAnnotation]; ok {
			if strategy, err = ParseStrategy(s); err != nil {
				return nil, "", v1alpha1.ReasonNoSuitableHostingCluster,
					fmt.Sprintf("Placement %s/%s: annotation %s: %v", hcd.Namespace, p, StrategyAnnotation, err), nil
			}
		}
		var pds clusterv1beta1.PlacementDecisionList
		if err := in.Client.List(ctx, &pds, client.InNamespace(hcd.Namespace),
			client.MatchingLabels{clusterv1beta1.PlacementLabel: p}); err != nil {
			return nil, "", "", "", err
		}
		for _, pd := range pds.Items {
			for _, d := range pd.Status.Decisions {
				decided = append(decided, d.ClusterName)
			}
		}
		slices.Sort(decided)
		decided = slices.Compact(decided)
		if len(decided) == 0 {
			return nil, "", v1alpha1.ReasonNoPlacementDecisions,
				fmt.Sprintf("Placement %s/%s has not selected any management cluster; check its predicates and the ManagedClusterSetBindings of namespace %s", hcd.Namespace, p, hcd.Namespace), nil
		}
	}
	pinned := hcd.Spec.HostingCluster
	if pinned == "" {
		return decided, strategy, "", "", nil
	}
	mc := &clusterv1.ManagedCluster{}
	if err := in.Client.Get(ctx, types.NamespacedName{Name: pinned}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", v1alpha1.ReasonHostingClusterNotFound,
				fmt.Sprintf("spec.hostingCluster names ManagedCluster %s, which does not exist", pinned), nil
		}
		return nil, "", "", "", err
	}
	if hcd.Spec.Placement != "" && !slices.Contains(decided, pinned) && Cordoned(mc) {
		// OCM dropped it from the decisions for its NoSelect taint: say
		// so rather than blame the Placement.
		return nil, "", v1alpha1.ReasonHostingClusterCordoned,
			fmt.Sprintf("spec.hostingCluster %s is cordoned (ManagedCluster taint %s) and Placement %s/%s does not select it", pinned, hosting.TaintUnschedulable, hcd.Namespace, hcd.Spec.Placement), nil
	}
	if hcd.Spec.Placement != "" && !slices.Contains(decided, pinned) {
		return nil, "", v1alpha1.ReasonHostingClusterNotAllowed,
			fmt.Sprintf("spec.hostingCluster %s is not among the decisions of Placement %s/%s (%s)", pinned, hcd.Namespace, hcd.Spec.Placement, strings.Join(decided, ", ")), nil
	}
	allowed, err := in.boundToNamespace(ctx, mc, hcd.Namespace)
	if err != nil {
		return nil, "", "", "", err
	}
	if !allowed {
		return nil, "", v1alpha1.ReasonHostingClusterNotAllowed,
			fmt.Sprintf("spec.hostingCluster %s is in no ManagedClusterSet bound to namespace %s; create a ManagedClusterSetBinding for one of its sets there", pinned, hcd.Namespace), nil
	}
	return []string{pinned}, strategy, "", "", nil
}

// boundToNamespace says whether mc is in a ManagedClusterSet bound to the
// namespace, the rule OCM applies to Placements.
func (in Inputs) boundToNamespace(ctx context.Context, mc *clusterv1.ManagedCluster, namespace string) (bool, error) {
	var list clusterv1beta2.ManagedClusterSetBindingList
	if err := in.Client.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return false, err
	}
	for _, b := range list.Items {
		if !meta.IsStatusConditionTrue(b.Status.Conditions, clusterv1beta2.ClusterSetBindingBoundType) {
			continue
		}
		set := &clusterv1beta2.ManagedClusterSet{}
		if err := in.Client.Get(ctx, types.NamespacedName{Name: b.Spec.ClusterSet}, set); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return false, err
		}
		selector, err := clustersdkv1beta2.BuildClusterSelector(set)
		if err != nil || selector == nil {
			continue
		}
		if selector.Matches(labels.Set(mc.Labels)) {
			return true, nil
		}
	}
	return false, nil
}

// requestKeys are the Candidate.Occupied keys req would take.
func requestKeys(req Request) []string {
	keys := []string{HostedClusterKey(req.HostingNamespace, req.Name)}
	for _, np := range req.NodePools {
		keys = append(keys, NodePoolKey(req.HostingNamespace, np))
	}
	for _, clash := range namespaceClashes(req.HostingNamespace, req.Name) {
		keys = append(keys, clash.key)
	}
	return keys
}

// Candidate gathers what the scheduler knows about one management cluster.
func (in Inputs) Candidate(ctx context.Context, name string) (Candidate, error) {
	return in.candidate(ctx, name, nil)
}

// candidate: see Candidate; with a Snapshot, Occupied is filled for keys
// only.
func (in Inputs) candidate(ctx context.Context, name string, keys []string) (Candidate, error) {
	c := Candidate{Name: name, Capacity: v1alpha1.DefaultMaxHostedClusters, Occupied: map[string]bool{}}
	mc := &clusterv1.ManagedCluster{}
	var claims map[string]string
	// Read only, never kept: from a cache, the cached objects themselves
	// (a decision reads every candidate's three; copying them was most of
	// its time with many clusters). An API client ignores the option.
	if err := in.Client.Get(ctx, types.NamespacedName{Name: name}, mc, client.UnsafeDisableDeepCopy); err == nil {
		var recheck time.Duration
		c.ClusterAvailable, recheck = hostmodel.ClusterAvailable(mc, in.UnavailableGrace, time.Now())
		hostmodel.CountHeld(hostmodel.HeldByScheduler, recheck)
		c.Cordoned = Cordoned(mc)
		claims = hostmodel.ClaimsMap(mc.Status.ClusterClaims)
	} else if !apierrors.IsNotFound(err) {
		return c, err
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := in.Client.Get(ctx, types.NamespacedName{Namespace: name, Name: addon.Name}, mca, client.UnsafeDisableDeepCopy); err == nil {
		var recheck time.Duration
		c.AddOnAvailable, recheck = hostmodel.AddOnAvailable(mca, in.UnavailableGrace, time.Now())
		hostmodel.CountHeld(hostmodel.HeldByScheduler, recheck)
		c.OperatorInstalled = meta.IsStatusConditionTrue(mca.Status.Conditions, addon.ConditionHyperShiftOperatorInstalled)
		c.AgentNamespace = mca.Status.Namespace
		hc, err := hostmodel.HostingConfigOf(ctx, in.Client, mca, in.ConfigNamespaces)
		if err != nil {
			return c, err
		}
		var spec *v1alpha1.HostingConfigSpec
		if hc != nil {
			c.HostingConfig = hc.Namespace + "/" + hc.Name
			c.HostingNamespaces = hc.Spec.HostingNamespaces
			spec = &hc.Spec
		}
		maxHosted, _ := spec.Limits()
		c.Capacity = hostmodel.EffectiveCapacity(maxHosted, claims)
	} else if !apierrors.IsNotFound(err) {
		return c, err
	}
	if v := claims[hosting.ClaimSupportedVersions]; v != "" {
		c.SupportedVersions = strings.Split(v, ",")
	}
	if v := claims[hosting.ClaimPlatforms]; v != "" {
		c.Platforms = strings.Split(v, ",")
	}
	var assumed map[types.UID][]string
	if in.Assumed != nil {
		assumed = in.Assumed(name)
	}
	if in.Moving != nil {
		moving, err := in.Moving(ctx, name)
		if err != nil {
			return c, err
		}
		assumed = withMoving(assumed, moving)
	}
	if in.Snapshot != nil {
		count := in.Snapshot.Count(name)
		for _, k := range keys {
			if in.Snapshot.Occupied(name, k) {
				c.Occupied[k] = true
			}
		}
		for uid, occupies := range assumed {
			if !in.Snapshot.Holds(name, uid) {
				count++
				for _, k := range occupies {
					c.Occupied[k] = true
				}
			}
		}
		c.Load = hostmodel.Load(hostmodel.ClaimInt(claims, hosting.ClaimHostedClusters), hostmodel.ClaimInt(claims, hosting.ClaimUnmanagedHostedClusters), count)
		return c, nil
	}
	bound, err := in.Bound(ctx, name)
	if err != nil {
		return c, err
	}
	seen := make(map[types.UID]bool, len(bound))
	count := int32(0)
	for i := range bound {
		key := client.ObjectKeyFromObject(&bound[i])
		if in.Without != nil && key == client.ObjectKeyFromObject(in.Without) {
			continue
		}
		seen[bound[i].UID] = true
		count++
		for _, k := range Occupies(&bound[i]) {
			c.Occupied[k] = true
		}
	}
	for uid, occupies := range assumed {
		if !seen[uid] {
			count++
			for _, k := range occupies {
				c.Occupied[k] = true
			}
		}
	}
	reported := hostmodel.ClaimInt(claims, hosting.ClaimHostedClusters)
	if w := in.Without; w != nil && w.Status.HostingCluster == name && reported > 0 &&
		meta.IsStatusConditionTrue(w.Status.Conditions, v1alpha1.ConditionDelivered) {
		reported-- // its HostedCluster is there and likely counted
	}
	c.Load = hostmodel.Load(reported, hostmodel.ClaimInt(claims, hosting.ClaimUnmanagedHostedClusters), count)
	return c, nil
}

// withMoving adds the moves onto a cluster to its assumed bindings, each
// HostedClusterDeployment once; assumed itself (the assume cache's) is
// left as it is.
func withMoving(assumed, moving map[types.UID][]string) map[types.UID][]string {
	if len(moving) == 0 {
		return assumed
	}
	out := make(map[types.UID][]string, len(assumed)+len(moving))
	for uid, occupies := range moving {
		out[uid] = occupies
	}
	for uid, occupies := range assumed {
		out[uid] = occupies
	}
	return out
}
