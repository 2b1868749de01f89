// Package agent is the management-cluster side of hosted clusters; it has no
// code of its own. Its sub-packages are features of the agent program
// (pkg/cmd/agent) and never import the hub side (pkg/hosting/hub):
//
//   - operator: installs, upgrades and removes the HyperShift operator
//     (CRDs, RBAC, PriorityClasses, Deployment) as HostingConfig asks, and
//     copies the credentials it needs into the operator's namespace.
//   - capacity: reports how many hosted clusters the cluster runs and can
//     take, as ClusterClaims and an AddOnPlacementScore.
//   - kubeconfigexport: copies each delivered hosted cluster's admin
//     kubeconfig into the agent's cluster namespace on the hub.
//   - namespacegc: deletes the hosting namespaces hcp-fleet created once
//     nothing lives in them.
package agent
