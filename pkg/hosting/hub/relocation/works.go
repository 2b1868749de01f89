package relocation

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// The ManifestWorks a relocation writes, next to the delivery's
// hcd-<namespace>.<name> (pkg/hosting/hub/delivery):
//
//   - on the source, a pause work holding only spec.pausedUntil of the
//     delivered HostedCluster, applied under FieldManager (the delivery's
//     fields stay the delivery's; tenants cannot set pausedUntil, so the
//     two never hold the same field), orphaned when deleted: removing it
//     must never remove the HostedCluster. Resuming applies "false" first,
//     so the field is not left behind by the orphaning delete;
//   - on the destination, the delivery's ManifestWork copied under its own
//     name, restoring from the snapshot with the source's clusterID. Same
//     name, same field manager: after the switch the delivery takes it over
//     as its own, and a hub restored from a backup mid-move finds the HCD's
//     ManifestWork in two namespaces and decides nothing (BindingAmbiguous).
//
// Both read back what Next needs (relocationFeedback).

// FieldManager is the field manager the work agent applies the pause under
// (OCM requires the work-agent prefix).
const FieldManager = "work-agent-hcp-fleet-relocation"

// AnnotationEtcdSnapshotURL is the annotation HyperShift's OADP plugin
// carries the etcd snapshot's URL in, on the HostedCluster.
const AnnotationEtcdSnapshotURL = "hypershift.openshift.io/etcd-snapshot-url"

// Feedback names of the relocation's own rules.
const (
	fbReconciliationActive     = "relocation-reconciliation-active"
	fbReconciliationReason     = "relocation-reconciliation-reason"
	fbReconciliationGeneration = "relocation-reconciliation-generation"
	fbGeneration               = "relocation-generation"
	fbSnapshotURL              = "relocation-snapshot-url"
	fbInfraID                  = "relocation-infra-id"
	fbClusterID                = "relocation-cluster-id"
	fbAvailable                = "relocation-available"
)

// relocationFeedback is what a relocation reads back from a HostedCluster.
var relocationFeedback = []workv1.JsonPath{
	{Name: fbReconciliationActive, Path: `.status.conditions[?(@.type=="ReconciliationActive")].status`},
	{Name: fbReconciliationReason, Path: `.status.conditions[?(@.type=="ReconciliationActive")].reason`},
	{Name: fbReconciliationGeneration, Path: `.status.conditions[?(@.type=="ReconciliationActive")].observedGeneration`},
	{Name: fbGeneration, Path: ".metadata.generation"},
	{Name: fbSnapshotURL, Path: `.metadata.annotations.hypershift\.openshift\.io/etcd-snapshot-url`},
	{Name: fbInfraID, Path: ".spec.infraID"},
	{Name: fbClusterID, Path: ".spec.clusterID"},
	{Name: fbAvailable, Path: `.status.conditions[?(@.type=="Available")].status`},
}

// PauseWorkName names the pause work of HostedClusterDeployment
// namespace/name, in the source's cluster namespace.
func PauseWorkName(namespace, name string) string {
	return hosting.RelocationPauseWorkName(namespace, name)
}

// backupLabelValue is the value of hosting.LabelBackup on the pause work,
// as on the delivery's ManifestWorks (ACM selects on the key).
const backupLabelValue = "hcp-fleet"

