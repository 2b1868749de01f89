package migration

import (
	"fmt"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// Switch says how a workload is moved onto the private groups.
type Switch string

const (
	// SwitchSidecar adds the API proxy as a sidecar container and points every
	// other container's KUBECONFIG at it (the CAPI manager and provider, which
	// the HyperShift operator owns; enhancement step 6).
	SwitchSidecar Switch = "Sidecar"
	// SwitchSignal sets PrivateCAPITypesEnv on the workload: the control-plane
	// operator, which then adds the sidecar to the workloads it owns (machine
	// approver, autoscaler).
	SwitchSignal Switch = "Signal"
	// SwitchNone only scales the workload down and back up (workloads whose
	// owner adds the proxy itself, such as the CPO-managed ones).
	SwitchNone Switch = "None"
)

// Workload is a Deployment in the hosted control-plane namespace that talks
// to CAPI objects.
type Workload struct {
	Name   string
	Switch Switch
}

// DefaultWorkloads are HyperShift's CAPI workloads in a hosted control-plane
// namespace (enhancement "Pause and Scale Down"): the CAPI manager
// ("cluster-api") and provider ("capi-provider") get the sidecar; the
// control-plane operator is stopped so it does not touch the workloads it
// manages, and restarted with the signal; the autoscaler and the machine
// approver are stopped and started (the CPO adds their sidecars). Absent
// Deployments are skipped.
func DefaultWorkloads() []Workload {
	return []Workload{
		{Name: "cluster-api", Switch: SwitchSidecar},
		{Name: "capi-provider", Switch: SwitchSidecar},
		{Name: "cluster-autoscaler", Switch: SwitchNone},
		{Name: "machine-approver", Switch: SwitchNone},
		{Name: "control-plane-operator", Switch: SwitchSignal},
	}
}

const (
	// PrivateCAPITypesEnv is the signal to the control-plane operator that its
	// hosted cluster uses private CAPI types (enhancement: "via environment
	// variable or annotation").
	PrivateCAPITypesEnv = "HYPERSHIFT_PRIVATE_CAPI_TYPES"
	// ProxyKubeconfigName is the ConfigMap (in the control-plane namespace) and
	// volume holding the kubeconfig that points clients at the sidecar.
	ProxyKubeconfigName = "capi-api-proxy-kubeconfig"
	proxyKubeconfigDir  = "/etc/hcp-fleet/capi-api-proxy"
	proxyKubeconfigKey  = "kubeconfig"
)

// ProxySidecar describes the API proxy container (pkg/capi/proxy.Run).
type ProxySidecar struct {
	// Image of the container (the agent image, whose binary has the sidecar
	// entry point). Required.
	Image string
	// Command runs the proxy; "--listen=127.0.0.1:<Port>" is appended to Args.
	Command []string
	Args    []string
	// Port on loopback (default 8080, the enhancement's localhost:8080).
	Port int32
	// ContainerName defaults to "capi-api-proxy".
	ContainerName string
}

func (p ProxySidecar) withDefaults() ProxySidecar {
	if p.Port == 0 {
		p.Port = 8080
	}
	if p.ContainerName == "" {
		p.ContainerName = "capi-api-proxy"
	}
	return p
}

// ScaledDown is a workload's spec with no replicas.
func ScaledDown(spec appsv1.DeploymentSpec) appsv1.DeploymentSpec {
	out := *spec.DeepCopy()
	out.Replicas = ptr.To[int32](0)
	return out
}

// SwitchedToProxy is the spec a workload runs with after migration: the
// original spec (with its original replicas) plus, for SwitchSidecar, the proxy
// container, a KUBECONFIG env on every other container pointing at the
// sidecar's kubeconfig and the kubeconfig volume; for SwitchSignal,
// PrivateCAPITypesEnv=true on every container. Applying it twice gives the
// same spec.
func SwitchedToProxy(orig appsv1.DeploymentSpec, how Switch, p ProxySidecar) appsv1.DeploymentSpec {
	p = p.withDefaults()
	out := *orig.DeepCopy()
	pod := &out.Template.Spec
	switch how {
	case SwitchSidecar:
		for i := range pod.Containers {
			c := &pod.Containers[i]
			if c.Name == p.ContainerName {
				continue
			}
			c.Env = setEnv(c.Env, "KUBECONFIG", proxyKubeconfigDir+"/"+proxyKubeconfigKey)
			if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == ProxyKubeconfigName }) {
				c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: ProxyKubeconfigName, MountPath: proxyKubeconfigDir, ReadOnly: true})
			}
		}
		if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == ProxyKubeconfigName }) {
			pod.Volumes = append(pod.Volumes, corev1.Volume{Name: ProxyKubeconfigName, VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: ProxyKubeconfigName}},
			}})
		}
		sidecar := proxyContainer(p)
		if i := slices.IndexFunc(pod.Containers, func(c corev1.Container) bool { return c.Name == p.ContainerName }); i >= 0 {
			pod.Containers[i] = sidecar
		} else {
			pod.Containers = append(pod.Containers, sidecar)
		}
	case SwitchSignal:
		for i := range pod.Containers {
			pod.Containers[i].Env = setEnv(pod.Containers[i].Env, PrivateCAPITypesEnv, "true")
		}
	}
	return out
}

