// Package releaserollout moves the HostedClusterDeployments a ReleaseRollout
// selects to one OpenShift release in waves (docs/upgrades.md).
//
// As cluster-api's MachineDeployment rollout, it is split in two: Plan, a
// pure function from the rollout's spec and what the hub observes of each
// HostedClusterDeployment to each one's state, the release edits to make now
// and the rollout's conditions; and a thin controller that reads the
// objects, calls Plan, server-side applies the release field of each HCD it
// moves (under its own field manager, so the HCD's normal admission, tenant
// policy and upgrade gate still apply to the edited release) and the
// rollout's status. It never forces an upgrade the upgrade gate holds
// (pkg/olm/hub): a held hosted cluster is reported as Blocked and skipped.
package releaserollout
