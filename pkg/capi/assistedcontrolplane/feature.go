// Package assistedcontrolplane is the OpenShift assisted Cluster API
// control-plane provider (cluster-api-provider-openshift-assisted's architecture design), run by the hcp-fleet agent as a
// feature: an OpenshiftAssistedControlPlane becomes a hive ClusterDeployment
// and an assisted-service AgentClusterInstall (replica counts from Cluster
// API), control-plane Machines with their OpenshiftAssistedConfigs and
// infrastructure machines, and — once assisted-installer completed the
// installation — the Cluster API kubeconfig secret and Initialized/Ready.
// The bootstrap provider (package assistedbootstrap) does the per-host part;
// the two are meant to run together.
package assistedcontrolplane

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi"
	controlplanev1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/controlplane/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedbootstrap"
)

// FeatureName names the feature in the agent's logs and conditions.
const FeatureName = "capi-agent-control-plane-provider"

func init() {
	utilruntime.Must(assistedapi.AddToScheme(agent.Scheme))
}

// Feature is the control-plane provider as an agent feature.
func Feature() agent.Feature {
	return agent.Feature{
		Name:    FeatureName,
		Setup:   func(mgr ctrl.Manager, _ *agent.Env) error { return Setup(mgr) },
		Cleanup: func(ctx context.Context, env *agent.Env) error { return Cleanup(ctx, env.Managed) },
	}
}

// Setup installs the control-plane CRD and registers the controller. The
// bootstrap CRDs must exist too (the control plane creates
// OpenshiftAssistedConfigs): it installs them as well, which is idempotent.
func Setup(mgr ctrl.Manager) error {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	if err := crds.Install(context.Background(), c, append(append([]string{}, crds.ControlPlane...), crds.Bootstrap...)...); err != nil {
		return err
	}
	return (&Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper(),
		Binder: assistedbootstrap.NamespaceBinder(mgr.GetClient())}).SetupWithManager(mgr)
}

// Cleanup removes the control-plane CRD we installed, but refuses while any
// OpenshiftAssistedControlPlane exists (deleting the CRD would delete the
// control planes and, through ownership, their clusters' installations).
func Cleanup(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{Scheme: agent.Scheme})
	if err != nil {
		return err
	}
	list := &controlplanev1.OpenshiftAssistedControlPlaneList{}
	if err := c.List(ctx, list, client.Limit(1)); err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
		return err
	} else if err == nil && len(list.Items) > 0 {
		return &agent.CleanupBlockedError{Reason: "OpenshiftAssistedControlPlanesExist",
			Message: fmt.Sprintf("%s: OpenshiftAssistedControlPlane %s/%s (and maybe more) still exist; delete their clusters first",
				FeatureName, list.Items[0].Namespace, list.Items[0].Name)}
	}
	return crds.Uninstall(ctx, c, crds.ControlPlane...)
}
