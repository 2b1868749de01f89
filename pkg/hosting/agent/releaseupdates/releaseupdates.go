// Package releaseupdates is the agent feature that carries the updates
// HyperShift reports for each delivered HostedCluster
// (status.version.availableUpdates and conditionalUpdates, which the hosted
// cluster-version operator computes from the update service's graph) to the
// hub: it writes them, bounded, as the annotation
// hosting.AnnotationReleaseUpdates on the HostedCluster, which the hub reads
// back through the ManifestWork's status feedback into the
// HostedClusterDeployment's status.version (pkg/hosting/hub/delivery). Why
// an annotation: the work agent's JSONPath feedback returns scalars only,
// and the lists fit one JSON string; it costs the agent no grant on the hub
// and on the management cluster only the patch of HostedClusters it holds
// already for the OLM reports (docs/security.md).
//
// Level-triggered: every event of a delivered HostedCluster (from the
// manager's metadata-only cache) reads that one HostedCluster, uncached, and
// writes the annotation only when it differs; no update reported means no
// annotation, so hosted clusters without a channel cost no write at all.
package releaseupdates

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// FieldManager owns the annotation on HostedClusters.
const FieldManager = "hcp-fleet-release-updates"

// Feature is the release-updates report as an agent feature.
func Feature() agent.Feature {
	return agent.Feature{Name: "release-updates", Setup: setup}
}

func setup(mgr ctrl.Manager, _ *agent.Env) error {
	r := &reconciler{reader: mgr.GetAPIReader(), client: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).Named("release-updates").
		WatchesRawSource(agent.WatchMetadataWhenServed(mgr, hosting.HostedClusterGVK, delivered)).
		Complete(r)
}

// delivered enqueues a HostedCluster the hub delivered (it carries the hcd
// labels); the others are not the hub's to report on.
func delivered(o client.Object) []reconcile.Request {
	if ofHCD(o.GetLabels()) {
		return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
	}
	return nil
}

// ofHCD: the labels name a HostedClusterDeployment.
func ofHCD(labels map[string]string) bool {
	return labels[hosting.LabelHCDNamespace] != "" && labels[hosting.LabelHCDName] != ""
}

type reconciler struct {
	reader client.Reader // uncached: one HostedCluster in full
	client client.Client
}

// Reconcile writes one HostedCluster's report when it changed.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	hc := &unstructured.Unstructured{}
	hc.SetGroupVersionKind(hosting.HostedClusterGVK)
	if err := r.reader.Get(ctx, req.NamespacedName, hc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if hc.GetDeletionTimestamp() != nil || !ofHCD(hc.GetLabels()) {
		return reconcile.Result{}, nil
	}
	var want *string
	if report := hosting.ReleaseUpdatesOf(hc); !report.Empty() {
		v := report.Encode()
		want = &v
	}
	current, ok := hc.GetAnnotations()[hosting.AnnotationReleaseUpdates]
	if (want == nil && !ok) || (want != nil && ok && current == *want) {
		return reconcile.Result{}, nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations":     map[string]*string{hosting.AnnotationReleaseUpdates: want},
		"resourceVersion": hc.GetResourceVersion()}})
	// The resourceVersion makes it a compare-and-swap: the report speaks for
	// the status read; a newer one brings its own event.
	err := r.client.Patch(ctx, hc, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldManager))
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return reconcile.Result{Requeue: apierrors.IsConflict(err)}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("annotating HostedCluster %s: %w", req.NamespacedName, err)
	}
	return reconcile.Result{}, nil
}
