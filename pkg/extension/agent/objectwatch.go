package agent

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/objects"
)

// appliedWatches are the engine's watches of what it applied itself: the
// control-plane phases' objects, in the control-plane namespace (where the
// agent's grant is). Hosted-cluster objects are the connector's, which
// watches them in the hosted cluster and reports a change into its phase
// request, which the engine watches (watch.go).
type appliedWatches struct {
	*objects.Watches
	config *rest.Config // the management cluster, as the agent
}

func newAppliedWatches(cfg *rest.Config) *appliedWatches {
	return &appliedWatches{Watches: objects.NewWatches(), config: cfg}
}

// watchApplied makes the watches of release cm match its applied
// control-plane objects: one per resource, the ones no applied object
// needs stopped.
func (e *Engine) watchApplied(ctx context.Context, cm *corev1.ConfigMap, uid string, applied []extension.ObjectRef) {
	if e.watches == nil || uid == "" {
		return
	}
	want := map[string]objects.WatchSpec{}
	for _, r := range applied {
		if r.Class != v1alpha1.PhaseClassControlPlane {
			continue
		}
		m, err := e.mapper.RESTMapping(schema.GroupKind{Group: r.Group, Kind: r.Kind}, r.Version)
		if err != nil {
			continue // an unknown kind failed its apply already
		}
		want[uid+"|"+m.Resource.String()] = objects.WatchSpec{Config: e.watches.config, Resource: m.Resource, Namespace: cm.Namespace}
	}
	e.watches.Ensure(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}, uid, want)
}

// stopWatching ends the watches of a release whose teardown is done.
func (e *Engine) stopWatching(cm *corev1.ConfigMap) {
	if e.watches == nil {
		return
	}
	e.watches.Ensure(context.Background(), types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}, "", nil)
}
