// Package kubeutil holds the small Kubernetes helpers that hub and agent code
// (and the local fleet) share, written once: patching finalizers, splitting
// YAML manifests, waiting for a CRD to be served. It knows nothing of
// hcp-fleet's APIs and runs wherever its caller runs.
package kubeutil
