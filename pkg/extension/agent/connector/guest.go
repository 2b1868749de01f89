package connector

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// guestTimeout bounds one request to the hosted cluster's API server.
const guestTimeout = 10 * time.Second

// guest is a client of the hosted cluster's API server.
type guest struct {
	client client.Client
	mapper meta.RESTMapper
	disco  discovery.DiscoveryInterface
	server string
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
	gs.sum, gs.g = sum, &guest{client: c, mapper: mapper, disco: disco, server: cfg.Host}
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
	out := extension.Object{Ref: o.Ref, Object: o.Object.DeepCopy()}
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

// apply applies one placed object with the extension's labels and probes
// it; an object that exists without this extension's UID label is never
// taken over (collision protection).
func (g *guest) apply(ctx context.Context, o extension.Object, req *Request) ObjectReport {
	rep := ObjectReport{Ref: o.Ref}
	fail := func(state v1alpha1.ExtensionObjectState, reason, msg string) ObjectReport {
		rep.State, rep.Reason, rep.Message = state, reason, msg
		return rep
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.Ref.GroupVersionKind())
	key := types.NamespacedName{Namespace: o.Ref.Namespace, Name: o.Ref.Name}
	switch err := g.client.Get(ctx, key, live); {
	case err == nil:
		if live.GetLabels()[extension.LabelExtensionUID] != req.UID {
			return fail(v1alpha1.ObjectStateRefused, extension.ReasonObjectRefused,
				"exists and does not belong to this extension; it is not taken over (collision protection)")
		}
	case !apierrors.IsNotFound(err):
		return fail(v1alpha1.ObjectStateFailed, extension.ReasonApplyFailed, "reading it: "+err.Error())
	}
	desired := o.Object.DeepCopy()
	delete(desired.Object, "status")
	labels := desired.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[extension.LabelExtension] = req.Extension[strings.Index(req.Extension, "/")+1:]
	labels[extension.LabelExtensionUID] = req.UID
	desired.SetLabels(labels)
	// The engine's field manager: what the engine applied itself is the
	// same field owner's, so the connector takes it over in place.
	if err := g.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired), client.FieldOwner(extension.FieldManager), client.ForceOwnership); err != nil {
		return fail(v1alpha1.ObjectStateFailed, extension.ReasonApplyFailed, "applying it: "+err.Error())
	}
	if err := g.client.Get(ctx, key, live); err != nil {
		return fail(v1alpha1.ObjectStateFailed, extension.ReasonApplyFailed, "reading it back: "+err.Error())
	}
	if msg := extension.Probe(req.AvailabilityProbes, live); msg != "" {
		return fail(v1alpha1.ObjectStateUnavailable, extension.ReasonProbeFailure, msg)
	}
	rep.State = v1alpha1.ObjectStateAvailable
	return rep
}

// remove deletes one object of the extension and says whether it is gone;
// an object without the extension's label is someone else's and counts as
// gone, never deleted.
func (g *guest) remove(ctx context.Context, ref extension.ObjectRef) (bool, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ref.GroupVersionKind())
	err := g.client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, u)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return true, nil
	case err != nil:
		return false, err
	case u.GetLabels()[extension.LabelExtensionUID] == "":
		return true, nil
	case u.GetDeletionTimestamp() != nil:
		return false, nil
	}
	uid := u.GetUID()
	err = g.client.Delete(ctx, u, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	return false, client.IgnoreNotFound(err)
}
