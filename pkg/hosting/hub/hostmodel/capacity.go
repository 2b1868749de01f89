package hostmodel

import (
	"context"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// What a management cluster takes: its load and capacity as the scheduler,
// explain and the fleet view count them.

// Load is a management cluster's load: the hub's own bindings are exact and
// never stale, so they stand for hcp-fleet's hosted clusters; those someone
// else created count as reported. The report's total is a floor (hosted
// clusters of deleted or orphaned deployments still run until they are
// gone).
func Load(reportedTotal, reportedUnmanaged, bound int32) int32 {
	return max(reportedTotal, reportedUnmanaged+bound)
}

// ClaimInt is the claim name of claims as a number (0 when absent or not one).
func ClaimInt(claims map[string]string, name string) int32 {
	n, err := strconv.ParseInt(claims[name], 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

// Capacity is how many hosted clusters the scheduler lets a management
// cluster take: maxHostedClusters of the HostingConfig its add-on runs with
// (the desired one while a change rolls out; the API default while none is
// resolved), or what its agent reports the cluster's Nodes take at the size
// of one hosted control plane when that is smaller (ReportedCapacity). mc may be nil (no claims). The fleet view shows the
// same number.
func Capacity(ctx context.Context, c client.Reader, mc *clusterv1.ManagedCluster, mca *addonv1alpha1.ManagedClusterAddOn, namespaces ConfigNamespaces) (int32, error) {
	hc, err := HostingConfigOf(ctx, c, mca, namespaces)
	if err != nil {
		return v1alpha1.DefaultMaxHostedClusters, err
	}
	var spec *v1alpha1.HostingConfigSpec
	if hc != nil {
		spec = &hc.Spec
	}
	maxHosted, _ := spec.Limits()
	var claims []clusterv1.ManagedClusterClaim
	if mc != nil {
		claims = mc.Status.ClusterClaims
	}
	return EffectiveCapacity(maxHosted, ClaimsMap(claims)), nil
}

// EffectiveCapacity is the smaller of maxHosted (what the hub resolves from
// the HostingConfig) and the agent's reported resource slots, if it reports
// a number.
// The agent can only lower its own cluster's capacity this way, never raise
// it above what the hub's HostingConfig allows.
func EffectiveCapacity(maxHosted int32, claims map[string]string) int32 {
	if reported, ok := ReportedCapacity(claims); ok {
		return min(maxHosted, reported)
	}
	return maxHosted
}

// ReportedCapacity is what the agent reports its Nodes' allocatable
// resources take (hosting.ClaimResourceSlots), if it reports a number.
func ReportedCapacity(claims map[string]string) (int32, bool) {
	v, ok := claims[hosting.ClaimResourceSlots]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0, false
	}
	return int32(n), true
}

// ClaimsMap indexes a ManagedCluster's claims by name.
func ClaimsMap(claims []clusterv1.ManagedClusterClaim) map[string]string {
	m := make(map[string]string, len(claims))
	for _, cl := range claims {
		m[cl.Name] = cl.Value
	}
	return m
}

// HostingConfigOf returns the HostingConfig a management cluster's add-on
// runs with, as its ManagedClusterAddOn's status.configReferences resolve it
// (the desired one while a change rolls out), or nil while none is resolved
// or it does not exist, or it lives in a namespace namespaces does not allow
// (then the API defaults apply). The hub reads a cluster's capacity and
// hosting-namespace policy from here only.
func HostingConfigOf(ctx context.Context, c client.Reader, mca *addonv1alpha1.ManagedClusterAddOn, namespaces ConfigNamespaces) (*v1alpha1.HostingConfig, error) {
	key, ok := HostingConfigKey(mca)
	if !ok || !namespaces.Allows(key.Namespace) {
		return nil, nil
	}
	hc := &v1alpha1.HostingConfig{}
	if err := c.Get(ctx, key, hc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return hc, nil
}

// HostingConfigKey names the HostingConfig HostingConfigOf reads, if the
// ManagedClusterAddOn's status resolves one.
func HostingConfigKey(mca *addonv1alpha1.ManagedClusterAddOn) (types.NamespacedName, bool) {
	for _, ref := range mca.Status.ConfigReferences {
		if ref.Group != v1alpha1.GroupVersion.Group || ref.Resource != "hostingconfigs" {
			continue
		}
		referent := ref.ConfigReferent
		if ref.DesiredConfig != nil {
			referent = ref.DesiredConfig.ConfigReferent
		}
		return types.NamespacedName{Namespace: referent.Namespace, Name: referent.Name}, true
	}
	return types.NamespacedName{}, false
}
