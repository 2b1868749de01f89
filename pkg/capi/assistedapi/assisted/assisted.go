// Package assisted holds what both OpenShift assisted providers need to know
// about assisted-service and hive: the names that tie a Cluster API Cluster
// to its ClusterDeployment/AgentClusterInstall, how to read an
// installation's state, and the thin apply layer we write their objects with.
//
// The pinned hive (2022) and assisted-service (2023) Go types are older than
// the CRDs on real hubs, so we read them typed (reading loses nothing we use)
// but write them only with server-side apply of the fields we own, or merge
// patches of single fields — never a typed Get→Update, which would drop the
// fields those types do not know.
package assisted

import (
	"context"
	"strings"

	hiveext "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager is the server-side-apply field manager of both providers.
const FieldManager = "hcp-fleet-agent-providers"

// GroupVersionKinds of the objects we write without their Go types.
var (
	ClusterDeploymentGVK   = schema.GroupVersionKind{Group: "hive.openshift.io", Version: "v1", Kind: "ClusterDeployment"}
	AgentClusterInstallGVK = schema.GroupVersionKind{Group: "extensions.hive.openshift.io", Version: "v1beta1", Kind: "AgentClusterInstall"}
	InfraEnvGVK            = schema.GroupVersionKind{Group: "agent-install.openshift.io", Version: "v1beta1", Kind: "InfraEnv"}
	AgentGVK               = schema.GroupVersionKind{Group: "agent-install.openshift.io", Version: "v1beta1", Kind: "Agent"}
)

// ClusterDeploymentName is the name of the ClusterDeployment (and of its
// AgentClusterInstall) of a Cluster API Cluster: the Cluster's name, in the
// Cluster's namespace. Both providers derive it, so the bootstrap provider
// finds the installation without reading the control plane.
func ClusterDeploymentName(clusterName string) string { return clusterName }

// InstallState is where a cluster installation is.
type InstallState string

const (
	// NotStarted: waiting for agents (or no AgentClusterInstall yet).
	NotStarted InstallState = "NotStarted"
	// Installing: the day-1 installation runs; new hosts must wait.
	Installing InstallState = "Installing"
	// Installed: day-1 done; new hosts join as day-2.
	Installed InstallState = "Installed"
	// Failed: the installation failed.
	Failed InstallState = "Failed"
)

// installingStates are assisted-service cluster states (debugInfo.state)
// of a running day-1 installation.
var installingStates = map[string]bool{
	"preparing-for-installation": true, "installing": true,
	"installing-pending-user-action": true, "finalizing": true,
}

// State reads an AgentClusterInstall's installation state from its
// conditions (Completed, Failed) and, while those are not conclusive, its
// debugInfo.state. A nil ACI has not started.
func State(aci *hiveext.AgentClusterInstall) InstallState {
	if aci == nil {
		return NotStarted
	}
	completed := Condition(aci.Status.Conditions, hiveext.ClusterCompletedCondition)
	failed := Condition(aci.Status.Conditions, hiveext.ClusterFailedCondition)
	switch {
	case completed != nil && completed.Status == corev1.ConditionTrue:
		return Installed
	case failed != nil && failed.Status == corev1.ConditionTrue:
		return Failed
	case completed != nil && completed.Reason == hiveext.ClusterInstallationInProgressReason:
		return Installing
	case installingStates[aci.Status.DebugInfo.State]:
		return Installing
	case aci.Status.DebugInfo.State == "adding-hosts" || aci.Status.DebugInfo.State == "installed":
		return Installed
	}
	return NotStarted
}

// Condition returns the condition of type t, or nil.
func Condition(conds []hivev1.ClusterInstallCondition, t string) *hivev1.ClusterInstallCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// AgentInstalled says whether an Agent's host is installed (day 1 or day 2).
func AgentInstalled(a *aiv1beta1.Agent) bool {
	for _, c := range a.Status.Conditions {
		if c.Type == aiv1beta1.InstalledCondition {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Apply server-side-applies obj (an unstructured object holding only the
// fields we own) with our field manager, taking over conflicts on those
// fields: we are their only legitimate writer.
func Apply(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	return c.Patch(ctx, obj, client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership)
}

// Object returns an unstructured object of gvk with name, namespace and the
// given content merged in.
func Object(gvk schema.GroupVersionKind, namespace, name string, content map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range content {
		u.Object[k] = v
	}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// NestedValue builds {"a": {"b": {"c": value}}} from the path "a.b.c", for
// merge patches of single fields.
func NestedValue(path string, value any) map[string]any {
	parts := strings.Split(path, ".")
	out := map[string]any{parts[len(parts)-1]: value}
	for i := len(parts) - 2; i >= 0; i-- {
		out = map[string]any{parts[i]: out}
	}
	return out
}

// Strings converts a []string for unstructured content.
func Strings(in []string) []any {
	out := make([]any, len(in))
	for i, s := range in {
		out[i] = s
	}
	return out
}
