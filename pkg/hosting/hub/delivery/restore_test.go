package delivery

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

func workDelivering(uid string) *workv1.ManifestWork {
	hc := `{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"HostedCluster","metadata":{"name":"hc","labels":{"` + hosting.LabelHCDUID + `":"` + uid + `"}}}`
	ns := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"clusters"}}`
	return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: "w"}, Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{
		Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(ns)}}, {RawExtension: runtime.RawExtension{Raw: []byte(hc)}}}}}}
}

func TestUIDMismatch(t *testing.T) {
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hc", UID: "new"}}
	if got := WorkUID(workDelivering("old")); got != "old" {
		t.Errorf("WorkUID = %q, want old", got)
	}
	if p := uidMismatch(hcd, workDelivering("new")); p != nil {
		t.Errorf("its own work: %+v", p)
	}
	if p := uidMismatch(hcd, nil); p != nil {
		t.Errorf("no work: %+v", p)
	}
	if p := uidMismatch(hcd, workDelivering("")); p != nil {
		t.Errorf("an older hub's work without the label: %+v", p)
	}
	p := uidMismatch(hcd, workDelivering("old"))
	if p == nil || p.Reason != v1alpha1.ReasonUIDMismatch || !strings.Contains(p.Message, "UID old") {
		t.Errorf("another UID's work: %+v", p)
	}
	// Restored with the identity it was first delivered with: the work is
	// its own; one of another identity (created again since) is not, nor
	// is the work of its live UID.
	restored := hcd.DeepCopy()
	restored.Annotations = map[string]string{hcdstatus.AnnotationIdentityUID: "old"}
	if p := uidMismatch(restored, workDelivering("old")); p != nil {
		t.Errorf("restored with its identity: %+v", p)
	}
	if p := uidMismatch(restored, workDelivering("older")); p == nil || !strings.Contains(p.Message, "this one's is old") {
		t.Errorf("restored, another identity's work: %+v", p)
	}
	if p := uidMismatch(restored, workDelivering("new")); p == nil {
		t.Error("restored, a work of its live UID counts as its own")
	}
}

func TestIdentityMark(t *testing.T) {
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{UID: "live"}}
	if got := identityMark(hcd, false); got != "live" {
		t.Errorf("first delivery: %q, want its UID", got)
	}
	if got := identityMark(hcd, true); got != "" {
		t.Errorf("another identity runs there: %q, want none recorded", got)
	}
	restored := hcd.DeepCopy()
	restored.Annotations = map[string]string{hcdstatus.AnnotationIdentityUID: "earlier"}
	for _, mismatch := range []bool{false, true} {
		if got := identityMark(restored, mismatch); got != "earlier" {
			t.Errorf("recorded (mismatch %v): %q, want it kept", mismatch, got)
		}
	}
}

func TestReportedMismatch(t *testing.T) {
	scheme := testScheme()
	inv := &v1alpha1.HostedClusterInventory{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: v1alpha1.InventoryName},
		Status: v1alpha1.HostedClusterInventoryStatus{HostedClusters: []v1alpha1.InventoryHostedCluster{{Namespace: "clusters", Name: "hc",
			Deployment: &v1alpha1.InventoryDeployment{Namespace: "team", Name: "hc", UID: "old"}}}}}
	r := &Reconciler{client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(inv).Build()}
	ctx := context.Background()
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hc", UID: "new"}}
	if p, err := r.reportedMismatch(ctx, hcd, "cluster-1"); err != nil || p == nil || p.Reason != v1alpha1.ReasonUIDMismatch {
		t.Errorf("restored without its identity: %+v, %v", p, err)
	}
	hcd.Annotations = map[string]string{hcdstatus.AnnotationIdentityUID: "old"}
	if p, err := r.reportedMismatch(ctx, hcd, "cluster-1"); err != nil || p != nil {
		t.Errorf("restored with its identity: %+v, %v", p, err)
	}
	hcd.Annotations[hcdstatus.AnnotationIdentityUID] = "other"
	if p, err := r.reportedMismatch(ctx, hcd, "cluster-1"); err != nil || p == nil || strings.Contains(p.Message, "delivering once it is gone") {
		t.Errorf("another identity: %+v, %v", p, err)
	}
	// The earlier one's on its way out: held, and told so.
	inv.Status.HostedClusters[0].Deleting = true
	r = &Reconciler{client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(inv).Build()}
	if p, err := r.reportedMismatch(ctx, hcd, "cluster-1"); err != nil || p == nil || !strings.Contains(p.Message, "delivering once it is gone") {
		t.Errorf("another identity's, being deleted: %+v, %v", p, err)
	}
}

func TestMarked(t *testing.T) {
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{Finalizer},
		Labels:      map[string]string{hosting.LabelBackup: backupLabelValue},
		Annotations: map[string]string{hcdstatus.AnnotationBoundTo: "cluster-1"}}}
	if !marked(hcd, "cluster-1", "") {
		t.Error("fully marked HCD (no identity to record) is not marked")
	}
	if marked(hcd, "cluster-1", "uid") {
		t.Error("an HCD without its identity (delivered by an older hub) counts as marked")
	}
	withIdentity := hcd.DeepCopy()
	withIdentity.Annotations[hcdstatus.AnnotationIdentityUID] = "uid"
	if !marked(withIdentity, "cluster-1", "uid") {
		t.Error("fully marked HCD is not marked")
	}
	if marked(hcd, "cluster-2", "") {
		t.Error("marked for another cluster counts")
	}
	noLabel := hcd.DeepCopy()
	noLabel.Labels = nil
	if marked(noLabel, "cluster-1", "") {
		t.Error("an HCD without the backup label (delivered by an older hub) counts as marked")
	}
}
