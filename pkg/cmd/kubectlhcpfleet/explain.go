package kubectlhcpfleet

import (
	"context"
	"io"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
)

// HubSettings are the hub's flags that shape its decisions
// (fleetview.HubSettings).
type HubSettings = fleetview.HubSettings

// Explanation is what `explain hcd` shows about one HostedClusterDeployment
// (fleetview.Explanation, which the hub's console endpoint serves too).
type Explanation = fleetview.Explanation

// ExplainHCD asks the scheduler, with the hub's inputs as c reads them,
// where the HostedClusterDeployment namespace/name goes and why.
func ExplainHCD(ctx context.Context, c client.Reader, hub HubSettings, namespace, name string) (*Explanation, error) {
	return fleetview.ExplainHCD(ctx, c, hub, namespace, name)
}

// RenderExplanation writes x for a reader.
func RenderExplanation(w io.Writer, x *Explanation) error { return fleetview.RenderExplanation(w, x) }

// boundLister: fleetview.BoundLister.
func boundLister(c client.Reader) func(context.Context, string) ([]v1alpha1.HostedClusterDeployment, error) {
	return fleetview.BoundLister(c)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
