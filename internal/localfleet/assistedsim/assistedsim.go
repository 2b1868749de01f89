// Package assistedsim is a stand-in for assisted-service (and the bare-metal
// hosts it installs) for the tests of the OpenShift assisted providers
// (pkg/capi/assistedcontrolplane, against the apiserver internal/assistedtest
// starts). Nothing here runs in the product. It plays, against a real
// kube-apiserver:
//
//   - the image service: every InfraEnv gets an ISO download URL and
//     ImageCreated=True;
//   - the hosts: when an infrastructure machine's ISO URL field names an
//     InfraEnv's ISO, the host "boots" and an Agent registers in that
//     InfraEnv (labels from its agentLabels, bound to its clusterRef);
//   - the installer: an AgentClusterInstall whose bound, approved agents
//     match its provisionRequirements starts installing (Completed=False
//     InstallationInProgress); it completes when its annotation
//     FinishInstallAnnotation is "true" (or at once with AutoFinish), when
//     day-1 Agents become Installed, the admin kubeconfig Secret is written
//     and the ClusterDeployment gets clusterMetadata and installed=true;
//     Agents approved after that are installed as day-2 hosts.
//
// It writes status as assisted-service does, with the pinned Go types (it
// is the owner of those fields), and patches only clusterMetadata/installed
// into ClusterDeployments.
package assistedsim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	hiveext "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/assisted"
)

// FinishInstallAnnotation on an AgentClusterInstall lets a running
// installation complete.
const FinishInstallAnnotation = "assistedsim.hcpfleet.io/finish-install"

// day1Annotation records, on the ACI, the Agents of the day-1 installation.
const day1Annotation = "assistedsim.hcpfleet.io/day1-agents"

// ISOHost is the host of the ISO URLs the simulated image service hands out.
const ISOHost = "assisted-image-service.assistedsim.invalid"

// Sim is the stand-in. Register it with a manager of its own, so it keeps
// running while the providers' manager restarts.
type Sim struct {
	Client client.Client
	// InfraGVK is the infrastructure machine kind the hosts watch, and
	// ISOURLPath the dotted path of the ISO URL in it.
	InfraGVK   schema.GroupVersionKind
	ISOURLPath string
	// AutoFinish completes installations as soon as they start.
	AutoFinish bool
	// ClaimHosts plays cluster-api-provider-metal3's host claim: each
	// infrastructure machine gets a BareMetalHost of its name and the
	// metal3.io/BareMetalHost annotation naming it.
	ClaimHosts bool
}

var bareMetalHostGVK = schema.GroupVersionKind{Group: "metal3.io", Version: "v1alpha1", Kind: "BareMetalHost"}

// claimHost gives infra a BareMetalHost, as CAPM3 does.
func (s *Sim) claimHost(ctx context.Context, infra *unstructured.Unstructured) error {
	if _, ok := infra.GetAnnotations()["metal3.io/BareMetalHost"]; ok {
		return nil
	}
	bmh := &unstructured.Unstructured{}
	bmh.SetGroupVersionKind(bareMetalHostGVK)
	bmh.SetNamespace(infra.GetNamespace())
	bmh.SetName(infra.GetName())
	if err := s.Client.Create(ctx, bmh); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		"metal3.io/BareMetalHost": infra.GetNamespace() + "/" + infra.GetName()}}})
	return s.Client.Patch(ctx, infra, client.RawPatch(types.MergePatchType, patch))
}

