package delivery

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// What the delivery does for a binding that survives a backup restore
// (docs/operations.md). A restore brings HostedClusterDeployments back
// without status and with new UIDs; the scheduler recovers the binding
// from the ManifestWork (scheduling/recover.go). The delivery:
//
//   - marks every HostedClusterDeployment it delivers, in the same write as
//     its finalizer, with where it is bound (hcdstatus.AnnotationBoundTo:
//     metadata is restored, status is not) and ACM's backup label
//     (hosting.LabelBackup), so the scheduler knows it was bound and ACM
//     backs it up;
//   - records, in the same write, the UID it first delivered it with
//     (hcdstatus.AnnotationIdentityUID), which names the copies, the host
//     field manager, hosting.LabelHCDUID and the derived infraID
//     (hcdstatus.IdentityUID). A restored HostedClusterDeployment carries
//     it, so it names everything as before: the delivery takes the
//     ManifestWork back and keeps delivering, nothing on the host renamed;
//   - never rewrites a ManifestWork that delivers another identity (a
//     HostedClusterDeployment backed up by a hub that did not record it,
//     or deleted and created again between backup and restore): a rewrite
//     would have the work agent delete the copies the running hosted
//     cluster uses and conflict on the rest. It reports UIDMismatch,
//     records no identity, and leaves the hosted cluster running as it is.

// backupLabelValue is the value of hosting.LabelBackup on what the hub
// labels (ACM selects on the key).
const backupLabelValue = "hcp-fleet"

// marked says whether hcd carries the finalizer and the marks the delivery
// puts on it with the finalizer, for cluster, identity among them (see
// identityMark).
func marked(hcd *v1alpha1.HostedClusterDeployment, cluster, identity string) bool {
	_, backup := hcd.Labels[hosting.LabelBackup]
	_, recorded := hcd.Annotations[hcdstatus.AnnotationIdentityUID]
	return controllerutil.ContainsFinalizer(hcd, Finalizer) && backup && hcd.Annotations[hcdstatus.AnnotationBoundTo] == cluster &&
		(identity == "" || recorded)
}

// identityMark is the hcdstatus.AnnotationIdentityUID value mark applies:
// the one hcd carries, never changed (a restore brought it back, or an
// earlier delivery wrote it; leaving it out of the apply would remove it);
// else, when what the management cluster holds is hcd's (mismatch is
// false), hcd's UID, at its first delivery; else none: a HostedCluster of
// another identity runs there, and the UID it carries is not for the hub
// to give this object. Pure.
func identityMark(hcd *v1alpha1.HostedClusterDeployment, mismatch bool) string {
	if v, ok := hcd.Annotations[hcdstatus.AnnotationIdentityUID]; ok {
		return v
	}
	if mismatch {
		return ""
	}
	return string(hcd.UID)
}

// mark server-side applies the finalizer, hcdstatus.AnnotationBoundTo,
// hcdstatus.AnnotationIdentityUID (identity, when not "") and the backup
// label (metadata.finalizers is a set and labels and annotations are maps:
// the others' stay) with hcd's UID, which the API server refuses
// to change: so it lands on this HostedClusterDeployment or nowhere, and,
// unlike a patch carrying the resourceVersion, it is not refused when
// another controller wrote the object meanwhile (the import writes its
// status as the binding lands). Forced: the annotation is the hub's, even
// where a tenant wrote it first. hcd's metadata and resourceVersion are
// updated from the response. A typed Update would drop spec fields our Go
// types do not know.
func (r *Reconciler) mark(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, cluster, identity string) error {
	if marked(hcd, cluster, identity) {
		return nil
	}
	annotations := map[string]string{hcdstatus.AnnotationBoundTo: cluster}
	if identity != "" {
		annotations[hcdstatus.AnnotationIdentityUID] = identity
	}
	gvk := v1alpha1.GroupVersion.WithKind("HostedClusterDeployment")
	data, err := json.Marshal(map[string]any{
		"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind,
		"metadata": map[string]any{"name": hcd.Name, "namespace": hcd.Namespace, "uid": hcd.UID, "finalizers": []string{Finalizer},
			"labels":      map[string]string{hosting.LabelBackup: backupLabelValue},
			"annotations": annotations},
	})
	if err != nil {
		return err
	}
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(gvk)
	target.SetNamespace(hcd.Namespace)
	target.SetName(hcd.Name)
	if err := r.client.Patch(ctx, target, client.RawPatch(types.ApplyPatchType, data), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("adding the finalizer %s: %w", Finalizer, err)
	}
	hcd.SetFinalizers(target.GetFinalizers())
	hcd.SetLabels(target.GetLabels())
	hcd.SetAnnotations(target.GetAnnotations())
	hcd.SetResourceVersion(target.GetResourceVersion())
	return nil
}

// WorkUID is the UID of the HostedClusterDeployment whose objects work
// delivers (hosting.LabelHCDUID on its HostedCluster manifest), or "" when
// it does not say (an older hub's).
func WorkUID(work *workv1.ManifestWork) types.UID {
	if work == nil {
		return ""
	}
	for _, m := range work.Spec.Workload.Manifests {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if json.Unmarshal(m.Raw, &obj) != nil || obj.Kind != "HostedCluster" {
			continue
		}
		return types.UID(obj.Metadata.Labels[hosting.LabelHCDUID])
	}
	return ""
}

// uidMismatch is the problem of a HostedClusterDeployment whose ManifestWork
// delivers another identity of its namespace and name (another
// hcdstatus.IdentityUID), or nil.
func uidMismatch(hcd *v1alpha1.HostedClusterDeployment, work *workv1.ManifestWork) *Problem {
	uid, own := WorkUID(work), hcdstatus.IdentityUID(hcd)
	if uid == "" || uid == own {
		return nil
	}
	return &Problem{Reason: v1alpha1.ReasonUIDMismatch, Message: fmt.Sprintf(
		"ManifestWork %s/%s delivers the HostedCluster of an earlier HostedClusterDeployment %s/%s (UID %s; this one's is %s, as after a backup restore of a deployment "+
			"that carried no %s or was created again since): it is left unchanged, so the hosted cluster keeps running as it is and nothing on management cluster %s is renamed or deleted; "+
			"the hub does not take it over on its own (docs/operations.md, \"Backup and restore\")",
		work.Namespace, work.Name, hcd.Namespace, hcd.Name, uid, own, hcdstatus.AnnotationIdentityUID, work.Namespace)}
}
