// Package v1alpha1 contains the hub API of hcp-fleet (group hcpfleet.io):
//
//   - HostedClusterDeployment ("hcd"): "run this HyperShift hosted cluster on some
//     management cluster my policy allows". The hub schedules it onto a management
//     ("hosting") cluster, delivers the HostedCluster and its NodePools there in a
//     ManifestWork and reports their state back in its status.
//   - HostingConfig: the typed configuration of the hcp-fleet add-on on management
//     clusters (HyperShift operator image and overrides, install options, capacity,
//     CAPI mode, OLM catalogs, agent providers), referenced through the normal OCM
//     add-on configuration mechanism.
//
// The CustomResourceDefinitions are generated from these types into manifests/crds
// by `make manifests`; the deepcopy code and the server-side apply configurations
// (package applyconfiguration, for typed status writes) by `make generate`.
//
// +kubebuilder:object:generate=true
// +kubebuilder:ac:generate=true
// +groupName=hcpfleet.io
package v1alpha1
