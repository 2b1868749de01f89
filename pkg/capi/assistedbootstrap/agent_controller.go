package assistedbootstrap

import (
	"context"
	"encoding/json"
	"fmt"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/assisted"
	bootstrapv1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/bootstrap/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// AgentReconciler makes each Agent that registered from one of our
// InfraEnvs the host of that InfraEnv's Machine: role from the Machine,
// hostname, provider-ID node label, binding, approval. It writes Agents with
// merge patches of those fields only (assisted-service owns the rest, and
// our pinned Agent type is older than the CRD).
type AgentReconciler struct {
	Client    client.Client
	APIReader client.Reader
	Mapper    meta.RESTMapper
	Options   Options
	// Binder gives the agent its grants in the reconciled object's namespace
	// (addon.AgentCAPINamespaceRole) before it writes there; nil binds
	// nothing (an identity that holds the grants already).
	Binder *kubeutil.Binder
}

// SetupWithManager registers the reconciler.
func (r *AgentReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Options = r.Options.withDefaults()
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[bootstrapv1.ConfigNameLabel] != "" && o.GetLabels()[aiv1beta1.InfraEnvNameLabel] != ""
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("openshiftassisted-agent").
		For(&aiv1beta1.Agent{}).
		WithEventFilter(ours).
		Complete(r)
}

// Reconcile patches one Agent.
func (r *AgentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	agent := &aiv1beta1.Agent{}
	if err := r.Client.Get(ctx, req.NamespacedName, agent); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// The InfraEnv's agentLabels name the config; the InfraEnv label is set
	// by assisted-service itself. Both must agree: one InfraEnv per config.
	cfgName := agent.Labels[bootstrapv1.ConfigNameLabel]
	if cfgName == "" || agent.Labels[aiv1beta1.InfraEnvNameLabel] != cfgName {
		return ctrl.Result{}, nil
	}
	cfg := &bootstrapv1.OpenshiftAssistedConfig{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: agent.Namespace, Name: cfgName}, cfg); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := r.Binder.Ensure(ctx, agent.Namespace); err != nil {
		return ctrl.Result{}, err
	}
	machine, err := machineOf(ctx, r.Client, cfg.Namespace, cfg.Name)
	if err != nil || machine == nil {
		return ctrl.Result{}, err
	}
	providerID := ""
	if infra, err := infraOf(ctx, r.Client, r.Mapper, machine); err == nil {
		if providerID, err = r.Options.ProviderIDValue(ctx, r.APIReader, infra); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	}
	patch := agentPatch(agent, machine, assisted.ClusterDeploymentName(machine.Spec.ClusterName), r.Options.ProviderIDLabel, providerID)
	if patch != nil {
		data, err := json.Marshal(patch)
		if err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Client.Patch(ctx, agent, client.RawPatch(types.MergePatchType, data)); err != nil {
			return ctrl.Result{}, fmt.Errorf("patching Agent %s: %w", agent.Name, err)
		}
	}
	if providerID == "" {
		// The host is not claimed yet (or not found): look again.
		return ctrl.Result{RequeueAfter: r.Options.RequeueAfter}, nil
	}
	return ctrl.Result{}, nil
}
