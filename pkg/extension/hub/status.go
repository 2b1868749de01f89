package hub

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// feedback flattens the release ConfigMap's feedback of w.
func feedback(w *workv1.ManifestWork) map[string]string {
	out := map[string]string{}
	for _, m := range w.Status.ResourceStatus.Manifests {
		if m.ResourceMeta.Resource != "configmaps" {
			continue
		}
		for _, v := range m.StatusFeedbacks.Values {
			if v.Value.String != nil {
				out[v.Name] = *v.Value.String
			}
		}
		if c := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied); c != nil && c.Status == metav1.ConditionFalse {
			out["applyFailed"] = c.Message
		}
	}
	return out
}

// HostedClusterStatus is the extension's state on one hosted cluster:
// Pending without a work, Removing while its work goes, else what the agent
// reports for the revision delivered (Progressing until it reports on it).
func HostedClusterStatus(name string, w *workv1.ManifestWork) v1alpha1.ExtensionHostedClusterStatus {
	s := v1alpha1.ExtensionHostedClusterStatus{Name: name, State: v1alpha1.ExtensionStatePending}
	if w == nil {
		return s
	}
	s.HostingCluster, s.ManifestWork, s.Revision = w.Namespace, w.Name, Delivered(w)
	fb := feedback(w)
	s.ObservedRevision, _ = strconv.ParseInt(fb[extension.KeyObservedRevision], 10, 64)
	s.CurrentPhase = fb[extension.KeyPhase]
	s.Paused = fb[extension.KeyPaused] == "true" && s.ObservedRevision == s.Revision
	if raw := fb[extension.KeyObjects]; raw != "" {
		var objects []v1alpha1.ExtensionObjectStatus
		if json.Unmarshal([]byte(raw), &objects) == nil {
			s.Objects = objects
		}
	}
	switch {
	case w.DeletionTimestamp != nil:
		s.State = v1alpha1.ExtensionStateRemoving
	case fb["applyFailed"] != "":
		s.State = v1alpha1.ExtensionStateProgressing
		s.Failure = &v1alpha1.ExtensionFailure{Reason: extension.ReasonApplyFailed,
			Message: truncate("the release could not be applied on management cluster " + w.Namespace + ": " + fb["applyFailed"])}
	case s.ObservedRevision != s.Revision:
		s.State = v1alpha1.ExtensionStateProgressing
	default:
		s.State = v1alpha1.ExtensionState(fb[extension.KeyState])
		if s.State == "" {
			s.State = v1alpha1.ExtensionStateProgressing
		}
	}
	if s.Failure == nil && fb[extension.KeyReason] != "" && s.State != v1alpha1.ExtensionStateAvailable {
		s.Failure = &v1alpha1.ExtensionFailure{Phase: s.CurrentPhase, Object: fb[extension.KeyFailedObject],
			Reason: fb[extension.KeyReason], Message: truncate(fb[extension.KeyMessage])}
	}
	return s
}

func truncate(s string) string {
	if len(s) <= 1024 {
		return s
	}
	return s[:1020] + " …"
}

// Summary is the extension's conditions and counts from its hosted
// clusters' states.
type Summary struct {
	Selected, Updated, Available, Failed int32
	Conditions                           []metav1.Condition
}

// Condition types and reasons of HostedClusterExtension status.
const (
	ConditionAvailable   = "Available"
	ConditionProgressing = "Progressing"
	ConditionDegraded    = "Degraded"

	ReasonAsExpected       = "AsExpected"
	ReasonRollingOut       = "RollingOut"
	ReasonProbeFailure     = extension.ReasonProbeFailure
	ReasonInvalidSpec      = "InvalidSpec"
	ReasonNoHostedClusters = "NoHostedClustersSelected"
	ReasonRemoving         = "Removing"
	ReasonPaused           = "Paused"
)

// Pause reports a paused rollout (spec.strategy.paused): Progressing is
// False with reason Paused, since nothing is delivered, applied or deleted
// until it is unpaused; the message says on how many of the hosted clusters
// the agents have confirmed it.
func (s *Summary) Pause(revision int64, selected []v1alpha1.ExtensionHostedClusterStatus) {
	var confirmed, delivered int
	for _, h := range selected {
		if h.ManifestWork != "" {
			delivered++
		}
		if h.Paused {
			confirmed++
		}
	}
	for i := range s.Conditions {
		if s.Conditions[i].Type == ConditionProgressing && s.Conditions[i].Reason != ReasonInvalidSpec {
			s.Conditions[i].Status, s.Conditions[i].Reason = metav1.ConditionFalse, ReasonPaused
			s.Conditions[i].Message = fmt.Sprintf("the rollout is paused (spec.strategy.paused): revision %d reached %d of %d selected hosted clusters; "+
				"the agents of %d of the %d that have the extension stopped applying and deleting; nothing changes until it is unpaused",
				revision, s.Updated, s.Selected, confirmed, delivered)
		}
	}
}

