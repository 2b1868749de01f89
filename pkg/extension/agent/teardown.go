package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/objects"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// teardown removes the release's objects in reverse phase order, each phase
// gone before the next, then lets the ConfigMap go. Only objects carrying
// this extension's UID are deleted. Hosted-cluster objects are left behind
// when the hosted cluster is going away (its API server with it) or its API
// server has not answered for GuestTeardownTimeout (reported as
// HostedClusterUnreachable meanwhile); a guest that answers is waited for,
// however long its objects take to go.
func (e *Engine) teardown(ctx context.Context, cm *corev1.ConfigMap, hc *hostedCluster, applied []extension.ObjectRef) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(cm, extension.Finalizer) {
		return reconcile.Result{}, nil
	}
	revision, _ := strconv.ParseInt(cm.Data[extension.KeyObservedRevision], 10, 64)
	// What the connector reported applied after the engine last recorded
	// (the request, written first, was the record), in the current phase
	// order, so that the teardown reverses it.
	var release extension.Release
	_ = json.Unmarshal([]byte(cm.Data[extension.KeyRelease]), &release)
	applied = extension.InPhaseOrder(e.withReported(ctx, cm, applied), release.Phases)
	p := progress{revision: revision, state: v1alpha1.ExtensionStateRemoving, applied: applied,
		unreachableSince: cm.Data[extension.KeyGuestUnreachableSince]}
	uid := cm.Labels[extension.LabelExtensionUID]
	for _, group := range extension.TeardownPhases(extension.Teardown(applied)) {
		p.phase = group[0].Phase
		guest := group[0].Class == v1alpha1.PhaseClassHostedCluster
		if guest && (hc.gone || hc.deleting) {
			p.applied = extension.Without(p.applied, group...)
			continue
		}
		if guest && e.unreachableTooLong(p.unreachableSince) {
			ctrl.LoggerFrom(ctx).Info("the hosted cluster's API server did not answer during the extension's teardown; its objects are left behind",
				"namespace", cm.Namespace, "release", cm.Name, "phase", p.phase, "since", p.unreachableSince)
			p.applied = extension.Without(p.applied, group...)
			continue
		}
		if group[0].Class == v1alpha1.PhaseClassControlPlane && (hc.gone || cm.Namespace == "") {
			p.applied = extension.Without(p.applied, group...)
			continue
		}
		gone, answered, err := e.deleteGroup(ctx, cm, uid, group, true)
		p.applied = extension.Without(p.applied, gone...)
		var waiting *errWaiting
		if guest && errors.As(err, &waiting) {
			// The connector has not reported on this request yet: the
			// guest's silence is neither ended nor started.
			p.reason, p.message = "", waiting.msg
			return reconcile.Result{RequeueAfter: connectorGrace}, e.write(ctx, cm, p)
		}
		if guest {
			switch {
			case answered:
				p.unreachableSince = ""
			case p.unreachableSince == "":
				p.unreachableSince = time.Now().UTC().Format(time.RFC3339)
			}
		}
		if err != nil || len(gone) < len(group) {
			p.reason, p.message = "", fmt.Sprintf("waiting for %d objects of phase %s to be deleted", len(group)-len(gone), p.phase)
			if guest && !answered {
				p.reason = extension.ReasonHostedClusterUnreachable
				p.message = fmt.Sprintf("the hosted cluster's API server does not answer (since %s); its objects are left behind after %s: %v",
					p.unreachableSince, e.opts.GuestTeardownTimeout, err)
			} else if err != nil {
				p.reason, p.message = extension.ReasonApplyFailed, "deleting: "+err.Error()
			}
			return reconcile.Result{RequeueAfter: e.opts.ProbeInterval}, e.write(ctx, cm, p)
		}
	}
	p.applied = nil
	if err := e.write(ctx, cm, p); err != nil {
		return reconcile.Result{}, err
	}
	e.stopWatching(cm)
	if err := e.forgetRequests(ctx, cm, nil); err != nil {
		return reconcile.Result{}, err
	}
	if err := kubeutil.RemoveFinalizer(ctx, e.client, cm, extension.Finalizer); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, e.releaseBindingIfLast(ctx, cm.Namespace)
}

// releaseBindingIfLast takes the hold off the engine's RoleBinding in ns once
// no release there keeps its finalizer. Reconciles run one at a time, so no
// release gains a finalizer between the list and the release.
func (e *Engine) releaseBindingIfLast(ctx context.Context, ns string) error {
	releases := &corev1.ConfigMapList{}
	if err := e.reader.List(ctx, releases, client.InNamespace(ns), client.MatchingLabels{extension.LabelRelease: "true"}); err != nil {
		return err
	}
	if len(heldReleases(releases.Items)) > 0 {
		return nil
	}
	// The connector goes while the engine still holds its grants here.
	if err := e.removeConnector(ctx, ns); err != nil {
		return err
	}
	return kubeutil.HoldBinding(ctx, e.client, ns, ClusterRole, extension.Finalizer, false)
}

// deleteGroup deletes the objects of one phase that carry the extension's
// UID (objects.Delete; in the hosted cluster the connector does, with the
// same code) and returns those gone: deleted, absent, or not the
// extension's (then dropped from the record, never deleted: collision
// protection). answered: the target's API server answered, so a failure is
// not the guest being unreachable.
func (e *Engine) deleteGroup(ctx context.Context, cm *corev1.ConfigMap, uid string, group []extension.ObjectRef, teardown bool) (gone []extension.ObjectRef, answered bool, err error) {
	if group[0].Class == v1alpha1.PhaseClassHostedCluster {
		return e.remoteDelete(ctx, cm, group, teardown)
	}
	t, err := e.targetFor(ctx, cm.Namespace, group[0].Class)
	if err != nil {
		return nil, false, err
	}
	var errs []error
	for _, ref := range group {
		g, a, err := objects.Delete(ctx, t.client, ref, uid)
		answered = answered || a
		if g {
			gone = append(gone, ref)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return gone, answered, errors.Join(errs...)
}
