package assistedbootstrap

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options adapt the bootstrap provider to the infrastructure provider. The
// defaults fit Metal3 (Metal3Machine + BareMetalHost), the infrastructure
// the upstream providers support.
type Options struct {
	// ISOURLPath is the dotted path in the Machine's infrastructure object
	// that receives the InfraEnv's discovery ISO URL (merge patch).
	// Metal3Machine: spec.image.url.
	ISOURLPath string
	// ISOFormatPath and ISOFormat are written beside the URL so the
	// infrastructure provider boots the ISO as a live image rather than
	// writing it to disk (Metal3Machine: spec.image.diskFormat=live-iso).
	// An empty ISOFormatPath writes nothing.
	ISOFormatPath string
	ISOFormat     string
	// ProviderIDLabel is the node label set on each Agent (spec.nodeLabels)
	// so that the infrastructure provider can match the Node the host
	// becomes to its Machine. Metal3: metal3.io/uuid, the BareMetalHost UID.
	ProviderIDLabel string
	// ProviderIDValue returns the value of ProviderIDLabel for a Machine's
	// infrastructure object; "" means none (yet). Default: Metal3ProviderID.
	ProviderIDValue func(ctx context.Context, c client.Reader, infra *unstructured.Unstructured) (string, error)
	// RequeueAfter is how soon to look again at what we cannot watch (the
	// infrastructure object, whose kind is only known at run time).
	RequeueAfter time.Duration
}

// DefaultOptions are the Metal3 defaults.
func DefaultOptions() Options {
	return Options{
		ISOURLPath:      "spec.image.url",
		ISOFormatPath:   "spec.image.diskFormat",
		ISOFormat:       "live-iso",
		ProviderIDLabel: "metal3.io/uuid",
		ProviderIDValue: Metal3ProviderID,
		RequeueAfter:    10 * time.Second,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.ISOURLPath == "" {
		o.ISOURLPath = d.ISOURLPath
		if o.ISOFormatPath == "" {
			o.ISOFormatPath, o.ISOFormat = d.ISOFormatPath, d.ISOFormat
		}
	}
	if o.ProviderIDLabel == "" {
		o.ProviderIDLabel = d.ProviderIDLabel
	}
	if o.ProviderIDValue == nil {
		o.ProviderIDValue = d.ProviderIDValue
	}
	if o.RequeueAfter == 0 {
		o.RequeueAfter = d.RequeueAfter
	}
	return o
}

// Metal3BareMetalHostAnnotation is set by cluster-api-provider-metal3 on a
// Metal3Machine to the namespace/name of the BareMetalHost it claimed.
const Metal3BareMetalHostAnnotation = "metal3.io/BareMetalHost"

var bareMetalHostGVK = schema.GroupVersionKind{Group: "metal3.io", Version: "v1alpha1", Kind: "BareMetalHost"}

// Metal3ProviderID returns the UID of the BareMetalHost a Metal3Machine
// claimed: the value cluster-api-provider-metal3 looks for in the node label
// metal3.io/uuid to set the Node's providerID. "" until a host is claimed.
func Metal3ProviderID(ctx context.Context, c client.Reader, infra *unstructured.Unstructured) (string, error) {
	ref := infra.GetAnnotations()[Metal3BareMetalHostAnnotation]
	if ref == "" {
		return "", nil
	}
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		return "", fmt.Errorf("annotation %s=%q is not namespace/name", Metal3BareMetalHostAnnotation, ref)
	}
	bmh := &unstructured.Unstructured{}
	bmh.SetGroupVersionKind(bareMetalHostGVK)
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, bmh); err != nil {
		return "", err
	}
	return string(bmh.GetUID()), nil
}
