package assistedcontrolplane

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/assisted"
	bootstrapv1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/bootstrap/v1alpha1"
	controlplanev1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/controlplane/v1alpha1"
)

// Pure functions computing what the control-plane provider writes.

// OpenShift's installer defaults, used when the Cluster has no clusterNetwork.
const (
	defaultPodCIDR     = "10.128.0.0/14"
	defaultHostPrefix  = 23
	defaultServiceCIDR = "172.30.0.0/16"
)

// Invalid is a spec problem: the reason of SpecValid=False and a message.
type Invalid struct {
	Reason  string
	Message string
}

func (i *Invalid) Error() string { return i.Reason + ": " + i.Message }

// validate checks what the API server's schema cannot: the pull secret
// reference, the VIPs, and that the replica count and VIPs describe one
// topology assisted-installer can install.
func validate(acp *controlplanev1.OpenshiftAssistedControlPlane) *Invalid {
	c := acp.Spec.Config
	if c.PullSecretRef == nil || c.PullSecretRef.Name == "" {
		return &Invalid{controlplanev1.ReasonPullSecretRefMissing, "spec.config.pullSecretRef is required"}
	}
	if err := validVIPs(c.APIVIPs); err != "" {
		return &Invalid{controlplanev1.ReasonInvalidAPIVIPs, "spec.config.apiVIPs: " + err}
	}
	if err := validVIPs(c.IngressVIPs); err != "" {
		return &Invalid{controlplanev1.ReasonInvalidIngressVIPs, "spec.config.ingressVIPs: " + err}
	}
	if len(c.APIVIPs) != len(c.IngressVIPs) {
		return &Invalid{controlplanev1.ReasonInvalidIngressVIPs,
			fmt.Sprintf("spec.config has %d apiVIPs but %d ingressVIPs; give one of each per IP family", len(c.APIVIPs), len(c.IngressVIPs))}
	}
	for i := range c.APIVIPs {
		if net.ParseIP(c.APIVIPs[i]).Equal(net.ParseIP(c.IngressVIPs[i])) {
			return &Invalid{controlplanev1.ReasonInvalidIngressVIPs, fmt.Sprintf("ingress VIP %s is also an API VIP", c.IngressVIPs[i])}
		}
	}
	replicas := ptr.Deref(acp.Spec.Replicas, 3)
	switch {
	case replicas == 1 && len(c.APIVIPs) > 0:
		return &Invalid{controlplanev1.ReasonReplicasMismatch,
			"replicas is 1 (single-node OpenShift, user-managed networking) but VIPs are set; remove the VIPs or use 3 replicas"}
	case replicas > 1 && len(c.APIVIPs) == 0:
		return &Invalid{controlplanev1.ReasonReplicasMismatch,
			fmt.Sprintf("replicas is %d (multi-node, platform BareMetal) but no apiVIPs/ingressVIPs are set", replicas)}
	case replicas == 2 || replicas > 5:
		return &Invalid{controlplanev1.ReasonReplicasMismatch,
			fmt.Sprintf("replicas is %d; assisted-installer installs 1 (single node) or 3 to 5 control-plane nodes", replicas)}
	}
	return nil
}

// validVIPs returns why vips is invalid, or "": each must be an IP, at most
// one per family.
func validVIPs(vips []string) string {
	families := map[bool]bool{}
	for _, v := range vips {
		ip := net.ParseIP(v)
		if ip == nil {
			return fmt.Sprintf("%q is not an IP address", v)
		}
		if ip.IsUnspecified() || ip.IsLoopback() || ip.IsMulticast() {
			return fmt.Sprintf("%s cannot be a VIP", v)
		}
		v4 := ip.To4() != nil
		if families[v4] {
			return "at most one VIP per IP family"
		}
		families[v4] = true
	}
	return ""
}

// openshiftClusterName is the OpenShift cluster name (DNS label of the API).
func openshiftClusterName(acp *controlplanev1.OpenshiftAssistedControlPlane, cluster string) string {
	if acp.Spec.Config.ClusterName != "" {
		return acp.Spec.Config.ClusterName
	}
	return cluster
}

// imageSetName is the hive ClusterImageSet the installation uses.
func imageSetName(acp *controlplanev1.OpenshiftAssistedControlPlane) string {
	if acp.Spec.Config.ImageSetRef != "" {
		return acp.Spec.Config.ImageSetRef
	}
	return "openshift-" + acp.Spec.DistributionVersion
}

func releaseImage(acp *controlplanev1.OpenshiftAssistedControlPlane) string {
	if acp.Spec.Config.ReleaseImage != "" {
		return acp.Spec.Config.ReleaseImage
	}
	return "quay.io/openshift-release-dev/ocp-release:" + acp.Spec.DistributionVersion + "-x86_64"
}

