// Package fleetmetrics is the hub's view of the fleet as Prometheus gauges:
// HostedClusterDeployments by phase and by condition, and per management
// cluster its bound hosted clusters, capacity, reported count, add-on and
// HyperShift operator state. The gauges are computed from the hub's cache
// at every scrape (a collector), so they never drift from the objects the
// way counters kept by hand would. Labels are phases, condition types and
// statuses (fixed sets) and management-cluster names (the fleet admin's);
// never a HostedClusterDeployment's name or namespace, which tenants choose.
// The one exception is the release-rollout gauge: its rollout label is a
// ReleaseRollout's namespace/name, five series per rollout, so its series
// grow with the rollouts (objects a tenant's quota bounds), never with the
// hosted clusters.
package fleetmetrics

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

var (
	descPhase = prometheus.NewDesc("hcpfleet_hub_hostedclusterdeployments",
		"HostedClusterDeployments by phase (Pending, Delivering, Progressing, Available, Upgrading, Degraded, Deleting, Orphaning).",
		[]string{"phase"}, nil)
	descCondition = prometheus.NewDesc("hcpfleet_hub_hostedclusterdeployment_conditions",
		"HostedClusterDeployments by condition type and status.",
		[]string{"type", "status"}, nil)
	// The conditions gauge has no reason label; the one reason an alert
	// needs apart is a management cluster failing to apply what the hub
	// delivered (as opposed to the hub holding a delivery back).
	descApplyFailures = prometheus.NewDesc("hcpfleet_hub_hostedclusterdeployment_apply_failures",
		"HostedClusterDeployments whose ManifestWork the management cluster could not apply (Delivered=False, ApplyFailed).",
		nil, nil)
	descBound = prometheus.NewDesc("hcpfleet_hub_management_cluster_bound_hosted_clusters",
		"HostedClusterDeployments bound to the management cluster.",
		[]string{"cluster"}, nil)
	descCapacity = prometheus.NewDesc("hcpfleet_hub_management_cluster_capacity",
		"Hosted clusters the scheduler lets the management cluster take (maxHostedClusters of its HostingConfig).",
		[]string{"cluster"}, nil)
	descReported = prometheus.NewDesc("hcpfleet_hub_management_cluster_reported_hosted_clusters",
		"HostedClusters the agent reports on the management cluster (its "+hosting.ClaimHostedClusters+" claim; -1 while none is reported).",
		[]string{"cluster"}, nil)
	descAddOn = prometheus.NewDesc("hcpfleet_hub_management_cluster_addon_available",
		"1 when the hcp-fleet add-on on the management cluster is Available.",
		[]string{"cluster"}, nil)
	descOperator = prometheus.NewDesc("hcpfleet_hub_management_cluster_operator_installed",
		"1 when the agent reports the HyperShift operator installed on the management cluster ("+addon.ConditionHyperShiftOperatorInstalled+").",
		[]string{"cluster"}, nil)
	descCordoned = prometheus.NewDesc("hcpfleet_hub_management_cluster_cordoned",
		"1 when the management cluster is cordoned (ManagedCluster taint "+hosting.TaintUnschedulable+"): nothing new is scheduled there.",
		[]string{"cluster"}, nil)
	descRollout = prometheus.NewDesc("hcpfleet_hub_release_rollout_hcds",
		"HostedClusterDeployments a ReleaseRollout selects, by its state on them (Pending, Upgrading, Done, Blocked, Failed); rollout is namespace/name.",
		[]string{"rollout", "state"}, nil)
	descScrapeErrors = prometheus.NewDesc("hcpfleet_hub_fleet_metrics_errors",
		"1 when the last collection of the fleet gauges could not read the hub's cache.",
		nil, nil)
)

// conditionTypes are the HostedClusterDeployment condition types counted.
var conditionTypes = []string{
	v1alpha1.ConditionScheduled, v1alpha1.ConditionDelivered, v1alpha1.ConditionAvailable, v1alpha1.ConditionProgressing,
	v1alpha1.ConditionDegraded, v1alpha1.ConditionNodePoolsReady, v1alpha1.ConditionHostingClusterAvailable,
	v1alpha1.ConditionUpgradeBlocked, v1alpha1.ConditionCatalogsReady, v1alpha1.ConditionImported,
}

// source is one hub's cache.
type source struct {
	reader     client.Reader
	namespaces hostmodel.ConfigNamespaces
}

// collector is registered once per process with controller-runtime's
// registry; the hub that leads reads through it. A process runs one hub;
// where tests run several, the latest leader reports.
type collector struct {
	mu      sync.Mutex
	sources []*source
}

var fleet = &collector{}

func init() { metrics.Registry.MustRegister(fleet) }

// Setup makes the hub's cache the collector's source while this replica
// leads (a non-leader's view would duplicate the leader's).
func Setup(mgr ctrl.Manager, namespaces hostmodel.ConfigNamespaces) error {
	return mgr.Add(leaderRunnable(func(ctx context.Context) error {
		s := &source{reader: mgr.GetClient(), namespaces: namespaces}
		fleet.add(s)
		<-ctx.Done()
		fleet.remove(s)
		return nil
	}))
}

type leaderRunnable func(context.Context) error

func (f leaderRunnable) Start(ctx context.Context) error { return f(ctx) }
func (leaderRunnable) NeedLeaderElection() bool          { return true }

var _ manager.LeaderElectionRunnable = leaderRunnable(nil)

func (c *collector) add(s *source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources = append(c.sources, s)
}

