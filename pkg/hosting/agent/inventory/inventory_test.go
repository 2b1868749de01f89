package inventory

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

func TestDeployment(t *testing.T) {
	if d := Deployment(map[string]string{hosting.LabelHCDName: "a"}); d != nil {
		t.Errorf("a name without a namespace names %+v", d)
	}
	if d := Deployment(nil); d != nil {
		t.Errorf("no labels name %+v", d)
	}
	d := Deployment(map[string]string{hosting.LabelHCDNamespace: "team", hosting.LabelHCDName: "a", hosting.LabelHCDUID: "u1"})
	if d == nil || *d != (v1alpha1.InventoryDeployment{Namespace: "team", Name: "a", UID: "u1"}) {
		t.Errorf("got %+v", d)
	}
}

func TestUnmanaged(t *testing.T) {
	hc := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"namespace": "clusters", "name": "x"},
		"spec": map[string]any{"release": map[string]any{"image": "quay.io/r:4.18"}, "platform": map[string]any{"type": "AWS"},
			"infraID": strings.Repeat("i", 300)},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Degraded", "status": "True"},
			map[string]any{"type": "Available", "status": "False"},
		}},
	}}
	e := Unmanaged(hc)
	if e.Managed() || e.Namespace != "clusters" || e.Name != "x" || e.Release != "quay.io/r:4.18" || e.Platform != "AWS" || e.Available != metav1.ConditionFalse {
		t.Errorf("got %+v", e)
	}
	if len(e.InfraID) != 253 {
		t.Errorf("an infraID of 300 characters is reported with %d, want cut to the schema's 253", len(e.InfraID))
	}
	// No conditions, or a status that is not a ConditionStatus: Unknown.
	delete(hc.Object, "status")
	if e := Unmanaged(hc); e.Available != metav1.ConditionUnknown {
		t.Errorf("no conditions: Available %q", e.Available)
	}
	_ = unstructured.SetNestedSlice(hc.Object, []any{map[string]any{"type": "Available", "status": "maybe"}}, "status", "conditions")
	if e := Unmanaged(hc); e.Available != metav1.ConditionUnknown {
		t.Errorf("status maybe: Available %q", e.Available)
	}
}

func TestStatus(t *testing.T) {
	if s := Status(nil); s.HostedClusters != nil || s.Truncated {
		t.Errorf("none: %+v", s)
	}
	entries := []v1alpha1.InventoryHostedCluster{{Namespace: "b", Name: "a"}, {Namespace: "a", Name: "z"}, {Namespace: "a", Name: "b"}}
	s := Status(entries)
	var got []string
	for _, e := range s.HostedClusters {
		got = append(got, e.Namespace+"/"+e.Name)
	}
	if strings.Join(got, ",") != "a/b,a/z,b/a" || s.Truncated {
		t.Errorf("got %v truncated %v, want sorted by namespace and name", got, s.Truncated)
	}
	if entries[0].Namespace != "b" {
		t.Error("Status sorted its argument")
	}
	many := make([]v1alpha1.InventoryHostedCluster, v1alpha1.MaxInventoryHostedClusters+1)
	for i := range many {
		many[i] = v1alpha1.InventoryHostedCluster{Namespace: "ns", Name: fmt.Sprintf("hc-%04d", i)}
	}
	s = Status(many)
	if len(s.HostedClusters) != v1alpha1.MaxInventoryHostedClusters || !s.Truncated || s.HostedClusters[0].Name != "hc-0000" {
		t.Errorf("%d entries truncated %v", len(s.HostedClusters), s.Truncated)
	}
}
