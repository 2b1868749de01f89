package agent

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// TestObserve: a paused release reads an object and never writes it:
// absent is Pending, another owner's is Refused, its own is probed.
func TestObserve(t *testing.T) {
	ctx := context.Background()
	release := extension.Release{UID: "uid-1", AvailabilityProbes: []v1alpha1.ExtensionProbeSet{{
		Selector: v1alpha1.ExtensionProbeSelector{Kind: v1alpha1.ExtensionGroupKind{Kind: "ConfigMap"}},
		Probes:   []v1alpha1.ExtensionProbe{{CEL: &v1alpha1.CELProbe{Rule: "self.data.ready == 'yes'", Message: "not ready"}}}}}}
	cm := func(name, uid, ready string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "clusters-a"}, "data": map[string]any{"ready": ready}}}
		if uid != "" {
			u.SetLabels(map[string]string{extension.LabelExtensionUID: uid})
		}
		return u
	}
	c := fake.NewClientBuilder().WithObjects(cm("foreign", "", "yes"), cm("ours", "uid-1", "yes"), cm("unready", "uid-1", "no")).Build()
	for name, want := range map[string]v1alpha1.ExtensionObjectState{"absent": v1alpha1.ObjectStatePending, "foreign": v1alpha1.ObjectStateRefused,
		"ours": v1alpha1.ObjectStateAvailable, "unready": v1alpha1.ObjectStateUnavailable} {
		o := extension.Object{Ref: extension.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "clusters-a", Name: name}}
		if got := observe(ctx, c, o, release); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}
