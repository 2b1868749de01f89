package assistedbootstrap

import (
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/assisted"
	bootstrapv1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/bootstrap/v1alpha1"
)

// Pure functions computing what the bootstrap provider writes.

// Host roles (assisted-service models.HostRole values).
const (
	roleMaster = "master"
	roleWorker = "worker"
)

// roleFor is the Agent role of a Machine: control-plane Machines (label
// cluster.x-k8s.io/control-plane) become masters, all others workers.
func roleFor(m *clusterv1.Machine) string {
	if _, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; ok {
		return roleMaster
	}
	return roleWorker
}

// infraEnvName is the InfraEnv of a config: one per config, same name, so
// that an Agent's InfraEnv label names its config (and so its Machine).
func infraEnvName(cfg *bootstrapv1.OpenshiftAssistedConfig) string { return cfg.Name }

// desiredInfraEnv is the InfraEnv of cfg, holding only the fields we own.
// clusterRef binds the Agents that boot from it to the cluster's
// ClusterDeployment at registration ("early binding"), and agentLabels let
// the ClusterDeployment's agentSelector match them.
func desiredInfraEnv(cfg *bootstrapv1.OpenshiftAssistedConfig, clusterName string) *unstructured.Unstructured {
	s := cfg.Spec
	agentLabels := map[string]any{
		clusterv1.ClusterNameLabel:  clusterName,
		bootstrapv1.ConfigNameLabel: cfg.Name,
	}
	spec := map[string]any{
		"clusterRef": map[string]any{
			"name":      assisted.ClusterDeploymentName(clusterName),
			"namespace": cfg.Namespace,
		},
		"pullSecretRef": map[string]any{"name": s.PullSecretRef.Name},
		"agentLabels":   agentLabels,
	}
	if s.SSHAuthorizedKey != "" {
		spec["sshAuthorizedKey"] = s.SSHAuthorizedKey
	}
	if len(s.AdditionalNTPSources) > 0 {
		spec["additionalNTPSources"] = assisted.Strings(s.AdditionalNTPSources)
	}
	if s.CpuArchitecture != "" {
		spec["cpuArchitecture"] = s.CpuArchitecture
	}
	if s.OSImageVersion != "" {
		spec["osImageVersion"] = s.OSImageVersion
	}
	if s.AdditionalTrustBundle != "" {
		spec["additionalTrustBundle"] = s.AdditionalTrustBundle
	}
	if sel := s.NMStateConfigLabelSelector; len(sel.MatchLabels) > 0 || len(sel.MatchExpressions) > 0 {
		if m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&sel); err == nil {
			spec["nmStateConfigLabelSelector"] = m
		}
	}
	if p := s.Proxy; p != nil {
		proxy := map[string]any{}
		for k, v := range map[string]string{"httpProxy": p.HTTPProxy, "httpsProxy": p.HTTPSProxy, "noProxy": p.NoProxy} {
			if v != "" {
				proxy[k] = v
			}
		}
		spec["proxy"] = proxy
	}
	u := assisted.Object(assisted.InfraEnvGVK, cfg.Namespace, infraEnvName(cfg), map[string]any{"spec": spec})
	u.SetLabels(map[string]string{clusterv1.ClusterNameLabel: clusterName, bootstrapv1.ConfigNameLabel: cfg.Name})
	u.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(cfg, bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfig"))})
	return u
}

// desiredDataSecret is the bootstrap data secret of cfg. It is empty on
// purpose: the host boots assisted's discovery ISO, which needs no user
// data; the secret exists because Cluster API and infrastructure providers
// wait for a bootstrap data secret before they provision a host.
func desiredDataSecret(cfg *bootstrapv1.OpenshiftAssistedConfig, clusterName string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: cfg.Name, Namespace: cfg.Namespace,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: clusterName},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cfg, bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfig"))},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": {}, "format": []byte("ignition")},
	}
}

// agentPatch is the merge patch that makes agent the host of machine: its
// role, its hostname (the Machine's name, so Node and Machine names agree),
// the provider-ID node label, its binding to the cluster, and approval. nil
// when the Agent already has all of it.
func agentPatch(agent *aiv1beta1.Agent, machine *clusterv1.Machine, cdName, providerIDLabel, providerID string) map[string]any {
	spec := map[string]any{}
	if role := roleFor(machine); string(agent.Spec.Role) != role {
		spec["role"] = role
	}
	if agent.Spec.Hostname != machine.Name {
		spec["hostname"] = machine.Name
	}
	if providerID != "" && agent.Spec.NodeLabels[providerIDLabel] != providerID {
		spec["nodeLabels"] = map[string]any{providerIDLabel: providerID}
	}
	if ref := agent.Spec.ClusterDeploymentName; ref == nil || ref.Name != cdName || ref.Namespace != machine.Namespace {
		spec["clusterDeploymentName"] = map[string]any{"name": cdName, "namespace": machine.Namespace}
	}
	// Approve last, and only together with (or after) the role: an Agent
	// approved without its role could start installing as auto-assign.
	if !agent.Spec.Approved {
		spec["approved"] = true
	}
	if len(spec) == 0 {
		return nil
	}
	return map[string]any{"spec": spec}
}
