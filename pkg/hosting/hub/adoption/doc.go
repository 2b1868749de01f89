// Package adoption decides whether a HostedCluster that runs on a
// management cluster outside hcp-fleet (created by `hcp`, by MCE, by hand,
// or left by deletionPolicy Orphan) can be adopted into a
// HostedClusterDeployment without restarting its control plane, and what
// that deployment would be (docs/operations.md, "Adopt a HostedCluster that
// already runs").
//
// Check is pure: its callers read the inputs. Today that is `kubectl
// hcpfleet adopt`, which only checks; the hub's adoption controller, which
// will ask the same function before it creates the deployment, is designed,
// not built.
package adoption
