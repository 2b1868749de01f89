package migration

import (
	"strings"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// The HostedCluster annotations of the enhancement's state machine (openshift/enhancements#1927,
// "Existing HyperShift Installation Migration"). They live on the
// HostedCluster because both HyperShift operators (new and legacy) select the
// clusters they reconcile by them.
const (
	// AnnotationPrivateCAPITypes marks a HostedCluster whose CAPI objects live in
	// the private groups ("true"); the new operator reconciles it.
	AnnotationPrivateCAPITypes = "hypershift.openshift.io/private-capi-types"
	// AnnotationScope with value ScopeLegacy marks a HostedCluster still on the
	// standard groups; the legacy operator reconciles it, and it is eligible
	// for migration.
	AnnotationScope = "hypershift.openshift.io/scope"
	// ScopeLegacy is the value of AnnotationScope for unmigrated clusters.
	ScopeLegacy = "legacy"
	// AnnotationMigrationInProgress ("true") is the migration lock: neither
	// operator reconciles the HostedCluster while it is set.
	AnnotationMigrationInProgress = "hypershift.openshift.io/migration-in-progress"
	// AnnotationMigrationFailed holds the reason of a failed (and rolled back)
	// migration. The controller does not retry until someone removes it.
	AnnotationMigrationFailed = "hypershift.openshift.io/migration-failed"
)

// HostedClusterGVK is the HyperShift HostedCluster kind the controller watches
// (metadata only).
var HostedClusterGVK = hosting.HostedClusterGVK

// ControlPlaneNamespace is the hosted control-plane namespace HyperShift
// creates for a HostedCluster: "<namespace>-<name>" with dots in the name
// replaced by hyphens (hypershift manifests.HostedControlPlaneNamespace).
func ControlPlaneNamespace(namespace, name string) string {
	return namespace + "-" + strings.ReplaceAll(name, ".", "-")
}

// Disposition is what the annotations say the controller should do with a
// HostedCluster.
type Disposition int

const (
	// Ignore: not ours to touch (new cluster, no annotations, or being deleted).
	Ignore Disposition = iota
	// Eligible: scope legacy, not migrated, not failed, not locked.
	Eligible
	// InProgress: the lock is held; continue (or roll back) the migration.
	InProgress
	// Migrated: private-capi-types is set and the lock is released.
	Migrated
	// Failed: a previous migration failed; waits for SRE remediation.
	Failed
)

// Classify reads a HostedCluster's annotations. An in-progress lock wins over
// everything else (a migration must always be finished or rolled back).
// "scope: legacy" together with "private-capi-types" is the enhancement's
// invalid state: the operators repair it, the migration controller leaves it.
func Classify(annotations map[string]string, deleting bool) Disposition {
	if annotations[AnnotationMigrationInProgress] == "true" {
		return InProgress
	}
	switch {
	case deleting:
		return Ignore
	case annotations[AnnotationPrivateCAPITypes] == "true":
		return Migrated
	case hasKey(annotations, AnnotationMigrationFailed):
		return Failed
	case annotations[AnnotationScope] == ScopeLegacy:
		return Eligible
	default:
		return Ignore
	}
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
