package delivery

import (
	"context"
	"time"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// namesProblem checks again, before every render of a bound
// HostedClusterDeployment, the names that key shared state which the
// scheduler checked before binding it (scheduling/names.go): a
// HostingConfig changed since can make its control-plane namespace a
// hosting namespace, and one bound by an older hub, or another created
// since with a tenant-set infraID, may collide. A Problem holds the
// ManifestWork back as it is (what was delivered keeps running; nothing is
// deleted), as hostingNamespaceNotAllowed does; the one that came first
// keeps being delivered.
func (r *Reconciler) namesProblem(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, cluster string, config hostConfig) (*Problem, error) {
	taken, err := scheduling.InfraIDTaken(ctx, r.client, hcd)
	if err != nil {
		return nil, err
	}
	if taken != "" {
		return &Problem{Reason: v1alpha1.ReasonInfraIDTaken, Message: "not delivered: " + taken + heldBackNote}, nil
	}
	var allowed []string
	if config.found {
		allowed = config.spec.AllowedHostingNamespaces()
	}
	why, err := scheduling.ControlPlaneConflict(ctx, r.client, hcd, cluster, allowed, config.name)
	if err != nil || why == "" {
		return nil, err
	}
	return &Problem{Reason: v1alpha1.ReasonControlPlaneNamespaceConflict,
		Message: "not delivered on management cluster " + cluster + ": " + why + heldBackNote}, nil
}

// heldBackNote ends the message of a Problem that holds a ManifestWork back.
const heldBackNote = "; what was delivered before is left running as it is"

// namesRetry is how often a HostedClusterDeployment held back by
// namesProblem is checked again.
const namesRetry = time.Minute
