package hub

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"open-cluster-management.io/addon-framework/pkg/agent"
	"open-cluster-management.io/addon-framework/pkg/utils"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// AgentDeployment is the agent's Deployment in manifests/agent
// (04-deployment.yaml), whose availability the add-on's health probe reads.
const AgentDeployment = "hcp-fleet-agent"

// ReasonForeignInstall is the HyperShiftOperatorInstalled reason the agent
// reports when another manager runs the HyperShift operator on its cluster
// (pkg/hosting/agent/operator): that operator's health is not the add-on's.
const ReasonForeignInstall = "ForeignInstall"

// healthProber makes the add-on's Available condition mean "the agent runs
// and the HyperShift operator it installed is available", not "the agent
// renews a lease": addon-framework's work prober reads the agent
// Deployment's availability from the add-on ManifestWork's status feedback
// (the work agent's WellKnownStatus for Deployments), and operatorHealth
// adds the agent's own HyperShiftOperatorInstalled condition. The operator
// Deployment itself is not in the ManifestWork (the agent renders it from
// the HostingConfig), so its availability reaches the hub through the
// agent's condition. The namespace is a wildcard because the
// AddOnDeploymentConfig may move the agent out of hcp-fleet-agent.
func healthProber() *agent.HealthProber {
	probe := utils.DeploymentWellKnowManifestConfig("*", AgentDeployment)
	return &agent.HealthProber{
		Type: agent.HealthProberTypeWork,
		WorkProber: &agent.WorkHealthProber{
			ProbeFields: []agent.ProbeField{{
				ResourceIdentifier: probe.ResourceIdentifier,
				ProbeRules:         probe.FeedbackRules,
			}},
			HealthChecker: addonHealth,
		},
	}
}

// addonHealth is the work prober's health checker: nil when the agent
// Deployment is available and the HyperShift operator is healthy, otherwise
// why not (the addon-framework puts it in Available's message).
func addonHealth(results []agent.FieldResult, cluster *clusterv1.ManagedCluster, mca *addonv1alpha1.ManagedClusterAddOn) error {
	agentResults := make([]agent.FieldResult, 0, len(results))
	for _, r := range results {
		if r.ResourceIdentifier.Group == appsv1.GroupName && r.ResourceIdentifier.Resource == "deployments" && r.ResourceIdentifier.Name == AgentDeployment {
			agentResults = append(agentResults, r)
		}
	}
	if len(agentResults) == 0 {
		return fmt.Errorf("no status of the agent Deployment %s yet", AgentDeployment)
	}
	if err := utils.DeploymentAvailabilityHealthChecker(agentResults, cluster, mca); err != nil {
		return fmt.Errorf("the agent is not available: %w", err)
	}
	return operatorHealth(mca)
}

// operatorHealth reads the HyperShift operator's health from the agent's
// HyperShiftOperatorInstalled condition: healthy when True, or when another
// manager runs the operator (ForeignInstall); otherwise the condition's
// reason and message say why not. A condition older than the agent's
// current report cannot be told apart here, but the agent Deployment's
// availability, checked first, covers an agent that stopped reporting.
func operatorHealth(mca *addonv1alpha1.ManagedClusterAddOn) error {
	c := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionHyperShiftOperatorInstalled)
	switch {
	case c == nil:
		return fmt.Errorf("the agent has not reported the HyperShift operator yet (%s)", addon.ConditionHyperShiftOperatorInstalled)
	case c.Status == metav1.ConditionTrue:
		return nil
	case c.Reason == ReasonForeignInstall:
		return nil
	default:
		return fmt.Errorf("the HyperShift operator is not healthy: %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
}

// clusterAvailabilityChanged says whether a ManagedCluster's Available
// condition changed status. addon-framework's work prober skips a cluster
// whose Available is Unknown (OCM's registration sets its add-ons Unknown
// then), and re-probes only on a ManagedClusterAddOn or ManifestWork event:
// a cluster that comes back with its add-on ManifestWork unchanged would
// keep its add-on Unknown for good. The agent-deploy controller re-syncs the
// cluster's add-ons when this filter says so.
func clusterAvailabilityChanged(old, new *clusterv1.ManagedCluster) bool {
	status := func(mc *clusterv1.ManagedCluster) metav1.ConditionStatus {
		if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c != nil {
			return c.Status
		}
		return ""
	}
	return status(old) != status(new)
}
