// Package capacity is the agent's hosting report: how many HostedClusters a
// management cluster runs against its capacity, which OpenShift releases its
// HyperShift operator supports and which platforms it can host. It publishes
// them where OCM's Placements read them:
//
//   - ClusterClaims on the management cluster (OCM mirrors them into the
//     ManagedCluster's status, where a Placement's claimSelector matches);
//   - an AddOnPlacementScore in the cluster's namespace on the hub (for a
//     Placement's AddOn score prioritizer);
//   - Prometheus metrics.
package capacity

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// ClusterClaim names: the hub reads them, so they are defined in pkg/hosting.
const (
	ClaimHostingCluster          = hosting.ClaimHostingCluster
	ClaimFull                    = hosting.ClaimFull
	ClaimAboveThreshold          = hosting.ClaimAboveThreshold
	ClaimZero                    = hosting.ClaimZero
	ClaimHostedClusters          = hosting.ClaimHostedClusters
	ClaimUnmanagedHostedClusters = hosting.ClaimUnmanagedHostedClusters
	ClaimSupportedVersions       = hosting.ClaimSupportedVersions
	ClaimPlatforms               = hosting.ClaimPlatforms
	ClaimCapacity                = hosting.ClaimCapacity
	ClaimCapacityBasis           = hosting.ClaimCapacityBasis
	ClaimResourceSlots           = hosting.ClaimResourceSlots
)

// AddOnPlacementScore name and score names.
const (
	// ScoreName is the AddOnPlacementScore's name in the cluster namespace.
	ScoreName = "hcp-fleet"
	// ScoreHostedClusters is the HostedCluster count, capped at 100 (scores
	// range −100..100).
	ScoreHostedClusters = "hostedClusters"
	// ScoreFreeCapacity is the free capacity scaled to −100..100: 100 when
	// empty, 0 at half capacity, −100 when full (or over). A Placement
	// prioritizer on it spreads hosted clusters across management clusters.
	ScoreFreeCapacity = "freeCapacity"
)

// Report is what a management cluster reports.
type Report struct {
	// HostedClusters counts every HostedCluster on the cluster.
	HostedClusters int32
	// ManagedHostedClusters counts those hcp-fleet delivered (see
	// IsManaged); the hub replaces them with its own bindings.
	ManagedHostedClusters int32
	MaxHostedClusters     int32
	AboveThreshold        int32
	SupportedVersions     []string
	Platforms             []string
	// Resources is what the Nodes offer and the size of one hosted control
	// plane; the capacity is limited by it when it gives a size.
	Resources ResourceBasis
}

// Capacity is how many HostedClusters the cluster takes: maxHostedClusters,
// or fewer when the allocatable resources at the size of one hosted control
// plane take fewer.
func (r Report) Capacity() int32 {
	if slots, ok := r.Resources.Slots(); ok {
		return min(r.MaxHostedClusters, slots)
	}
	return r.MaxHostedClusters
}

// CapacityBasis says how Capacity was computed.
func (r Report) CapacityBasis() string {
	return fmt.Sprintf("min(maxHostedClusters %d, %s) = %d", r.MaxHostedClusters, r.Resources, r.Capacity())
}

// FreeSlots is how many more HostedClusters fit.
func (r Report) FreeSlots() int32 {
	return max(0, r.Capacity()-r.HostedClusters)
}

// FreeCapacityScore scales free capacity to −100..100 (see
// ScoreFreeCapacity).
func (r Report) FreeCapacityScore() int32 {
	capacity := r.Capacity()
	if capacity <= 0 {
		return -100
	}
	used := min(r.HostedClusters, capacity)
	return 100 - (200*used+capacity/2)/capacity
}

// Claims returns the ClusterClaims' desired values.
func (r Report) Claims() map[string]string {
	return map[string]string{
		ClaimHostingCluster:          "true",
		ClaimFull:                    strconv.FormatBool(r.HostedClusters >= r.Capacity()),
		ClaimAboveThreshold:          strconv.FormatBool(r.HostedClusters >= r.AboveThreshold),
		ClaimZero:                    strconv.FormatBool(r.HostedClusters == 0),
		ClaimHostedClusters:          strconv.Itoa(int(r.HostedClusters)),
		ClaimUnmanagedHostedClusters: strconv.Itoa(int(r.HostedClusters - r.ManagedHostedClusters)),
		ClaimSupportedVersions:       strings.Join(r.SupportedVersions, ","),
		ClaimPlatforms:               strings.Join(r.Platforms, ","),
		ClaimCapacity:                strconv.Itoa(int(r.Capacity())),
		ClaimCapacityBasis:           r.CapacityBasis(),
		ClaimResourceSlots:           r.resourceSlotsClaim(),
	}
}

// IsManaged tells whether a HostedCluster with these labels was delivered by
// hcp-fleet: the hub labels everything it delivers with the
// HostedClusterDeployment's name.
func IsManaged(labels map[string]string) bool {
	return labels[hosting.LabelHCDName] != ""
}

// Scores returns the AddOnPlacementScore items.
func (r Report) Scores() []clusterv1alpha1.AddOnPlacementScoreItem {
	return []clusterv1alpha1.AddOnPlacementScoreItem{
		{Name: ScoreFreeCapacity, Value: r.FreeCapacityScore()},
		{Name: ScoreHostedClusters, Value: min(r.HostedClusters, 100)},
	}
}

// Platforms a HyperShift operator installed by hcp-fleet can host: Agent
// (bare metal via assisted installer), KubeVirt and None always; AWS only
// when the HostingConfig gives it OIDC storage (AWS hosted clusters need it).
func Platforms(awsConfigured bool) []string {
	p := []string{"Agent", "KubeVirt", "None"}
	if awsConfigured {
		p = append(p, "AWS")
	}
	sort.Strings(p)
	return p
}

func (r Report) resourceSlotsClaim() string {
	if slots, ok := r.Resources.Slots(); ok {
		return strconv.Itoa(int(slots))
	}
	return "none"
}
