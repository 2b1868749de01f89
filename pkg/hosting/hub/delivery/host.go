package delivery

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// hostConfig is the HostingConfig a hosting cluster's add-on runs with.
type hostConfig struct {
	// spec is nil for the built-in default (no HostingConfig resolved).
	spec *v1alpha1.HostingConfigSpec
	name string
	// found: the cluster has a ManagedClusterAddOn, so there is a policy
	// to read.
	found bool
}

func (c hostConfig) olm() *v1alpha1.OLMConfig {
	if c.spec == nil {
		return nil
	}
	return c.spec.OLM
}

// hostingConfig reads the HostingConfig the hosting cluster's add-on runs
// with.
func (r *Reconciler) hostingConfig(ctx context.Context, cluster string) (hostConfig, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: cluster, Name: addon.Name}, mca); err != nil {
		return hostConfig{}, client.IgnoreNotFound(err)
	}
	hc, err := hostmodel.HostingConfigOf(ctx, r.client, mca, r.opts.ConfigNamespaces)
	if err != nil {
		return hostConfig{}, err
	}
	if hc == nil {
		return hostConfig{name: "the default HostingConfig", found: true}, nil
	}
	return hostConfig{spec: &hc.Spec, name: "HostingConfig " + hc.Namespace + "/" + hc.Name, found: true}, nil
}

// hostingNamespaceNotAllowed is a Problem when the HostingConfig the hosting
// cluster's add-on runs with does not allow hcd's hosting namespace (any
// more: the scheduler bound it where it was allowed). The ManifestWork is
// then neither written nor deleted: the hosted cluster keeps running as
// last delivered, because a policy change must not tear it down. Without a
// ManagedClusterAddOn there is no policy to read, and nothing is held back.
func hostingNamespaceNotAllowed(hcd *v1alpha1.HostedClusterDeployment, cluster string, config hostConfig) *Problem {
	if !config.found {
		return nil
	}
	ns := scheduling.RequestFor(hcd).HostingNamespace
	if config.spec.AllowsHostingNamespace(ns) {
		return nil
	}
	return &Problem{Reason: v1alpha1.ReasonHostingNamespaceNotAllowed,
		Message: fmt.Sprintf("not delivered: hosting namespace %s is not allowed on management cluster %s by %s (allows %s); "+
			"what was delivered before is left running as it is, and changes are delivered once the HostingConfig's spec.hostingNamespaces lists %s again",
			ns, cluster, config.name, strings.Join(config.spec.AllowedHostingNamespaces(), ", "), ns)}
}

// host reads what the hub knows about the hosting cluster.
func (r *Reconciler) host(ctx context.Context, cluster string) (Host, error) {
	h, err := hostOf(ctx, r.client, cluster, r.opts.UnavailableGrace, time.Now())
	hostmodel.CountHeld(hostmodel.HeldByDelivery, h.Recheck)
	return h, err
}

// hostOf reads what the hub knows about cluster; its Available and
// AddOnAvailable hold for grace (hostmodel.HeldAvailable).
func hostOf(ctx context.Context, c client.Reader, cluster string, grace time.Duration, now time.Time) (Host, error) {
	h := Host{Cluster: cluster}
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, types.NamespacedName{Name: cluster}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return h, nil
		}
		return h, err
	}
	h.Exists = mc.DeletionTimestamp == nil
	var recheck time.Duration
	h.Available, h.Recheck = hostmodel.ClusterAvailable(mc, grace, now)
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: cluster, Name: addon.Name}, mca); err == nil {
		h.AddOnAvailable, recheck = hostmodel.AddOnAvailable(mca, grace, now)
		h.Recheck = minPositive(h.Recheck, recheck)
	} else if !apierrors.IsNotFound(err) {
		return h, err
	}
	return h, nil
}

// minPositive is the smaller of two durations, 0 standing for none.
func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
