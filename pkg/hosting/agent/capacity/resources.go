package capacity

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// ControlPlaneLabel is the label HyperShift puts on every pod of a hosted
// control plane (its value is the control-plane namespace; HyperShift uses
// it for pod affinity between the components of one control plane). The
// observed average per hosted control plane is taken over these pods.
const ControlPlaneLabel = "hypershift.openshift.io/hosted-control-plane"

// hyperShiftTaintPrefix marks the taints HyperShift's control-plane pods
// tolerate (hypershift.openshift.io/control-plane,
// hypershift.openshift.io/cluster): nodes dedicated to hosted control planes
// carry them and still count.
const hyperShiftTaintPrefix = "hypershift.openshift.io/"

// Allocatable is what the schedulable Nodes of a management cluster offer.
type Allocatable struct {
	Nodes  int
	CPU    resource.Quantity
	Memory resource.Quantity
}

// NodesAllocatable sums the allocatable CPU and memory of the Nodes hosted
// control planes can be scheduled on: Ready, not cordoned, and without a
// NoSchedule or NoExecute taint other than HyperShift's own (control-plane
// nodes of the management cluster itself are tainted so).
func NodesAllocatable(nodes []corev1.Node) Allocatable {
	var a Allocatable
	for i := range nodes {
		n := &nodes[i]
		if !schedulable(n) {
			continue
		}
		a.Nodes++
		a.CPU.Add(n.Status.Allocatable[corev1.ResourceCPU])
		a.Memory.Add(n.Status.Allocatable[corev1.ResourceMemory])
	}
	return a
}

func schedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return false
	}
	for _, t := range n.Spec.Taints {
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !strings.HasPrefix(t.Key, hyperShiftTaintPrefix) {
			return false
		}
	}
	return true
}

// ObservedPerControlPlane is the average CPU and memory the running hosted
// control planes request: the requests of the pods labelled with
// ControlPlaneLabel that have not finished, summed per control plane (the
// label's value) and averaged over the control planes; nil when none runs.
// Init containers are left out (they do not run beside the others for
// long). A resource no pod requests is left nil.
func ObservedPerControlPlane(pods []corev1.Pod) (*v1alpha1.ResourceBaseline, int) {
	var cpu, memory resource.Quantity
	planes := map[string]bool{}
	for i := range pods {
		p := &pods[i]
		plane := p.Labels[ControlPlaneLabel]
		if plane == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		planes[plane] = true
		for _, c := range p.Spec.Containers {
			cpu.Add(c.Resources.Requests[corev1.ResourceCPU])
			memory.Add(c.Resources.Requests[corev1.ResourceMemory])
		}
	}
	if len(planes) == 0 {
		return nil, 0
	}
	n := int64(len(planes))
	per := &v1alpha1.ResourceBaseline{}
	if !cpu.IsZero() {
		per.CPU = resource.NewMilliQuantity((cpu.MilliValue()+n-1)/n, resource.DecimalSI)
	}
	if !memory.IsZero() {
		per.Memory = resource.NewQuantity((memory.Value()+n-1)/n, resource.BinarySI)
	}
	if per.CPU == nil && per.Memory == nil {
		return nil, 0
	}
	return per, len(planes)
}

// ResourceSlots is how many hosted control planes of size per fit into a:
// the smaller of what the CPU and the memory take. ok is false when per
// names no resource or no schedulable Node is seen (then only
// maxHostedClusters limits).
func ResourceSlots(a Allocatable, per *v1alpha1.ResourceBaseline) (slots int32, ok bool) {
	// No schedulable Node seen says more about what the agent can see (or
	// taints it does not know) than about the cluster: not a limit.
	if a.Nodes == 0 || per == nil || (per.CPU == nil && per.Memory == nil) {
		return 0, false
	}
	slots = math.MaxInt32
	if per.CPU != nil && per.CPU.MilliValue() > 0 {
		slots = min(slots, clamp(a.CPU.MilliValue()/per.CPU.MilliValue()))
	}
	if per.Memory != nil && per.Memory.Value() > 0 {
		slots = min(slots, clamp(a.Memory.Value()/per.Memory.Value()))
	}
	return slots, true
}

func clamp(n int64) int32 {
	return int32(min(max(n, 0), math.MaxInt32))
}

// Per-control-plane sizes come from the HostingConfig or from what runs.
const (
	BasisHostingConfig = "HostingConfig"
	BasisObserved      = "observed"
)

// ResourceBasis is what the resource part of the capacity was computed
// from.
type ResourceBasis struct {
	Allocatable Allocatable
	// PerControlPlane is the size of one hosted control plane the slots are
	// computed at; nil when neither the HostingConfig nor the running
	// control planes give one.
	PerControlPlane *v1alpha1.ResourceBaseline
	// Source is BasisHostingConfig or BasisObserved (with Observed control
	// planes averaged).
	Source   string
	Observed int
}

// NewResourceBasis picks the per-control-plane size: the observed average
// once hosted control planes run (what they really request), otherwise the
// HostingConfig's baseline.
func NewResourceBasis(a Allocatable, configured, observed *v1alpha1.ResourceBaseline, observedPlanes int) ResourceBasis {
	b := ResourceBasis{Allocatable: a}
	switch {
	case observed != nil:
		b.PerControlPlane, b.Source, b.Observed = observed, BasisObserved, observedPlanes
	case configured != nil && (configured.CPU != nil || configured.Memory != nil):
		b.PerControlPlane, b.Source = configured, BasisHostingConfig
	}
	return b
}

// Slots: see ResourceSlots.
func (b ResourceBasis) Slots() (int32, bool) { return ResourceSlots(b.Allocatable, b.PerControlPlane) }

// String says what the slots were computed from, for the capacity-basis
// claim: "3 nodes: cpu 48, memory 192Gi; per hosted control plane cpu 5,
// memory 18Gi (HostingConfig) = 9". Only quantities and counts: nothing
// tenant-controlled.
func (b ResourceBasis) String() string {
	s := fmt.Sprintf("%d nodes: cpu %s, memory %s", b.Allocatable.Nodes, b.Allocatable.CPU.String(), b.Allocatable.Memory.String())
	if b.PerControlPlane == nil {
		return s + "; no size per hosted control plane"
	}
	if b.Allocatable.Nodes == 0 {
		return s + "; no schedulable node seen"
	}
	var per []string
	if b.PerControlPlane.CPU != nil {
		per = append(per, "cpu "+b.PerControlPlane.CPU.String())
	}
	if b.PerControlPlane.Memory != nil {
		per = append(per, "memory "+b.PerControlPlane.Memory.String())
	}
	source := b.Source
	if b.Source == BasisObserved {
		source = fmt.Sprintf("observed average of %d", b.Observed)
	}
	slots, _ := b.Slots()
	return fmt.Sprintf("%s; per hosted control plane %s (%s) = %d", s, strings.Join(per, ", "), source, slots)
}