// PauseWork pauses (paused) or resumes the HostedCluster
// hostingNamespace/hcName delivered for HostedClusterDeployment
// namespace/name on cluster, whose agent runs in agentNamespace (where
// the work's executor lives). Pure.
func PauseWork(cluster, agentNamespace, namespace, name, hostingNamespace, hcName string, paused bool) (*workv1.ManifestWork, error) {
	hc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
		"metadata": map[string]any{"name": hcName, "namespace": hostingNamespace},
		"spec":     map[string]any{"pausedUntil": strconv.FormatBool(paused)},
	}}
	raw, err := json.Marshal(hc)
	if err != nil {
		return nil, err
	}
	return &workv1.ManifestWork{
		TypeMeta: metav1.TypeMeta{APIVersion: workv1.GroupVersion.String(), Kind: "ManifestWork"},
		ObjectMeta: metav1.ObjectMeta{Name: PauseWorkName(namespace, name), Namespace: cluster,
			// Backed up with the delivery's ManifestWork: a hub restored
			// from a backup taken mid-move finds the paused source by it
			// and resumes it (leftovers.go); without it the source would
			// stay paused with nothing on the hub to say so.
			Labels: map[string]string{hosting.LabelHCDNamespace: namespace, hosting.LabelHCDName: name, hosting.LabelBackup: backupLabelValue}},
		Spec: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtimeRaw(raw)}}},
			// Applied as the relocation executor, which may only write
			// HostedClusters (docs/security.md, "ManifestWork executors").
			Executor:     addon.WorkExecutor(agentNamespace, addon.ExecutorRelocation),
			DeleteOption: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan},
			ManifestConfigs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Group: "hypershift.openshift.io", Resource: "hostedclusters", Namespace: hostingNamespace, Name: hcName},
				UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply,
					ServerSideApply: &workv1.ServerSideApplyConfig{FieldManager: FieldManager}},
				FeedbackRules: []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: relocationFeedback}},
			}},
		},
	}, nil
}

