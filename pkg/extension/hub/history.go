package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// Revision history, as Package Operator keeps ObjectSets under an
// ObjectDeployment: each set of phases and probes rolled out is a revision,
// kept on the hub as an apps/v1 ControllerRevision (the Kubernetes
// convention for a controller's history, as StatefulSets and DaemonSets keep
// theirs) owned by the extension, so that hosted clusters a rolling rollout
// has not reached yet keep getting theirs, and a rollback finds an older one.

// AnnotationTemplateHash on a ControllerRevision is the hash of its
// template, which tells whether the template to roll out is new.
const AnnotationTemplateHash = "hcpfleet.io/extension-template-hash"

// AnnotationRollbackOf on a ControllerRevision is the revision whose
// template a rollback copied into it.
const AnnotationRollbackOf = "hcpfleet.io/extension-rollback-of"

// Template is what a revision fixes: the phases and the probes. The rest of
// the spec (selector, strategy, history limit) applies to every revision.
type Template struct {
	Phases             []v1alpha1.ExtensionPhase    `json:"phases"`
	AvailabilityProbes []v1alpha1.ExtensionProbeSet `json:"availabilityProbes,omitempty"`
}

// Revision is one revision: its number and template.
type Revision struct {
	Number   int64
	Template Template
	// Name is its ControllerRevision's name.
	Name string
}

// Hash identifies a template.
func (t Template) Hash() string {
	data, _ := json.Marshal(t)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}

// RevisionName is the name of the ControllerRevision of revision n of
// extension name: prefixed, so that it never meets a StatefulSet's or a
// DaemonSet's revisions in the same namespace.
func RevisionName(name string, n int64) string {
	return "hcpfleet-extension-" + name + "-" + strconv.FormatInt(n, 10)
}

// revisionOf reads a ControllerRevision made by newControllerRevision.
func revisionOf(cr *appsv1.ControllerRevision) (Revision, error) {
	r := Revision{Number: cr.Revision, Name: cr.Name}
	if err := json.Unmarshal(cr.Data.Raw, &r.Template); err != nil {
		return r, fmt.Errorf("ControllerRevision %s does not hold an extension template: %w", cr.Name, err)
	}
	return r, nil
}

// newControllerRevision is revision n of ext with template t; rollbackOf
// is the revision it copies (0: none).
func newControllerRevision(ext *v1alpha1.HostedClusterExtension, n int64, t Template, rollbackOf int64) (*appsv1.ControllerRevision, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: RevisionName(ext.Name, n), Namespace: ext.Namespace,
			Labels:      map[string]string{extension.LabelExtension: ext.Name},
			Annotations: map[string]string{AnnotationTemplateHash: t.Hash()},
			// Garbage collected with the extension. No blockOwnerDeletion:
			// nothing waits on a revision.
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.HostedClusterExtensionKind,
				Name: ext.Name, UID: ext.UID, Controller: ptrTrue()}}},
		Data:     runtime.RawExtension{Raw: data},
		Revision: n,
	}
	if rollbackOf != 0 {
		cr.Annotations[AnnotationRollbackOf] = strconv.FormatInt(rollbackOf, 10)
	}
	return cr, nil
}

func ptrTrue() *bool { t := true; return &t }

// HistoryPlan is what the rollout does with the history. Pure.
type HistoryPlan struct {
	// Current is the revision to roll out; Create says it is new (its
	// ControllerRevision is to be made).
	Current Revision
	Create  bool
	// RollbackOf is the revision Current copies, when it is new by a
	// rollback.
	RollbackOf int64
	// Prune are archived revisions beyond the limit, oldest first.
	Prune []string
	// Archived are the kept revisions older than Current, newest first.
	Archived []Revision
	// Problem says why nothing can be rolled out (rollbackTo names a
	// revision not kept).
	Problem string
}

// PlanHistory decides the revision to roll out from ext's spec and its
// history (sorted or not; only its own): the newest revision when the
// template to roll out is its template, else a new revision numbered with
// ext's generation. inUse are the revisions hosted clusters still have
// (their works); they, and the one rollbackTo names, are never pruned.
func PlanHistory(ext *v1alpha1.HostedClusterExtension, history []Revision, inUse map[int64]bool) HistoryPlan {
	history = append([]Revision(nil), history...)
	sort.Slice(history, func(i, j int) bool { return history[i].Number > history[j].Number })
	var plan HistoryPlan
	want := Template{Phases: ext.Spec.Phases, AvailabilityProbes: ext.Spec.AvailabilityProbes}
	if rb := ext.Spec.RollbackTo; rb != nil {
		found := false
		for _, r := range history {
			if r.Number == rb.Revision {
				want, found, plan.RollbackOf = r.Template, true, r.Number
			}
		}
		if !found {
			kept := make([]string, 0, len(history))
			for _, r := range history {
				kept = append(kept, strconv.FormatInt(r.Number, 10))
			}
			plan.Problem = fmt.Sprintf("spec.rollbackTo.revision: revision %d is not kept (kept: %v)", rb.Revision, kept)
			if len(history) > 0 {
				plan.Current, plan.Archived = history[0], history[1:]
			}
			return plan
		}
	}
	if len(history) > 0 && history[0].Template.Hash() == want.Hash() {
		plan.Current, plan.RollbackOf = history[0], 0 // already rolled back, or no rollback
		history = history[1:]
	} else {
		n := ext.Generation
		if len(history) > 0 && n <= history[0].Number {
			n = history[0].Number + 1 // never reuse a number
		}
		plan.Current, plan.Create = Revision{Number: n, Template: want, Name: RevisionName(ext.Name, n)}, true
	}
	limit := int(v1alpha1.DefaultRevisionHistoryLimit)
	if ext.Spec.RevisionHistoryLimit != nil {
		limit = int(*ext.Spec.RevisionHistoryLimit)
	}
	kept := 0
	for _, r := range history {
		protected := inUse[r.Number] || ext.Spec.RollbackTo != nil && ext.Spec.RollbackTo.Revision == r.Number
		switch {
		case protected:
			plan.Archived = append(plan.Archived, r)
		case kept < limit:
			kept++
			plan.Archived = append(plan.Archived, r)
		default:
			plan.Prune = append(plan.Prune, r.Name)
		}
	}
	// Oldest first.
	for i, j := 0, len(plan.Prune)-1; i < j; i, j = i+1, j-1 {
		plan.Prune[i], plan.Prune[j] = plan.Prune[j], plan.Prune[i]
	}
	return plan
}

// keepHistory is the plan when the template to roll out cannot be: the
// newest kept revision stays current, nothing is made nor pruned.
func keepHistory(history []Revision) HistoryPlan {
	history = append([]Revision(nil), history...)
	sort.Slice(history, func(i, j int) bool { return history[i].Number > history[j].Number })
	var plan HistoryPlan
	if len(history) > 0 {
		plan.Current, plan.Archived = history[0], history[1:]
	}
	return plan
}

// revisionsStatus lists plan's archived revisions with how many of the
// selected hosted clusters were delivered each.
func revisionsStatus(plan HistoryPlan, selected []v1alpha1.ExtensionHostedClusterStatus) []v1alpha1.ExtensionRevision {
	count := map[int64]int32{}
	for _, h := range selected {
		count[h.Revision]++
	}
	var out []v1alpha1.ExtensionRevision
	for _, a := range plan.Archived {
		out = append(out, v1alpha1.ExtensionRevision{Revision: a.Number, ControllerRevision: a.Name, HostedClusters: count[a.Number]})
	}
	return out
}
