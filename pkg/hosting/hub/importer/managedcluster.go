package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// DesiredManagedCluster is the ManagedCluster, as applied, for a hosted
// cluster on host: the HostedClusterDeployment's labels the policy copies
// (copied, see LabelPolicy.Filter) plus ours, and the annotations of a
// hosted-mode import. Labels it no longer carries leave the ManagedCluster
// at the next apply (server-side apply releases them).
func DesiredManagedCluster(hcd *v1alpha1.HostedClusterDeployment, name, host string, copied map[string]string) map[string]any {
	lbls := maps.Clone(copied)
	if lbls == nil {
		lbls = map[string]string{}
	}
	maps.Copy(lbls, ownLabels(hcd))
	return map[string]any{
		"apiVersion": clusterv1.GroupVersion.String(), "kind": "ManagedCluster",
		"metadata": map[string]any{
			"name": name, "labels": lbls,
			"annotations": map[string]string{
				AnnotationKlusterletDeployMode: "Hosted",
				AnnotationHostingClusterName:   host,
				AnnotationCreatedVia:           CreatedViaHyperShift,
			},
		},
		"spec": map[string]any{"hubAcceptsClient": true},
	}
}

// ManagedClusterUpToDate reports whether live already holds what applying
// desired (DesiredManagedCluster) would set, and the import holds no label
// there that desired no longer carries (which the apply would release).
// Pure.
func ManagedClusterUpToDate(live *clusterv1.ManagedCluster, desired map[string]any) bool {
	metadata, _ := desired["metadata"].(map[string]any)
	lbls, _ := metadata["labels"].(map[string]string)
	annotations, _ := metadata["annotations"].(map[string]string)
	spec, _ := desired["spec"].(map[string]any)
	if accepts, _ := spec["hubAcceptsClient"].(bool); accepts != live.Spec.HubAcceptsClient {
		return false
	}
	for k, v := range lbls {
		if got, ok := live.Labels[k]; !ok || got != v {
			return false
		}
	}
	for k, v := range annotations {
		if got, ok := live.Annotations[k]; !ok || got != v {
			return false
		}
	}
	owned, ok := appliedLabels(live)
	if !ok {
		return false
	}
	for _, k := range owned {
		if _, keep := lbls[k]; !keep {
			return false
		}
	}
	return true
}

// appliedLabels are the label keys the import's apply holds on obj, from
// its managed fields; ok is false when they cannot be read.
func appliedLabels(obj metav1.Object) (keys []string, ok bool) {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager != FieldManager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.Subresource != "" {
			continue
		}
		if mf.FieldsV1 == nil {
			return nil, false
		}
		var fields struct {
			Metadata struct {
				Labels map[string]json.RawMessage `json:"f:labels"`
			} `json:"f:metadata"`
		}
		if err := json.Unmarshal(mf.FieldsV1.Raw, &fields); err != nil {
			return nil, false
		}
		for k := range fields.Metadata.Labels {
			if key, isField := strings.CutPrefix(k, "f:"); isField {
				keys = append(keys, key)
			}
		}
		return keys, true
	}
	// Not applied by the import (yet): nothing to release.
	return nil, true
}

// applyManagedCluster applies hcd's ManagedCluster and returns it as
// applied.
func (r *Reconciler) applyManagedCluster(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, name, host string, copied map[string]string) (*clusterv1.ManagedCluster, error) {
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := apply(ctx, r.client, mc, DesiredManagedCluster(hcd, name, host, copied)); err != nil {
		return nil, fmt.Errorf("applying ManagedCluster %s: %w", name, err)
	}
	return mc, nil
}
