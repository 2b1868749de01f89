package operatorlimits

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// TestReadClusterVersion: the guest ClusterVersion's Upgradeable as it is;
// none set means nil (CVO sets it only while something blocks); no
// ClusterVersion served is said so, not taken for upgradeable.
func TestReadClusterVersion(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(clusterVersionGVK, meta.RESTScopeRoot)
	cv := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Available", "status": "True"},
		map[string]any{"type": "Upgradeable", "status": "False", "reason": "AdminAckRequired", "message": "ack it"},
	}}}}
	cv.SetGroupVersionKind(clusterVersionGVK)
	cv.SetName("version")
	guest := fake.NewClientBuilder().WithScheme(guestScheme).WithRESTMapper(mapper).WithObjects(cv).Build()
	r, err := ReadClusterVersion(context.Background(), guest, now)
	if err != nil {
		t.Fatal(err)
	}
	if r.NoClusterVersion || r.ClusterVersion == nil || *r.ClusterVersion != (olm.Upgradeable{Status: "False", Reason: "AdminAckRequired", Message: "ack it"}) || !r.ObservedAt.Equal(now) {
		t.Errorf("report %+v", r)
	}

	unstructured.RemoveNestedField(cv.Object, "status")
	guest = fake.NewClientBuilder().WithScheme(guestScheme).WithRESTMapper(mapper).WithObjects(cv).Build()
	if r, err := ReadClusterVersion(context.Background(), guest, now); err != nil || r.ClusterVersion != nil || r.NoClusterVersion {
		t.Errorf("without Upgradeable: %+v, %v", r, err)
	}

	noCV := fake.NewClientBuilder().WithScheme(guestScheme).WithRESTMapper(meta.NewDefaultRESTMapper(nil)).Build()
	if r, err := ReadClusterVersion(context.Background(), noCV, now); err != nil || !r.NoClusterVersion {
		t.Errorf("no ClusterVersion served: %+v, %v", r, err)
	}
}
