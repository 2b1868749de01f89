// Package hub is the hub side of hosted clusters; it has no code of its own.
// Its sub-packages run in the hub program (pkg/cmd/hub), on the leader only,
// and never import the agent side (pkg/hosting/agent):
//
//   - scheduling: picks a management cluster for each HostedClusterDeployment
//     among its Placement's decisions and binds status.hostingCluster.
//   - delivery: renders the HostedCluster, NodePools and referenced
//     Secrets/ConfigMaps into one ManifestWork in the host's cluster
//     namespace, maps its status feedback into the HCD's status, and deletes
//     it with the HCD.
//   - importer: imports an available hosted cluster as a ManagedCluster and
//     mirrors its admin kubeconfig into the HCD's namespace.
//   - exportaccess: lets each cluster's agent write, by name, exactly the
//     exported admin kubeconfigs of the HCDs bound to its cluster.
//   - hubindex: the cache indexes several of these controllers read.
//
// The integration tests here run those flows on a whole local fleet.
package hub
