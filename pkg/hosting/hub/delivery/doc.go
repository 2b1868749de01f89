// Package delivery delivers each bound HostedClusterDeployment to its
// management cluster as one ManifestWork (the hosting Namespace, the
// HostedCluster, its NodePools and copies of the Secrets and ConfigMaps they
// refer to), reads the work agent's feedback back into the HCD's status, and
// removes or releases what it delivered when the HCD goes.
//
// One reconciler, split by concern as cluster-api's controllers are:
//
//   - controller.go: options, watches and Reconcile, which reads the inputs
//     and calls the rest;
//   - deliver.go: create or update the ManifestWork when its input changed;
//   - render.go, refs.go, references.go, unknownrefs.go, annotations.go,
//     olm.go, ownership.go: what the ManifestWork holds (pure);
//   - tenancy.go, names.go, upgrade.go: what is checked before every render
//     (the namespace's TenantPolicy, the names that key shared state, the
//     upgrade gate);
//   - host.go: the hosting cluster as the delivery sees it (its
//     HostingConfig, its availability held for a grace);
//   - feedback.go, status.go: the feedback rules and the status computed
//     from them (pure); statusapply.go: the one server-side apply of the
//     delivery's status fields, written only when they changed; writes.go
//     counts those writes by what changed;
//   - finalize.go: deletion and deletionPolicy Orphan;
//   - restore.go, inventory.go: bindings that survive a hub restore;
//   - coalesce.go, priority.go: when a ManifestWork is rewritten for a
//     referenced object alone, and the queue's priorities in a burst.
//
// Which controller writes which HCD status field is in docs/architecture.md
// ("Who writes a HostedClusterDeployment's status").
package delivery
