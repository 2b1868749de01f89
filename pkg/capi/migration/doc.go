// Package migration is the migration controller of HyperShift's private CAPI
// types enhancement (openshift/enhancements#1927, "Migration Controller"): it moves the CAPI
// objects of existing hosted clusters from the standard `*.cluster.x-k8s.io`
// groups to the private `*.cluster.hypershift.openshift.io` ones, one hosted
// cluster at a time, and rolls back completely when anything fails.
//
// State machine, per HostedCluster (annotations in annotations.go):
//
//	scope: legacy ──lock──▶ migration-in-progress: "true"
//	  preflight → pause → wait-scaled-down → copy → switch → health-check → commit → cleanup
//	  ├─ success: private-capi-types: "true", scope and the lock removed
//	  └─ failure before commit: rollback, migration-failed: "<step>: <reason>",
//	     the lock removed, scope kept (the legacy operator resumes)
//	migration-failed ──SRE removes it──▶ eligible again
//
// The steps:
//
//   - preflight: the control-plane namespace exists, a private CRD serves every
//     kind with objects, no private CAPI object exists yet; then the snapshot
//     (the workloads' specs, the Cluster's spec.paused) is written to the
//     ConfigMap hcp-fleet-capi-migration in the control-plane namespace.
//   - pause: the standard Cluster gets spec.paused=true, the CAPI workloads
//     (DefaultWorkloads: CAPI manager, provider, autoscaler, machine approver,
//     control-plane operator) are scaled to 0.
//   - wait-scaled-down: no pod of those workloads is left (ScaleDownTimeout).
//   - copy: every object of every standard CAPI kind in the namespace is
//     created in the private group, owners first (CreationOrder): spec,
//     status (through the status subresource), labels, annotations,
//     finalizers, and ownerReferences re-pointed at the owners' copies (new
//     UIDs). Objects outside the CAPI groups that CAPI objects own
//     ("referrers", a fixed list of kinds, IsReferrerResource: the Agent
//     provider's AgentCluster, AgentMachines, …, Secrets, ConfigMaps) get a second,
//     non-controller ownerReference to the copy, so that whatever happens
//     next they always have a live owner and the garbage collector never
//     takes them.
//   - switch: the CAPI manager and provider get the API proxy sidecar and a
//     KUBECONFIG pointing at it (SwitchedToProxy, a pure function of the
//     snapshot spec), the control-plane operator the PrivateCAPITypesEnv
//     signal; all come back with their original replicas.
//   - health-check (HealthTimeout): every workload Deployment is available at
//     its current generation, and every copy is present and equal to its
//     original (CopyDifferences); a difference fails at once. The private
//     Cluster is still paused here, so no CAPI controller has acted on the
//     copies yet and a rollback cannot lose their work.
//   - commit: private-capi-types: "true" set and scope removed in one write.
//     From here on the private objects are the live ones: later failures are
//     retried, never rolled back.
//   - cleanup: the private Cluster gets the original spec.paused back,
//     referrers keep only the references to the copies (in place, with the
//     controller flag), the standard objects are removed — finalizers first,
//     then a delete with a UID precondition, dependents first — so no
//     controller ever sees a standard object being deleted with its finalizer
//     on (which is when CAPI providers tear down real infrastructure); then
//     the state and the lock go.
//
// Rollback (any failure before commit) undoes in reverse: workloads to 0,
// referrers lose the private references, the copies are removed (same
// finalizer-first way), the proxy kubeconfig goes, workloads get their exact
// snapshot spec, the standard Cluster its spec.paused, and the HostedCluster
// migration-failed. Every step and every rollback action is idempotent and
// the step reached is in the state ConfigMap, so a controller restart at any
// point resumes the migration, or the rollback, where it was.
//
// Progress (Progress, Tracker) is for the agent to report: see Setup for what
// the controller expects from the manager.
package migration
