package agent

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// TestPlaceKeepsCollisionProtection: placing an object into its target
// keeps its mode (IfNoController once read as Prevent after placing).
func TestPlaceKeepsCollisionProtection(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
	o := extension.Object{Ref: extension.ObjectRef{Version: "v1", Kind: "ConfigMap", Name: "c"}, Object: u, Collision: v1alpha1.CollisionProtectionIfNoController}
	placed := (&target{class: v1alpha1.PhaseClassControlPlane, namespace: "clusters-a"}).place(o)
	if placed.Collision != v1alpha1.CollisionProtectionIfNoController || placed.Ref.Namespace != "clusters-a" || placed.Object.GetNamespace() != "clusters-a" {
		t.Fatalf("placed %+v (namespace %q)", placed.Ref, placed.Object.GetNamespace())
	}
}
