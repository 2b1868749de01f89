package v1alpha1

// Condition types of HostedClusterDeployment status.conditions. Every condition the
// hub sets carries a reason (one of the reasons below where one fits) and a message
// that tells the fleet admin what is going on in words.
const (
	// ConditionScheduled is True once the hosted cluster has been bound to a hosting
	// cluster (status.hostingCluster). While False the reason says why no cluster
	// qualifies.
	ConditionScheduled = "Scheduled"
	// ConditionDelivered is True when the ManifestWork carrying the HostedCluster,
	// NodePools and referenced Secrets/ConfigMaps has been applied on the hosting
	// cluster.
	ConditionDelivered = "Delivered"
	// ConditionAvailable mirrors the HostedCluster's Available condition: the hosted
	// cluster's API is up.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while HyperShift is rolling out (creating or
	// upgrading) the hosted cluster.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the hosted cluster, its delivery or its import
	// has a problem that needs attention.
	ConditionDegraded = "Degraded"
	// ConditionNodePoolsReady is True when every node pool reports all its nodes ready.
	ConditionNodePoolsReady = "NodePoolsReady"
	// ConditionHostingClusterAvailable is True while the hosting cluster and the
	// hcp-fleet add-on on it are available.
	ConditionHostingClusterAvailable = "HostingClusterAvailable"
	// ConditionUpgradeBlocked is True when a requested release upgrade is held back,
	// e.g. because installed guest operators do not support the new OpenShift version.
	ConditionUpgradeBlocked = "UpgradeBlocked"
	// ConditionCatalogsReady is True when every OLM catalog of the hosted cluster
	// (the CatalogSources in its openshift-marketplace) serves: OLM's
	// catalog-operator is connected to it (connection state READY).
	ConditionCatalogsReady = "CatalogsReady"
	// ConditionImported is True once the hosted cluster is represented on the hub
	// by a ManagedCluster (status.managedCluster) and its admin kubeconfig is
	// mirrored into this namespace (status.kubeconfigSecret).
	ConditionImported = "Imported"
	// ConditionSubscriptionDefaultsApplied is True when the agent has applied the hosted
	// cluster's OLM Subscription defaults (spec.olm.subscriptionDefaults, else its
	// HostingConfig's) in it: the message counts the Subscriptions that got them and
	// names those that keep their own. Absent when there are no defaults.
	ConditionSubscriptionDefaultsApplied = "SubscriptionDefaultsApplied"
	// ConditionRelocating is True while a HostedClusterRelocation moves the
	// hosted cluster to another management cluster (reason: its phase), and
	// False once the last one ended (Done, RolledBack, or why it failed).
	// Absent when it was never relocated.
	ConditionRelocating = "Relocating"
)

