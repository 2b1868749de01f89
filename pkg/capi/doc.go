// Package capi is the agent's Cluster API support for HyperShift on shared
// management clusters (seed 003, "private CAPI types"). It has no code of its
// own; the pieces are:
//
//   - groups: the standard ↔ private group mapping (`*.cluster.x-k8s.io` ↔
//     `*.cluster.hypershift.openshift.io`), the one place that knows it.
//   - crds: the CAPI CRDs HyperShift needs, generated from the pinned modules
//     (hack/capi/generate.sh), their private form (Privatize), the mode
//     decision (Decide: Standard | Private | Auto → mode + reason) and a
//     server-side-apply installer that never writes CRDs someone else owns.
//   - proxy: the API proxy CAPI clients use in Private mode, as a library
//     (Proxy, an http.Handler) and a loopback server (Run) for the agent's
//     sidecar entry point.
//
// Provider CRDs in `*.cluster.x-k8s.io` groups from elsewhere (for example the
// OpenShift Assisted bootstrap and control-plane providers of seed 004) get
// their private form from the same crds.Privatize.
//
// For the migration controller (not built yet): crds.Decision lists the
// standard CRDs we installed earlier (OwnStandard) and the foreign ones
// (Foreign); objects can be copied from the standard to the private group with
// proxy.TranslateJSON(obj, groups.ToPrivate, proxy.ScopeCAPI) for CAPI objects
// and proxy.ScopeOther for objects that merely reference them (ownerReferences
// of Secrets and the like): the same rules the proxy applies to live traffic,
// so migrated objects look exactly like objects written through the proxy.
package capi