// SetupWithManager registers the stand-in's controllers.
func (s *Sim) SetupWithManager(mgr ctrl.Manager) error {
	if err := ctrl.NewControllerManagedBy(mgr).Named("assistedsim-imageservice").For(&aiv1beta1.InfraEnv{}).
		Complete(reconcile.Func(s.reconcileInfraEnv)); err != nil {
		return err
	}
	infra := &unstructured.Unstructured{}
	infra.SetGroupVersionKind(s.InfraGVK)
	if err := ctrl.NewControllerManagedBy(mgr).Named("assistedsim-hosts").For(infra).
		Complete(reconcile.Func(s.reconcileHost)); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("assistedsim-agents").For(&aiv1beta1.Agent{}).
		Watches(&hiveext.AgentClusterInstall{}, handler.EnqueueRequestsFromMapFunc(s.agentsOfInstall)).
		Complete(reconcile.Func(s.reconcileAgent)); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("assistedsim-installer").For(&hiveext.AgentClusterInstall{}).
		Watches(&aiv1beta1.Agent{}, handler.EnqueueRequestsFromMapFunc(installOfAgent)).
		Complete(reconcile.Func(s.reconcileInstall))
}

// ISOURL is the URL the image service hands out for an InfraEnv.
func ISOURL(ie *aiv1beta1.InfraEnv) string {
	arch := ie.Spec.CpuArchitecture
	if arch == "" {
		arch = "x86_64"
	}
	return fmt.Sprintf("https://%s/images/%s/%s?arch=%s&type=full-iso", ISOHost, ie.Namespace, ie.Name, arch)
}

func (s *Sim) reconcileInfraEnv(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ie := &aiv1beta1.InfraEnv{}
	if err := s.Client.Get(ctx, req.NamespacedName, ie); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if ie.Status.ISODownloadURL == ISOURL(ie) {
		return reconcile.Result{}, nil
	}
	ie.Status.ISODownloadURL = ISOURL(ie)
	now := metav1.Now()
	ie.Status.CreatedTime = &now
	conditionsv1.SetStatusConditionNoHeartbeat(&ie.Status.Conditions, conditionsv1.Condition{Type: aiv1beta1.ImageCreatedCondition,
		Status: corev1.ConditionTrue, Reason: "ImageCreated", Message: "Image has been created"})
	return reconcile.Result{}, s.Client.Status().Update(ctx, ie)
}

// AgentName is the Agent a host registers as: assisted names Agents by the
// host's UUID; the infrastructure machine's UID plays it.
func AgentName(infra client.Object) string { return string(infra.GetUID()) }

// reconcileHost boots a host from the ISO its infrastructure machine names.
func (s *Sim) reconcileHost(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	infra := &unstructured.Unstructured{}
	infra.SetGroupVersionKind(s.InfraGVK)
	if err := s.Client.Get(ctx, req.NamespacedName, infra); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if s.ClaimHosts {
		if err := s.claimHost(ctx, infra); err != nil {
			return reconcile.Result{}, err
		}
	}
	url, _, _ := unstructured.NestedString(infra.Object, strings.Split(s.ISOURLPath, ".")...)
	prefix := fmt.Sprintf("https://%s/images/", ISOHost)
	if !strings.HasPrefix(url, prefix) {
		return reconcile.Result{}, nil
	}
	nsName, _, _ := strings.Cut(strings.TrimPrefix(url, prefix), "?")
	ns, name, _ := strings.Cut(nsName, "/")
	ie := &aiv1beta1.InfraEnv{}
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ie); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	agent := &aiv1beta1.Agent{}
	key := types.NamespacedName{Namespace: ie.Namespace, Name: AgentName(infra)}
	err := s.Client.Get(ctx, key, agent)
	switch {
	case apierrors.IsNotFound(err):
		labels := map[string]string{aiv1beta1.InfraEnvNameLabel: ie.Name}
		for k, v := range ie.Spec.AgentLabels {
			labels[k] = v
		}
		agent = &aiv1beta1.Agent{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: labels},
			Spec:       aiv1beta1.AgentSpec{ClusterDeploymentName: ie.Spec.ClusterRef.DeepCopy()},
		}
		if err := s.Client.Create(ctx, agent); err != nil {
			return reconcile.Result{}, err
		}
	case err != nil:
		return reconcile.Result{}, err
	case conditionsv1.FindStatusCondition(agent.Status.Conditions, aiv1beta1.ConnectedCondition) != nil:
		return reconcile.Result{}, nil // registered already
	}
	agent.Status.Inventory.Hostname = infra.GetName()
	agent.Status.DebugInfo.State = "known"
	conditionsv1.SetStatusConditionNoHeartbeat(&agent.Status.Conditions, conditionsv1.Condition{Type: aiv1beta1.ConnectedCondition,
		Status: corev1.ConditionTrue, Reason: aiv1beta1.AgentConnectedReason, Message: "The agent's connection to the installation service is unimpaired"})
	setAgentInstalled(agent, corev1.ConditionFalse, aiv1beta1.InstallationNotStartedReason, "The installation has not yet started")
	return reconcile.Result{}, s.Client.Status().Update(ctx, agent)
}

