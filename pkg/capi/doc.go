// Package capi is the agent's Cluster API support for HyperShift on
// management clusters. It runs in the agent only (the hub never imports it; a
// lint rule keeps it so) and has no code of its own; the pieces are:
//
//   - groups: the standard ↔ private group mapping (`*.cluster.x-k8s.io` ↔
//     `*.cluster.hypershift.openshift.io`, openshift/enhancements#1927), the one place that knows it.
//   - crds: the CAPI CRDs HyperShift needs (core and the infrastructure
//     providers of the advertised platforms), generated from the pinned modules
//     by hack/capi/generate.sh; their private form; the mode decision
//     (Standard | Private | Auto) and an installer that never writes CRDs
//     someone else owns.
//   - proxy: the API proxy that translates groups both ways for CAPI clients
//     in Private mode; the agent binary's `capi-api-proxy` subcommand runs it as a
//     sidecar of the migrated workloads.
//   - migration: moves existing hosted clusters' CAPI objects to the private
//     groups, one at a time, with rollback (the state machine of openshift/enhancements#1927).
//   - assistedapi, assistedbootstrap, assistedcontrolplane: the OpenShift Agent
//     (assisted-installer) bootstrap and control-plane providers (cluster-api-provider-openshift-assisted's architecture design).
//   - feature: the agent feature that runs all of the above as HostingConfig
//     asks, reading and writing CRDs and CAPI objects on the management cluster
//     and reporting the CAPITypes, CAPIMigration and CAPIAgentProviders
//     conditions on the ManagedClusterAddOn.
package capi
