package assistedbootstrap

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	hiveext "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/assisted"
	bootstrapv1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/bootstrap/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// machineByConfigIndex indexes Machines by the name of the
// OpenshiftAssistedConfig in spec.bootstrap.configRef. It finds a config's
// Machine whether a MachineSet or our control plane made it and before
// Cluster API's Machine controller adds its owner reference.
const machineByConfigIndex = "assistedbootstrap.spec.bootstrap.configRef.openshiftAssistedConfig"

func indexMachineByConfig(obj client.Object) []string {
	m := obj.(*clusterv1.Machine)
	ref := m.Spec.Bootstrap.ConfigRef
	if ref.Kind == "OpenshiftAssistedConfig" && ref.APIGroup == bootstrapv1.GroupVersion.Group && ref.Name != "" {
		return []string{ref.Name}
	}
	return nil
}

// ConfigReconciler reconciles OpenshiftAssistedConfigs: for each it makes an
// InfraEnv, hands the discovery ISO to the Machine's infrastructure object,
// writes the empty bootstrap data secret and reports the bootstrap
// contract. It holds Machines that appear while their cluster installs.
type ConfigReconciler struct {
	Client client.Client
	// APIReader reads what the manager's cache does not hold (the agent's
	// cache has Secrets of its own namespace only).
	APIReader client.Reader
	Mapper    meta.RESTMapper
	Options   Options
	// Binder gives the agent its grants in the reconciled object's namespace
	// (addon.AgentCAPINamespaceRole) before it writes there; nil binds
	// nothing (an identity that holds the grants already).
	Binder *kubeutil.Binder
}

// SetupWithManager registers the reconciler and its watches.
func (r *ConfigReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Options = r.Options.withDefaults()
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &clusterv1.Machine{}, machineByConfigIndex, indexMachineByConfig); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("openshiftassistedconfig").
		For(&bootstrapv1.OpenshiftAssistedConfig{}).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(configOfMachine)).
		Watches(&aiv1beta1.InfraEnv{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &bootstrapv1.OpenshiftAssistedConfig{}, handler.OnlyControllerOwner())).
		Watches(&aiv1beta1.Agent{}, handler.EnqueueRequestsFromMapFunc(configOfAgent)).
		Watches(&hiveext.AgentClusterInstall{}, handler.EnqueueRequestsFromMapFunc(r.configsOfInstall)).
		Complete(r)
}

func configOfMachine(_ context.Context, obj client.Object) []reconcile.Request {
	names := indexMachineByConfig(obj)
	if len(names) == 0 {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: names[0]}}}
}

// configOfAgent maps an Agent to the config whose InfraEnv it registered in
// (InfraEnv and config share the name).
func configOfAgent(_ context.Context, obj client.Object) []reconcile.Request {
	ie := obj.GetLabels()[aiv1beta1.InfraEnvNameLabel]
	if ie == "" || obj.GetLabels()[bootstrapv1.ConfigNameLabel] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ie}}}
}

// configsOfInstall maps an AgentClusterInstall to the configs of its
// cluster's Machines, so held Machines are released when it completes.
func (r *ConfigReconciler) configsOfInstall(ctx context.Context, obj client.Object) []reconcile.Request {
	aci := obj.(*hiveext.AgentClusterInstall)
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(aci.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: aci.Spec.ClusterDeploymentRef.Name}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Machines", "namespace", aci.Namespace)
		return nil
	}
	var out []reconcile.Request
	for i := range machines.Items {
		out = append(out, configOfMachine(ctx, &machines.Items[i])...)
	}
	return out
}

// Reconcile brings one config forward as far as it can go.
func (r *ConfigReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cfg := &bootstrapv1.OpenshiftAssistedConfig{}
	if err := r.Client.Get(ctx, req.NamespacedName, cfg); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cfg.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the InfraEnv and data secret are owned: GC removes them
	}
	if err := r.Binder.Ensure(ctx, cfg.Namespace); err != nil {
		return ctrl.Result{}, err
	}
	// cluster-api's patch helper writes only what changed (nothing when
	// nothing did) and sets status.observedGeneration.
	helper, err := patch.NewHelper(cfg, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	res, err := r.reconcile(ctx, cfg)
	if perr := kerrors.FilterOut(helper.Patch(ctx, cfg, patch.WithStatusObservedGeneration{}, ownedConfigConditions), apierrors.IsNotFound); perr != nil && err == nil {
		err = perr
	}
	return res, r.Binder.Checked(cfg.Namespace, err)
}

// ownedConfigConditions are the conditions this controller writes; cluster-api's
// patch helper merges them into a newer copy on a conflict.
var ownedConfigConditions = patch.WithOwnedConditions{Conditions: []string{bootstrapv1.ConditionReady, bootstrapv1.ConditionAgentReady}}

