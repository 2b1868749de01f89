package releaserollout

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// targets: u names m's release, by image or by version.
func targets(m *member, u v1alpha1.ReleaseStatus) bool {
	return u.Image != "" && u.Image == m.target || u.Version != "" && u.Version == m.version
}

// unaccepted are the risks of h's update to the release that the rollout
// does not accept, when the release is only a conditional update for h that
// is not recommended (Recommended not True, not among the available
// updates). Every risk of the update must be accepted, not only the ones
// the Recommended reason names: which of several apply is not reported.
func unaccepted(in *Input, m *member) []string {
	h := m.HostedCluster
	for _, a := range h.Available {
		if targets(m, a) {
			return nil
		}
	}
	for _, cu := range h.Conditional {
		if !targets(m, cu.Release) || cu.Recommended == metav1.ConditionTrue {
			continue
		}
		var out []string
		for _, r := range cu.Risks {
			if !slices.Contains(in.Spec.AcceptRisks, r.Name) {
				out = append(out, r.Name)
			}
		}
		// Not recommended without a named risk: the reason stands for it
		// (fail closed: something must be accepted).
		if name := orDefault(cu.Reason, "NotRecommended"); len(cu.Risks) == 0 && !slices.Contains(in.Spec.AcceptRisks, name) {
			out = append(out, name)
		}
		return out
	}
	return nil
}

// recommendedReason is the Recommended condition of h's conditional update
// to the release, in words.
func recommendedReason(m *member) string {
	for _, cu := range m.Conditional {
		if targets(m, cu.Release) {
			return fmt.Sprintf("Recommended=%s %s", orDefault(string(cu.Recommended), "Unknown"), cu.Reason)
		}
	}
	return ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
