package crds

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// Skipped is a CRD the installer left alone because someone else owns it.
type Skipped struct {
	CRD   string
	Owner string
}

// Result says what Install did.
type Result struct {
	// Applied are the CRDs applied (created or brought up to date).
	Applied []string
	// Skipped are CRDs that exist and belong to someone else.
	Skipped []Skipped
}

// Installer applies CRDs with server-side apply under one field manager.
type Installer struct {
	Client client.Client
	// FieldManager defaults to FieldManager.
	FieldManager string
}

func (in *Installer) manager() string {
	if in.FieldManager != "" {
		return in.FieldManager
	}
	return FieldManager
}

// Install applies crds. A CRD that exists and is not ours (IsOurs) is never
// written, whatever its group: standard CAPI CRDs of the platform, clusterctl
// or MCE, and equally a private CRD some other installer made. A CRD that is
// ours is applied with force, so a field someone edited by hand returns to
// what we ship; an absent CRD is applied without force, so that if another
// installer creates it between our read and our write the apply conflicts
// instead of taking its fields.
func (in *Installer) Install(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) (Result, error) {
	var res Result
	for _, crd := range crds {
		existing := &apiextensionsv1.CustomResourceDefinition{}
		err := in.Client.Get(ctx, types.NamespacedName{Name: crd.Name}, existing)
		switch {
		case apierrors.IsNotFound(err):
			err = in.apply(ctx, crd, false)
		case err != nil:
			return res, fmt.Errorf("reading CRD %s: %w", crd.Name, err)
		case !IsOurs(existing):
			res.Skipped = append(res.Skipped, Skipped{CRD: crd.Name, Owner: OwnerOf(existing)})
			continue
		default:
			err = in.apply(ctx, crd, true)
		}
		if err != nil {
			return res, fmt.Errorf("applying CRD %s: %w", crd.Name, err)
		}
		res.Applied = append(res.Applied, crd.Name)
	}
	return res, nil
}

func (in *Installer) apply(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, force bool) error {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return err
	}
	// Apply only what we mean to own: no status, no server-set metadata.
	delete(obj, "status")
	if md, ok := obj["metadata"].(map[string]any); ok {
		for _, k := range []string{"creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"} {
			delete(md, k)
		}
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	opts := []client.ApplyOption{client.FieldOwner(in.manager())}
	if force {
		opts = append(opts, client.ForceOwnership)
	}
	return in.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...)
}

// WaitEstablished waits until every named CRD is Established, so that callers
// (the proxy, HyperShift) can use the resources right after Install.
func WaitEstablished(ctx context.Context, c client.Reader, names []string, timeout time.Duration) error {
	return kubeutil.WaitEstablished(ctx, c, names, timeout)
}

// Observe lists the CRDs of the CAPI families (standard and private) on the
// cluster: the input Decide needs.
func Observe(ctx context.Context, c client.Reader) ([]apiextensionsv1.CustomResourceDefinition, error) {
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing CRDs: %w", err)
	}
	var out []apiextensionsv1.CustomResourceDefinition
	for _, crd := range list.Items {
		if groups.IsStandard(crd.Spec.Group) || groups.IsPrivate(crd.Spec.Group) {
			out = append(out, crd)
		}
	}
	return out, nil
}

// Reconcile is the agent's whole CRD step: observe, decide, build, install,
// wait. The decision is returned even on error so that it can be reported.
func Reconcile(ctx context.Context, c client.Client, requested Mode, opts Options) (Decision, Result, error) {
	onCluster, err := Observe(ctx, c)
	if err != nil {
		return Decision{}, Result{}, err
	}
	d := Decide(requested, onCluster, opts.CoreVersion)
	want, err := Build(d.Mode, opts)
	if err != nil {
		return d, Result{}, err
	}
	in := &Installer{Client: c}
	res, err := in.Install(ctx, want)
	if err != nil {
		return d, res, err
	}
	if err := WaitEstablished(ctx, c, res.Applied, time.Minute); err != nil {
		return d, res, fmt.Errorf("waiting for CAPI CRDs to be established: %w", err)
	}
	return d, res, nil
}
