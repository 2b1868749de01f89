package agent

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// ReasonPaused is the release's reason while a paused release finds objects
// that are not as its revision wants (absent, not available): it leaves
// them so until the rollout is unpaused.
const ReasonPaused = "Paused"

// observePaused reports a paused release (Release.Paused), as Package
// Operator's paused ObjectSet "stops reconciliation, only reporting status":
// nothing is claimed, applied or deleted, and the connector is asked for
// nothing. Control-plane objects are read and probed as they are;
// hosted-cluster objects keep the state last reported for them (reading
// them would take the connector). The watches on applied objects stay, so a
// change of one is reported within seconds — and left as it is.
func (e *Engine) observePaused(ctx context.Context, cm *corev1.ConfigMap, release extension.Release, plan []extension.PlannedPhase, p progress) (reconcile.Result, error) {
	p.paused = true
	last := map[string]v1alpha1.ExtensionObjectState{}
	var before []v1alpha1.ExtensionObjectStatus
	if json.Unmarshal([]byte(cm.Data[extension.KeyObjects]), &before) == nil {
		for _, o := range before {
			last[objectKey(o)] = o.State
		}
	}
	notAvailable := 0
	index := 0
	for _, phase := range plan {
		var t *target
		if phase.Class != v1alpha1.PhaseClassHostedCluster {
			var err error
			if t, err = e.targetFor(ctx, cm.Namespace, phase.Class); err != nil {
				return reconcile.Result{}, err
			}
		}
		for _, o := range phase.Objects {
			st := &p.objects[index]
			index++
			if t == nil {
				if s, ok := last[objectKey(*st)]; ok && s != "" {
					st.State = s
				}
			} else {
				placed := t.place(o)
				st.Namespace = placed.Ref.Namespace
				st.State = observe(ctx, t.client, placed, release)
			}
			if st.State != v1alpha1.ObjectStateAvailable {
				notAvailable++
			}
		}
	}
	p.phase, p.object = "", ""
	switch {
	case notAvailable == 0 && cm.Data[extension.KeyObservedRevision] == fmt.Sprint(release.Revision):
		p.state, p.reason, p.message = v1alpha1.ExtensionStateAvailable, "", ""
	default:
		p.state, p.reason = v1alpha1.ExtensionStateProgressing, ReasonPaused
		p.message = fmt.Sprintf("the rollout is paused: %d objects of revision %d are not available, and nothing is applied or deleted until it is unpaused",
			notAvailable, release.Revision)
	}
	e.watchApplied(ctx, cm, release.UID, p.applied)
	return reconcile.Result{RequeueAfter: e.opts.Resync}, e.write(ctx, cm, p)
}

// observe is one control-plane object's state, read and never written:
// Pending when absent, Refused when it is not the extension's, else its
// probes' verdict.
func observe(ctx context.Context, c client.Reader, o extension.Object, release extension.Release) v1alpha1.ExtensionObjectState {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.Ref.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKey{Namespace: o.Ref.Namespace, Name: o.Ref.Name}, live)
	switch {
	case apierrors.IsNotFound(err):
		return v1alpha1.ObjectStatePending
	case err != nil:
		return v1alpha1.ObjectStateFailed
	case live.GetLabels()[extension.LabelExtensionUID] != release.UID:
		return v1alpha1.ObjectStateRefused
	case extension.Probe(release.AvailabilityProbes, live) != "":
		return v1alpha1.ObjectStateUnavailable
	}
	return v1alpha1.ObjectStateAvailable
}

func objectKey(o v1alpha1.ExtensionObjectStatus) string {
	return o.Phase + "/" + o.Group + "/" + o.Kind + "/" + o.Name
}
