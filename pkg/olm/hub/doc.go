// Package hub is the hub side of OLM in hosted clusters: the fleet's catalog
// policy (HostingConfig spec.olm), rendered into HyperShift's HostedCluster
// annotations by the hosted-cluster delivery; the upgrade gate (Decide); and
// the CatalogsReady condition from the agent's catalog report
// (CatalogsCondition). It never imports the agent side (pkg/olm/agent).
package hub
