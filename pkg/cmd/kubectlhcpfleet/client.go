package kubectlhcpfleet

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// Scheme holds the hub types the plugin reads.
var Scheme = runtime.NewScheme()

func init() { utilruntime.Must(hosting.AddHubAPIs(Scheme)) }

// NewReader is a reader of the hub as cfg's identity whose errors name the
// read that failed (fleetview.ReadError): a missing permission as RBAC
// names it, a missing API, so every command reports them alike.
func NewReader(cfg *rest.Config) (client.Reader, error) {
	c, err := client.New(cfg, client.Options{Scheme: Scheme})
	if err != nil {
		return nil, err
	}
	return namingReader{c}, nil
}

// namingReader wraps a client's errors with what was read.
type namingReader struct{ c client.Client }

func (r namingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := r.c.Get(ctx, key, obj, opts...)
	if err == nil {
		return nil
	}
	return fleetview.ReadError(err, "get", r.resource(obj), key.Namespace)
}

func (r namingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	err := r.c.List(ctx, list, opts...)
	if err == nil {
		return nil
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	return fleetview.ReadError(err, "list", r.resource(list), lo.Namespace)
}

// resource names obj's resource as RBAC does ("managedclusters.cluster.open-cluster-management.io").
func (r namingReader) resource(obj runtime.Object) string {
	gvk, err := apiutil.GVKForObject(obj, Scheme)
	if err != nil {
		return "?"
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	resource := strings.ToLower(gvk.Kind) + "s" // a guess, while the API is not there to ask
	if m, err := r.c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		resource = m.Resource.Resource
	}
	if gvk.Group == "" {
		return resource
	}
	return resource + "." + gvk.Group
}
