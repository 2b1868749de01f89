package kubeutil

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestApplyPatch(t *testing.T) {
	obj := map[string]any{"apiVersion": "hcpfleet.io/v1alpha1", "kind": "ReleaseRollout",
		"metadata": map[string]any{"name": "r", "namespace": "team"}, "status": map[string]any{"wave": 1}}
	target, patch, err := ApplyPatch(obj)
	if err != nil {
		t.Fatal(err)
	}
	if target.GetKind() != "ReleaseRollout" || target.GetNamespace() != "team" || target.GetName() != "r" {
		t.Errorf("target %s %s/%s, want ReleaseRollout team/r", target.GetKind(), target.GetNamespace(), target.GetName())
	}
	if patch.Type() != types.ApplyPatchType {
		t.Errorf("patch type %s, want %s", patch.Type(), types.ApplyPatchType)
	}
	data, err := patch.Data(target)
	if err != nil || string(data) != `{"apiVersion":"hcpfleet.io/v1alpha1","kind":"ReleaseRollout","metadata":{"name":"r","namespace":"team"},"status":{"wave":1}}` {
		t.Errorf("patch data %s (%v)", data, err)
	}
	if _, _, err := ApplyPatch(func() {}); err == nil {
		t.Error("an object that does not marshal: no error")
	}
}
