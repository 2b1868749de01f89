package connector

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// TestPlaceKeepsCollisionProtection: placing a guest object keeps its
// collision protection (an IfNoController object once became Prevent
// here, and adoption was refused), defaults the namespace of a namespaced
// kind and clears it for a cluster-scoped one.
func TestPlaceKeepsCollisionProtection(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	g := &guest{mapper: mapper}
	for kind, wantNS := range map[string]string{"ConfigMap": "default", "Namespace": ""} {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": "x", "namespace": ""}}}
		o := extension.Object{Ref: extension.ObjectRef{Version: "v1", Kind: kind, Name: "x"}, Object: u, Collision: v1alpha1.CollisionProtectionIfNoController}
		placed := g.place(o)
		if placed.Collision != v1alpha1.CollisionProtectionIfNoController || placed.Ref.Namespace != wantNS || placed.Object.GetNamespace() != wantNS {
			t.Errorf("%s placed as %+v (namespace %q, collision %q), want namespace %q and IfNoController", kind, placed.Ref, placed.Object.GetNamespace(), placed.Collision, wantNS)
		}
	}
}