func ownerRef(acp *controlplanev1.OpenshiftAssistedControlPlane) metav1.OwnerReference {
	return *metav1.NewControllerRef(acp, controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane"))
}

// desiredClusterDeployment is the ClusterDeployment, holding only our
// fields (server-side apply). Its agentSelector matches the agentLabels our
// InfraEnvs give their Agents, and nothing else.
func desiredClusterDeployment(acp *controlplanev1.OpenshiftAssistedControlPlane, cluster string) *unstructured.Unstructured {
	c := acp.Spec.Config
	name := assisted.ClusterDeploymentName(cluster)
	u := assisted.Object(assisted.ClusterDeploymentGVK, acp.Namespace, name, map[string]any{"spec": map[string]any{
		"baseDomain":    c.BaseDomain,
		"clusterName":   openshiftClusterName(acp, cluster),
		"pullSecretRef": map[string]any{"name": c.PullSecretRef.Name},
		"platform": map[string]any{"agentBareMetal": map[string]any{
			"agentSelector": map[string]any{"matchLabels": map[string]any{clusterv1.ClusterNameLabel: cluster}},
		}},
		"clusterInstallRef": map[string]any{
			"group": assisted.AgentClusterInstallGVK.Group, "version": assisted.AgentClusterInstallGVK.Version,
			"kind": assisted.AgentClusterInstallGVK.Kind, "name": name,
		},
	}})
	u.SetLabels(map[string]string{clusterv1.ClusterNameLabel: cluster})
	u.SetOwnerReferences([]metav1.OwnerReference{ownerRef(acp)})
	return u
}

// provisionRequirements are the agent counts assisted-installer waits for
// before the day-1 installation: control-plane replicas, and the workers
// Cluster API asks for (the MachineDeployments' replicas). Once the
// installation started they are frozen at what it started with (frozen !=
// nil): later Machines join as day-2 hosts, which these counts do not govern.
func provisionRequirements(acp *controlplanev1.OpenshiftAssistedControlPlane, workers int64, frozen map[string]any) map[string]any {
	if frozen != nil {
		return frozen
	}
	return map[string]any{
		"controlPlaneAgents": int64(ptr.Deref(acp.Spec.Replicas, 3)),
		"workerAgents":       workers,
	}
}

// desiredAgentClusterInstall is the AgentClusterInstall, holding only our fields.
func desiredAgentClusterInstall(acp *controlplanev1.OpenshiftAssistedControlPlane, cluster *clusterv1.Cluster, requirements map[string]any) *unstructured.Unstructured {
	c := acp.Spec.Config
	name := assisted.ClusterDeploymentName(cluster.Name)
	pods, hostPrefix, services := []string{defaultPodCIDR}, int64(defaultHostPrefix), []string{defaultServiceCIDR}
	if n := cluster.Spec.ClusterNetwork; len(n.Pods.CIDRBlocks) > 0 {
		pods = n.Pods.CIDRBlocks
	}
	if n := cluster.Spec.ClusterNetwork; len(n.Services.CIDRBlocks) > 0 {
		services = n.Services.CIDRBlocks
	}
	clusterNetwork := make([]any, 0, len(pods))
	for _, p := range pods {
		clusterNetwork = append(clusterNetwork, map[string]any{"cidr": p, "hostPrefix": hostPrefix})
	}
	networking := map[string]any{"clusterNetwork": clusterNetwork, "serviceNetwork": assisted.Strings(services)}
	if c.NetworkType != "" {
		networking["networkType"] = c.NetworkType
	}
	spec := map[string]any{
		"clusterDeploymentRef":  map[string]any{"name": name},
		"imageSetRef":           map[string]any{"name": imageSetName(acp)},
		"networking":            networking,
		"provisionRequirements": requirements,
	}
	if ptr.Deref(acp.Spec.Replicas, 3) == 1 {
		spec["platformType"] = "None"
		networking["userManagedNetworking"] = true
	} else {
		spec["platformType"] = "BareMetal"
		spec["apiVIPs"] = assisted.Strings(c.APIVIPs)
		spec["ingressVIPs"] = assisted.Strings(c.IngressVIPs)
	}
	if c.SSHAuthorizedKey != "" {
		spec["sshPublicKey"] = c.SSHAuthorizedKey
	}
	if c.MastersSchedulable {
		spec["mastersSchedulable"] = true
	}
	u := assisted.Object(assisted.AgentClusterInstallGVK, acp.Namespace, name, map[string]any{"spec": spec})
	u.SetLabels(map[string]string{clusterv1.ClusterNameLabel: cluster.Name})
	u.SetOwnerReferences([]metav1.OwnerReference{ownerRef(acp)})
	return u
}

// machineName is the name of the control-plane Machine (and of its config
// and infrastructure machine) with index i. Names are deterministic so that
// a create repeated after a restart or on a stale cache hits AlreadyExists
// instead of making a second Machine.
func machineName(acp *controlplanev1.OpenshiftAssistedControlPlane, i int) string {
	return acp.Name + "-" + strconv.Itoa(i)
}

// nextIndices returns the n lowest indices not in use (by a Machine or a
// config still present, e.g. terminating).
func nextIndices(acp *controlplanev1.OpenshiftAssistedControlPlane, used map[string]bool, n int) []int {
	var out []int
	for i := 0; len(out) < n; i++ {
		if !used[machineName(acp, i)] {
			out = append(out, i)
		}
	}
	return out
}

// machinesToDelete picks which Machines go on scale down: newest first
// (they are the least likely to carry the installed control plane).
func machinesToDelete(machines []clusterv1.Machine, n int) []clusterv1.Machine {
	sorted := append([]clusterv1.Machine(nil), machines...)
	sort.Slice(sorted, func(i, j int) bool {
		ti, tj := sorted[i].CreationTimestamp, sorted[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return tj.Before(&ti)
		}
		return sorted[i].Name > sorted[j].Name
	})
	if n > len(sorted) {
		n = len(sorted)
	}
	return sorted[:n]
}

// machineLabels are the labels of everything made for one control-plane Machine.
func machineLabels(acp *controlplanev1.OpenshiftAssistedControlPlane, cluster string) map[string]string {
	l := map[string]string{}
	for k, v := range acp.Spec.MachineTemplate.ObjectMeta.Labels {
		l[k] = v
	}
	l[clusterv1.ClusterNameLabel] = cluster
	l[clusterv1.MachineControlPlaneLabel] = ""
	l[controlplanev1.ControlPlaneNameLabel] = acp.Name
	return l
}

// desiredConfig is the bootstrap config of control-plane Machine name.
func desiredConfig(acp *controlplanev1.OpenshiftAssistedControlPlane, cluster, name string) *bootstrapv1.OpenshiftAssistedConfig {
	spec := *acp.Spec.OpenshiftAssistedConfigSpec.DeepCopy()
	if spec.PullSecretRef == nil {
		spec.PullSecretRef = acp.Spec.Config.PullSecretRef.DeepCopy()
	}
	if spec.SSHAuthorizedKey == "" {
		spec.SSHAuthorizedKey = acp.Spec.Config.SSHAuthorizedKey
	}
	return &bootstrapv1.OpenshiftAssistedConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: acp.Namespace, Labels: machineLabels(acp, cluster),
			OwnerReferences: []metav1.OwnerReference{ownerRef(acp)}},
		Spec: spec,
	}
}

