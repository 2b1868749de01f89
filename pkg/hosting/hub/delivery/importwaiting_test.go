package delivery

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/importer"
)

// TestComputeStatusImportWaiting: the delivery's status carries the import's
// Imported=False WaitingForAvailable from the binding until the import writes
// its next state, and never over a state of the import's, an import already
// started or a deletion.
func TestComputeStatusImportWaiting(t *testing.T) {
	importCond := func(reason string) *metav1.Condition {
		return &metav1.Condition{Type: v1alpha1.ConditionImported, Status: metav1.ConditionFalse, Reason: reason, Message: "the import's"}
	}
	notAvailable := appliedWork(map[string]string{fbAvailable: "False", fbAvailableReason: "WaitingForAvailable"}, nil)
	available := appliedWork(map[string]string{fbAvailable: "True"}, nil)
	down := upHost
	down.Available = false
	tests := []struct {
		name    string
		o       Observed
		carries bool
	}{
		{"bound, ManifestWork not yet written", Observed{Host: upHost}, true},
		{"bound, hosted cluster not available", Observed{Work: notAvailable, Host: upHost}, true},
		{"the delivery's own WaitingForAvailable, still not available", Observed{Work: notAvailable, Host: upHost, Imported: importCond(v1alpha1.ReasonWaitingForAvailable)}, true},
		{"an older hub's import wrote WaitingForAvailable", Observed{Host: upHost, Imported: &metav1.Condition{Type: v1alpha1.ConditionImported, Status: metav1.ConditionFalse,
			Reason: v1alpha1.ReasonWaitingForAvailable, Message: "waiting for the hosted cluster to be scheduled and available"}}, true},
		// Kept until the import writes its next state: dropped now, the
		// condition would go until then.
		{"available, the import not started yet", Observed{Work: available, Host: upHost, Imported: importCond(v1alpha1.ReasonWaitingForAvailable)}, true},
		{"available, the import's finalizer is on, its status not written yet", Observed{Work: available, Host: upHost, ImportStarted: true,
			Imported: importCond(v1alpha1.ReasonWaitingForAvailable)}, true},
		{"available on a host that stopped reporting: last reported, not available", Observed{Work: available, Host: down}, true},
		{"available, no Imported condition: the import writes its own", Observed{Work: available, Host: upHost}, false},
		{"the import started", Observed{Work: notAvailable, Host: upHost, ImportStarted: true}, false},
		{"the import waits for the kubeconfig", Observed{Work: notAvailable, Host: upHost, ImportStarted: true, Imported: importCond(v1alpha1.ReasonWaitingForKubeconfig)}, false},
		{"imported, then the hosted cluster became unavailable", Observed{Work: notAvailable, Host: upHost, ImportStarted: true,
			Imported: &metav1.Condition{Type: v1alpha1.ConditionImported, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonImported}}, false},
		{"the import was refused", Observed{Work: notAvailable, Host: upHost, Imported: importCond(v1alpha1.ReasonImportFailed)}, false},
		{"deleting", Observed{Work: notAvailable, Host: upHost, Deleting: true, DeletionReason: v1alpha1.ReasonDeleting, DeletionMessage: "deleting",
			Imported: importCond(v1alpha1.ReasonWaitingForAvailable)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Generation = 4
			got := meta.FindStatusCondition(ComputeStatus(tt.o).Conditions, v1alpha1.ConditionImported)
			if !tt.carries {
				if got != nil {
					t.Errorf("carries Imported %+v", got)
				}
				return
			}
			want := hcdstatus.WaitingForAvailable("cluster-1")
			want.ObservedGeneration = 4
			if got == nil || *got != want {
				t.Errorf("Imported %+v, want %+v", got, want)
			}
		})
	}
}

// TestImportWritesNothingWhileWaiting: the condition the delivery writes is
// the one the import would write, to the field (status, reason, message,
// observedGeneration), so the import finds nothing to change.
func TestImportWritesNothingWhileWaiting(t *testing.T) {
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "hcd-ns", Generation: 3, ResourceVersion: "41"}}
	hcd.Status.HostingCluster = "cluster-1"
	then := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	apply, conds, changed := statusApply(hcd, ComputeStatus(Observed{Generation: 3, Host: upHost}), then)
	if !changed {
		t.Fatal("nothing to write over an empty status")
	}
	if got := meta.FindStatusCondition(conds, v1alpha1.ConditionImported); got == nil || got.Reason != v1alpha1.ReasonWaitingForAvailable {
		t.Fatalf("Imported %+v, want WaitingForAvailable", got)
	}
	// Carrying the import's state, the apply is a compare-and-swap on the
	// copy it was decided on.
	if rv := apply.ResourceVersion; rv == nil || *rv != "41" {
		t.Errorf("apply resourceVersion %v, want 41", rv)
	}
	hcd.Status.Conditions = conds
	if _, changed := hcdstatus.Conditions(hcd.Status.Conditions, []metav1.Condition{hcdstatus.WaitingForAvailable(hcd.Status.HostingCluster)}, hcd.Generation, metav1.Now()); changed {
		t.Error("the import would write Imported again")
	}

	// Once the import wrote its next state, the delivery leaves Imported out
	// of its applies (the import's field manager holds it), and applies
	// without a resourceVersion.
	hcd.Finalizers = []string{importer.Finalizer}
	meta.SetStatusCondition(&hcd.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionImported, Status: metav1.ConditionFalse,
		Reason: v1alpha1.ReasonWaitingForKubeconfig, Message: "the import's", ObservedGeneration: 3})
	observed := Observed{Generation: 3, Host: upHost}
	observed.ImportStarted, observed.Imported = importOf(hcd)
	apply, conds, _ = statusApply(hcd, ComputeStatus(observed), metav1.Now())
	if got := meta.FindStatusCondition(conds, v1alpha1.ConditionImported); got != nil {
		t.Errorf("the delivery applies Imported %+v over the import's", got)
	}
	if apply.ResourceVersion != nil {
		t.Errorf("apply resourceVersion %s without the import's state", *apply.ResourceVersion)
	}
}
