package hosting

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// AnnotationReleaseUpdates is the agent's report, on each delivered
// HostedCluster, of the updates HyperShift reports for it
// (status.version.availableUpdates and conditionalUpdates). The hub reads it
// back through the ManifestWork's status feedback into the
// HostedClusterDeployment's status.version: the work agent's JSONPath
// feedback returns scalars only, so the lists travel as one JSON string, as
// the OLM reports do (pkg/olm). No annotation means no update reported.
const AnnotationReleaseUpdates = "hcpfleet.io/release-updates"

// Bounds of the report, within the HostedClusterDeployment's schema: the
// newest updates are kept (HyperShift lists them newest first), messages
// are cut, never refused.
const (
	MaxReportedUpdates = 32
	maxRisks           = 16
	maxRules           = 8
	maxRiskMessage     = 1024
	maxShort           = 256
	maxURL             = 512
)

// ReleaseUpdates is the report.
type ReleaseUpdates struct {
	Available   []v1alpha1.ReleaseStatus     `json:"available,omitempty"`
	Conditional []v1alpha1.ConditionalUpdate `json:"conditional,omitempty"`
}

// Empty: nothing to report (the annotation is removed).
func (r ReleaseUpdates) Empty() bool { return len(r.Available) == 0 && len(r.Conditional) == 0 }

// Encode is the annotation value.
func (r ReleaseUpdates) Encode() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// DecodeReleaseUpdates reads the annotation value; a value that is no
// report is an error, and the hub then shows no update.
func DecodeReleaseUpdates(s string) (ReleaseUpdates, error) {
	var r ReleaseUpdates
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return ReleaseUpdates{}, fmt.Errorf("%s is not a report: %w", AnnotationReleaseUpdates, err)
	}
	return r.bounded(), nil
}

// ReleaseUpdatesOf reads the report from a HostedCluster's status, bounded.
func ReleaseUpdatesOf(hc *unstructured.Unstructured) ReleaseUpdates {
	var r ReleaseUpdates
	available, _, _ := unstructured.NestedSlice(hc.Object, "status", "version", "availableUpdates")
	for _, a := range available {
		m, _ := a.(map[string]any)
		r.Available = append(r.Available, release(m))
	}
	conditional, _, _ := unstructured.NestedSlice(hc.Object, "status", "version", "conditionalUpdates")
	for _, c := range conditional {
		m, _ := c.(map[string]any)
		rel, _ := m["release"].(map[string]any)
		cu := v1alpha1.ConditionalUpdate{Release: release(rel)}
		conds, _ := m["conditions"].([]any)
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			var cond metav1.Condition
			if cm["type"] == "Recommended" && runtime.DefaultUnstructuredConverter.FromUnstructured(cm, &cond) == nil {
				// Copied, never set here: the cluster-version operator's words.
				cu.Recommended, cu.Reason = cond.Status, cond.Reason
			}
		}
		risks, _ := m["risks"].([]any)
		for _, rk := range risks {
			rm, _ := rk.(map[string]any)
			risk := v1alpha1.UpdateRisk{Name: str(rm["name"]), Message: str(rm["message"]), URL: str(rm["url"])}
			rules, _ := rm["matchingRules"].([]any)
			for _, rule := range rules {
				ru, _ := rule.(map[string]any)
				risk.MatchingRules = append(risk.MatchingRules, str(ru["type"]))
			}
			cu.Risks = append(cu.Risks, risk)
		}
		r.Conditional = append(r.Conditional, cu)
	}
	return r.bounded()
}

// bounded cuts r to the schema's bounds; HyperShift's message texts can
// be long, and the report must still be written.
func (r ReleaseUpdates) bounded() ReleaseUpdates {
	if len(r.Available) > MaxReportedUpdates {
		r.Available = r.Available[:MaxReportedUpdates]
	}
	if len(r.Conditional) > MaxReportedUpdates {
		r.Conditional = r.Conditional[:MaxReportedUpdates]
	}
	for i := range r.Available {
		r.Available[i] = boundedRelease(r.Available[i])
	}
	for i := range r.Conditional {
		cu := &r.Conditional[i]
		cu.Release, cu.Reason = boundedRelease(cu.Release), cut(cu.Reason, maxShort)
		switch cu.Recommended {
		case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown, "":
		default:
			cu.Recommended = metav1.ConditionUnknown
		}
		if len(cu.Risks) > maxRisks {
			cu.Risks = cu.Risks[:maxRisks]
		}
		for j := range cu.Risks {
			rk := &cu.Risks[j]
			rk.Name, rk.Message, rk.URL = cut(rk.Name, maxShort), cut(rk.Message, maxRiskMessage), cut(rk.URL, maxURL)
			if len(rk.MatchingRules) > maxRules {
				rk.MatchingRules = rk.MatchingRules[:maxRules]
			}
			for k := range rk.MatchingRules {
				rk.MatchingRules[k] = cut(rk.MatchingRules[k], 64)
			}
		}
	}
	return r
}

func boundedRelease(r v1alpha1.ReleaseStatus) v1alpha1.ReleaseStatus {
	return v1alpha1.ReleaseStatus{Version: cut(r.Version, maxShort), Image: cut(r.Image, maxURL)}
}

func release(m map[string]any) v1alpha1.ReleaseStatus {
	return v1alpha1.ReleaseStatus{Version: str(m["version"]), Image: str(m["image"])}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// cut shortens s to at most n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
