// Package crds embeds the generated CRDs of the OpenShift assisted providers
// (hack/agentproviders/generate.sh writes them) and installs them.
package crds

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var files embed.FS

const (
	// FieldManager is the server-side-apply field manager of our CRDs.
	FieldManager = "hcp-fleet-agent-providers"
	// ManagedByLabel/ManagedByValue mark CRDs we installed, so that we never
	// take over a CRD of the same name that someone else installed (for
	// example the upstream cluster-api-provider-openshift-assisted).
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "hcp-fleet"
)

// Bootstrap are the bootstrap provider's CRDs; ControlPlane the
// control-plane provider's.
var (
	Bootstrap    = []string{"openshiftassistedconfigs.bootstrap.cluster.x-k8s.io", "openshiftassistedconfigtemplates.bootstrap.cluster.x-k8s.io"}
	ControlPlane = []string{"openshiftassistedcontrolplanes.controlplane.cluster.x-k8s.io"}
)

// All returns every embedded CRD, by name.
func All() (map[string]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, err
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, e := range entries {
		if path.Ext(e.Name()) != ".yaml" {
			continue
		}
		data, err := files.ReadFile(e.Name())
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out[crd.Name] = crd
	}
	return out, nil
}

// Get returns the named CRDs, sorted by name.
func Get(names ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, n := range names {
		crd, ok := all[n]
		if !ok {
			return nil, fmt.Errorf("no embedded CRD %s", n)
		}
		out = append(out, crd)
	}
	return out, nil
}

// ForeignCRDError says a CRD of ours exists but was not installed by us.
type ForeignCRDError struct{ Name string }

func (e *ForeignCRDError) Error() string {
	return fmt.Sprintf("CRD %s exists and is not managed by hcp-fleet (label %s=%s missing); leaving it alone", e.Name, ManagedByLabel, ManagedByValue)
}

// Install applies the named CRDs with server-side apply. A CRD of the same
// name that we did not install (another installation of the providers) is
// left alone and reported as *ForeignCRDError.
func Install(ctx context.Context, c client.Client, names ...string) error {
	crds, err := Get(names...)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		existing := &apiextensionsv1.CustomResourceDefinition{}
		err := c.Get(ctx, types.NamespacedName{Name: crd.Name}, existing)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return err
		case existing.Labels[ManagedByLabel] != ManagedByValue:
			return &ForeignCRDError{Name: crd.Name}
		}
		obj := crd.DeepCopy()
		obj.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if obj.Labels == nil {
			obj.Labels = map[string]string{}
		}
		obj.Labels[ManagedByLabel] = ManagedByValue
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		delete(u, "status")
		un := &unstructured.Unstructured{Object: u}
		if err := c.Patch(ctx, un, client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}

// GroupKinds are the kinds the named CRDs serve.
func GroupKinds(names ...string) ([]schema.GroupKind, error) {
	crds, err := Get(names...)
	if err != nil {
		return nil, err
	}
	var out []schema.GroupKind
	for _, crd := range crds {
		out = append(out, schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind})
	}
	return out, nil
}

// Uninstall deletes the named CRDs that we installed (ManagedByLabel) and
// leaves any other CRD of the same name alone.
func Uninstall(ctx context.Context, c client.Client, names ...string) error {
	for _, n := range names {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, types.NamespacedName{Name: n}, crd); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if crd.Labels[ManagedByLabel] != ManagedByValue {
			continue
		}
		if err := c.Delete(ctx, crd); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
