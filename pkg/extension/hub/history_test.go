package hub

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

func template(data string) Template {
	return Template{Phases: []v1alpha1.ExtensionPhase{{Name: "p", Objects: []v1alpha1.ExtensionObject{
		{Object: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"v":"` + data + `"}}`)}}}}}}
}

func withTemplate(ext *v1alpha1.HostedClusterExtension, t Template) *v1alpha1.HostedClusterExtension {
	ext = ext.DeepCopy()
	ext.Spec.Phases, ext.Spec.AvailabilityProbes = t.Phases, t.AvailabilityProbes
	return ext
}

func revisions(numbers ...int64) []Revision {
	var out []Revision
	for _, n := range numbers {
		out = append(out, Revision{Number: n, Name: RevisionName("audit", n), Template: template(RevisionName("audit", n))})
	}
	return out
}

// TestPlanHistory: a new template makes a revision numbered with the
// generation; the same template keeps the newest; a rollback copies an
// older one into a new revision, then keeps it; archived revisions beyond
// the limit go oldest first, never one in use or the rollback's.
func TestPlanHistory(t *testing.T) {
	ext := withTemplate(testExtension(), template("new"))
	ext.Generation = 9
	history := revisions(2, 5, 7)

	plan := PlanHistory(ext, history, nil)
	if !plan.Create || plan.Current.Number != 9 || plan.Current.Name != "hcpfleet-extension-audit-9" || len(plan.Archived) != 3 || len(plan.Prune) != 0 {
		t.Fatalf("new template: %+v", plan)
	}
	same := withTemplate(ext, history[2].Template)
	if plan := PlanHistory(same, history, nil); plan.Create || plan.Current.Number != 7 || plan.Archived[0].Number != 5 {
		t.Fatalf("same template: %+v", plan)
	}

	ext.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	plan = PlanHistory(ext, history, map[int64]bool{2: true})
	if strings.Join(plan.Prune, ",") != "hcpfleet-extension-audit-5" || len(plan.Archived) != 2 || plan.Archived[0].Number != 7 || plan.Archived[1].Number != 2 {
		t.Fatalf("limit 1, revision 2 in use: %+v", plan)
	}
	ext.Spec.RevisionHistoryLimit = ptr.To[int32](0)
	if plan := PlanHistory(ext, history, nil); strings.Join(plan.Prune, ",") != "hcpfleet-extension-audit-2,hcpfleet-extension-audit-5,hcpfleet-extension-audit-7" {
		t.Fatalf("limit 0: %+v", plan.Prune)
	}

	ext.Spec.RollbackTo = &v1alpha1.ExtensionRollback{Revision: 2}
	plan = PlanHistory(ext, history, nil)
	if !plan.Create || plan.Current.Number != 9 || plan.RollbackOf != 2 || plan.Current.Template.Hash() != history[0].Template.Hash() {
		t.Fatalf("rollback: %+v", plan)
	}
	if len(plan.Prune) != 2 || plan.Prune[0] != "hcpfleet-extension-audit-5" {
		t.Fatalf("rollback's revision pruned: %v", plan.Prune)
	}
	// Rolled back: revision 9 has revision 2's template; nothing new.
	rolled := append(revisions(2, 5, 7), Revision{Number: 9, Name: RevisionName("audit", 9), Template: history[0].Template})
	ext.Generation = 10
	if plan := PlanHistory(ext, rolled, nil); plan.Create || plan.Current.Number != 9 {
		t.Fatalf("after the rollback: %+v", plan)
	}
	ext.Spec.RollbackTo.Revision = 4
	plan = PlanHistory(ext, rolled, nil)
	if plan.Problem == "" || !strings.Contains(plan.Problem, "revision 4 is not kept") || plan.Create {
		t.Fatalf("rollback to a revision not kept: %+v", plan)
	}
}

// TestControllerRevision: a revision is owned by its extension (garbage
// collected with it) and reads back as it was made.
func TestControllerRevision(t *testing.T) {
	ext := testExtension()
	cr, err := newControllerRevision(ext, 4, template("x"), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.OwnerReferences) != 1 || cr.OwnerReferences[0].UID != ext.UID || !*cr.OwnerReferences[0].Controller || cr.Revision != 4 ||
		cr.Annotations[AnnotationRollbackOf] != "2" || cr.Annotations[AnnotationTemplateHash] != template("x").Hash() {
		t.Fatalf("%+v", cr.ObjectMeta)
	}
	rev, err := revisionOf(cr)
	if err != nil || rev.Template.Hash() != template("x").Hash() || rev.Number != 4 {
		t.Fatalf("%+v %v", rev, err)
	}
}
