package kubeletsim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Node is a worker the kubelet stand-in registers, as a kubelet registers
// its node: with capacity and allocatable resources and Ready, so what
// reads Nodes (the agent's capacity report) reads real objects. No pods are
// scheduled onto it.
type Node struct {
	Name   string
	CPU    resource.Quantity
	Memory resource.Quantity
	// Taints and Unschedulable as on a real Node (dedicated control-plane
	// workers, cordoned nodes).
	Taints        []corev1.Taint
	Unschedulable bool
}

// DefaultNodes are three workers of 16 CPUs and 64 GiB: about what
// HyperShift's sizing guidance puts 16–20 highly available hosted control
// planes on.
func DefaultNodes() []Node {
	nodes := make([]Node, 3)
	for i := range nodes {
		nodes[i] = Node{Name: fmt.Sprintf("worker-%d", i), CPU: resource.MustParse("16"), Memory: resource.MustParse("64Gi")}
	}
	return nodes
}

// RegisterNodes creates or updates the Nodes (spec and status) as a kubelet
// and the node lifecycle controller would leave them: Ready, with only the
// given taints. The local fleet runs no node lifecycle controller, so they
// stay Ready without heartbeats.
func (k *Kubelet) RegisterNodes(ctx context.Context, nodes ...Node) error {
	for _, n := range nodes {
		resources := corev1.ResourceList{corev1.ResourceCPU: n.CPU, corev1.ResourceMemory: n.Memory, corev1.ResourcePods: resource.MustParse("250")}
		node, err := k.client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			node, err = k.client.CoreV1().Nodes().Create(ctx, &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: map[string]string{"kubernetes.io/hostname": n.Name, "node-role.kubernetes.io/worker": ""}},
				Spec:       corev1.NodeSpec{Taints: n.Taints, Unschedulable: n.Unschedulable},
			}, metav1.CreateOptions{})
		case err == nil:
			node.Spec.Taints, node.Spec.Unschedulable = n.Taints, n.Unschedulable
			node, err = k.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("registering node %s: %w", n.Name, err)
		}
		now := metav1.Now()
		node.Status.Capacity, node.Status.Allocatable = resources, resources
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "kubelet stand-in (local fleet)", LastHeartbeatTime: now, LastTransitionTime: now}}
		if node, err = k.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("node %s status: %w", n.Name, err)
		}
		// The API server's TaintNodesByCondition admission taints a new Node
		// not-ready; the node lifecycle controller, which does not run here,
		// would lift it once the Node is Ready.
		if len(node.Spec.Taints) != len(n.Taints) {
			node.Spec.Taints = n.Taints
			if _, err := k.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("node %s taints: %w", n.Name, err)
			}
		}
	}
	return nil
}
