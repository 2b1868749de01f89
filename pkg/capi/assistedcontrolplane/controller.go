package assistedcontrolplane

import (
	"context"
	"fmt"
	"time"

	hiveext "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
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
	controlplanev1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/controlplane/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// Reconciler reconciles OpenshiftAssistedControlPlanes: it owns the
// ClusterDeployment and AgentClusterInstall of the cluster, creates and
// removes the control-plane Machines (with their OpenshiftAssistedConfigs
// and infrastructure machines), and once the installation completed writes
// the Cluster API kubeconfig secret and reports the control-plane contract.
type Reconciler struct {
	Client client.Client
	// APIReader reads Secrets (the agent's cache holds only its own
	// namespace's) and cluster-scoped ClusterImageSets.
	APIReader client.Reader
	Mapper    meta.RESTMapper
	// RequeueAfter is how soon to look again at what we cannot watch (pull
	// secrets, the installer's admin kubeconfig secret).
	RequeueAfter time.Duration
	// Binder gives the agent its grants in the reconciled object's namespace
	// (addon.AgentCAPINamespaceRole) before it writes there; nil binds
	// nothing (an identity that holds the grants already).
	Binder *kubeutil.Binder
}

// SetupWithManager registers the reconciler and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.RequeueAfter == 0 {
		r.RequeueAfter = 10 * time.Second
	}
	owner := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &controlplanev1.OpenshiftAssistedControlPlane{}, handler.OnlyControllerOwner())
	return ctrl.NewControllerManagedBy(mgr).
		Named("openshiftassistedcontrolplane").
		For(&controlplanev1.OpenshiftAssistedControlPlane{}).
		Watches(&clusterv1.Machine{}, owner).
		Watches(&hivev1.ClusterDeployment{}, owner).
		Watches(&hiveext.AgentClusterInstall{}, owner).
		Watches(&clusterv1.MachineDeployment{}, handler.EnqueueRequestsFromMapFunc(r.controlPlanesOfCluster)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.controlPlanesOfCluster)).
		Watches(&aiv1beta1.Agent{}, handler.EnqueueRequestsFromMapFunc(r.controlPlanesOfAgent)).
		Complete(r)
}

// controlPlanesOfCluster maps an object with the cluster-name label (or a
// Cluster) to the control planes of that cluster.
func (r *Reconciler) controlPlanesOfCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	cluster := obj.GetLabels()[clusterv1.ClusterNameLabel]
	if _, ok := obj.(*clusterv1.Cluster); ok {
		cluster = obj.GetName()
	}
	if cluster == "" {
		return nil
	}
	list := &controlplanev1.OpenshiftAssistedControlPlaneList{}
	if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing OpenshiftAssistedControlPlanes", "namespace", obj.GetNamespace())
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if clusterNameOf(&list.Items[i]) == cluster {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// controlPlanesOfAgent maps an Agent to the control plane of the cluster it
// is bound to (ready replica counts follow the Agents' Installed condition).
func (r *Reconciler) controlPlanesOfAgent(ctx context.Context, obj client.Object) []reconcile.Request {
	a := obj.(*aiv1beta1.Agent)
	if a.Spec.ClusterDeploymentName == nil {
		return nil
	}
	probe := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: a.Spec.ClusterDeploymentName.Namespace,
		Labels: map[string]string{clusterv1.ClusterNameLabel: a.Spec.ClusterDeploymentName.Name}}}
	return r.controlPlanesOfCluster(ctx, probe)
}

// clusterNameOf is the Cluster API Cluster of a control plane: its owner
// Cluster (set by Cluster API), else its cluster-name label.
func clusterNameOf(acp *controlplanev1.OpenshiftAssistedControlPlane) string {
	for _, o := range acp.OwnerReferences {
		if o.Kind == "Cluster" && o.APIVersion == clusterv1.GroupVersion.String() {
			return o.Name
		}
	}
	for _, o := range acp.OwnerReferences {
		if gv, err := schema.ParseGroupVersion(o.APIVersion); err == nil && o.Kind == "Cluster" && gv.Group == clusterv1.GroupVersion.Group {
			return o.Name
		}
	}
	return acp.Labels[clusterv1.ClusterNameLabel]
}

// setCondition sets one of the control plane's conditions through
// cluster-api's util/conditions (observedGeneration, transition times).
func setCondition(acp *controlplanev1.OpenshiftAssistedControlPlane, t string, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(acp, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg})
}

