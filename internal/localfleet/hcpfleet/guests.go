package hcpfleet

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"sync"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	olmcrds "github.com/operator-framework/api/crds"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
)

// GuestControlPlanes runs a real kube-apiserver (with a
// kube-controller-manager) for every HostedCluster the HyperShift stand-in
// makes available, on the fleet's etcd, serving OLM's CRDs: the admin kubeconfig the stand-in
// publishes, and hcp-fleet mirrors to the hub, then reaches a real API
// server. It plugs into hypershiftsim.Options.ControlPlanes and serves the
// stand-ins of every management cluster.
type GuestControlPlanes struct {
	Fleet *localfleet.Fleet
}

var (
	_ hypershiftsim.ControlPlanes = GuestControlPlanes{}
	_ hypershiftsim.Guests        = GuestControlPlanes{}
)

// GuestConfig implements hypershiftsim.Guests.
func (g GuestControlPlanes) GuestConfig(hc *hyperv1.HostedCluster) (*rest.Config, bool) {
	c, ok := g.Fleet.Guest(guestName(hc))
	if !ok {
		return nil, false
	}
	return c.Config(), true
}

// guestName names a HostedCluster's control plane after its UID (unique
// across management clusters), so a HostedCluster deleted and created again
// gets a fresh one, as with HyperShift.
func guestName(hc *hyperv1.HostedCluster) string { return "guest-" + string(hc.UID) }

// Ensure implements hypershiftsim.ControlPlanes.
func (g GuestControlPlanes) Ensure(ctx context.Context, hc *hyperv1.HostedCluster) (hypershiftsim.ControlPlane, error) {
	// Its serving certificate carries the in-cluster Service names, as
	// HyperShift's kube-apiserver certificate does.
	c, err := g.Fleet.StartGuest(ctx, guestName(hc), hypershiftsim.KubeAPIServerServiceNames(hypershiftsim.ControlPlaneNamespace(hc))...)
	if err != nil {
		return hypershiftsim.ControlPlane{}, err
	}
	if err := installOLMCRDs(ctx, guestName(hc), c); err != nil {
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

// olmInstalled are the guests OLM's CRDs were installed into.
var olmInstalled sync.Map

// installOLMCRDs installs OLM's CRDs (operator-framework/api, the ones an
// OpenShift hosted cluster serves) and OpenShift's ClusterVersion and
// ClusterOperator into a guest once, as HyperShift's control-plane operator
// does for every hosted cluster.
func installOLMCRDs(ctx context.Context, name string, c *localfleet.Cluster) error {
	if _, done := olmInstalled.Load(name); done {
		return nil
	}
	applier, err := localfleet.NewApplier(c.Config())
	if err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	for _, crd := range []*apiextensionsv1.CustomResourceDefinition{olmcrds.ClusterServiceVersion(), olmcrds.CatalogSource(),
		olmcrds.Subscription(), olmcrds.InstallPlan(), olmcrds.OperatorGroup(), olmcrds.OperatorCondition(), olmcrds.Operator(), olmcrds.OLMConfig(),
		openShiftCRDs()[0], openShiftCRDs()[1]} {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return err
		}
		obj := &unstructured.Unstructured{Object: u}
		obj.SetAPIVersion("apiextensions.k8s.io/v1")
		obj.SetKind("CustomResourceDefinition")
		unstructured.RemoveNestedField(obj.Object, "status")
		unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
		objs = append(objs, obj)
	}
	if err := applier.Apply(ctx, objs...); err != nil {
		return fmt.Errorf("installing OLM's CRDs into guest %s: %w", name, err)
	}
	olmInstalled.Store(name, true)
	return nil
}

// Remove implements hypershiftsim.ControlPlanes.
func (g GuestControlPlanes) Remove(_ context.Context, hc *hyperv1.HostedCluster) error {
	olmInstalled.Delete(guestName(hc))
	g.Fleet.StopGuest(guestName(hc))
	return nil
}

var _ hypershiftsim.Snapshots = GuestControlPlanes{}

// Snapshot implements hypershiftsim.Snapshots: the guest's etcd keys, its
// kube-apiserver stopped first.
func (g GuestControlPlanes) Snapshot(ctx context.Context, hc *hyperv1.HostedCluster) ([]byte, error) {
	snap, err := g.Fleet.SnapshotGuest(ctx, guestName(hc))
	if err != nil {
		return nil, err
	}
	return json.Marshal(snap)
}

// Restore implements hypershiftsim.Snapshots: the keys of data become the
// guest's, when it has none yet.
func (g GuestControlPlanes) Restore(ctx context.Context, hc *hyperv1.HostedCluster, data []byte) (bool, error) {
	snap := &localfleet.GuestSnapshot{}
	if err := json.Unmarshal(data, snap); err != nil {
		return false, fmt.Errorf("not an etcd snapshot of a guest: %w", err)
	}
	return g.Fleet.RestoreGuest(ctx, guestName(hc), snap)
}