func setAgentInstalled(a *aiv1beta1.Agent, status corev1.ConditionStatus, reason, msg string) {
	conditionsv1.SetStatusConditionNoHeartbeat(&a.Status.Conditions, conditionsv1.Condition{Type: aiv1beta1.InstalledCondition,
		Status: status, Reason: reason, Message: msg})
}

func installOfAgent(_ context.Context, obj client.Object) []reconcile.Request {
	a := obj.(*aiv1beta1.Agent)
	if a.Spec.ClusterDeploymentName == nil {
		return nil
	}
	// The ACI is named like its ClusterDeployment (as our providers make it).
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: a.Spec.ClusterDeploymentName.Namespace, Name: a.Spec.ClusterDeploymentName.Name}}}
}

func (s *Sim) agentsOfInstall(ctx context.Context, obj client.Object) []reconcile.Request {
	agents, _ := s.boundAgents(ctx, obj.(*hiveext.AgentClusterInstall))
	var out []reconcile.Request
	for _, a := range agents {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&a)})
	}
	return out
}

func (s *Sim) boundAgents(ctx context.Context, aci *hiveext.AgentClusterInstall) ([]aiv1beta1.Agent, error) {
	list := &aiv1beta1.AgentList{}
	if err := s.Client.List(ctx, list, client.InNamespace(aci.Namespace)); err != nil {
		return nil, err
	}
	var out []aiv1beta1.Agent
	for _, a := range list.Items {
		if ref := a.Spec.ClusterDeploymentName; ref != nil && ref.Name == aci.Spec.ClusterDeploymentRef.Name && ref.Namespace == aci.Namespace {
			out = append(out, a)
		}
	}
	return out, nil
}

// reconcileAgent validates an Agent and installs day-2 hosts.
func (s *Sim) reconcileAgent(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	a := &aiv1beta1.Agent{}
	if err := s.Client.Get(ctx, req.NamespacedName, a); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	before := a.DeepCopy()
	a.Status.Role = a.Spec.Role
	ready := a.Spec.Approved && a.Spec.Role != ""
	if ready {
		conditionsv1.SetStatusConditionNoHeartbeat(&a.Status.Conditions, conditionsv1.Condition{Type: aiv1beta1.RequirementsMetCondition,
			Status: corev1.ConditionTrue, Reason: aiv1beta1.AgentReadyReason, Message: "The agent is ready to begin the installation"})
	} else {
		conditionsv1.SetStatusConditionNoHeartbeat(&a.Status.Conditions, conditionsv1.Condition{Type: aiv1beta1.RequirementsMetCondition,
			Status: corev1.ConditionFalse, Reason: aiv1beta1.AgentIsNotApprovedReason, Message: "The agent is not approved or has no role"})
	}
	if ready && a.Spec.ClusterDeploymentName != nil && !assisted.AgentInstalled(a) {
		aci := &hiveext.AgentClusterInstall{}
		err := s.Client.Get(ctx, types.NamespacedName{Namespace: a.Spec.ClusterDeploymentName.Namespace, Name: a.Spec.ClusterDeploymentName.Name}, aci)
		if err == nil && assisted.State(aci) == assisted.Installed {
			// Day 2: the cluster exists; the host is added to it.
			a.Status.DebugInfo.State = "added-to-existing-cluster"
			a.Status.Progress.CurrentStage = "Done"
			setAgentInstalled(a, corev1.ConditionTrue, aiv1beta1.InstalledReason, "The installation has completed: day-2 host added")
		}
	}
	if jsonEqual(before.Status, a.Status) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, s.Client.Status().Update(ctx, a)
}