// ownedConditions are the conditions this controller writes; cluster-api's
// patch helper merges them into a newer copy on a conflict instead of
// overwriting what another writer set.
var ownedConditions = patch.WithOwnedConditions{Conditions: []string{
	controlplanev1.ConditionSpecValid, controlplanev1.ConditionInstalled, controlplanev1.ConditionKubeconfigAvailable,
	controlplanev1.ConditionAvailable, controlplanev1.ConditionReady,
}}

// Reconcile brings one control plane forward as far as it can go.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	acp := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := r.Client.Get(ctx, req.NamespacedName, acp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !acp.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // everything we made is owned by it: GC removes it
	}
	if err := r.Binder.Ensure(ctx, acp.Namespace); err != nil {
		return ctrl.Result{}, err
	}
	// cluster-api's patch helper writes only what changed (nothing when
	// nothing did) and sets status.observedGeneration.
	helper, err := patch.NewHelper(acp, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	res, err := r.reconcile(ctx, acp)
	if perr := kerrors.FilterOut(helper.Patch(ctx, acp, patch.WithStatusObservedGeneration{}, ownedConditions), apierrors.IsNotFound); perr != nil && err == nil {
		err = perr
	}
	return res, r.Binder.Checked(acp.Namespace, err)
}

func (r *Reconciler) reconcile(ctx context.Context, acp *controlplanev1.OpenshiftAssistedControlPlane) (ctrl.Result, error) {
	clusterName := clusterNameOf(acp)
	cluster := &clusterv1.Cluster{}
	if clusterName == "" {
		setCondition(acp, controlplanev1.ConditionSpecValid, metav1.ConditionFalse, controlplanev1.ReasonClusterNotFound,
			"no owner Cluster and no cluster.x-k8s.io/cluster-name label")
		return ctrl.Result{}, nil
	}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: acp.Namespace, Name: clusterName}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			setCondition(acp, controlplanev1.ConditionSpecValid, metav1.ConditionFalse, controlplanev1.ReasonClusterNotFound,
				fmt.Sprintf("Cluster %s not found", clusterName))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if _, annotated := cluster.Annotations[clusterv1.PausedAnnotation]; annotated || ptr.Deref(cluster.Spec.Paused, false) {
		return ctrl.Result{}, nil
	}
	acp.Status.Selector = selector(acp, clusterName)

	// Validate before creating anything on the assisted side.
	if inv := validate(acp); inv != nil {
		setCondition(acp, controlplanev1.ConditionSpecValid, metav1.ConditionFalse, inv.Reason, inv.Message)
		return ctrl.Result{}, nil //nolint:nilerr // invalid input is reported on the condition, not retried
	}
	ps := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: acp.Namespace, Name: acp.Spec.Config.PullSecretRef.Name}, ps); err != nil {
		if apierrors.IsNotFound(err) {
			setCondition(acp, controlplanev1.ConditionSpecValid, metav1.ConditionFalse, controlplanev1.ReasonPullSecretNotFound,
				fmt.Sprintf("pull secret %s not found in %s", acp.Spec.Config.PullSecretRef.Name, acp.Namespace))
			return ctrl.Result{RequeueAfter: r.RequeueAfter}, nil // Secrets are not watched
		}
		return ctrl.Result{}, err
	}
	setCondition(acp, controlplanev1.ConditionSpecValid, metav1.ConditionTrue, controlplanev1.ReasonValid, "")

	// ClusterDeployment, ClusterImageSet, AgentClusterInstall.
	if err := r.ensureImageSet(ctx, acp); err != nil {
		return ctrl.Result{}, err
	}
	if err := assisted.Apply(ctx, r.Client, desiredClusterDeployment(acp, clusterName)); err != nil {
		return ctrl.Result{}, fmt.Errorf("applying ClusterDeployment: %w", err)
	}
	cdName := assisted.ClusterDeploymentName(clusterName)
	acp.Status.ClusterDeploymentName = cdName
	aci := &hiveext.AgentClusterInstall{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: acp.Namespace, Name: cdName}, aci); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		aci = nil
	}
	state := assisted.State(aci)
	workers, err := r.workerReplicas(ctx, acp.Namespace, clusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	var frozen map[string]any
	if state != assisted.NotStarted && aci != nil {
		frozen = map[string]any{
			"controlPlaneAgents": int64(aci.Spec.ProvisionRequirements.ControlPlaneAgents),
			"workerAgents":       int64(aci.Spec.ProvisionRequirements.WorkerAgents),
		}
	}
	if err := assisted.Apply(ctx, r.Client, desiredAgentClusterInstall(acp, cluster, provisionRequirements(acp, workers, frozen))); err != nil {
		return ctrl.Result{}, fmt.Errorf("applying AgentClusterInstall: %w", err)
	}

	// Control-plane Machines.
	machines, err := r.scale(ctx, acp, clusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.replicaStatus(ctx, acp, machines, cdName); err != nil {
		return ctrl.Result{}, err
	}

	// Installation and kubeconfig.
	return r.installStatus(ctx, acp, aci, state, clusterName, cdName)
}

// ensureImageSet creates the ClusterImageSet of the version if it is
// absent. It is cluster-scoped and may be shared: created, never updated or
// deleted by us.
func (r *Reconciler) ensureImageSet(ctx context.Context, acp *controlplanev1.OpenshiftAssistedControlPlane) error {
	if acp.Spec.Config.ImageSetRef != "" {
		return nil
	}
	name := imageSetName(acp)
	if err := r.APIReader.Get(ctx, types.NamespacedName{Name: name}, &hivev1.ClusterImageSet{}); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	set := &hivev1.ClusterImageSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: hivev1.ClusterImageSetSpec{ReleaseImage: releaseImage(acp)}}
	if err := r.Client.Create(ctx, set); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterImageSet %s: %w", name, err)
	}
	return nil
}