func setReady(cfg *bootstrapv1.OpenshiftAssistedConfig, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(cfg, metav1.Condition{Type: bootstrapv1.ConditionReady, Status: status, Reason: reason, Message: msg})
}

func (r *ConfigReconciler) reconcile(ctx context.Context, cfg *bootstrapv1.OpenshiftAssistedConfig) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	machine, err := r.machineOf(ctx, cfg)
	if err != nil {
		return ctrl.Result{}, err
	}
	if machine == nil {
		setReady(cfg, metav1.ConditionFalse, bootstrapv1.ReasonWaitingForMachine, "no Machine references this config yet")
		return ctrl.Result{}, nil
	}
	clusterName := machine.Spec.ClusterName
	if paused, err := r.clusterPaused(ctx, machine.Namespace, clusterName); err != nil || paused {
		return ctrl.Result{}, err
	}

	// The agent of this config, if one registered: role, approval, status.
	r.observeAgent(ctx, cfg)

	if cfg.Spec.PullSecretRef == nil || cfg.Spec.PullSecretRef.Name == "" {
		setReady(cfg, metav1.ConditionFalse, bootstrapv1.ReasonPullSecretMissing, "spec.pullSecretRef is required to make the InfraEnv")
		return ctrl.Result{}, nil
	}

	cdName := assisted.ClusterDeploymentName(clusterName)
	cd := &hivev1.ClusterDeployment{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: cfg.Namespace, Name: cdName}, cd); err != nil {
		if apierrors.IsNotFound(err) {
			setReady(cfg, metav1.ConditionFalse, bootstrapv1.ReasonWaitingForClusterDeployment,
				fmt.Sprintf("waiting for ClusterDeployment %s (made by the control plane)", cdName))
			return ctrl.Result{RequeueAfter: r.Options.RequeueAfter}, nil
		}
		return ctrl.Result{}, err
	}
	var aci *hiveext.AgentClusterInstall
	if ref := cd.Spec.ClusterInstallRef; ref != nil {
		aci = &hiveext.AgentClusterInstall{}
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: cfg.Namespace, Name: ref.Name}, aci); err != nil {
			if !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
			aci = nil
		}
	}

	// Hold: a Machine whose InfraEnv does not exist yet when the day-1
	// installation runs must not boot (assisted would not add it to the
	// running installation); it is released as a day-2 host once the
	// installation completes (the ACI watch requeues it). Whether the
	// InfraEnv exists, not our status, decides, so a restart between the
	// two cannot strand or double-release a Machine.
	ie := &aiv1beta1.InfraEnv{}
	ieErr := r.Client.Get(ctx, types.NamespacedName{Namespace: cfg.Namespace, Name: infraEnvName(cfg)}, ie)
	if ieErr != nil && !apierrors.IsNotFound(ieErr) {
		return ctrl.Result{}, ieErr
	}
	if apierrors.IsNotFound(ieErr) && assisted.State(aci) == assisted.Installing {
		setReady(cfg, metav1.ConditionFalse, bootstrapv1.ReasonWaitingForInstallation,
			fmt.Sprintf("cluster %s is installing; this Machine joins as a day-2 host when the installation completes", clusterName))
		return ctrl.Result{}, nil
	}

	if err := assisted.Apply(ctx, r.Client, desiredInfraEnv(cfg, clusterName)); err != nil {
		return ctrl.Result{}, fmt.Errorf("applying InfraEnv: %w", err)
	}
	cfg.Status.InfraEnvName = infraEnvName(cfg)
	if ieErr != nil || ie.Status.ISODownloadURL == "" {
		setReady(cfg, metav1.ConditionFalse, bootstrapv1.ReasonWaitingForISO, "waiting for assisted-service to make the discovery ISO")
		return ctrl.Result{}, nil //nolint:nilerr // a missing InfraEnv is waited for; the InfraEnv watch brings us back
	}
	isoURL := ie.Status.ISODownloadURL
	cfg.Status.ISODownloadURL = isoURL

	// Hand the ISO to the infrastructure object.
	infra, err := r.infraOf(ctx, machine)
	if err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			setReady(cfg, metav1.ConditionFalse, bootstrapv1.ReasonInfrastructureNotReady, err.Error())
			return ctrl.Result{RequeueAfter: r.Options.RequeueAfter}, nil
		}
		return ctrl.Result{}, err
	}
	if err := r.handISO(ctx, infra, isoURL); err != nil {
		return ctrl.Result{}, fmt.Errorf("writing the ISO URL to %s %s: %w", infra.GetKind(), infra.GetName(), err)
	}

	// The (empty) bootstrap data secret; create-only, it never changes.
	secret := desiredDataSecret(cfg, clusterName)
	if err := r.Client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, fmt.Errorf("creating bootstrap data secret: %w", err)
	}
	cfg.Status.DataSecretName = ptr.To(secret.Name)
	cfg.Status.Initialization.DataSecretCreated = ptr.To(true)
	cfg.Status.Ready = true
	setReady(cfg, metav1.ConditionTrue, bootstrapv1.ReasonDataSecretAvailable,
		fmt.Sprintf("the host boots the discovery ISO from %s %s", infra.GetKind(), infra.GetName()))
	log.V(1).Info("bootstrap ready", "machine", machine.Name)
	return ctrl.Result{}, nil
}

