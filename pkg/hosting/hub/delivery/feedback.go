package delivery

import (
	"fmt"
	"strconv"

	workv1 "open-cluster-management.io/api/work/v1"
)

// Feedback names. The work agent returns each as a scalar (it returns the
// first match of a JSONPath unless its RawFeedbackJsonString gate is on, in
// which case a multi-match comes back as a JSON list; Values handles both).
const (
	fbAvailable            = "available"
	fbAvailableReason      = "available-reason"
	fbAvailableMessage     = "available-message"
	fbProgressing          = "progressing"
	fbProgressingReason    = "progressing-reason"
	fbProgressingMessage   = "progressing-message"
	fbDegraded             = "degraded"
	fbDegradedReason       = "degraded-reason"
	fbDegradedMessage      = "degraded-message"
	fbValidRelease         = "valid-release"
	fbValidReleaseMsg      = "valid-release-message"
	fbValidConfig          = "valid-config"
	fbValidConfigMsg       = "valid-config-message"
	fbCVSucceeding         = "cv-succeeding"
	fbCVSucceedingReason   = "cv-succeeding-reason"
	fbCVSucceedingMessage  = "cv-succeeding-message"
	fbDesiredVersion       = "desired-version"
	fbDesiredImage         = "desired-image"
	fbCurrentVersion       = "current-version"
	fbLatestState          = "latest-state"
	fbLatestVersion        = "latest-version"
	fbLatestImage          = "latest-image"
	fbLatestCompletion     = "latest-completion-time"
	fbEndpointHost         = "endpoint-host"
	fbEndpointPort         = "endpoint-port"
	fbKubeconfig           = "kubeconfig"
	fbMigrationFailed      = "migration-failed"
	fbMigrating            = "migration-in-progress"
	fbOperatorLimits       = "olm-operator-limits"
	fbSubscriptionDefaults = "olm-subscription-defaults"
	fbCatalogHealth        = "olm-catalog-health"
	fbUpgradeable          = "cv-upgradeable"
	fbUpgradeableReason    = "cv-upgradeable-reason"
	fbUpgradeableMessage   = "cv-upgradeable-message"
	fbUpgradeReport        = "olm-upgrade-report"
	fbReleaseUpdates       = "release-updates"
	// fbOwnerUID is the object's hosting.LabelHCDUID (ownership.go).
	fbOwnerUID = "hcd-uid"

	fbReplicas        = "replicas"
	fbDesiredReplicas = "desired-replicas"
	fbAutoscalingMin  = "autoscaling-min"
	fbReady           = "ready"
	fbReadyMessage    = "ready-message"
	fbVersion         = "version"
)

func conditionPaths(condition, status, reason, message string) []workv1.JsonPath {
	sel := fmt.Sprintf(`.status.conditions[?(@.type=="%s")]`, condition)
	out := []workv1.JsonPath{{Name: status, Path: sel + ".status"}}
	if reason != "" {
		out = append(out, workv1.JsonPath{Name: reason, Path: sel + ".reason"})
	}
	return append(out, workv1.JsonPath{Name: message, Path: sel + ".message"})
}

