// Package tenancy decides, fail-closed, what the tenants of a hub namespace
// may set in their HostedClusterDeployments: the TenantPolicy that governs
// the namespace (or the built-in default when none does), the fields of
// HyperShift's HostedCluster and NodePool specs it lets tenants set, and the
// values it allows (release images, platforms, hostnames, quotas). Both the
// scheduler (before binding) and the delivery (before every render) ask it,
// so nothing it refuses reaches a management cluster.
//
// Pure functions compute the verdict (Policy.Check); Resolver reads the
// namespace and the TenantPolicies from the hub's cache.
package tenancy
