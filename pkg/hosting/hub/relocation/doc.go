// Package relocation moves a HostedClusterDeployment's hosted cluster, with
// its data, from one management cluster to another (docs/operations.md,
// "Relocate and drain"), by HyperShift's documented procedure: pause on the
// source, etcd snapshot, restore on the destination, verify, switch the
// binding once, clean the source.
//
// What is here so far are the pure parts the controller is built from:
// which hosted clusters are relocation-ready (Ready), which management
// cluster may receive one (Destination, by the scheduler's own filters),
// the state machine (Next) as a function of what the hub observes, so
// that a restarted hub resumes from the recorded phase and the facts,
// never from memory, and the ManifestWorks it applies (PauseWork,
// DestinationWork) with what it reads back from them (Observe).
package relocation
