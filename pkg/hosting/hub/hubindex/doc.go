// Package hubindex holds the hub's cache indexes that several of its
// controllers read: HostedClusterDeployments by the management cluster they
// are bound to (the delivery, the relocation, the export access, the
// importer's opt-out and the scheduler all list a cluster's deployments),
// and the delivering ManifestWorks by the deployment they name (the
// scheduler's binding recovery). The hub registers them once (AddIndexes),
// before any controller's Setup.
//
// An index one package alone reads stays in that package and is registered
// there (scheduling's infraID and namespace indexes, tenancy's hostnames,
// the delivery's references); internal/archcheck keeps other packages from
// reaching into scheduling for an index.
package hubindex
