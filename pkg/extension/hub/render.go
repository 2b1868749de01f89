// Package hub rolls HostedClusterExtensions out over the fleet: for each
// selected HostedClusterDeployment whose hosted cluster is available, one
// ManifestWork to its management cluster carrying the extension's release
// into the hosted control-plane namespace, under the extension's rollout
// strategy, and the agent's progress read back into the extension's status.
//
// One ManifestWork per (extension, hosted cluster), not a part of the
// hosted cluster's own ManifestWork: an extension changes on its own
// schedule (a rolling rollout rewrites one hosted cluster's work at a time
// without touching the HostedCluster's delivery and its input hash), it is
// removed on its own (extension deleted, hosted cluster unselected) with its
// own teardown, it is delivered only once the hosted cluster is available
// (its control-plane namespace exists), and its size stays out of the
// HostedCluster's work.
package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// FieldManager is the hub's field manager for HostedClusterExtension status.
const FieldManager = "hcp-fleet-extension-rollout"

// HostFieldManager is the work agent's field manager for the release
// ConfigMap on the management cluster (OCM requires the "work-agent"
// prefix).
const HostFieldManager = "work-agent-hcp-fleet-extension"

// AnnotationRevision on a ManifestWork is the extension revision it carries.
const AnnotationRevision = "hcpfleet.io/extension-revision"

// AnnotationRenderHash on a ManifestWork is the hash of the spec rendered:
// the API server defaults fields of a stored ManifestWork, so comparing
// specs would rewrite the work on every reconcile.
const AnnotationRenderHash = "hcpfleet.io/extension-render-hash"

// Target is a HostedClusterDeployment an extension goes to.
type Target struct {
	// Name is the HostedClusterDeployment's name (in the extension's
	// namespace).
	Name string
	// HostingCluster is its management cluster.
	HostingCluster string
	// ControlPlaneNamespace is its hosted control-plane namespace there.
	ControlPlaneNamespace string
	// AgentNamespace is the agent's install namespace there, where the
	// work's executor lives ("": addon.DefaultInstallNamespace).
	AgentNamespace string
}

// Render is the ManifestWork carrying revision rev of ext to target, paused
// when ext's rollout is. Pure.
func Render(ext *v1alpha1.HostedClusterExtension, rev Revision, target Target) (*workv1.ManifestWork, error) {
	release := extension.Release{
		Extension: ext.Namespace + "/" + ext.Name, UID: string(ext.UID),
		HostedCluster: ext.Namespace + "/" + target.Name, Revision: rev.Number,
		Phases: rev.Template.Phases, AvailabilityProbes: rev.Template.AvailabilityProbes,
		Paused: ext.Spec.Strategy.Paused,
	}
	data, err := json.Marshal(release)
	if err != nil {
		return nil, err
	}
	labels := workLabels(ext.Namespace, ext.Name, target.Name)
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: extension.ReleaseName(ext.Name), Namespace: target.ControlPlaneNamespace,
			Labels: map[string]string{extension.LabelRelease: "true", extension.LabelExtension: ext.Name,
				extension.LabelExtensionUID: string(ext.UID), hosting.LabelHCDNamespace: ext.Namespace, hosting.LabelHCDName: target.Name}},
		Data: map[string]string{extension.KeyRelease: string(data)},
	}
	raw, err := json.Marshal(cm)
	if err != nil {
		return nil, err
	}
	var paths []workv1.JsonPath
	for _, key := range []string{extension.KeyObservedRevision, extension.KeyState, extension.KeyPhase, extension.KeyReason,
		extension.KeyMessage, extension.KeyFailedObject, extension.KeyObjects, extension.KeyPaused} {
		paths = append(paths, workv1.JsonPath{Name: key, Path: ".data." + key})
	}
	w := &workv1.ManifestWork{
		TypeMeta: metav1.TypeMeta{APIVersion: workv1.GroupVersion.String(), Kind: "ManifestWork"},
		ObjectMeta: metav1.ObjectMeta{Name: extension.WorkName(ext.Namespace, ext.Name, target.Name), Namespace: target.HostingCluster,
			Labels: labels, Annotations: map[string]string{AnnotationRevision: strconv.FormatInt(rev.Number, 10)}},
		Spec: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
			// Applied as the extension executor, which may only write
			// ConfigMaps (docs/security.md, "ManifestWork executors").
			Executor: addon.WorkExecutor(target.AgentNamespace, addon.ExecutorExtension),
			// Foreground (the default): the work goes once the release
			// ConfigMap is gone, which the agent lets go after the teardown.
			ManifestConfigs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: cm.Namespace, Name: cm.Name},
				// Server-side apply without force: the agent's status keys
				// are its own fields and stay when the release changes.
				UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply,
					ServerSideApply: &workv1.ServerSideApplyConfig{FieldManager: HostFieldManager}},
				FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: paths}},
				FeedbackScrapeType: workv1.FeedbackWatchType,
			}},
		},
	}
	spec, err := json.Marshal(w.Spec)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(spec)
	w.Annotations[AnnotationRenderHash] = hex.EncodeToString(sum[:16])
	return w, nil
}

// workLabels tie a ManifestWork to its extension and hosted cluster; the
// hub caches ManifestWorks with hosting.LabelHCDName only.
func workLabels(namespace, extensionName, hcd string) map[string]string {
	return map[string]string{extension.LabelExtension: extensionName, hosting.LabelHCDNamespace: namespace, hosting.LabelHCDName: hcd}
}

// Delivered is the revision a ManifestWork carries (0 when unknown).
func Delivered(w *workv1.ManifestWork) int64 {
	if w == nil {
		return 0
	}
	n, _ := strconv.ParseInt(w.Annotations[AnnotationRevision], 10, 64)
	return n
}
