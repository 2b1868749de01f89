package capacity

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

func node(name, cpu, memory string, mutate ...func(*corev1.Node)) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	for _, m := range mutate {
		m(&n)
	}
	return n
}

func TestNodesAllocatable(t *testing.T) {
	nodes := []corev1.Node{
		node("w1", "16", "64Gi"),
		node("w2", "15500m", "62Gi"),
		// Dedicated to hosted control planes: HyperShift's pods tolerate it.
		node("hcp", "32", "128Gi", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "hypershift.openshift.io/control-plane", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
		}),
		node("master", "8", "32Gi", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/master", Effect: corev1.TaintEffectNoSchedule}}
		}),
		node("cordoned", "16", "64Gi", func(n *corev1.Node) { n.Spec.Unschedulable = true }),
		node("notready", "16", "64Gi", func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }),
		node("prefer", "1", "1Gi", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectPreferNoSchedule}}
		}),
	}
	a := NodesAllocatable(nodes)
	if a.Nodes != 4 || a.CPU.MilliValue() != 64500 || a.Memory.Value() != (64+62+128+1)<<30 {
		t.Errorf("NodesAllocatable = %d nodes, cpu %s, memory %s; want 4, 64500m, 255Gi", a.Nodes, a.CPU.String(), a.Memory.String())
	}
}

func quantity(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func TestResourceSlots(t *testing.T) {
	a := Allocatable{Nodes: 3, CPU: resource.MustParse("48"), Memory: resource.MustParse("192Gi")}
	for _, tc := range []struct {
		per  *v1alpha1.ResourceBaseline
		want int32
		ok   bool
	}{
		{nil, 0, false},
		{&v1alpha1.ResourceBaseline{}, 0, false},
		{&v1alpha1.ResourceBaseline{CPU: quantity("5")}, 9, true},
		{&v1alpha1.ResourceBaseline{Memory: quantity("18Gi")}, 10, true},
		{&v1alpha1.ResourceBaseline{CPU: quantity("5"), Memory: quantity("18Gi")}, 9, true},
		{&v1alpha1.ResourceBaseline{CPU: quantity("2"), Memory: quantity("24Gi")}, 8, true}, // memory binds
		{&v1alpha1.ResourceBaseline{CPU: quantity("100")}, 0, true},
		{&v1alpha1.ResourceBaseline{CPU: quantity("1m")}, 48000, true},
	} {
		if got, ok := ResourceSlots(Allocatable{}, tc.per); ok {
			t.Errorf("ResourceSlots(no nodes, %+v) = %d, limits", tc.per, got)
		}
		got, ok := ResourceSlots(a, tc.per)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ResourceSlots(%+v) = %d, %v; want %d, %v", tc.per, got, ok, tc.want, tc.ok)
		}
	}
}

func pod(plane string, phase corev1.PodPhase, requests ...string) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}}}
	if plane != "" {
		p.Labels[ControlPlaneLabel] = plane
	}
	p.Status.Phase = phase
	for i := 0; i+1 < len(requests); i += 2 {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(requests[i]), corev1.ResourceMemory: resource.MustParse(requests[i+1])}}})
	}
	return p
}

func TestObservedPerControlPlane(t *testing.T) {
	if per, n := ObservedPerControlPlane(nil); per != nil || n != 0 {
		t.Errorf("no pods: %v, %d", per, n)
	}
	pods := []corev1.Pod{
		pod("clusters-a", corev1.PodRunning, "2", "8Gi", "1", "2Gi"),
		pod("clusters-a", corev1.PodPending, "1", "2Gi"),
		pod("clusters-b", corev1.PodRunning, "2", "4Gi"),
		pod("clusters-b", corev1.PodSucceeded, "50", "500Gi"), // finished: not counted
		pod("", corev1.PodRunning, "50", "500Gi"),             // not a control plane's
	}
	per, n := ObservedPerControlPlane(pods)
	if n != 2 || per == nil || per.CPU.MilliValue() != 3000 || per.Memory.Value() != 8<<30 {
		t.Errorf("ObservedPerControlPlane = %v (%d planes), want cpu 3, memory 8Gi over 2", per, n)
	}
}

func TestReportCapacity(t *testing.T) {
	a := Allocatable{Nodes: 3, CPU: resource.MustParse("48"), Memory: resource.MustParse("192Gi")}
	configured := &v1alpha1.ResourceBaseline{CPU: quantity("5"), Memory: quantity("18Gi")}
	observed := &v1alpha1.ResourceBaseline{CPU: quantity("8"), Memory: quantity("16Gi")}

	r := Report{MaxHostedClusters: 80, AboveThreshold: 60, HostedClusters: 9, Resources: NewResourceBasis(a, configured, nil, 0)}
	if r.Capacity() != 9 || r.FreeSlots() != 0 || r.Claims()[ClaimFull] != "true" || r.Claims()[ClaimCapacity] != "9" || r.FreeCapacityScore() != -100 {
		t.Errorf("baseline: capacity %d, free %d, claims %v", r.Capacity(), r.FreeSlots(), r.Claims())
	}
	if b := r.Claims()[ClaimCapacityBasis]; b != "min(maxHostedClusters 80, 3 nodes: cpu 48, memory 192Gi; per hosted control plane cpu 5, memory 18Gi (HostingConfig) = 9) = 9" {
		t.Errorf("basis claim %q", b)
	}
	// Once control planes run, what they request wins over the baseline.
	r.Resources = NewResourceBasis(a, configured, observed, 4)
	if r.Capacity() != 6 || !strings.Contains(r.CapacityBasis(), "(observed average of 4) = 6") {
		t.Errorf("observed: capacity %d, basis %q", r.Capacity(), r.CapacityBasis())
	}
	// maxHostedClusters still caps.
	r.MaxHostedClusters = 5
	if r.Capacity() != 5 {
		t.Errorf("capped: capacity %d, want 5", r.Capacity())
	}
	// No size known: maxHostedClusters alone.
	r = Report{MaxHostedClusters: 80, Resources: NewResourceBasis(a, nil, nil, 0)}
	if r.Capacity() != 80 || !strings.Contains(r.CapacityBasis(), "no size per hosted control plane") {
		t.Errorf("no size: capacity %d, basis %q", r.Capacity(), r.CapacityBasis())
	}
	if len(r.CapacityBasis()) > 1024 {
		t.Errorf("basis longer than a ClusterClaim value may be")
	}
}
