package agent

import (
	"context"
	"time"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/objects"
)

// claim is collision protection's verdict on one object before anything is
// recorded or applied: an empty State means the object is this extension's
// to write (absent, already its own, or adopted under IfNoController);
// otherwise it is neither written nor recorded. For a hosted-cluster phase
// the connector decided, with the same code (objects.Claim), and reported.
func (e *Engine) claim(ctx context.Context, t *target, o extension.Object, uid string) objects.Verdict {
	if t.remote != nil {
		return t.remote.claim(o)
	}
	if t.clusterScoped(o.Ref) && t.class == v1alpha1.PhaseClassControlPlane {
		return objects.Verdict{State: v1alpha1.ObjectStateRefused, Reason: extension.ReasonObjectRefused,
			Message: "cluster-scoped objects may not be written on the management cluster"}
	}
	return objects.Claim(ctx, t.client, o, uid)
}

// unreachableTooLong: the guest has not answered since since (RFC 3339)
// for longer than GuestTeardownTimeout.
func (e *Engine) unreachableTooLong(since string) bool {
	t, err := time.Parse(time.RFC3339, since)
	return err == nil && time.Since(t) > e.opts.GuestTeardownTimeout
}