// observeAgent records the Agent that registered from cfg's InfraEnv.
func (r *ConfigReconciler) observeAgent(ctx context.Context, cfg *bootstrapv1.OpenshiftAssistedConfig) {
	agents := &aiv1beta1.AgentList{}
	if err := r.Client.List(ctx, agents, client.InNamespace(cfg.Namespace),
		client.MatchingLabels{aiv1beta1.InfraEnvNameLabel: infraEnvName(cfg)}); err != nil || len(agents.Items) == 0 {
		conditions.Set(cfg, metav1.Condition{Type: bootstrapv1.ConditionAgentReady, Status: metav1.ConditionFalse,
			Reason: bootstrapv1.ReasonWaitingForAgent, Message: "no host has registered from this config's InfraEnv yet"})
		return
	}
	a := agents.Items[0]
	cfg.Status.AgentName = a.Name
	if a.Spec.Approved && a.Spec.Role != "" {
		conditions.Set(cfg, metav1.Condition{Type: bootstrapv1.ConditionAgentReady, Status: metav1.ConditionTrue,
			Reason: bootstrapv1.ReasonAgentApproved, Message: fmt.Sprintf("Agent %s approved as %s", a.Name, a.Spec.Role)})
		return
	}
	conditions.Set(cfg, metav1.Condition{Type: bootstrapv1.ConditionAgentReady, Status: metav1.ConditionFalse,
		Reason: bootstrapv1.ReasonWaitingForAgent, Message: fmt.Sprintf("Agent %s registered; approving it", a.Name)})
}

func (r *ConfigReconciler) machineOf(ctx context.Context, cfg *bootstrapv1.OpenshiftAssistedConfig) (*clusterv1.Machine, error) {
	return machineOf(ctx, r.Client, cfg.Namespace, cfg.Name)
}

// machineOf returns the Machine whose bootstrap configRef names config, or nil.
func machineOf(ctx context.Context, c client.Reader, namespace, config string) (*clusterv1.Machine, error) {
	list := &clusterv1.MachineList{}
	if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{machineByConfigIndex: config}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp.IsZero() {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

func (r *ConfigReconciler) clusterPaused(ctx context.Context, namespace, name string) (bool, error) {
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cluster); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	_, annotated := cluster.Annotations[clusterv1.PausedAnnotation]
	return ptr.Deref(cluster.Spec.Paused, false) || annotated, nil
}

// infraOf reads a Machine's infrastructure object. Its kind is only known
// at run time, so it is read unstructured (uncached) at the version the
// API server prefers.
func (r *ConfigReconciler) infraOf(ctx context.Context, m *clusterv1.Machine) (*unstructured.Unstructured, error) {
	return infraOf(ctx, r.Client, r.Mapper, m)
}

func infraOf(ctx context.Context, c client.Reader, mapper meta.RESTMapper, m *clusterv1.Machine) (*unstructured.Unstructured, error) {
	ref := m.Spec.InfrastructureRef
	mapping, err := mapper.RESTMapping(schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind})
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(mapping.GroupVersionKind)
	if err := c.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: ref.Name}, u); err != nil {
		return nil, err
	}
	return u, nil
}

// handISO merge-patches the ISO URL (and format) into the infrastructure
// object, only when it differs: a merge patch touches no other field.
func (r *ConfigReconciler) handISO(ctx context.Context, infra *unstructured.Unstructured, url string) error {
	o := r.Options
	cur, _, _ := unstructured.NestedString(infra.Object, splitPath(o.ISOURLPath)...)
	curFmt, _, _ := unstructured.NestedString(infra.Object, splitPath(o.ISOFormatPath)...)
	if cur == url && (o.ISOFormatPath == "" || curFmt == o.ISOFormat) {
		return nil
	}
	patch := assisted.NestedValue(o.ISOURLPath, url)
	if o.ISOFormatPath != "" {
		mergeMaps(patch, assisted.NestedValue(o.ISOFormatPath, o.ISOFormat))
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return r.Client.Patch(ctx, infra, client.RawPatch(types.MergePatchType, data))
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

func mergeMaps(dst, src map[string]any) {
	for k, v := range src {
		if dm, ok := dst[k].(map[string]any); ok {
			if sm, ok := v.(map[string]any); ok {
				mergeMaps(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}
