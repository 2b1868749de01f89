package releaserollout

import (
	"fmt"

	"k8s.io/client-go/tools/record"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// Event reasons recorded on a HostedClusterDeployment, so that whoever
// looks at the hosted cluster (kubectl describe, the console) sees that a
// rollout skips it or stopped on it, not only who looks at the rollout.
const (
	// EventHostedClusterBlocked: the rollout skips it, never forcing it
	// (the upgrade gate holds it, conditional-update risks not accepted, a
	// downgrade, a minor skip, not ready); the message names the reason.
	EventHostedClusterBlocked = "ReleaseRolloutBlocked"
	// EventHostedClusterFailed: its upgrade failed and the rollout stopped.
	EventHostedClusterFailed = "ReleaseRolloutFailed"
)

// recordTransitions records, on each hosted cluster of p that became
// Blocked or Failed (or changed its reason there) since the status before
// (rr.Status.HostedClusters), a Warning Event naming the rollout and the
// reason. Only transitions: the state itself stays in the rollout's status,
// and a hosted cluster held for days is not told so at every pass.
func recordTransitions(recorder record.EventRecorder, rr *v1alpha1.ReleaseRollout, p *Plan, hcds map[string]*v1alpha1.HostedClusterDeployment) {
	before := map[string]v1alpha1.RolloutHostedClusterStatus{}
	for _, h := range rr.Status.HostedClusters {
		before[h.Name] = h
	}
	for _, h := range p.HostedClusters {
		hcd := hcds[h.Name]
		if hcd == nil || h.State != v1alpha1.RolloutStateBlocked && h.State != v1alpha1.RolloutStateFailed {
			continue
		}
		if b, ok := before[h.Name]; ok && b.State == h.State && b.Reason == h.Reason {
			continue
		}
		if h.State == v1alpha1.RolloutStateFailed {
			recorder.Event(hcd, "Warning", EventHostedClusterFailed,
				fmt.Sprintf("ReleaseRollout %s stopped: the upgrade of this hosted cluster failed (%s): %s", rr.Name, h.Reason, h.Message))
			continue
		}
		recorder.Event(hcd, "Warning", EventHostedClusterBlocked,
			fmt.Sprintf("ReleaseRollout %s skips this hosted cluster, never forcing it (%s): %s", rr.Name, h.Reason, h.Message))
	}
}