func (c *collector) remove(s *source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, have := range c.sources {
		if have == s {
			c.sources = append(c.sources[:i], c.sources[i+1:]...)
			return
		}
	}
}

func (c *collector) current() *source {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sources) == 0 {
		return nil
	}
	return c.sources[len(c.sources)-1]
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPhase, descCondition, descApplyFailures, descBound, descCapacity, descReported, descAddOn, descOperator, descCordoned, descRollout, descScrapeErrors} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: nothing while no hub leads here.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.current()
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	failed := 0.0
	if err := s.collect(ctx, ch); err != nil {
		log.FromContext(ctx).WithName("fleetmetrics").Error(err, "collecting the fleet gauges")
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(descScrapeErrors, prometheus.GaugeValue, failed)
}

func (s *source) collect(ctx context.Context, ch chan<- prometheus.Metric) error {
	var hcds v1alpha1.HostedClusterDeploymentList
	if err := s.reader.List(ctx, &hcds, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	phases := make(map[string]int, len(v1alpha1.Phases))
	for _, p := range v1alpha1.Phases {
		phases[p] = 0
	}
	type typeStatus struct{ t, s string }
	conds := map[typeStatus]int{}
	for _, t := range conditionTypes {
		for _, st := range []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown} {
			conds[typeStatus{t, string(st)}] = 0
		}
	}
	bound := map[string]int{}
	applyFailures := 0
	for i := range hcds.Items {
		h := &hcds.Items[i]
		phases[h.Phase()]++
		for _, c := range h.Status.Conditions {
			// Only the known types: a label value must not come from input.
			if k := (typeStatus{c.Type, string(c.Status)}); hasKey(conds, k) {
				conds[k]++
			}
			if c.Type == v1alpha1.ConditionDelivered && c.Status == metav1.ConditionFalse && c.Reason == v1alpha1.ReasonApplyFailed {
				applyFailures++
			}
		}
		if h.Status.HostingCluster != "" {
			bound[h.Status.HostingCluster]++
		}
	}
	if err := collectRollouts(ctx, s.reader, ch); err != nil {
		return err
	}
	for p, n := range phases {
		ch <- prometheus.MustNewConstMetric(descPhase, prometheus.GaugeValue, float64(n), p)
	}
	for k, n := range conds {
		ch <- prometheus.MustNewConstMetric(descCondition, prometheus.GaugeValue, float64(n), k.t, k.s)
	}
	ch <- prometheus.MustNewConstMetric(descApplyFailures, prometheus.GaugeValue, float64(applyFailures))

	// The management clusters: those with an hcp-fleet add-on (the hub's
	// cache holds only those add-ons).
	var mcas addonv1alpha1.ManagedClusterAddOnList
	if err := s.reader.List(ctx, &mcas); err != nil {
		return err
	}
	for i := range mcas.Items {
		mca := &mcas.Items[i]
		if mca.Name != addon.Name {
			continue
		}
		cluster := mca.Namespace
		reported := -1.0
		mc := &clusterv1.ManagedCluster{}
		if err := s.reader.Get(ctx, types.NamespacedName{Name: cluster}, mc); client.IgnoreNotFound(err) != nil {
			return err
		}
		capacity, err := hostmodel.Capacity(ctx, s.reader, mc, mca, s.namespaces)
		if err != nil {
			return err
		}
		for _, claim := range mc.Status.ClusterClaims {
			if claim.Name == hosting.ClaimHostedClusters {
				if n, err := strconv.Atoi(claim.Value); err == nil {
					reported = float64(n)
				}
			}
		}
		ch <- prometheus.MustNewConstMetric(descBound, prometheus.GaugeValue, float64(bound[cluster]), cluster)
		ch <- prometheus.MustNewConstMetric(descCapacity, prometheus.GaugeValue, float64(capacity), cluster)
		ch <- prometheus.MustNewConstMetric(descReported, prometheus.GaugeValue, reported, cluster)
		ch <- prometheus.MustNewConstMetric(descAddOn, prometheus.GaugeValue,
			boolGauge(meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)), cluster)
		ch <- prometheus.MustNewConstMetric(descOperator, prometheus.GaugeValue,
			boolGauge(meta.IsStatusConditionTrue(mca.Status.Conditions, addon.ConditionHyperShiftOperatorInstalled)), cluster)
		ch <- prometheus.MustNewConstMetric(descCordoned, prometheus.GaugeValue, boolGauge(scheduling.Cordoned(mc)), cluster)
	}
	return nil
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// collectRollouts reports each ReleaseRollout's counts by state, as its
// status holds them (the rollout controller is their one writer).
func collectRollouts(ctx context.Context, reader client.Reader, ch chan<- prometheus.Metric) error {
	var rollouts v1alpha1.ReleaseRolloutList
	if err := reader.List(ctx, &rollouts, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	for i := range rollouts.Items {
		rr := &rollouts.Items[i]
		name := rr.Namespace + "/" + rr.Name
		for state, n := range map[v1alpha1.RolloutState]int32{
			v1alpha1.RolloutStatePending: rr.Status.Pending, v1alpha1.RolloutStateUpgrading: rr.Status.Upgrading,
			v1alpha1.RolloutStateDone: rr.Status.Done, v1alpha1.RolloutStateBlocked: rr.Status.Blocked, v1alpha1.RolloutStateFailed: rr.Status.Failed,
		} {
			ch <- prometheus.MustNewConstMetric(descRollout, prometheus.GaugeValue, float64(n), name, string(state))
		}
	}
	return nil
}
