package agent

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

var hostedClusterGVK = hosting.HostedClusterGVK

// target is where a phase's objects go: the control-plane namespace, which
// the engine writes itself, or the hosted cluster, which the extension
// connector of that namespace writes (remote.go): the engine never reaches
// a hosted cluster itself. service-network-admin-kubeconfig points at the
// kube-apiserver Service of the control-plane namespace, which resolves
// only there, so only a component in that namespace can use it as written.
type target struct {
	class     v1alpha1.PhaseClass
	client    client.Client
	mapper    meta.RESTMapper
	namespace string  // the control-plane namespace, for phases without class
	remote    *remote // the connector's report, for hosted-cluster phases
}

// place puts an object where the phase may write it: into the control-plane
// namespace (a phase without class; Validate refused any other), or where
// the connector placed it in the hosted cluster (its own namespace, or
// "default" when the kind is namespaced and none is given).
func (t *target) place(o extension.Object) extension.Object {
	if t.remote != nil {
		return t.remote.place(o)
	}
	out := extension.Object{Ref: o.Ref, Object: o.Object.DeepCopy(), Collision: o.Collision}
	out.Ref.Namespace = t.namespace
	out.Object.SetNamespace(out.Ref.Namespace)
	return out
}

// clusterScoped asks the target's API server; an unknown kind counts as
// namespaced and fails at apply with the server's message.
func (t *target) clusterScoped(ref extension.ObjectRef) bool {
	if t.mapper == nil {
		return false
	}
	m, err := t.mapper.RESTMapping(schema.GroupKind{Group: ref.Group, Kind: ref.Kind}, ref.Version)
	return err == nil && m.Scope.Name() == meta.RESTScopeNameRoot
}

// targetFor is the control-plane namespace of the management cluster.
func (e *Engine) targetFor(ctx context.Context, ns string, _ v1alpha1.PhaseClass) (*target, error) {
	if err := e.binder.Ensure(ctx, ns); err != nil {
		return nil, err
	}
	return &target{class: v1alpha1.PhaseClassControlPlane, client: e.client, mapper: e.mapper, namespace: ns}, nil
}

// phaseTarget is where phase runs: the control-plane namespace, or, for a
// hosted-cluster phase, the connector's report on it (an errWaiting until
// it has answered).
func (e *Engine) phaseTarget(ctx context.Context, cm *corev1.ConfigMap, release extension.Release, phase extension.PlannedPhase) (*target, error) {
	if phase.Class != v1alpha1.PhaseClassHostedCluster {
		return e.targetFor(ctx, cm.Namespace, phase.Class)
	}
	if err := e.binder.Ensure(ctx, cm.Namespace); err != nil {
		return nil, err
	}
	return e.remoteTarget(ctx, cm, release, phase)
}

// phaseNames are the names of the plan's phases.
func phaseNames(plan []extension.PlannedPhase) map[string]bool {
	out := map[string]bool{}
	for _, p := range plan {
		out[p.Name] = true
	}
	return out
}