// Well-known condition reasons. Controllers may use others where none fits.
const (
	// ReasonAsExpected is the reason of a condition in its healthy state.
	ReasonAsExpected = "AsExpected"
	// ReasonStatusUnknown is used when the hub has no fresh status from the hosting
	// cluster to decide on.
	ReasonStatusUnknown = "StatusUnknown"

	// Scheduled.

	// ReasonScheduled: the hosted cluster was bound to a hosting cluster.
	ReasonScheduled = "Scheduled"
	// ReasonRelocated: a HostedClusterRelocation moved the binding to another
	// hosting cluster (the only way status.hostingCluster ever changes).
	ReasonRelocated = "Relocated"
	// ReasonAdopted: a fleet admin adopted the HostedCluster that runs on
	// the hosting cluster (HostedClusterAdoption); bound there, not decided.
	ReasonAdopted = "Adopted"
	// ReasonPlacementNotFound: spec.placement names no Placement in the namespace.
	ReasonPlacementNotFound = "PlacementNotFound"
	// ReasonNoPlacementDecisions: the Placement has not selected any cluster.
	ReasonNoPlacementDecisions = "NoPlacementDecisions"
	// ReasonHostingClusterNotFound: spec.hostingCluster names no ManagedCluster.
	ReasonHostingClusterNotFound = "HostingClusterNotFound"
	// ReasonHostingClusterNotAllowed: the pinned cluster is not in a ManagedClusterSet
	// bound to the namespace, or not among the Placement's decisions.
	ReasonHostingClusterNotAllowed = "HostingClusterNotAllowed"
	// ReasonNoSuitableHostingCluster: candidates exist, but none passes the filters;
	// the message lists why each was rejected.
	ReasonNoSuitableHostingCluster = "NoSuitableHostingCluster"
	// ReasonCapacityExhausted: every otherwise suitable cluster is full.
	ReasonCapacityExhausted = "CapacityExhausted"
	// ReasonReleaseNotSupported: no candidate's HyperShift operator supports the
	// requested release.
	ReasonReleaseNotSupported = "ReleaseNotSupported"
	// ReasonPlatformNotSupported: no candidate supports the hosted cluster's platform.
	ReasonPlatformNotSupported = "PlatformNotSupported"
	// ReasonAddOnNotAvailable: the hcp-fleet add-on is not available on the candidate.
	ReasonAddOnNotAvailable = "AddOnNotAvailable"
	// ReasonInfraIDTaken: spec.hostedCluster.spec.infraID is the infraID of another
	// HostedClusterDeployment that came first (infraID keys cloud resources and OIDC
	// documents, so two hosted clusters must never share one). Delivered uses it too,
	// for a bound one: its ManifestWork is not written, and one already delivered is
	// left as it is.
	ReasonInfraIDTaken = "InfraIDTaken"
	// ReasonControlPlaneNamespaceConflict: HyperShift's control-plane namespace
	// <hostingNamespace>-<name> is, on the management cluster, a hosting namespace its
	// HostingConfig allows or the control-plane or hosting namespace of another
	// HostedClusterDeployment bound there, or its hosting namespace is another's
	// control-plane namespace. Scheduled: no candidate is free of it;
	// Delivered: a bound one is not written any more, what was delivered is left as
	// it is.
	ReasonControlPlaneNamespaceConflict = "ControlPlaneNamespaceConflict"
	// ReasonHostingClusterCordoned: every candidate (or the pinned cluster)
	// is cordoned (ManagedCluster taint hcpfleet.io/unschedulable) and the
	// HostedClusterDeployment does not tolerate it.
	ReasonHostingClusterCordoned = "HostingClusterCordoned"
	// ReasonBindingRecovered: status.hostingCluster was empty (the status was
	// lost, as in a backup restore) and the hub bound the
	// HostedClusterDeployment where its ManifestWork is, not anew.
	ReasonBindingRecovered = "BindingRecovered"
	// ReasonBindingUnknown: the HostedClusterDeployment was bound before (the
	// hub's hcpfleet.io/bound-to annotation) but its status was lost and no
	// management cluster's namespace holds its ManifestWork yet: nothing is
	// decided while its control plane may run somewhere.
	ReasonBindingUnknown = "BindingUnknown"
	// ReasonBindingAmbiguous: ManifestWorks for the HostedClusterDeployment
	// are in more than one management cluster's namespace.
	ReasonBindingAmbiguous = "BindingAmbiguous"

	// Delivered.

	// ReasonApplied: the ManifestWork was applied on the hosting cluster.
	ReasonApplied = "Applied"
	// ReasonApplyFailed: the ManifestWork could not be applied; the message says why.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonOwnedByAnother: an object on the hosting cluster the ManifestWork would
	// apply belongs to another HostedClusterDeployment or field manager (a server-side
	// apply conflict: a HostedCluster left behind by deletionPolicy Orphan, a Secret
	// someone else created); hcp-fleet never merges into it. Taking it over is an
	// explicit admin action on the hosting cluster.
	ReasonOwnedByAnother = "OwnedByAnother"
	// ReasonUIDMismatch: the ManifestWork the binding was recovered from
	// delivers an earlier object of the same namespace and name (another UID:
	// a backup restore gives every object a new one). The delivery leaves it
	// unchanged, so nothing on the hosting cluster is renamed or deleted, and
	// writes nothing until an admin re-adopts the hosted cluster.
	ReasonUIDMismatch = "UIDMismatch"
	// ReasonWaitingForApply: the ManifestWork exists but the hosting cluster has not
	// reported it applied yet.
	ReasonWaitingForApply = "WaitingForApply"
	// ReasonReferencedObjectNotFound: a Secret or ConfigMap the spec refers to is
	// missing from the namespace.
	ReasonReferencedObjectNotFound = "ReferencedObjectNotFound"
	// ReasonHostingNamespaceNotAllowed: the HostingConfig of the hosting cluster does
	// not (or no longer does) allow spec.hostingNamespace (its spec.hostingNamespaces);
	// the ManifestWork is not written, and one already delivered is left as it is.
	// Scheduled uses it too, when no candidate allows the namespace.
	ReasonHostingNamespaceNotAllowed = "HostingNamespaceNotAllowed"
	// ReasonPolicyViolation: the HostedClusterDeployment sets what the
	// TenantPolicy of its namespace does not allow (a field, a release image, a
	// platform, a hostname, a quota); the message names each field and the
	// policy. Scheduled uses it before binding; Delivered once bound, when the
	// policy was tightened later: what was delivered keeps running as it is.
	ReasonPolicyViolation = "PolicyViolation"
	// ReasonReferencedObjectTooLarge: a Secret or ConfigMap the spec refers to
	// is larger than the TenantPolicy allows; nothing new is delivered.
	ReasonReferencedObjectTooLarge = "ReferencedObjectTooLarge"

	// Available, Progressing, Degraded, NodePoolsReady.

	// ReasonHostedClusterNotAvailable: HyperShift reports the hosted cluster not
	// available; the message carries HyperShift's.
	ReasonHostedClusterNotAvailable = "HostedClusterNotAvailable"
	// ReasonRollingOut: HyperShift is rolling out a release.
	ReasonRollingOut = "RollingOut"
	// ReasonImportFailed: the hosted cluster could not be imported as a ManagedCluster.
	ReasonImportFailed = "ImportFailed"
	// ReasonImported: the ManagedCluster exists and the kubeconfig is mirrored.
	ReasonImported = "Imported"
	// ReasonImportDisabled: the hub, the management cluster's HostingConfig or
	// the HostedClusterDeployment (where its TenantPolicy allows) turned the
	// import off; no ManagedCluster is created.
	ReasonImportDisabled = "ImportDisabled"
	// ReasonWaitingForAvailable: import waits until the hosted cluster is available.
	ReasonWaitingForAvailable = "WaitingForAvailable"
	// ReasonWaitingForKubeconfig: the hosted cluster is available but its admin
	// kubeconfig has not arrived from the hosting cluster yet.
	ReasonWaitingForKubeconfig = "WaitingForKubeconfig"
	// ReasonNodePoolsNotReady: at least one node pool has fewer ready nodes than asked.
	ReasonNodePoolsNotReady = "NodePoolsNotReady"
	// ReasonNoNodePools: the hosted cluster has no node pools.
	ReasonNoNodePools = "NoNodePools"

	// HostingClusterAvailable.

	// ReasonHostingClusterUnavailable: the hosting ManagedCluster is not available
	// (its agent stopped reporting).
	ReasonHostingClusterUnavailable = "HostingClusterUnavailable"
	// ReasonHostingClusterLost: the hosting ManagedCluster is gone. The hosted cluster
	// is not moved elsewhere.
	ReasonHostingClusterLost = "HostingClusterLost"

	// UpgradeBlocked.

	// ReasonOperatorIncompatible: installed guest operators' olm.maxOpenShiftVersion is
	// lower than the requested release.
	ReasonOperatorIncompatible = "OperatorIncompatible"
	// ReasonClusterVersionNotUpgradeable: the hosted cluster says it is not
	// upgradeable (HostedCluster ClusterVersionUpgradeable or the guest
	// ClusterVersion's Upgradeable is False) for a reason other than OLM's;
	// the message names the reason. No upgrade override lifts it.
	ReasonClusterVersionNotUpgradeable = "ClusterVersionNotUpgradeable"
	// ReasonUpgradeReportPending: the agent's report of the hosted cluster
	// (operators, ClusterVersion) has not arrived yet, or is older than the
	// hub's bound, and the bound has not passed since the hub began waiting.
	ReasonUpgradeReportPending = "UpgradeReportPending"
	// ReasonUpgradeReportMissing: the agent's report never arrived, or is
	// older than the hub's bound; the message says which and since when.
	ReasonUpgradeReportMissing = "UpgradeReportMissing"
	// ReasonReleaseVersionUnknown: the OpenShift version of a release image
	// (pinned by digest) is not known: neither a ClusterImageSet nor the
	// hosted cluster names it.
	ReasonReleaseVersionUnknown = "ReleaseVersionUnknown"

	// SubscriptionDefaultsApplied.

	// ReasonSubscriptionDefaultsFailed: the agent could not write the defaults on some
	// Subscriptions in the hosted cluster.
	ReasonSubscriptionDefaultsFailed = "SubscriptionDefaultsFailed"

	// CatalogsReady.

	// ReasonCatalogsNotReady: catalogs of the hosted cluster do not serve (their
	// connection state is not READY); the message names each and its state.
	ReasonCatalogsNotReady = "CatalogsNotReady"
	// ReasonCatalogsNotObserved: catalogs of the hosted cluster have no connection
	// state yet (OLM's catalog-operator has not connected to them).
	ReasonCatalogsNotObserved = "CatalogsNotObserved"
	// ReasonNoCatalogs: the hosted cluster has no CatalogSources in
	// openshift-marketplace (e.g. the default sources are disabled).
	ReasonNoCatalogs = "NoCatalogs"

	// Deletion.

	// ReasonDeleting: the HostedCluster is being deleted on the hosting cluster.
	ReasonDeleting = "Deleting"
	// ReasonOrphaning: deletionPolicy Orphan; the HostedCluster is being released.
	ReasonOrphaning = "Orphaning"
	// ReasonDeletionTimedOut: deletion waited longer than the hub allows for a
	// hosting cluster that is unavailable or gone. Nothing is given up until
	// the user annotates the HostedClusterDeployment
	// hcpfleet.io/abandon-hosted-cluster=true.
	ReasonDeletionTimedOut = "DeletionTimedOut"
)
