// Package relocation moves a HostedClusterDeployment's hosted cluster, with
// its data, from one management cluster to another (docs/operations.md,
// "Relocate and drain"), by HyperShift's documented procedure: pause on the
// source, etcd snapshot, restore on the destination, verify, switch the
// binding once, clean the source.
//
// Split as cluster-api's controllers are:
//
//   - controller.go: the HostedClusterRelocation reconciler: it checks a
//     new request and decides its destination once (start), then on every
//     reconcile reads both sides, asks Next for the phase and makes that
//     phase's one write (step);
//   - sides.go: what it reads (the pause work, the delivery's ManifestWork
//     on the source, the copy on the destination) and each phase's write;
//   - status.go: the relocation's status, the HCD's Relocating condition
//     (its own field manager) and the Events;
//   - leftovers.go: a second controller, per HostedClusterDeployment, that
//     undoes what a move left when no relocation runs it any more (a hub
//     restored from a backup taken mid-move: the relocation is not backed
//     up, its ManifestWorks are), over the pure Leftovers;
//   - the pure parts: which hosted clusters are relocation-ready (Ready),
//     which relocations may start under the fleet-wide bound (Admit),
//     which management cluster may receive one (Destination, by the
//     scheduler's own filters, counting the moves into each: Inbound) and
//     whether it still may before the restore (Redecide), the state
//     machine (Next, with the bounded waits of Overdue) as a function of
//     what the hub observes, so that a restarted hub resumes from the
//     recorded phase and the facts, never from memory, and the ManifestWorks
//     it applies (PauseWork, DestinationWork, MarkKeepCloud) with what it
//     reads back from them (Observe).
//
// The binding itself is the scheduler's to move (pkg/hosting/hub/
// scheduling, relocate.go): this controller records status.switched and the
// scheduler, seeing it, rebinds.
package relocation
