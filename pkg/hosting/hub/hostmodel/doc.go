// Package hostmodel is what the hub knows about a management cluster, shared
// by its controllers (scheduling, delivery, the fleet metrics, the export
// access, the extension hub) and its clients (the fleet view, kubectl
// hcpfleet): the HostingConfig its add-on runs with and where one may come
// from (ConfigNamespaces), its capacity and load, and its availability read
// with a hold-down for short flaps. Pure functions and reads; it writes
// nothing.
package hostmodel
