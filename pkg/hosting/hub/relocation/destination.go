package relocation

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// Reasons a destination is refused.
const (
	ReasonDestinationIsSource        = "DestinationIsSource"
	ReasonDestinationNotAllowed      = "DestinationNotAllowed"
	ReasonDestinationCordoned        = "DestinationCordoned"
	ReasonDestinationFull            = "DestinationFull"
	ReasonDestinationLacksRelease    = "DestinationLacksRelease"
	ReasonDestinationLacksPlatform   = "DestinationLacksPlatform"
	ReasonDestinationNotAvailable    = "DestinationNotAvailable"
	ReasonDestinationNameConflict    = "DestinationNameConflict"
	ReasonDestinationNamespaceDenied = "DestinationNamespaceNotAllowed"
)

// destinationReasons maps the scheduler's rejection categories to a
// relocation's reasons.
var destinationReasons = map[string]string{
	scheduling.RejectCordoned:              ReasonDestinationCordoned,
	scheduling.RejectHostingNamespace:      ReasonDestinationNamespaceDenied,
	scheduling.RejectClusterUnavailable:    ReasonDestinationNotAvailable,
	scheduling.RejectAddOnUnavailable:      ReasonDestinationNotAvailable,
	scheduling.RejectOperatorMissing:       ReasonDestinationNotAvailable,
	scheduling.RejectRelease:               ReasonDestinationLacksRelease,
	scheduling.RejectPlatform:              ReasonDestinationLacksPlatform,
	scheduling.RejectNameTaken:             ReasonDestinationNameConflict,
	scheduling.RejectControlPlaneNamespace: ReasonDestinationNameConflict,
	scheduling.RejectFull:                  ReasonDestinationFull,
}

// Destination picks where a hosted cluster bound to source goes: named,
// when the admin named one, else the scheduler's choice. candidates are
// the management clusters the HostedClusterDeployment may be bound to
// (its Placement's decisions, or every one for a pinned deployment), as
// the scheduler gathers them. It returns the cluster, or "" with a reason
// and a message. Pure.
//
// The scheduler's own filters decide, with one change: a relocation never
// goes to a cordoned management cluster, even for a hosted cluster that
// tolerates the cordon (draining into a cluster being drained moves it
// twice).
func Destination(req scheduling.Request, candidates []scheduling.Candidate, source, named string, strategy scheduling.Strategy) (cluster, reason, message string) {
	req.ToleratesCordon = false
	if named != "" {
		if named == source {
			return "", ReasonDestinationIsSource, fmt.Sprintf("%s is the management cluster the hosted cluster runs on", named)
		}
		i := slices.IndexFunc(candidates, func(c scheduling.Candidate) bool { return c.Name == named })
		if i < 0 {
			return "", ReasonDestinationNotAllowed, fmt.Sprintf("%s is not a management cluster this HostedClusterDeployment may run on (its Placement's decisions, or the fleet's management clusters)", named)
		}
		candidates = candidates[i : i+1]
	} else {
		candidates = slices.DeleteFunc(slices.Clone(candidates), func(c scheduling.Candidate) bool { return c.Name == source })
		if len(candidates) == 0 {
			return "", ReasonDestinationNotAvailable, "no management cluster other than " + source + " may run it"
		}
	}
	d := scheduling.Schedule(req, candidates, strategy)
	if d.Cluster != "" {
		return d.Cluster, "", ""
	}
	if named != "" {
		r := d.Rejected[0]
		return "", destinationReasons[r.Category], fmt.Sprintf("%s: %s", named, r.Detail)
	}
	// No destination: the reason is the most common one, the message
	// names every cluster's.
	count := map[string]int{}
	details := make([]string, 0, len(d.Rejected))
	for _, r := range d.Rejected {
		count[destinationReasons[r.Category]]++
		details = append(details, r.Cluster+": "+r.Detail)
	}
	reason = ReasonDestinationNotAvailable
	for _, r := range slices.Sorted(maps.Keys(count)) {
		if count[r] > count[reason] {
			reason = r
		}
	}
	return "", reason, "no management cluster can receive it: " + strings.Join(details, "; ")
}

// Redecide checks the destination recorded at the start again, before
// anything is written there (its free slots may have gone to new hosted
// clusters or other moves since): it stays when it still passes the
// filters (a move does not chase a better cluster), with no reason; else,
// when the admin named none, the scheduler's choice now, with why the
// recorded one no longer fits; else "" with why. Pure.
func Redecide(req scheduling.Request, candidates []scheduling.Candidate, source, recorded, named string, strategy scheduling.Strategy) (cluster, reason, message string) {
	if cluster, reason, message = Destination(req, candidates, source, recorded, strategy); cluster != "" || named != "" {
		return cluster, reason, message
	}
	cluster, _, _ = Destination(req, candidates, source, "", strategy)
	return cluster, reason, message
}

// Inbound maps each management cluster to the HostedClusterDeployments
// that other relocations move onto it and that may not be bound there yet
// (started, not ended), so that a decision counts them as the scheduler
// counts its assumed bindings: two moves decided one after the other do
// not both take the last free slot. Pure.
func Inbound(hcr *v1alpha1.HostedClusterRelocation, all []v1alpha1.HostedClusterRelocation) map[string][]types.NamespacedName {
	out := map[string][]types.NamespacedName{}
	for i := range all {
		o := &all[i]
		if o.UID == hcr.UID || o.Status.Destination == "" || Phase(o.Status.Phase).Final() {
			continue
		}
		out[o.Status.Destination] = append(out[o.Status.Destination], types.NamespacedName{Namespace: o.Namespace, Name: o.Spec.HostedClusterDeployment})
	}
	return out
}
