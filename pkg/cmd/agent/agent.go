// Package agent is the hcp-fleet agent program: the agent runtime with
// every feature the agent runs. cmd/agent is its command line; the local
// fleet's kubelet stand-in runs the same Main in-process.
package agent

import (
	"context"
	"io"

	addonagent "github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	capifeature "github.com/hcp-fleet/hcp-fleet/pkg/capi/feature"
	extensionagent "github.com/hcp-fleet/hcp-fleet/pkg/extension/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/adoption"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/capacity"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/inventory"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/kubeconfigexport"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/namespacegc"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/operator"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/releaseupdates"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm/agent/operatorlimits"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm/agent/subscriptiondefaults"
)

// Features are the parts of the agent, in setup order. Cleanup runs in
// reverse: the operator's (which waits for HostedClusters to be gone) before
// the hosting report's and the inventory's, so a cluster keeps reporting while it still hosts.
// CAPI comes before the operator: the CAPI CRDs exist before HyperShift
// runs, and their cleanup (which refuses while CAPI objects exist) runs
// after the operator's. The namespace janitor's cleanup runs after both, once
// the hosted clusters are gone and the namespaces hcp-fleet created are empty.
// The extension engine's cleanup runs first: it waits for the teardowns
// under way and refuses while hosted clusters run extensions, and only then
// removes its grants in control-plane namespaces — before the operator's
// cleanup takes away the HyperShift CRDs the engine reads.
func Features(opts Options) []addonagent.Feature {
	return []addonagent.Feature{capacity.Feature(), inventory.Feature(), adoption.Feature(), namespacegc.Feature(), kubeconfigexport.Feature(), releaseupdates.Feature(), operatorlimits.Feature(opts.OperatorLimits), subscriptiondefaults.Feature(), capifeature.Feature(capifeature.Options{}), operator.Feature(),
		extensionagent.Feature(extensionagent.Options{})}
}

// Options tune the features beyond their flags; the zero value is the agent
// as shipped. The fields are what no flag sets: timings a test changes
// while the agent runs.
type Options struct {
	// OperatorLimits: see operatorlimits.Options.
	OperatorLimits operatorlimits.Options
}

// Main runs the agent command line (args without the program name),
// leaving the process's logger alone (the local fleet runs it in-process).
func Main(ctx context.Context, args []string, stderr io.Writer) error {
	return MainWith(ctx, args, stderr, Options{})
}

// MainWith is Main with the features tuned by opts.
func MainWith(ctx context.Context, args []string, stderr io.Writer, opts Options) error {
	return addonagent.Main(ctx, args, stderr, Features(opts)...)
}

// ProgramMain is Main for cmd/agent: it also installs the logger the
// logging flags (--zap-log-level, ...) configure.
func ProgramMain(ctx context.Context, args []string, stderr io.Writer) error {
	return addonagent.ProgramMain(ctx, args, stderr, Features(Options{})...)
}
