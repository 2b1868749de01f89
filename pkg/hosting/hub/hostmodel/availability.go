package hostmodel

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// How the hub reads a management cluster's availability: OCM's Available
// conditions (the ManagedCluster's, the hcp-fleet ManagedClusterAddOn's),
// with a hold-down. A management cluster under load flaps: its klusterlet's
// probe of its own kube-apiserver (/livez, OCM registration
// spoke/managedcluster/resource_reconcile.go) times out and reports
// Available=False for one probe period, then True again. Acting on each
// flap dropped the cluster from the scheduler's candidates in the middle of
// a burst (an uneven spread) and rewrote HostingClusterAvailable and
// Available on every hosted cluster bound there, twice per flap. So a
// condition that is not True counts as available until it has been so for
// the grace; OCM gives a silent lease the same treatment before it says
// anything (registration hub/lease/controller.go: Unknown only after five
// lease durations).

// DefaultUnavailableGrace is how long a management cluster may report
// itself unavailable before the hub acts on it: OCM's lease grace at OCM's
// default lease (5 × 60 s), which a late lease already gets from OCM.
const DefaultUnavailableGrace = 5 * time.Minute

// leaseExpired are the reasons OCM writes once a lease went unrenewed for
// its own grace period (five lease durations): the silence already lasted
// that long, so such a condition is acted on at once.
var leaseExpired = map[string]bool{
	// registration hub/lease/controller.go, ManagedCluster Available=Unknown.
	"ManagedClusterLeaseUpdateStopped": true,
	// registration spoke/addon/lease_controller.go, add-on Available=False.
	"ManagedClusterAddOnLeaseUpdateStopped": true,
}

// neverAvailable are reasons that say the component is not there at all
// (an add-on whose agent never created its lease), not that it is late.
var neverAvailable = map[string]bool{
	// registration spoke/addon/lease_controller.go.
	"ManagedClusterAddOnLeaseNotFound": true,
}

// HeldAvailable says whether an Available condition c counts as available
// at now: True; or not True for less than grace since its
// lastTransitionTime, unless OCM says the lease expired or was never there
// (those count at once). While held, recheck is how long until the hold
// ends, when the hub must look again. A missing condition is unavailable;
// grace 0 holds nothing. Pure.
func HeldAvailable(c *metav1.Condition, grace time.Duration, now time.Time) (available bool, recheck time.Duration) {
	switch {
	case c == nil:
		return false, 0
	case c.Status == metav1.ConditionTrue:
		return true, 0
	case grace <= 0 || leaseExpired[c.Reason] || neverAvailable[c.Reason]:
		return false, 0
	}
	if until := c.LastTransitionTime.Add(grace); now.Before(until) {
		return true, until.Sub(now)
	}
	return false, 0
}

// ClusterAvailable is HeldAvailable for a ManagedCluster's Available
// condition.
func ClusterAvailable(mc *clusterv1.ManagedCluster, grace time.Duration, now time.Time) (bool, time.Duration) {
	return HeldAvailable(meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), grace, now)
}

// AddOnAvailable is HeldAvailable for a ManagedClusterAddOn's Available
// condition.
func AddOnAvailable(mca *addonv1alpha1.ManagedClusterAddOn, grace time.Duration, now time.Time) (bool, time.Duration) {
	return HeldAvailable(meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable), grace, now)
}

// heldReads counts reads that found a cluster's or add-on's unavailability
// held (reported, not yet acted on): how often a flap was absorbed, and the
// sign that the hub saw one. by is "scheduler" or "delivery".
var heldReads = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "hcpfleet_hub_host_unavailability_held_total",
	Help: "Reads of a management cluster that reports itself unavailable for less than --host-unavailable-grace (so still taken as available), by the reader.",
}, []string{"by"})

func init() { metrics.Registry.MustRegister(heldReads) }

// Readers of held availability, as heldReads names them.
const (
	HeldByScheduler = "scheduler"
	HeldByDelivery  = "delivery"
)

// CountHeld records a read by by that found recheck > 0 (a held
// unavailability).
func CountHeld(by string, recheck time.Duration) {
	if recheck > 0 {
		heldReads.WithLabelValues(by).Inc()
	}
}
