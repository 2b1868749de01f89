package hub

import (
	appsv1 "k8s.io/api/apps/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// OCM's addon-manager counts a cluster of a rollout done from its add-on
// ManifestWorks' Applied and Available (ocm
// pkg/addon/controllers/addonprogressing, workIsReady), never from the
// add-on's health. Without a rule, the work agent makes a manifest
// Available as soon as its object exists, so a HyperShift operator image that
// crash-loops would not stop a Progressive rollout. The work agent evaluates
// conditionRules per manifest, and a rule-made condition of type Available
// replaces the existence check of that manifest in the work's Available
// (ocm pkg/work/spoke/conditions, AggregateManifestConditions). These rules
// make the work Available only when
//
//   - every Deployment of the work (the agent's) has rolled out its current
//     spec and is available, as `kubectl rollout status` decides, so a new
//     agent image that does not start holds the rollout; and
//   - the agent reports the HyperShift operator healthy with exactly the
//     HostingConfig this work hands it: the HostingConfig ConfigMap carries
//     the hub's revision of its content, the agent answers with the revision
//     it saw the operator healthy with, and the rule compares the two. A new
//     revision is not Available until the agent has rolled the operator out
//     with it, and the answer is withdrawn when the operator fails later.
//
// The rules' resource identifiers differ from the health prober's (the
// addon-framework merges a ManifestConfig with the prober's of the same
// identifier and keeps only feedback rules and update strategy), and the
// work agent merges the matching options of a manifest, so the prober's
// feedback still reaches the hub.

// Condition rule expressions, in OCM's CEL environment for condition rules
// (sdk-go's base options: optional types, the conditions library).
const (
	// rolledOutExpr follows kubectl's rollout status for Deployments: the
	// controller saw the spec, every replica is updated, no old one is left,
	// and the updated ones are available.
	rolledOutExpr = `object.?status.?observedGeneration.orValue(0) >= object.metadata.generation &&
object.?status.?updatedReplicas.orValue(0) >= object.?spec.?replicas.orValue(1) &&
object.?status.?replicas.orValue(0) <= object.?status.?updatedReplicas.orValue(0) &&
object.?status.?availableReplicas.orValue(0) >= object.?status.?updatedReplicas.orValue(0)`
	rolledOutMessage = `result ? 'the Deployment has rolled out and is available' : ` +
		`'the Deployment has not rolled out its current spec yet, or is not available: ' + ` +
		`string(object.?status.?availableReplicas.orValue(0)) + ' of ' + string(object.?spec.?replicas.orValue(1)) + ' replicas available'`

	// The ConfigMap's two revision annotations, '' when absent.
	configRevisionExpr  = `object.metadata.?annotations[?'` + addon.HostingConfigRevisionAnnotation + `'].orValue('')`
	healthyRevisionExpr = `object.metadata.?annotations[?'` + addon.OperatorHealthyRevisionAnnotation + `'].orValue('')`
	operatorHealthyExpr = configRevisionExpr + ` != '' && ` + healthyRevisionExpr + ` == ` + configRevisionExpr
	// The message points at the agent's own condition, which says why.
	operatorHealthyMessage = `result ? 'the agent reports the HyperShift operator healthy with HostingConfig revision ' + ` + configRevisionExpr + ` : ` +
		`'the agent has not reported the HyperShift operator healthy with HostingConfig revision ' + ` + configRevisionExpr +
		` + ' (see the add-on\'s ` + addon.ConditionHyperShiftOperatorInstalled + ` condition)'`
)

// rolloutHealthManifestConfigs are the add-on ManifestWork's condition rules
// (GetAgentAddonOptions adds them to the template's options).
func rolloutHealthManifestConfigs() []workv1.ManifestConfigOption {
	return []workv1.ManifestConfigOption{
		{
			// Every Deployment of the add-on work: only the agent's. The
			// namespace is a wildcard because the AddOnDeploymentConfig may
			// move the agent.
			ResourceIdentifier: workv1.ResourceIdentifier{Group: appsv1.GroupName, Resource: "deployments", Namespace: "*", Name: "*"},
			ConditionRules: []workv1.ConditionRule{{
				Type:              workv1.CelConditionExpressionsType,
				Condition:         workv1.ManifestAvailable,
				CelExpressions:    []string{rolledOutExpr},
				MessageExpression: rolledOutMessage,
			}},
		},
		{
			ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "*", Name: addon.HostingConfigMap},
			ConditionRules: []workv1.ConditionRule{{
				Type:              workv1.CelConditionExpressionsType,
				Condition:         workv1.ManifestAvailable,
				CelExpressions:    []string{operatorHealthyExpr},
				MessageExpression: operatorHealthyMessage,
			}},
		},
	}
}
