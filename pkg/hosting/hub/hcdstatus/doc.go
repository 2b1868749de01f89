// Package hcdstatus is the one way the hub's HostedClusterDeployment
// controllers (scheduling, delivery, importer) write HostedClusterDeployment
// status. It runs in the hub process, inside each of those controllers.
//
// It reads nothing from the API itself: Conditions is a pure function of the
// conditions a controller read (from its cache) and the ones it wants, and
// says whether anything changed, so a controller sends nothing when its
// fields already hold what it wants. Apply writes: it server-side applies a
// HostedClusterDeployment apply configuration (generated into
// api/v1alpha1/applyconfiguration) to the status subresource, under the
// calling controller's field manager and with ForceOwnership. Each field
// manager's apply holds all of its fields, so a field it leaves out of its
// apply configuration is released (and removed when no other manager owns
// it). The scheduler and the delivery share one (FieldManager): a binding is
// written together with the delivery's first status, and the delivery's
// applies carry the binding.
package hcdstatus