// desiredInfraMachine clones the infrastructure machine template (as
// Cluster API's KubeadmControlPlane does): kind without "Template", spec
// from spec.template.spec, labels and annotations from the template's
// metadata plus ours.
func desiredInfraMachine(acp *controlplanev1.OpenshiftAssistedControlPlane, tmpl *unstructured.Unstructured, cluster, name string) *unstructured.Unstructured {
	spec, _, _ := unstructured.NestedMap(tmpl.Object, "spec", "template", "spec")
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(tmpl.GetAPIVersion())
	u.SetKind(strings.TrimSuffix(tmpl.GetKind(), "Template"))
	u.SetNamespace(acp.Namespace)
	u.SetName(name)
	labels := map[string]string{}
	if l, ok, _ := unstructured.NestedStringMap(tmpl.Object, "spec", "template", "metadata", "labels"); ok {
		labels = l
	}
	for k, v := range machineLabels(acp, cluster) {
		labels[k] = v
	}
	u.SetLabels(labels)
	annotations := map[string]string{}
	if a, ok, _ := unstructured.NestedStringMap(tmpl.Object, "spec", "template", "metadata", "annotations"); ok {
		annotations = a
	}
	annotations[clusterv1.TemplateClonedFromNameAnnotation] = tmpl.GetName()
	annotations[clusterv1.TemplateClonedFromGroupKindAnnotation] = tmpl.GroupVersionKind().GroupKind().String()
	u.SetAnnotations(annotations)
	u.SetOwnerReferences([]metav1.OwnerReference{ownerRef(acp)})
	return u
}

// desiredMachine is control-plane Machine name.
func desiredMachine(acp *controlplanev1.OpenshiftAssistedControlPlane, cluster, name, infraKind string) *clusterv1.Machine {
	ref := acp.Spec.MachineTemplate.Spec.InfrastructureRef
	return &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: acp.Namespace, Labels: machineLabels(acp, cluster),
			Annotations:     acp.Spec.MachineTemplate.ObjectMeta.Annotations,
			OwnerReferences: []metav1.OwnerReference{ownerRef(acp)}},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster,
			Version:     acp.Spec.Version,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: ref.APIGroup, Kind: infraKind, Name: name},
		},
	}
}

// selector is the label selector of the control-plane Machines (scale subresource).
func selector(acp *controlplanev1.OpenshiftAssistedControlPlane, cluster string) string {
	return clusterv1.ClusterNameLabel + "=" + cluster + "," + clusterv1.MachineControlPlaneLabel + "," +
		controlplanev1.ControlPlaneNameLabel + "=" + acp.Name
}
