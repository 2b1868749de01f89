// Package adoption brings a HostedCluster that runs on a management
// cluster outside hcp-fleet (created by `hcp`, by MCE, by hand, or left by
// deletionPolicy Orphan) under a HostedClusterDeployment without restarting
// its control plane (docs/operations.md, "Adopt a HostedCluster that
// already runs").
//
// Check is pure: whether it can be adopted and into what deployment, from
// the inventories, the deployments and the cluster's HostingConfig; `kubectl
// hcpfleet adopt` asks it as a dry-run. The controller (controller.go) runs
// a fleet admin's HostedClusterAdoption once the cluster's agent answered
// it (pkg/hosting/agent/adoption): Check, the TenantPolicy, then the
// deployment built from the answer (Deployment), created once; it follows
// the takeover (TakeoverCondition) that the scheduler (reason Adopted) and
// the delivery (kept references, one forced apply) carry out.
package adoption
