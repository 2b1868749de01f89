package agent

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

var hostedClusterGVK = schema.GroupVersionKind{Group: "hypershift.openshift.io", Version: "v1beta1", Kind: "HostedCluster"}

// guestTimeout bounds one request to a hosted cluster's API server.
const guestTimeout = 10 * time.Second

// target is where a phase's objects go.
type target struct {
	class     v1alpha1.PhaseClass
	client    client.Client
	mapper    meta.RESTMapper
	namespace string // the control-plane namespace, for phases without class
}

// place puts an object where the phase may write it: into the control-plane
// namespace (a phase without class; Validate refused any other), or, in the
// hosted cluster, into its own namespace or "default" when the kind is
// namespaced and none is given.
func (t *target) place(o extension.Object) extension.Object {
	out := extension.Object{Ref: o.Ref, Object: o.Object.DeepCopy(), Collision: o.Collision}
	switch {
	case t.class == v1alpha1.PhaseClassControlPlane:
		out.Ref.Namespace = t.namespace
	case t.clusterScoped(o.Ref):
		out.Ref.Namespace = ""
	case out.Ref.Namespace == "":
		out.Ref.Namespace = metav1NamespaceDefault
	}
	out.Object.SetNamespace(out.Ref.Namespace)
	return out
}

const metav1NamespaceDefault = "default"

// clusterScoped asks the target's API server; an unknown kind counts as
// namespaced and fails at apply with the server's message.
func (t *target) clusterScoped(ref extension.ObjectRef) bool {
	m, err := t.mapper.RESTMapping(schema.GroupKind{Group: ref.Group, Kind: ref.Kind}, ref.Version)
	return err == nil && m.Scope.Name() == meta.RESTScopeNameRoot
}

// targetFor is the control-plane namespace of the management cluster, or
// the hosted cluster of that namespace.
func (e *Engine) targetFor(ctx context.Context, ns string, class v1alpha1.PhaseClass) (*target, error) {
	if class == v1alpha1.PhaseClassControlPlane {
		if err := e.binder.Ensure(ctx, ns); err != nil {
			return nil, err
		}
		return &target{class: class, client: e.client, mapper: e.mapper, namespace: ns}, nil
	}
	c, mapper, err := e.guests.get(ctx, e, ns)
	if err != nil {
		return nil, err
	}
	return &target{class: class, client: c, mapper: mapper}, nil
}

// guestClients are clients of hosted clusters' API servers by control-plane
// namespace, rebuilt when the kubeconfig changes.
type guestClients struct {
	mu      sync.Mutex
	clients map[string]guestClient
}

type guestClient struct {
	sum    [32]byte
	client client.Client
	mapper meta.RESTMapper
	// watchConfig is the client's config without its request timeout,
	// which would cut every watch short.
	watchConfig *rest.Config
}

// current is the client of the hosted cluster of ns the engine last used.
func (g *guestClients) current(ns string) (guestClient, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.clients[ns]
	return c, ok
}

func (g *guestClients) get(ctx context.Context, e *Engine, ns string) (client.Client, meta.RESTMapper, error) {
	if err := e.binder.Ensure(ctx, ns); err != nil {
		return nil, nil, err
	}
	secret := &corev1.Secret{}
	if err := e.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: extension.GuestKubeconfigSecret}, secret); err != nil {
		return nil, nil, fmt.Errorf("the hosted cluster's service-network kubeconfig (Secret %s/%s): %w", ns, extension.GuestKubeconfigSecret, err)
	}
	data := secret.Data[hosting.KubeconfigKey]
	sum := sha256.Sum256(data)
	g.mu.Lock()
	defer g.mu.Unlock()
	if c, ok := g.clients[ns]; ok && c.sum == sum {
		return c.client, c.mapper, nil
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, nil, fmt.Errorf("the hosted cluster's service-network kubeconfig does not parse: %w", err)
	}
	cfg.Timeout = guestTimeout
	cfg.UserAgent = "hcp-fleet-extension-engine"
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, nil, fmt.Errorf("reaching the hosted cluster's API server: %w", err)
	}
	c, err := client.New(cfg, client.Options{HTTPClient: httpClient, Mapper: mapper})
	if err != nil {
		return nil, nil, err
	}
	if g.clients == nil {
		g.clients = map[string]guestClient{}
	}
	watchConfig := rest.CopyConfig(cfg)
	watchConfig.Timeout = 0
	g.clients[ns] = guestClient{sum: sum, client: c, mapper: mapper, watchConfig: watchConfig}
	return c, mapper, nil
}

func (g *guestClients) forget(ns string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.clients, ns)
}
