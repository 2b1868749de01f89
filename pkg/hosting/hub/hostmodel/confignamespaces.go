package hostmodel

import "github.com/hcp-fleet/hcp-fleet/pkg/addon"

// ConfigNamespaces are the namespaces the hub takes HostingConfigs from: its
// own (Hub; addon.DefaultHubNamespace when empty) and those the admin lists
// (Allowed). A ManagedClusterAddOn a tenant can edit may name a HostingConfig
// anywhere; one elsewhere would set a cluster's capacity and hosting
// namespaces, so it is read as if none were named (the API defaults), as
// the agent's render does (addon.HostingConfigNamespaceAllowed).
type ConfigNamespaces struct {
	Hub     string
	Allowed []string
}

// Allows reports whether a HostingConfig in ns is taken.
func (n ConfigNamespaces) Allows(ns string) bool {
	return addon.HostingConfigNamespaceAllowed(ns, n.Hub, n.Allowed)
}