// reconcileInstall runs the day-1 installation of an AgentClusterInstall.
func (s *Sim) reconcileInstall(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	aci := &hiveext.AgentClusterInstall{}
	if err := s.Client.Get(ctx, req.NamespacedName, aci); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	agents, err := s.boundAgents(ctx, aci)
	if err != nil {
		return reconcile.Result{}, err
	}
	switch assisted.State(aci) {
	case assisted.Installed, assisted.Failed:
		return reconcile.Result{}, nil
	case assisted.Installing:
		if aci.Annotations[FinishInstallAnnotation] != "true" && !s.AutoFinish {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, s.finish(ctx, aci, agents)
	}
	before := aci.DeepCopy()
	var masters, workers, unapproved int
	for _, a := range agents {
		switch {
		case !a.Spec.Approved || a.Spec.Role == "":
			unapproved++
		case a.Spec.Role == "master":
			masters++
		default:
			workers++
		}
	}
	req1 := aci.Spec.ProvisionRequirements
	aci.Status.ControlPlaneAgentsDiscovered, aci.Status.ControlPlaneAgentsReady = masters, masters
	aci.Status.WorkerAgentsDiscovered, aci.Status.WorkerAgentsReady = workers, workers
	want := req1.ControlPlaneAgents + req1.WorkerAgents
	switch {
	case unapproved > 0:
		s.setRequirements(aci, corev1.ConditionFalse, hiveext.ClusterUnapprovedAgentsReason, fmt.Sprintf(hiveext.ClusterUnapprovedAgentsMsg, unapproved))
	case masters+workers < want || masters < req1.ControlPlaneAgents:
		s.setRequirements(aci, corev1.ConditionFalse, hiveext.ClusterInsufficientAgentsReason, fmt.Sprintf(hiveext.ClusterInsufficientAgentsMsg, want, masters+workers))
	case masters+workers > want:
		s.setRequirements(aci, corev1.ConditionFalse, hiveext.ClusterAdditionalAgentsReason, fmt.Sprintf(hiveext.ClusterAdditionalAgentsMsg, want, masters+workers))
	case aci.Spec.HoldInstallation:
		s.setRequirements(aci, corev1.ConditionFalse, hiveext.ClusterInstallationOnHoldReason, hiveext.ClusterInstallationOnHoldMsg)
	default:
		// Start the day-1 installation with exactly these agents.
		names := make([]string, 0, len(agents))
		for _, a := range agents {
			names = append(names, a.Name)
		}
		s.setRequirements(aci, corev1.ConditionTrue, hiveext.ClusterAlreadyInstallingReason, hiveext.ClusterAlreadyInstallingMsg)
		setInstallCondition(aci, hiveext.ClusterCompletedCondition, corev1.ConditionFalse, hiveext.ClusterInstallationInProgressReason,
			hiveext.ClusterInstallationInProgressMsg+" installing")
		aci.Status.DebugInfo.State = "installing"
		aci.Status.Progress.TotalPercentage = 10
		if err := s.Client.Status().Update(ctx, aci); err != nil {
			return reconcile.Result{}, err
		}
		data, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{day1Annotation: strings.Join(names, ",")}}})
		return reconcile.Result{}, s.Client.Patch(ctx, aci, client.RawPatch(types.MergePatchType, data))
	}
	setInstallCondition(aci, hiveext.ClusterCompletedCondition, corev1.ConditionFalse, hiveext.ClusterInstallationNotStartedReason, hiveext.ClusterInstallationNotStartedMsg)
	aci.Status.DebugInfo.State = "insufficient"
	if jsonEqual(before.Status, aci.Status) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, s.Client.Status().Update(ctx, aci)
}

