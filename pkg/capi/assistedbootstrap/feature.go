// Package assistedbootstrap is the OpenShift assisted Cluster API bootstrap
// provider (cluster-api-provider-openshift-assisted's architecture design), run by the hcp-fleet agent as a feature: it turns each
// OpenshiftAssistedConfig into an assisted-service InfraEnv, hands the
// discovery ISO to the Machine's infrastructure object, writes the empty
// bootstrap data secret, and makes the Agent that boots from the ISO the
// Machine's host (role, approval, provider-ID label). Machines that appear
// while their cluster's day-1 installation runs are held and join as day-2
// hosts after it.
package assistedbootstrap

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi"
	bootstrapv1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/bootstrap/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// FeatureName names the feature in the agent's logs and conditions.
const FeatureName = "capi-agent-bootstrap-provider"

func init() {
	utilruntime.Must(assistedapi.AddToScheme(agent.Scheme))
}

// Feature is the bootstrap provider as an agent feature.
func Feature(opts Options) agent.Feature {
	return agent.Feature{
		Name:    FeatureName,
		Setup:   func(mgr ctrl.Manager, _ *agent.Env) error { return Setup(mgr, opts) },
		Cleanup: func(ctx context.Context, env *agent.Env) error { return Cleanup(ctx, env.Managed) },
	}
}

// Setup installs the bootstrap CRDs and registers the controllers with mgr.
// The Cluster API core, assisted-service and hive CRDs must be installed
// (the CAPI feature and MCE/assisted-service install them).
func Setup(mgr ctrl.Manager, opts Options) error {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	if err := crds.Install(context.Background(), c, crds.Bootstrap...); err != nil {
		return err
	}
	binder := NamespaceBinder(mgr.GetClient())
	if err := (&ConfigReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper(), Options: opts, Binder: binder}).SetupWithManager(mgr); err != nil {
		return err
	}
	return (&AgentReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper(), Options: opts, Binder: binder}).SetupWithManager(mgr)
}

// NamespaceBinder binds the agent's CAPI-namespace grants
// (addon.AgentCAPINamespaceRole) in the namespaces the providers write in,
// probing with a Secret create (the bootstrap data Secret).
func NamespaceBinder(c client.Client) *kubeutil.Binder {
	return &kubeutil.Binder{Client: c, ClusterRole: addon.AgentCAPINamespaceRole,
		Probe: authorizationv1.ResourceAttributes{Verb: "create", Resource: "secrets"}}
}

// Cleanup removes the bootstrap CRDs we installed, but refuses while any
// OpenshiftAssistedConfig exists: deleting the CRD would delete them, and
// with them the InfraEnvs of live hosts.
func Cleanup(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{Scheme: agent.Scheme})
	if err != nil {
		return err
	}
	list := &bootstrapv1.OpenshiftAssistedConfigList{}
	if err := c.List(ctx, list, client.Limit(1)); err != nil && !isNoCRD(err) {
		return err
	} else if err == nil && len(list.Items) > 0 {
		return &agent.CleanupBlockedError{Reason: "OpenshiftAssistedConfigsExist",
			Message: fmt.Sprintf("%s: OpenshiftAssistedConfig %s/%s (and maybe more) still exist; delete their clusters first",
				FeatureName, list.Items[0].Namespace, list.Items[0].Name)}
	}
	return crds.Uninstall(ctx, c, crds.Bootstrap...)
}

func isNoCRD(err error) bool { return apierrors.IsNotFound(err) || meta.IsNoMatchError(err) }