// hostedClusterFeedback is what the hub reads back from each HostedCluster.
var hostedClusterFeedback = concat(
	conditionPaths("Available", fbAvailable, fbAvailableReason, fbAvailableMessage),
	conditionPaths("Progressing", fbProgressing, fbProgressingReason, fbProgressingMessage),
	conditionPaths("Degraded", fbDegraded, fbDegradedReason, fbDegradedMessage),
	conditionPaths("ValidReleaseImage", fbValidRelease, "", fbValidReleaseMsg),
	conditionPaths("ValidConfiguration", fbValidConfig, "", fbValidConfigMsg),
	// HyperShift's copy of the hosted cluster-version operator's Failing,
	// inverted: False is a release the CVO cannot roll out.
	conditionPaths("ClusterVersionSucceeding", fbCVSucceeding, fbCVSucceedingReason, fbCVSucceedingMessage),
	[]workv1.JsonPath{
		{Name: fbDesiredVersion, Path: ".status.version.desired.version"},
		{Name: fbDesiredImage, Path: ".status.version.desired.image"},
		// History is newest first: the first Completed entry is the current version.
		{Name: fbCurrentVersion, Path: `.status.version.history[?(@.state=="Completed")].version`},
		{Name: fbLatestState, Path: ".status.version.history[0].state"},
		{Name: fbLatestVersion, Path: ".status.version.history[0].version"},
		{Name: fbLatestImage, Path: ".status.version.history[0].image"},
		// When the newest release completed (status.version.history; the
		// release rollout's soak counts from its own record instead,
		// status.waveStartTime).
		{Name: fbLatestCompletion, Path: ".status.version.history[0].completionTime"},
		{Name: fbEndpointHost, Path: ".status.controlPlaneEndpoint.host"},
		{Name: fbEndpointPort, Path: ".status.controlPlaneEndpoint.port"},
		{Name: fbKubeconfig, Path: ".status.kubeconfig.name"},
		{Name: fbMigrationFailed, Path: ".metadata.annotations['hypershift\\.openshift\\.io/migration-failed']"},
		{Name: fbMigrating, Path: ".metadata.annotations['hypershift\\.openshift\\.io/migration-in-progress']"},
		// The guest's operator limits, as the agent reports them (pkg/olm).
		{Name: fbOperatorLimits, Path: ".metadata.annotations['hcpfleet\\.io/olm-operator-limits']"},
		// What the agent did with the Subscription defaults (pkg/olm).
		{Name: fbSubscriptionDefaults, Path: ".metadata.annotations['hcpfleet\\.io/olm-subscription-defaults-report']"},
		// The guest's catalog health, as the agent reports it (pkg/olm).
		{Name: fbCatalogHealth, Path: ".metadata.annotations['hcpfleet\\.io/olm-catalog-health']"},
		// Whether the guest may upgrade, and why not: the gate holds on
		// any reason, an admin's override forces HyperShift past OLM's
		// block only (pkg/olm/hub.Decide).
		{Name: fbUpgradeable, Path: `.status.conditions[?(@.type=="ClusterVersionUpgradeable")].status`},
		{Name: fbUpgradeableReason, Path: `.status.conditions[?(@.type=="ClusterVersionUpgradeable")].reason`},
		{Name: fbUpgradeableMessage, Path: `.status.conditions[?(@.type=="ClusterVersionUpgradeable")].message`},
		// The agent's upgrade report: when it read the guest, and the guest
		// ClusterVersion's Upgradeable (pkg/olm).
		{Name: fbUpgradeReport, Path: ".metadata.annotations['hcpfleet\\.io/olm-upgrade-report']"},
		// The available and conditional updates HyperShift reports, as
		// the agent carries them (pkg/hosting.AnnotationReleaseUpdates).
		{Name: fbReleaseUpdates, Path: ".metadata.annotations['hcpfleet\\.io/release-updates']"},
		ownerUIDPath,
	},
)

// ownerUIDPath reads the HostedClusterDeployment UID an object on the host
// is labelled with (hosting.LabelHCDUID).
var ownerUIDPath = workv1.JsonPath{Name: fbOwnerUID, Path: ".metadata.labels['hcpfleet\\.io/hcd-uid']"}

// nodePoolFeedback is what the hub reads back from each NodePool.
var nodePoolFeedback = concat(
	[]workv1.JsonPath{
		{Name: fbReplicas, Path: ".status.replicas"},
		{Name: fbDesiredReplicas, Path: ".spec.replicas"},
		{Name: fbAutoscalingMin, Path: ".spec.autoScaling.min"},
		{Name: fbVersion, Path: ".status.version"},
		ownerUIDPath,
	},
	conditionPaths("Ready", fbReady, "", fbReadyMessage),
)

func concat(parts ...[]workv1.JsonPath) []workv1.JsonPath {
	var out []workv1.JsonPath
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Values are one manifest's feedback, as strings.
type Values map[string]string

// valuesOf flattens a manifest's feedback.
func valuesOf(fb workv1.StatusFeedbackResult) Values {
	v := Values{}
	for _, f := range fb.Values {
		switch f.Value.Type {
		case workv1.String:
			if f.Value.String != nil {
				v[f.Name] = *f.Value.String
			}
		case workv1.Integer:
			if f.Value.Integer != nil {
				v[f.Name] = strconv.FormatInt(*f.Value.Integer, 10)
			}
		case workv1.Boolean:
			if f.Value.Boolean != nil {
				v[f.Name] = strconv.FormatBool(*f.Value.Boolean)
			}
		case workv1.JsonRaw:
			if f.Value.JsonRaw != nil {
				v[f.Name] = firstOfJSON(*f.Value.JsonRaw)
			}
		}
	}
	return v
}
