// Package adoption is the agent feature that answers fleet admins'
// HostedClusterAdoptions for its management cluster (docs/operations.md,
// "Adopt a HostedCluster that already runs"): for each one in its cluster
// namespace on the hub, it reads the named HostedCluster and that
// HostedCluster's NodePools on the management cluster and writes their UID,
// labels, annotations and specs into the adoption's status.observed, with
// the Observed condition. The hub's adoption controller (pkg/hosting/hub/adoption)
// does everything else.
//
// Why the agent answers: only it reads the management cluster, and OCM's
// status feedback cannot carry a whole spec (docs/operations.md). Its hub
// grant stays in its own cluster namespace (get, list, watch of
// HostedClusterAdoptions, patch of their status), so a compromised agent
// answers only requests for its own cluster; the hub treats the answer as
// tenant input.
//
// Level-triggered: an adoption, HostedCluster or NodePool event recomputes
// the answer, which is written (server-side apply of the agent's own
// status fields) only when it differs from what the hub holds. Secrets are
// never read: the HostedCluster's spec names the ones it refers to.
package adoption
