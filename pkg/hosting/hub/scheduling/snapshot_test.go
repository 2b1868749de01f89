package scheduling

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

func boundHCD(name, uid, cluster string) *v1alpha1.HostedClusterDeployment {
	h := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: name, UID: types.UID(uid)}}
	h.Status.HostingCluster = cluster
	h.Spec.NodePools = []v1alpha1.NodePoolTemplate{{Name: name + "-np"}}
	return h
}

func TestBoundSnapshot(t *testing.T) {
	var forgotten []types.NamespacedName
	s := NewBoundSnapshot(func(k types.NamespacedName, _ types.UID) { forgotten = append(forgotten, k) })
	h := s.Handler()
	a, b := boundHCD("a", "ua", "c1"), boundHCD("b", "ub", "c1")
	unbound := boundHCD("u", "uu", "")
	h.OnAdd(a, true)
	h.OnAdd(unbound, true)
	h.OnUpdate(unbound, b) // (the same handler for every update)
	h.OnUpdate(a, a)       // a status update of a bound one changes nothing
	hcKey := HostedClusterKey(RequestFor(a).HostingNamespace, "a")
	npKey := NodePoolKey(RequestFor(a).HostingNamespace, "a-np")
	if s.Count("c1") != 2 || s.Count("c2") != 0 || !s.Holds("c1", "ua") || s.Holds("c2", "ua") ||
		!s.Occupied("c1", hcKey) || !s.Occupied("c1", npKey) || s.Occupied("c2", hcKey) {
		t.Fatalf("after two bindings: count %d, holds %v, occupied %v", s.Count("c1"), s.Holds("c1", "ua"), s.Occupied("c1", hcKey))
	}
	if len(forgotten) != 2 {
		t.Errorf("assumptions forgotten on first sight of a binding: %v, want a and b once each", forgotten)
	}
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "t/a", Obj: a})
	if s.Count("c1") != 1 || s.Holds("c1", "ua") || s.Occupied("c1", hcKey) {
		t.Errorf("after deleting a: count %d, occupied %v", s.Count("c1"), s.Occupied("c1", hcKey))
	}
	h.OnDelete(b)
	if s.Count("c1") != 0 || len(s.byCluster) != 0 || len(s.byUID) != 0 {
		t.Errorf("empty snapshot keeps %v %v", s.byCluster, s.byUID)
	}
}

func TestSchedulingChangedPredicates(t *testing.T) {
	mc := func(mutate func(*clusterv1.ManagedCluster)) *clusterv1.ManagedCluster {
		m := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Labels: map[string]string{"a": "b"}}}
		m.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "x"}}
		m.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: hosting.ClaimHostedClusters, Value: "3"}, {Name: "id.k8s.io", Value: "x"}}
		if mutate != nil {
			mutate(m)
		}
		return m
	}
	p := schedulingChanged(managedClusterFacts)
	for _, tc := range []struct {
		name   string
		mutate func(*clusterv1.ManagedCluster)
		want   bool
	}{
		{"nothing", nil, false},
		{"heartbeat (a condition's message, resourceVersion)", func(m *clusterv1.ManagedCluster) {
			m.ResourceVersion = "9"
			m.Status.Conditions[0].Message = "still here"
		}, false},
		{"an unrelated claim", func(m *clusterv1.ManagedCluster) { m.Status.ClusterClaims[1].Value = "y" }, false},
		{"unavailable", func(m *clusterv1.ManagedCluster) { m.Status.Conditions[0].Status = metav1.ConditionUnknown }, true},
		{"hosted count", func(m *clusterv1.ManagedCluster) { m.Status.ClusterClaims[0].Value = "4" }, true},
		{"capacity reported", func(m *clusterv1.ManagedCluster) {
			m.Status.ClusterClaims = append(m.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: hosting.ClaimResourceSlots, Value: "9"})
		}, true},
		{"a label (cluster sets)", func(m *clusterv1.ManagedCluster) { m.Labels["cluster.open-cluster-management.io/clusterset"] = "s" }, true},
		{"deleting", func(m *clusterv1.ManagedCluster) { m.DeletionTimestamp = &metav1.Time{} }, true},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: mc(nil), ObjectNew: mc(tc.mutate)}); got != tc.want {
			t.Errorf("%s: re-enqueues %v, want %v", tc.name, got, tc.want)
		}
	}
	if !p.Create(event.CreateEvent{Object: mc(nil)}) || !p.Delete(event.DeleteEvent{Object: mc(nil)}) {
		t.Error("creations and deletions must pass")
	}
}
