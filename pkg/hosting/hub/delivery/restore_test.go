package delivery

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

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
}

func TestMarked(t *testing.T) {
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{Finalizer},
		Labels:      map[string]string{hosting.LabelBackup: backupLabelValue},
		Annotations: map[string]string{hcdstatus.AnnotationBoundTo: "cluster-1"}}}
	if !marked(hcd, "cluster-1") {
		t.Error("fully marked HCD is not marked")
	}
	if marked(hcd, "cluster-2") {
		t.Error("marked for another cluster counts")
	}
	noLabel := hcd.DeepCopy()
	noLabel.Labels = nil
	if marked(noLabel, "cluster-1") {
		t.Error("an HCD without the backup label (delivered by an older hub) counts as marked")
	}
}