func proxyContainer(p ProxySidecar) corev1.Container {
	addr := "127.0.0.1:" + strconv.Itoa(int(p.Port))
	return corev1.Container{
		Name:    p.ContainerName,
		Image:   p.Image,
		Command: slices.Clone(p.Command),
		Args:    append(slices.Clone(p.Args), "--listen="+addr),
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("10m"),
			corev1.ResourceMemory: resource.MustParse("50Mi"),
		}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			TCPSocket: &corev1.TCPSocketAction{Host: "127.0.0.1", Port: intstr.FromInt32(p.Port)},
		}},
		ImagePullPolicy:          corev1.PullIfNotPresent,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
}

func setEnv(env []corev1.EnvVar, name, value string) []corev1.EnvVar {
	out := slices.Clone(env)
	if i := slices.IndexFunc(out, func(e corev1.EnvVar) bool { return e.Name == name }); i >= 0 {
		out[i] = corev1.EnvVar{Name: name, Value: value}
		return out
	}
	return append(out, corev1.EnvVar{Name: name, Value: value})
}

// ProxyKubeconfig is the ConfigMap with the kubeconfig that sends a client to
// the sidecar: plain HTTP on loopback, no credentials (the proxy adds the
// pod's service-account credentials; see pkg/capi/proxy).
func ProxyKubeconfig(namespace string, p ProxySidecar) (*corev1.ConfigMap, error) {
	p = p.withDefaults()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["capi-api-proxy"] = &clientcmdapi.Cluster{Server: "http://127.0.0.1:" + strconv.Itoa(int(p.Port))}
	cfg.AuthInfos["capi-api-proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["capi-api-proxy"] = &clientcmdapi.Context{Cluster: "capi-api-proxy", AuthInfo: "capi-api-proxy", Namespace: namespace}
	cfg.CurrentContext = "capi-api-proxy"
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: ProxyKubeconfigName, Namespace: namespace, Labels: map[string]string{managedByLabel: managedByValue}},
		Data:       map[string]string{proxyKubeconfigKey: string(b)},
	}, nil
}

// WorkloadProblem says why a Deployment is not (yet) available with the spec
// it should run; "" when it is: the controller has observed the current
// generation and all desired replicas are updated and available.
func WorkloadProblem(d *appsv1.Deployment) string {
	want := ptr.Deref(d.Spec.Replicas, 1)
	switch {
	case d.Status.ObservedGeneration < d.Generation:
		return fmt.Sprintf("deployment %s: generation %d not observed yet (%d)", d.Name, d.Generation, d.Status.ObservedGeneration)
	case d.Status.UpdatedReplicas != want || d.Status.AvailableReplicas != want || d.Status.Replicas != want:
		return fmt.Sprintf("deployment %s: %d/%d updated, %d available, %d total", d.Name, d.Status.UpdatedReplicas, want, d.Status.AvailableReplicas, d.Status.Replicas)
	}
	return ""
}
