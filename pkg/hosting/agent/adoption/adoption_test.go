package adoption

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

func object(kind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "hypershift.openshift.io/v1beta1", "kind": kind,
		"metadata": map[string]any{"namespace": "clusters", "name": name, "uid": name + "-uid", "labels": map[string]any{"a": "b"}},
		"spec":     spec, "status": map[string]any{"secret": "never reported"}}}
	return u
}

// TestAnswer: the answer carries the HostedCluster's and its own NodePools'
// labels, annotations and specs (never status), sorted; a missing one is
// NotFound; and an answer the hub holds already is current.
func TestAnswer(t *testing.T) {
	name := v1alpha1.AdoptionHostedCluster{Namespace: "clusters", Name: "prod"}
	if o, c := Answer(name, nil, nil); o != nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonNotFound {
		t.Errorf("no HostedCluster: %+v %+v, want NotFound", o, c)
	}
	hc := object("HostedCluster", "prod", map[string]any{"infraID": "prod-x", "pullSecret": map[string]any{"name": "ps"}})
	pools := []unstructured.Unstructured{
		*object("NodePool", "prod-b", map[string]any{"clusterName": "prod", "replicas": int64(2)}),
		*object("NodePool", "other", map[string]any{"clusterName": "other"}),
		*object("NodePool", "prod-a", map[string]any{"clusterName": "prod"}),
	}
	o, c := Answer(name, hc, pools)
	if c.Status != metav1.ConditionTrue || c.Reason != ReasonObserved || o == nil || o.UID != "prod-uid" || o.Deleting {
		t.Fatalf("answer %+v %+v", o, c)
	}
	if len(o.NodePools) != 2 || o.NodePools[0].Name != "prod-a" || o.NodePools[1].Name != "prod-b" {
		t.Errorf("node pools %+v, want prod-a and prod-b", o.NodePools)
	}
	var got map[string]any
	if err := json.Unmarshal(o.HostedCluster.Raw, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["status"]; ok || got["spec"].(map[string]any)["infraID"] != "prod-x" || got["labels"].(map[string]any)["a"] != "b" {
		t.Errorf("reported HostedCluster %v: want labels and spec, no status", got)
	}
	// As the hub returns it: re-encoded, and the condition as written.
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	held := &v1alpha1.HostedClusterAdoption{}
	held.Status.Observed = &v1alpha1.AdoptionObserved{}
	if err := json.Unmarshal(data, held.Status.Observed); err != nil {
		t.Fatal(err)
	}
	held.Status.Conditions = []metav1.Condition{c}
	if !Current(held, o, c) {
		t.Error("the answer the hub holds is not current")
	}
	hc.Object["spec"].(map[string]any)["infraID"] = "changed"
	o2, c2 := Answer(name, hc, pools)
	if Current(held, o2, c2) {
		t.Error("a changed spec is current")
	}
	many := make([]unstructured.Unstructured, v1alpha1.MaxAdoptionNodePools+1)
	for i := range many {
		many[i] = *object("NodePool", "p", map[string]any{"clusterName": "prod"})
	}
	if o, c := Answer(name, hc, many); o != nil || c.Reason != ReasonTooManyNodePools {
		t.Errorf("too many pools: %+v %+v", o, c)
	}
}
