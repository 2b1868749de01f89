package connector

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/objects"
)

// guestTimeout bounds one request to the hosted cluster's API server.
const guestTimeout = 10 * time.Second

// guest is a client of the hosted cluster's API server.
type guest struct {
	client client.Client
	mapper meta.RESTMapper
	disco  discovery.DiscoveryInterface
	server string
	// watchConfig is cfg without its request timeout, which would cut
	// every watch short; id names this kubeconfig's watches.
	watchConfig *rest.Config
	id          string
}

// guests builds the guest client from the mounted kubeconfig, again when
// the kubelet has synced a new one (HyperShift rotates its certificates).
type guests struct {
	path string
	dial func(ctx context.Context, network, address string) (net.Conn, error)

	mu  sync.Mutex
	sum [32]byte
	g   *guest
}

func (gs *guests) get() (*guest, error) {
	data, err := os.ReadFile(gs.path)
	if err != nil {
		return nil, fmt.Errorf("reading the mounted service-network kubeconfig: %w", err)
	}
	sum := sha256.Sum256(data)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.g != nil && gs.sum == sum {
		return gs.g, nil
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("the service-network kubeconfig does not parse: %w", err)
	}
	cfg.Timeout = guestTimeout
	cfg.UserAgent = "hcp-fleet-" + Command
	cfg.Dial = gs.dial
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{HTTPClient: httpClient, Mapper: mapper})
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	watchConfig := rest.CopyConfig(cfg)
	watchConfig.Timeout = 0
	gs.sum, gs.g = sum, &guest{client: c, mapper: mapper, disco: disco, server: cfg.Host,
		watchConfig: watchConfig, id: hex.EncodeToString(sum[:8])}
	return gs.g, nil
}

// reachable asks the API server its version: the one cheap request that
// tells an unreachable hosted cluster from a failing object.
func (g *guest) reachable() error {
	if _, err := g.disco.ServerVersion(); err != nil {
		return fmt.Errorf("the hosted cluster's API server %s cannot be reached through service-network-admin-kubeconfig: %w", g.server, err)
	}
	return nil
}

// place puts an object of a hosted-cluster phase into the namespace it
// names, "default" when it names none, or none for cluster-scoped kinds —
// as the engine placed them before connectors existed.
func (g *guest) place(o extension.Object) extension.Object {
	out := extension.Object{Ref: o.Ref, Object: o.Object.DeepCopy(), Collision: o.Collision}
	m, err := g.mapper.RESTMapping(schema.GroupKind{Group: o.Ref.Group, Kind: o.Ref.Kind}, o.Ref.Version)
	switch {
	case err == nil && m.Scope.Name() == meta.RESTScopeNameRoot:
		out.Ref.Namespace = ""
	case out.Ref.Namespace == "":
		out.Ref.Namespace = metav1.NamespaceDefault
	}
	out.Object.SetNamespace(out.Ref.Namespace)
	return out
}

// claim is collision protection's verdict on one placed object
// (objects.Claim, the engine's own code), decided before anything of the
// phase is applied.
func (g *guest) claim(ctx context.Context, o extension.Object, req *Request) ObjectReport {
	v := objects.Claim(ctx, g.client, o, req.UID)
	return ObjectReport{Ref: o.Ref, State: v.State, Reason: v.Reason, Message: v.Message}
}

// apply applies one placed object claim allowed, with the extension's
// labels under the engine's field manager (what the engine applied itself
// before connectors existed is taken over in place), and probes it.
func (g *guest) apply(ctx context.Context, o extension.Object, req *Request) ObjectReport {
	v := objects.Apply(ctx, g.client, o, req.Extension, req.UID, req.AvailabilityProbes)
	return ObjectReport{Ref: o.Ref, State: v.State, Reason: v.Reason, Message: v.Message}
}

// remove deletes one object if it carries the extension's UID
// (objects.Delete) and says whether it is gone; another extension's object,
// or one no extension made, counts as gone and is never deleted.
func (g *guest) remove(ctx context.Context, ref extension.ObjectRef, uid string) (bool, error) {
	gone, _, err := objects.Delete(ctx, g.client, ref, uid)
	return gone, err
}