// workerReplicas is the number of workers Cluster API asks for: the sum of
// the cluster's MachineDeployments' replicas.
func (r *Reconciler) workerReplicas(ctx context.Context, namespace, cluster string) (int64, error) {
	mds := &clusterv1.MachineDeploymentList{}
	if err := r.Client.List(ctx, mds, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster}); err != nil {
		return 0, err
	}
	var n int64
	for _, md := range mds.Items {
		if md.DeletionTimestamp.IsZero() {
			n += int64(ptr.Deref(md.Spec.Replicas, 1))
		}
	}
	return n, nil
}

// scale creates missing control-plane Machines and deletes extra ones, and
// returns the live ones. Before and after the installation alike: Machines
// added after it join as day-2 control-plane hosts (the bootstrap provider
// holds them while it runs).
func (r *Reconciler) scale(ctx context.Context, acp *controlplanev1.OpenshiftAssistedControlPlane, cluster string) ([]clusterv1.Machine, error) {
	owned := client.MatchingLabels{controlplanev1.ControlPlaneNameLabel: acp.Name, clusterv1.ClusterNameLabel: cluster}
	// Read uncached: a Machine deleted a moment ago may still be in the
	// cache, and counting it would make us delete one more.
	list := &clusterv1.MachineList{}
	if err := r.APIReader.List(ctx, list, client.InNamespace(acp.Namespace), owned); err != nil {
		return nil, err
	}
	configs := &bootstrapv1.OpenshiftAssistedConfigList{}
	if err := r.APIReader.List(ctx, configs, client.InNamespace(acp.Namespace), owned); err != nil {
		return nil, err
	}
	used := map[string]bool{}
	var live []clusterv1.Machine
	for _, m := range list.Items {
		used[m.Name] = true
		if m.DeletionTimestamp.IsZero() {
			live = append(live, m)
		}
	}
	// A config without its Machine is one a crash interrupted: finish it
	// (its name is reused below) rather than leave it and make another.
	for _, c := range configs.Items {
		if !c.DeletionTimestamp.IsZero() {
			used[c.Name] = true
		}
	}
	desired := int(ptr.Deref(acp.Spec.Replicas, 3))
	switch {
	case len(live) < desired:
		for _, i := range nextIndices(acp, used, desired-len(live)) {
			m, err := r.createMachine(ctx, acp, cluster, machineName(acp, i))
			if err != nil {
				return nil, err
			}
			live = append(live, *m)
		}
	case len(live) > desired:
		for _, m := range machinesToDelete(live, len(live)-desired) {
			if err := r.deleteMachine(ctx, &m); err != nil {
				return nil, err
			}
		}
		live = live[:0]
		if err := r.APIReader.List(ctx, list, client.InNamespace(acp.Namespace), owned); err != nil {
			return nil, err
		}
		for _, m := range list.Items {
			if m.DeletionTimestamp.IsZero() {
				live = append(live, m)
			}
		}
	}
	return live, nil
}

