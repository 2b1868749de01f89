package addon

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The executors of the hub's ManifestWorks (OCM's spec.executor): one
// ServiceAccount per kind of work, in the agent's install namespace on each
// management cluster (manifests/agent/10-executors.yaml). The OCM work agent
// applies a manifest only if its work's executor may get, create, update
// and patch it (and delete it, when the work owns it), asked by
// SubjectAccessReview; so what the hub's works can do on a management
// cluster is what these identities are granted there, not everything the
// work agent itself may do. On the hub, OCM's ManifestWork webhook lets a
// writer name an executor only with the verb execute-as on manifestworks
// for the executor's user name (ExecutorUser), which the hub's ClusterRole
// grants for these three names.
const (
	// ExecutorDelivery applies a hosted cluster's delivery (and the same
	// work moved by a relocation): its hosting namespace, the copies of
	// referenced Secrets and ConfigMaps, the HostedCluster, its NodePools.
	ExecutorDelivery = "hcp-fleet-work-delivery"
	// ExecutorRelocation applies a relocation's pause work: the
	// HostedCluster's pausedUntil.
	ExecutorRelocation = "hcp-fleet-work-relocation"
	// ExecutorExtension applies an extension's release ConfigMap in a
	// hosted control-plane namespace.
	ExecutorExtension = "hcp-fleet-work-extension"
)

// Executors are the executor ServiceAccounts' names.
var Executors = []string{ExecutorDelivery, ExecutorRelocation, ExecutorExtension}

// WorkExecutor is the executor of a ManifestWork applied as ServiceAccount
// name of the agent's install namespace.
func WorkExecutor(installNamespace, name string) *workv1.ManifestWorkExecutor {
	if installNamespace == "" {
		installNamespace = DefaultInstallNamespace
	}
	return &workv1.ManifestWorkExecutor{Subject: workv1.ManifestWorkExecutorSubject{
		Type:           workv1.ExecutorSubjectTypeServiceAccount,
		ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: installNamespace, Name: name},
	}}
}

// ExecutorUser is the name OCM's ManifestWork webhook asks execute-as for:
// the ServiceAccount's user name.
func ExecutorUser(installNamespace, name string) string {
	return fmt.Sprintf("system:serviceaccount:%s:%s", installNamespace, name)
}

// InstallNamespaceOf is where cluster's agent runs, as the addon-manager
// records it in the ManagedClusterAddOn's status (the
// AddOnDeploymentConfig's agentInstallNamespace), DefaultInstallNamespace
// when it records none or the cluster has no add-on yet.
func InstallNamespaceOf(ctx context.Context, c client.Reader, cluster string) (string, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: cluster, Name: Name}, mca); err != nil {
		if apierrors.IsNotFound(err) {
			return DefaultInstallNamespace, nil
		}
		return "", err
	}
	if mca.Status.Namespace == "" {
		return DefaultInstallNamespace, nil
	}
	return mca.Status.Namespace, nil
}
