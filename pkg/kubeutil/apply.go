package kubeutil

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyPatch makes obj — a map or an apply configuration that names its
// apiVersion, kind, name and namespace — a server-side apply patch, with
// obj's unstructured copy as the patch target: it names the object, and the
// response decoded into it drops no field the Go types do not know.
// controller-runtime v0.22's SubResourceWriter has no Apply, so a status is
// applied this way too (c.Status().Patch(ctx, target, patch, ...)).
func ApplyPatch(obj any) (*unstructured.Unstructured, client.Patch, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, err
	}
	target := &unstructured.Unstructured{}
	if err := target.UnmarshalJSON(data); err != nil {
		return nil, nil, err
	}
	return target, client.RawPatch(types.ApplyPatchType, data), nil
}
