package importer

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// TestManagedClusterUpToDate: the import applies the ManagedCluster only
// when the apply would change something: a value differs or is missing, or
// a label it applied before must be released.
func TestManagedClusterUpToDate(t *testing.T) {
	hcd := &v1alpha1.HostedClusterDeployment{}
	hcd.Namespace, hcd.Name = "team-a", "c1"
	desired := DesiredManagedCluster(hcd, hcd.Name, "cluster-1", map[string]string{"team": "blue"})
	applied := func(labels ...string) []metav1.ManagedFieldsEntry {
		raw := `{"f:metadata":{"f:labels":{`
		for i, l := range labels {
			if i > 0 {
				raw += ","
			}
			raw += `"f:` + l + `":{}`
		}
		raw += `}}}`
		return []metav1.ManagedFieldsEntry{
			{Manager: "registration-controller", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:name":{}}}}`)}},
			{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)}},
		}
	}
	live := func() *clusterv1.ManagedCluster {
		return &clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "c1",
				// OCM's own label and annotation besides ours.
				Labels: map[string]string{"team": "blue", hosting.LabelHCDNamespace: "team-a", hosting.LabelHCDName: "c1", "name": "c1"},
				Annotations: map[string]string{AnnotationKlusterletDeployMode: "Hosted", AnnotationHostingClusterName: "cluster-1",
					AnnotationCreatedVia: CreatedViaHyperShift, "open-cluster-management.io/other": "x"},
				ManagedFields: applied("team", hosting.LabelHCDNamespace, hosting.LabelHCDName)},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
		}
	}
	if !ManagedClusterUpToDate(live(), desired) {
		t.Error("an up-to-date ManagedCluster is applied again")
	}
	for name, change := range map[string]func(mc *clusterv1.ManagedCluster){
		"label value differs":      func(mc *clusterv1.ManagedCluster) { mc.Labels["team"] = "red" },
		"label missing":            func(mc *clusterv1.ManagedCluster) { delete(mc.Labels, hosting.LabelHCDName) },
		"annotation differs":       func(mc *clusterv1.ManagedCluster) { mc.Annotations[AnnotationHostingClusterName] = "cluster-2" },
		"hubAcceptsClient false":   func(mc *clusterv1.ManagedCluster) { mc.Spec.HubAcceptsClient = false },
		"applied label to release": func(mc *clusterv1.ManagedCluster) { mc.ManagedFields = applied("team", "tier", hosting.LabelHCDName) },
		"managed fields unreadable": func(mc *clusterv1.ManagedCluster) {
			mc.ManagedFields[1].FieldsV1 = &metav1.FieldsV1{Raw: []byte("{")}
		},
	} {
		mc := live()
		change(mc)
		if ManagedClusterUpToDate(mc, desired) {
			t.Errorf("%s: not applied", name)
		}
	}
}