func (s *Sim) setRequirements(aci *hiveext.AgentClusterInstall, status corev1.ConditionStatus, reason, msg string) {
	setInstallCondition(aci, hiveext.ClusterRequirementsMetCondition, status, reason, msg)
}

func setInstallCondition(aci *hiveext.AgentClusterInstall, t string, status corev1.ConditionStatus, reason, msg string) {
	now := metav1.Now()
	for i := range aci.Status.Conditions {
		c := &aci.Status.Conditions[i]
		if c.Type == t {
			if c.Status == status && c.Reason == reason && c.Message == msg {
				return // unchanged: no write, no event loop
			}
			if c.Status != status {
				c.LastTransitionTime = now
			}
			c.Status, c.Reason, c.Message, c.LastProbeTime = status, reason, msg, now
			return
		}
	}
	aci.Status.Conditions = append(aci.Status.Conditions, hivev1.ClusterInstallCondition{Type: t,
		Status: status, Reason: reason, Message: msg, LastTransitionTime: now, LastProbeTime: now})
}

// finish completes a running installation.
func (s *Sim) finish(ctx context.Context, aci *hiveext.AgentClusterInstall, agents []aiv1beta1.Agent) error {
	day1 := map[string]bool{}
	for _, n := range strings.Split(aci.Annotations[day1Annotation], ",") {
		day1[n] = true
	}
	for i := range agents {
		a := &agents[i]
		if !day1[a.Name] || assisted.AgentInstalled(a) {
			continue
		}
		a.Status.DebugInfo.State = "installed"
		a.Status.Progress.CurrentStage = "Done"
		setAgentInstalled(a, corev1.ConditionTrue, aiv1beta1.InstalledReason, "The installation has completed: Done")
		if err := s.Client.Status().Update(ctx, a); err != nil {
			return err
		}
	}
	cdName := aci.Spec.ClusterDeploymentRef.Name
	kubeconfig := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: cdName + "-admin-kubeconfig", Namespace: aci.Namespace},
		Data: map[string][]byte{"kubeconfig": []byte(Kubeconfig(aci.Namespace, cdName))}}
	if err := s.Client.Create(ctx, kubeconfig); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{
		"installed": true,
		"clusterMetadata": map[string]any{
			"clusterID": "sim-" + string(aci.UID), "infraID": cdName + "-sim",
			"adminKubeconfigSecretRef": map[string]any{"name": kubeconfig.Name},
		},
	}})
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: aci.Namespace, Name: cdName}}
	if err := s.Client.Patch(ctx, cd, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return err
	}
	setInstallCondition(aci, hiveext.ClusterCompletedCondition, corev1.ConditionTrue, hiveext.ClusterInstalledReason, hiveext.ClusterInstalledMsg+" Done")
	setInstallCondition(aci, hiveext.ClusterStoppedCondition, corev1.ConditionTrue, hiveext.ClusterStoppedCompletedReason, hiveext.ClusterStoppedCompletedMsg)
	aci.Status.DebugInfo.State = "adding-hosts"
	aci.Status.Progress.TotalPercentage = 100
	return s.Client.Status().Update(ctx, aci)
}

// Kubeconfig is the admin kubeconfig the simulated installer writes.
func Kubeconfig(namespace, cluster string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[2]s
  cluster:
    server: https://api.%[2]s.%[1]s.assistedsim.invalid:6443
contexts:
- name: admin
  context: {cluster: %[2]s, user: admin}
current-context: admin
users:
- name: admin
  user: {token: assistedsim}
`, namespace, cluster)
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