// Summarize computes the counts and conditions. problems are what makes the
// spec undeliverable (nothing new is delivered while there are any).
func Summarize(revision int64, selected []v1alpha1.ExtensionHostedClusterStatus, problems []string) Summary {
	var s Summary
	var firstFailure string
	var firstReason string
	for _, h := range selected {
		s.Selected++
		if h.Revision == revision {
			s.Updated++
		}
		switch {
		case h.Revision == revision && h.ObservedRevision == revision && h.State == v1alpha1.ExtensionStateAvailable:
			s.Available++
		case h.State == v1alpha1.ExtensionStateFailed || h.Failure != nil:
			if h.State == v1alpha1.ExtensionStateFailed {
				s.Failed++
			}
			if firstFailure == "" && h.Failure != nil {
				firstReason = h.Failure.Reason
				firstFailure = fmt.Sprintf("hosted cluster %s: ", h.Name)
				if h.Failure.Phase != "" {
					firstFailure += "phase " + h.Failure.Phase + ": "
				}
				if h.Failure.Object != "" {
					firstFailure += h.Failure.Object + ": "
				}
				firstFailure += h.Failure.Message
			}
		}
	}
	cond := func(t string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg}
	}
	switch {
	case len(problems) > 0:
		msg := "not delivered: " + joinLimited(problems)
		s.Conditions = append(s.Conditions, cond(ConditionAvailable, metav1.ConditionFalse, ReasonInvalidSpec, msg),
			cond(ConditionProgressing, metav1.ConditionFalse, ReasonInvalidSpec, msg), cond(ConditionDegraded, metav1.ConditionTrue, ReasonInvalidSpec, msg))
		return s
	case s.Selected == 0:
		msg := "no HostedClusterDeployment in this namespace matches spec.hostedClusterSelector"
		s.Conditions = append(s.Conditions, cond(ConditionAvailable, metav1.ConditionTrue, ReasonNoHostedClusters, msg),
			cond(ConditionProgressing, metav1.ConditionFalse, ReasonNoHostedClusters, msg))
	case s.Available == s.Selected:
		msg := fmt.Sprintf("revision %d is available on all %d selected hosted clusters", revision, s.Selected)
		s.Conditions = append(s.Conditions, cond(ConditionAvailable, metav1.ConditionTrue, ReasonAsExpected, msg),
			cond(ConditionProgressing, metav1.ConditionFalse, ReasonAsExpected, msg))
	default:
		msg := fmt.Sprintf("revision %d is available on %d of %d selected hosted clusters (%d updated)", revision, s.Available, s.Selected, s.Updated)
		reason := ReasonRollingOut
		if firstFailure != "" {
			reason, msg = firstReason, msg+"; "+firstFailure
		}
		s.Conditions = append(s.Conditions, cond(ConditionAvailable, metav1.ConditionFalse, reason, msg),
			cond(ConditionProgressing, metav1.ConditionTrue, ReasonRollingOut, msg))
	}
	if firstFailure != "" {
		s.Conditions = append(s.Conditions, cond(ConditionDegraded, metav1.ConditionTrue, firstReason, truncate(firstFailure)))
	} else {
		s.Conditions = append(s.Conditions, cond(ConditionDegraded, metav1.ConditionFalse, ReasonAsExpected, "no hosted cluster reports a failure"))
	}
	return s
}

func joinLimited(problems []string) string {
	out := ""
	for i, p := range problems {
		if i == 5 {
			out += fmt.Sprintf("; and %d more", len(problems)-5)
			break
		}
		if i > 0 {
			out += "; "
		}
		out += p
	}
	return truncate(out)
}

// removalDegraded is Degraded while an extension is removed: True with the
// first hosted cluster whose teardown reports a problem — above all a hosted
// cluster whose API server does not answer, whose objects the agent leaves
// behind once it has not answered for its guest timeout.
func removalDegraded(statuses []v1alpha1.ExtensionHostedClusterStatus) metav1.Condition {
	sorted := slices.Clone(statuses)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, h := range sorted {
		if h.Failure != nil && h.Failure.Reason != "" {
			return metav1.Condition{Type: ConditionDegraded, Status: metav1.ConditionTrue, Reason: h.Failure.Reason,
				Message: truncate(fmt.Sprintf("hosted cluster %s: phase %s: %s", h.Name, h.CurrentPhase, h.Failure.Message))}
		}
	}
	return metav1.Condition{Type: ConditionDegraded, Status: metav1.ConditionFalse, Reason: ReasonRemoving, Message: "no teardown reports a problem"}
}
