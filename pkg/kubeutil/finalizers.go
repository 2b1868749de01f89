package kubeutil

import (
	"context"
	"encoding/json"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// AddFinalizer adds f to obj's metadata.finalizers with SetFinalizers; it
// writes nothing when obj already has it.
func AddFinalizer(ctx context.Context, c client.Writer, obj client.Object, f string) error {
	if controllerutil.ContainsFinalizer(obj, f) {
		return nil
	}
	return SetFinalizers(ctx, c, obj, append(slices.Clone(obj.GetFinalizers()), f))
}

// RemoveFinalizer removes f from obj's metadata.finalizers with
// SetFinalizers; it writes nothing when obj does not have it. A NotFound
// error is returned as is (callers finishing a deletion usually ignore it).
func RemoveFinalizer(ctx context.Context, c client.Writer, obj client.Object, f string) error {
	if !controllerutil.ContainsFinalizer(obj, f) {
		return nil
	}
	keep := slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), func(s string) bool { return s == f })
	return SetFinalizers(ctx, c, obj, keep)
}

// SetFinalizers sets obj's metadata.finalizers to finalizers with a JSON
// merge patch of metadata only, guarded by the resourceVersion obj was read
// at: a concurrent change of the list fails with a Conflict instead of being
// lost. It is never an Update, which would write back the whole typed object
// and drop the fields its Go type does not know. obj is updated from the
// response.
func SetFinalizers(ctx context.Context, c client.Writer, obj client.Object, finalizers []string) error {
	if finalizers == nil {
		finalizers = []string{} // null would also clear them; [] says so
	}
	metadata := map[string]any{"finalizers": finalizers}
	if rv := obj.GetResourceVersion(); rv != "" {
		metadata["resourceVersion"] = rv
	}
	data, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return err
	}
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
}
