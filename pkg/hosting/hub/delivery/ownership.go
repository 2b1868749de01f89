package delivery

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
)

// Who owns what the delivery applies on a management cluster.
//
// The work agent applies every manifest of a ManifestWork with server-side
// apply, without force, under the field manager its manifest config names.
// Were that one name for every HostedClusterDeployment, server-side apply
// would see one owner for all of them: an HCD of the same name in the same
// hosting namespace (another tenant's, or the same tenant's created again)
// would silently take over a HostedCluster left behind by deletionPolicy
// Orphan, and the agent would export that hosted cluster's admin
// kubeconfig to it. So each HostedClusterDeployment applies under a field
// manager of its own (HostFieldManager), and labels what it delivers with
// its UID (hosting.LabelHCDUID): another HCD's apply then sets that label,
// which a different manager owns, to another value, and the host's API
// server refuses it with a conflict. The status reports it as
// ReasonOwnedByAnother; nothing is merged.

// LegacyHostFieldManager is the one field manager every HostedClusterDeployment
// applied its objects under before each got its own (HostFieldManager).
const LegacyHostFieldManager = "work-agent-hcp-fleet"

// maxFieldManagerLength is the API server's limit on a field manager's name.
const maxFieldManagerLength = 128

// HostFieldManager is the field manager the work agent applies hcd's objects
// with on the management cluster: the "work-agent" prefix OCM requires,
// hcp-fleet's name, and a hash of the HostedClusterDeployment's UID (the UID
// itself is not secret, but the hash keeps the name short and fixed in
// length). It never equals the extensions' ("work-agent-hcp-fleet-extension":
// the hash is hex).
func HostFieldManager(uid types.UID) string {
	sum := sha256.Sum256([]byte(uid))
	return LegacyHostFieldManager + "-" + hex.EncodeToString(sum[:])[:12]
}

// hostFieldManagerFor is the field manager to render hcd's ManifestWork with:
// LegacyHostFieldManager when existing, the ManifestWork delivered so far,
// applies with it (an older hub wrote it), else HostFieldManager(uid) (never
// another HostedClusterDeployment's, whatever existing says).
//
// Why an older ManifestWork keeps the legacy manager: the objects it
// delivered hold their fields under that manager. Applying them under a new
// one would conflict with those very fields (their values change with the
// next edit of the spec, and without force the new manager may not change
// what the old one holds): the HCD's next change would fail on its own
// objects. Keeping it keeps the old exposure for those HCDs only (an HCD
// delivered before the upgrade could still be taken over by another legacy
// one, of which none is created any more); every HCD delivered from now on
// has its own manager.
func hostFieldManagerFor(existing *workv1.ManifestWork, uid types.UID) string {
	if workFieldManager(existing) == LegacyHostFieldManager {
		return LegacyHostFieldManager
	}
	return HostFieldManager(uid)
}

// workFieldManager is the server-side apply field manager of work's
// manifest configs when it is hcp-fleet's (the legacy one or one of
// HostFieldManager's), else "".
func workFieldManager(work *workv1.ManifestWork) string {
	if work == nil {
		return ""
	}
	for _, c := range work.Spec.ManifestConfigs {
		u := c.UpdateStrategy
		if u == nil || u.Type != workv1.UpdateStrategyTypeServerSideApply || u.ServerSideApply == nil {
			continue
		}
		m := u.ServerSideApply.FieldManager
		if m == LegacyHostFieldManager || (strings.HasPrefix(m, LegacyHostFieldManager+"-") && len(m) <= maxFieldManagerLength) {
			return m
		}
	}
	return ""
}

// conflictManagers finds the field managers named in a server-side apply
// conflict message (`Apply failed with 1 conflict: conflict with "kubectl"
// using v1: .data.x`; several of one manager: `conflicts with "kubectl"
// using v1:` and a line per field).
var conflictManagers = regexp.MustCompile(`conflicts? with "([^"]*)"`)

// ownerOf says, in words, who holds the fields a conflict message names:
// another HostedClusterDeployment when every manager is one of hcp-fleet's
// host field managers, else the field managers by name.
func ownerOf(message string) string {
	var others []string
	seen := map[string]bool{}
	ours := true
	for _, m := range conflictManagers.FindAllStringSubmatch(message, -1) {
		if seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		others = append(others, fmt.Sprintf("%q", m[1]))
		ours = ours && (m[1] == LegacyHostFieldManager || strings.HasPrefix(m[1], LegacyHostFieldManager+"-"))
	}
	switch {
	case len(others) == 0:
		return "another HostedClusterDeployment or field manager"
	case ours:
		return "another HostedClusterDeployment (field manager " + strings.Join(others, ", ") + ")"
	}
	return "another field manager (" + strings.Join(others, ", ") + ")"
}

// ownedByAnotherHint says what a conflict means and what to do about it.
const ownedByAnotherHint = "hcp-fleet never merges into or takes over an object on the management cluster that is not this " +
	"HostedClusterDeployment's: rename the HostedClusterDeployment or choose another hosting namespace, or have the " +
	"management cluster's admin remove that object (re-adopting an orphaned hosted cluster is an explicit admin action, never automatic)"

// ownedByAnother is the Delivered message part for one manifest the host
// refused with a server-side apply conflict.
func ownedByAnother(kind, namespace, name, message string) string {
	return fmt.Sprintf("%s %s/%s belongs to %s and is never merged: %s", kind, namespace, name, ownerOf(message), message)
}

// ownsFeedback says whether a manifest's status feedback is this
// HostedClusterDeployment's. The work agent reads feedback from the object
// of the manifest's name on the host whether or not its apply went through:
// after a conflict that is another HostedClusterDeployment's HostedCluster
// (an orphan's, say), and its availability, version and endpoint must not
// show in this one's status, nor start its import. Feedback counts when the
// object carries this UID (hosting.LabelHCDUID), or, carrying none (applied
// by an older hub, or before the label's first apply), when its last apply
// went through. Without a UID to compare (tests), all counts.
func (o Observed) ownsFeedback(m workv1.ManifestCondition) bool {
	if o.UID == "" {
		return true
	}
	for _, v := range m.StatusFeedbacks.Values {
		if v.Name == fbOwnerUID && v.Value.String != nil && *v.Value.String != "" {
			return *v.Value.String == string(o.UID)
		}
	}
	applied := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied)
	return applied != nil && applied.Status == metav1.ConditionTrue
}
