package hcpfleet

import (
	"context"
	"net/url"
	"os"
	"strconv"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
)

// GuestControlPlanes runs a real kube-apiserver (with a
// kube-controller-manager) for every HostedCluster the HyperShift stand-in
// makes available, on the fleet's etcd: the admin kubeconfig the stand-in
// publishes, and hcp-fleet mirrors to the hub, then reaches a real API
// server. It plugs into hypershiftsim.Options.ControlPlanes and serves the
// stand-ins of every management cluster.
type GuestControlPlanes struct {
	Fleet *localfleet.Fleet
}

var _ hypershiftsim.ControlPlanes = GuestControlPlanes{}

// guestName names a HostedCluster's control plane after its UID (unique
// across management clusters), so a HostedCluster deleted and created again
// gets a fresh one, as with HyperShift.
func guestName(hc *hyperv1.HostedCluster) string { return "guest-" + string(hc.UID) }

// Ensure implements hypershiftsim.ControlPlanes.
func (g GuestControlPlanes) Ensure(ctx context.Context, hc *hyperv1.HostedCluster) (hypershiftsim.ControlPlane, error) {
	c, err := g.Fleet.StartGuest(ctx, guestName(hc))
	if err != nil {
		return hypershiftsim.ControlPlane{}, err
	}
	kubeconfig, err := os.ReadFile(c.KubeconfigPath)
	if err != nil {
		return hypershiftsim.ControlPlane{}, err
	}
	u, err := url.Parse(c.Host)
	if err != nil {
		return hypershiftsim.ControlPlane{}, err
	}
	port, err := strconv.ParseInt(u.Port(), 10, 32)
	if err != nil {
		return hypershiftsim.ControlPlane{}, err
	}
	return hypershiftsim.ControlPlane{Host: u.Hostname(), Port: int32(port), Kubeconfig: kubeconfig}, nil
}

// Remove implements hypershiftsim.ControlPlanes.
func (g GuestControlPlanes) Remove(_ context.Context, hc *hyperv1.HostedCluster) error {
	g.Fleet.StopGuest(guestName(hc))
	return nil
}