// DestinationWork is the delivery's ManifestWork source, moved to
// destination, whose agent runs in agentNamespace: its HostedCluster
// restores snapshotURL and carries clusterID, it is applied as the
// destination's delivery executor, and it reads back what a relocation
// needs. It is marked as a copy of the source
// (hosting.AnnotationRelocationCopy), so that a hub restored from a backup
// taken before the switch binds the source, not this, and removes it. Pure.
func DestinationWork(source *workv1.ManifestWork, destination, agentNamespace, snapshotURL, clusterID string) (*workv1.ManifestWork, error) {
	annotations := maps.Clone(source.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[hosting.AnnotationRelocationCopy] = source.Namespace
	work := &workv1.ManifestWork{
		TypeMeta:   metav1.TypeMeta{APIVersion: workv1.GroupVersion.String(), Kind: "ManifestWork"},
		ObjectMeta: metav1.ObjectMeta{Name: source.Name, Namespace: destination, Labels: maps.Clone(source.Labels), Annotations: annotations},
		Spec:       *source.Spec.DeepCopy(),
	}
	work.Spec.Executor = addon.WorkExecutor(agentNamespace, addon.ExecutorDelivery)
	found := false
	for i, m := range work.Spec.Workload.Manifests {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(m.Raw); err != nil {
			return nil, fmt.Errorf("manifest %d of ManifestWork %s/%s: %w", i, source.Namespace, source.Name, err)
		}
		if obj.GetKind() != "HostedCluster" {
			continue
		}
		found = true
		unstructured.RemoveNestedField(obj.Object, "spec", "pausedUntil")
		if err := unstructured.SetNestedStringSlice(obj.Object, []string{snapshotURL}, "spec", "etcd", "managed", "storage", "restoreSnapshotURL"); err != nil {
			return nil, err
		}
		if clusterID != "" {
			if err := unstructured.SetNestedField(obj.Object, clusterID, "spec", "clusterID"); err != nil {
				return nil, err
			}
		}
		raw, err := obj.MarshalJSON()
		if err != nil {
			return nil, err
		}
		work.Spec.Workload.Manifests[i] = workv1.Manifest{RawExtension: runtimeRaw(raw)}
		for j, c := range work.Spec.ManifestConfigs {
			if c.ResourceIdentifier.Resource == "hostedclusters" && c.ResourceIdentifier.Name == obj.GetName() {
				work.Spec.ManifestConfigs[j].FeedbackRules = append(work.Spec.ManifestConfigs[j].FeedbackRules,
					workv1.FeedbackRule{Type: workv1.JSONPathsType, JsonPaths: relocationFeedback})
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("ManifestWork %s/%s delivers no HostedCluster", source.Namespace, source.Name)
	}
	return work, nil
}

// HostedClusterFacts are what a relocation reads back from one side.
type HostedClusterFacts struct {
	// Paused: ReconciliationActive=False, reason ReconciliationPaused, at
	// the HostedCluster's current generation.
	Paused bool
	// Running: ReconciliationActive=True at the current generation (a
	// resumed source).
	Running     bool
	SnapshotURL string
	Identity    Identity
	Available   bool
}

// Observe reads HostedClusterFacts from a ManifestWork's feedback. Pure.
func Observe(work *workv1.ManifestWork) HostedClusterFacts {
	v := map[string]workv1.FieldValue{}
	for _, m := range work.Status.ResourceStatus.Manifests {
		if m.ResourceMeta.Resource != "hostedclusters" {
			continue
		}
		for _, f := range m.StatusFeedbacks.Values {
			v[f.Name] = f.Value
		}
	}
	str := func(name string) string {
		f := v[name]
		switch {
		case f.String != nil:
			return *f.String
		case f.Integer != nil:
			return strconv.FormatInt(*f.Integer, 10)
		case f.Boolean != nil:
			return strconv.FormatBool(*f.Boolean)
		}
		return ""
	}
	current := str(fbGeneration) != "" && str(fbReconciliationGeneration) == str(fbGeneration)
	return HostedClusterFacts{
		Paused:      current && str(fbReconciliationActive) == "False" && str(fbReconciliationReason) == "ReconciliationPaused",
		Running:     current && str(fbReconciliationActive) == "True",
		SnapshotURL: str(fbSnapshotURL),
		Identity:    Identity{InfraID: str(fbInfraID), ClusterID: str(fbClusterID)},
		Available:   str(fbAvailable) == "True",
	}
}

func runtimeRaw(raw []byte) runtime.RawExtension { return runtime.RawExtension{Raw: raw} }

// AnnotationCleanupCloudResources is HyperShift's annotation on a
// HostedCluster that says whether deleting it destroys its cloud resources
// (load balancers, DNS records, storage); "false" keeps them, for the other
// side of a move that uses them.
const AnnotationCleanupCloudResources = "hypershift.openshift.io/cleanup-cloud-resources"

// MarkKeepCloud returns work with its HostedCluster annotated
// cleanup-cloud-resources "false" and a delete option that deletes what it
// delivered but the hosting namespace (other hosted clusters may share it),
// whatever the HostedClusterDeployment's deletionPolicy (a moved hosted
// cluster runs on elsewhere: the copy left behind must go), and whether
// that changed anything. Pure.
func MarkKeepCloud(work *workv1.ManifestWork, hostingNamespace string) (*workv1.ManifestWork, bool, error) {
	out := work.DeepCopy()
	changed := false
	for i, m := range out.Spec.Workload.Manifests {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(m.Raw); err != nil {
			return nil, false, fmt.Errorf("manifest %d of ManifestWork %s/%s: %w", i, work.Namespace, work.Name, err)
		}
		if obj.GetKind() != "HostedCluster" || obj.GetAnnotations()[AnnotationCleanupCloudResources] == "false" {
			continue
		}
		annotations := obj.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[AnnotationCleanupCloudResources] = "false"
		obj.SetAnnotations(annotations)
		raw, err := obj.MarshalJSON()
		if err != nil {
			return nil, false, err
		}
		out.Spec.Workload.Manifests[i] = workv1.Manifest{RawExtension: runtimeRaw(raw)}
		changed = true
	}
	keepNamespace := &workv1.DeleteOption{
		PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
		SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{{Resource: "namespaces", Name: hostingNamespace}}},
	}
	if d := out.Spec.DeleteOption; d == nil || d.PropagationPolicy != workv1.DeletePropagationPolicyTypeSelectivelyOrphan {
		out.Spec.DeleteOption = keepNamespace
		changed = true
	}
	return out, changed, nil
}