// createMachine makes config, infrastructure machine and Machine, in that
// order (the Machine references both), each tolerating AlreadyExists: a
// crash between two creates is completed by the next reconcile, which
// computes the same name.
func (r *Reconciler) createMachine(ctx context.Context, acp *controlplanev1.OpenshiftAssistedControlPlane, cluster, name string) (*clusterv1.Machine, error) {
	if err := r.Client.Create(ctx, desiredConfig(acp, cluster, name)); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating OpenshiftAssistedConfig %s: %w", name, err)
	}
	ref := acp.Spec.MachineTemplate.Spec.InfrastructureRef
	mapping, err := r.Mapper.RESTMapping(schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind})
	if err != nil {
		return nil, fmt.Errorf("infrastructure template kind %s.%s: %w", ref.Kind, ref.APIGroup, err)
	}
	tmpl := &unstructured.Unstructured{}
	tmpl.SetGroupVersionKind(mapping.GroupVersionKind)
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: acp.Namespace, Name: ref.Name}, tmpl); err != nil {
		return nil, fmt.Errorf("infrastructure template %s %s: %w", ref.Kind, ref.Name, err)
	}
	infra := desiredInfraMachine(acp, tmpl, cluster, name)
	if err := r.Client.Create(ctx, infra); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating %s %s: %w", infra.GetKind(), name, err)
	}
	m := desiredMachine(acp, cluster, name, infra.GetKind())
	if err := r.Client.Create(ctx, m); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating Machine %s: %w", name, err)
		}
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// deleteMachine deletes a control-plane Machine and what was made for it.
// Cluster API's Machine controller would delete the config and the
// infrastructure machine after draining; deleting them here too keeps a
// reused name from picking up a stale host, and is harmless when it did.
func (r *Reconciler) deleteMachine(ctx context.Context, m *clusterv1.Machine) error {
	if err := r.Client.Delete(ctx, m); client.IgnoreNotFound(err) != nil {
		return err
	}
	cfg := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Spec.Bootstrap.ConfigRef.Name}}
	if err := r.Client.Delete(ctx, cfg); client.IgnoreNotFound(err) != nil {
		return err
	}
	ref := m.Spec.InfrastructureRef
	if mapping, err := r.Mapper.RESTMapping(schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind}); err == nil {
		infra := &unstructured.Unstructured{}
		infra.SetGroupVersionKind(mapping.GroupVersionKind)
		infra.SetNamespace(m.Namespace)
		infra.SetName(ref.Name)
		if err := r.Client.Delete(ctx, infra); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// replicaStatus counts control-plane Machines and those whose host is
// installed (their Agent's Installed condition), for the contract fields.
func (r *Reconciler) replicaStatus(ctx context.Context, acp *controlplanev1.OpenshiftAssistedControlPlane, machines []clusterv1.Machine, cdName string) error {
	agents := &aiv1beta1.AgentList{}
	if err := r.Client.List(ctx, agents, client.InNamespace(acp.Namespace)); err != nil {
		return err
	}
	installed := map[string]bool{} // config (InfraEnv) name → host installed
	for i := range agents.Items {
		a := &agents.Items[i]
		if ref := a.Spec.ClusterDeploymentName; ref != nil && ref.Name == cdName && assisted.AgentInstalled(a) {
			installed[a.Labels[aiv1beta1.InfraEnvNameLabel]] = true
		}
	}
	var ready int32
	for _, m := range machines {
		if installed[m.Spec.Bootstrap.ConfigRef.Name] {
			ready++
		}
	}
	acp.Status.Replicas = ptr.To(int32(len(machines)))
	acp.Status.ReadyReplicas = ptr.To(ready)
	acp.Status.AvailableReplicas = ptr.To(ready)
	acp.Status.UpToDateReplicas = ptr.To(int32(len(machines)))
	return nil
}

// installStatus maps the installation onto our conditions, and once it
// completed publishes the kubeconfig and the contract's initialized/ready.
func (r *Reconciler) installStatus(ctx context.Context, acp *controlplanev1.OpenshiftAssistedControlPlane, aci *hiveext.AgentClusterInstall,
	state assisted.InstallState, clusterName, cdName string) (ctrl.Result, error) {
	notReady := func(reason, msg string) {
		setCondition(acp, controlplanev1.ConditionAvailable, metav1.ConditionFalse, reason, msg)
		setCondition(acp, controlplanev1.ConditionReady, metav1.ConditionFalse, reason, msg)
	}
	switch state {
	case assisted.NotStarted:
		msg := "waiting for the hosts to register and be approved"
		if aci != nil {
			if c := assisted.Condition(aci.Status.Conditions, hiveext.ClusterRequirementsMetCondition); c != nil && c.Message != "" {
				msg = c.Message
			}
		}
		setCondition(acp, controlplanev1.ConditionInstalled, metav1.ConditionFalse, controlplanev1.ReasonWaitingForAgents, msg)
		notReady(controlplanev1.ReasonNotInstalled, "the cluster is not installed yet")
		return ctrl.Result{}, nil
	case assisted.Installing:
		setCondition(acp, controlplanev1.ConditionInstalled, metav1.ConditionFalse, controlplanev1.ReasonInstalling,
			fmt.Sprintf("assisted-installer is installing the cluster (%d%%)", aci.Status.Progress.TotalPercentage))
		notReady(controlplanev1.ReasonNotInstalled, "the cluster is installing")
		return ctrl.Result{}, nil
	case assisted.Failed:
		msg := "the installation failed"
		if c := assisted.Condition(aci.Status.Conditions, hiveext.ClusterFailedCondition); c != nil && c.Message != "" {
			msg = c.Message
		}
		setCondition(acp, controlplanev1.ConditionInstalled, metav1.ConditionFalse, controlplanev1.ReasonInstallationFailed, msg)
		notReady(controlplanev1.ReasonInstallationFailed, msg)
		return ctrl.Result{}, nil
	}
	setCondition(acp, controlplanev1.ConditionInstalled, metav1.ConditionTrue, controlplanev1.ReasonInstalled, "the cluster is installed")

	// The installer's admin kubeconfig, referenced from the ClusterDeployment.
	cd := &hivev1.ClusterDeployment{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: acp.Namespace, Name: cdName}, cd); err != nil {
		return ctrl.Result{}, err
	}
	waiting := func(msg string) (ctrl.Result, error) {
		setCondition(acp, controlplanev1.ConditionKubeconfigAvailable, metav1.ConditionFalse, controlplanev1.ReasonWaitingForKubeconfig, msg)
		notReady(controlplanev1.ReasonWaitingForKubeconfig, msg)
		return ctrl.Result{RequeueAfter: r.RequeueAfter}, nil
	}
	if cd.Spec.ClusterMetadata == nil || cd.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name == "" {
		return waiting("the ClusterDeployment has no admin kubeconfig yet")
	}
	src := &corev1.Secret{}
	srcName := cd.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: acp.Namespace, Name: srcName}, src); err != nil {
		if apierrors.IsNotFound(err) {
			return waiting(fmt.Sprintf("admin kubeconfig secret %s not found", srcName))
		}
		return ctrl.Result{}, err
	}
	kubeconfig := src.Data["kubeconfig"]
	if len(kubeconfig) == 0 {
		return waiting(fmt.Sprintf("admin kubeconfig secret %s has no kubeconfig key", srcName))
	}
	if err := r.writeKubeconfig(ctx, acp, clusterName, kubeconfig); err != nil {
		return ctrl.Result{}, err
	}
	setCondition(acp, controlplanev1.ConditionKubeconfigAvailable, metav1.ConditionTrue, controlplanev1.ReasonKubeconfigAvailable,
		fmt.Sprintf("secret %s", kubeconfigSecretName(clusterName)))
	setCondition(acp, controlplanev1.ConditionAvailable, metav1.ConditionTrue, controlplanev1.ReasonAvailable, "")
	setCondition(acp, controlplanev1.ConditionReady, metav1.ConditionTrue, controlplanev1.ReasonAvailable, "")
	acp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	acp.Status.Initialized = true
	acp.Status.Ready = true
	acp.Status.Version = acp.Spec.Version
	acp.Status.DistributionVersion = acp.Spec.DistributionVersion
	return ctrl.Result{}, nil
}

func kubeconfigSecretName(cluster string) string { return cluster + "-kubeconfig" }

// writeKubeconfig writes <cluster>-kubeconfig in the Cluster API format
// (key "value", type cluster.x-k8s.io/secret, cluster-name label), owned by
// the control plane. The Secret is wholly ours, so a typed update is fine.
func (r *Reconciler) writeKubeconfig(ctx context.Context, acp *controlplanev1.OpenshiftAssistedControlPlane, cluster string, kubeconfig []byte) error {
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: kubeconfigSecretName(cluster), Namespace: acp.Namespace,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: cluster},
			OwnerReferences: []metav1.OwnerReference{ownerRef(acp)}},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": kubeconfig},
	}
	have := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), have); err != nil {
		if !apierrors.IsNotFound(err) {
			return err
		}
		if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating kubeconfig secret: %w", err)
		}
		return nil
	}
	if string(have.Data["value"]) == string(kubeconfig) && have.Labels[clusterv1.ClusterNameLabel] == cluster {
		return nil
	}
	have.Data = want.Data
	if have.Labels == nil {
		have.Labels = map[string]string{}
	}
	have.Labels[clusterv1.ClusterNameLabel] = cluster
	return r.Client.Update(ctx, have)
}
