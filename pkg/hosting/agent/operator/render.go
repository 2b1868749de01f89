// Package operator is the agent's HyperShift operator lifecycle on a
// management cluster: it renders what `hypershift install` would install,
// from the HostingConfig, applies it with server-side apply under one field
// manager (and writes nothing when nothing changed), tracks the rollout,
// refuses to touch an install someone else made unless told to adopt it, and
// uninstalls only when no HostedCluster is left.
//
// What we render, and why (the parts of `hypershift install` that matter for
// a fleet-managed operator):
//   - the HyperShift CRDs (HostedCluster, NodePool, HostedControlPlane, …),
//     generated from the pinned HyperShift API types;
//   - namespace hypershift, the operator ServiceAccount, its ClusterRole and
//     binding (cluster-wide: it manages hosted control-plane namespaces) and a
//     Role for its leader-election lease;
//   - the PriorityClasses hosted control planes are scheduled with;
//   - the credentials the HostingConfig references (OIDC S3 storage,
//     private platform, external-dns), which the hub delivers to the
//     agent's namespace, copied into Secrets in the operator's namespace;
//   - the operator Deployment (image, IMAGE_* overrides, OIDC S3 storage,
//     private platform) and its metrics Service;
//   - external-dns when configured.
//
// Not rendered: webhooks and their certificates (the operator serves them
// only with --enable-*-webhook, which fleet installs leave off), the
// ServiceMonitor and monitoring RBAC (needs the Prometheus operator's CRDs;
// hcp-fleet reports health through OCM), and the CAPI CRDs (pkg/capi owns
// them, in Standard or Private mode).
package operator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/manifests"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

const (
	// Namespace is where the operator runs, as with `hypershift install`.
	Namespace = "hypershift"
	// DeploymentName is the operator Deployment's name.
	DeploymentName = "operator"
	// ServiceAccountName is the operator's ServiceAccount.
	ServiceAccountName = "operator"
	// DefaultImage is the operator image when the HostingConfig names none:
	// the release this hcp-fleet version is built and tested against.
	DefaultImage = "quay.io/hypershift/hypershift-operator:4.19"

	// ManagedByLabel marks every object the agent installs.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is ManagedByLabel's value.
	ManagedByValue = "hcp-fleet"
	// AppliedHashAnnotation holds the hash of what the agent last applied to
	// an object; equal hashes mean nothing to write.
	AppliedHashAnnotation = "hcpfleet.io/applied-hash"
	// FieldManager is the server-side apply field manager of the install.
	FieldManager = "hcp-fleet-agent"

	// DefaultExternalDNSImage runs external-dns when the HostingConfig
	// configures it.
	DefaultExternalDNSImage = "registry.k8s.io/external-dns/external-dns:v0.14.2"

	// Secret names the operator and external-dns mount, as `hypershift
	// install` names them.
	OIDCCredentialsSecret            = "hypershift-operator-oidc-provider-s3-credentials"
	PrivatePlatformCredentialsSecret = "hypershift-operator-aws-credentials"
	ExternalDNSCredentialsSecret     = "external-dns-credentials"

	// CredentialsHashAnnotation on a pod template is the hash of the
	// credentials its pods mount: new credentials roll the pods, which read
	// them at start.
	CredentialsHashAnnotation = "hcpfleet.io/credentials-hash"
	// CredentialsKey is the key of the credentials file in the Secrets the
	// operator and external-dns mount.
	CredentialsKey = "credentials"

	// SupportedVersionsConfigMap is where the running operator publishes the
	// OpenShift releases it supports (key "supported-versions", JSON
	// {"versions":[...]}).
	SupportedVersionsConfigMap = "supported-versions"

	// PrivateCAPITypesFlag is the operator flag of HyperShift's private CAPI
	// types (openshift/enhancements#1927); see Cluster.PrivateCAPITypes.
	PrivateCAPITypesFlag = "--private-capi-types"
)

// PriorityClasses hosted control planes use; names and values as the
// HyperShift operator expects them.
var priorityClasses = []struct {
	name       string
	value      int32
	preemption *corev1.PreemptionPolicy
	desc       string
}{
	{"hypershift-control-plane", 100000000, ptr.To(corev1.PreemptNever), "This priority class should be used for hypershift control plane pods that are not API critical but still need elevated priority."},
	{"hypershift-etcd", 100002000, ptr.To(corev1.PreemptNever), "This priority class should be used for hypershift etcd pods."},
	{"hypershift-api-critical", 100001000, ptr.To(corev1.PreemptNever), "This priority class should be used for hypershift control plane pods that are critical to serve the API."},
	{"hypershift-operator", 100003000, nil, "This priority class is used for hypershift operator pods."},
}

// Credentials are the contents of the credentials files the HostingConfig
// references, by addon.Credential Purpose, as the hub delivered them to the
// agent's namespace.
type Credentials map[string][]byte

// credentialSecrets are the Secrets in the operator's namespace the
// credentials are copied into, by Purpose.
var credentialSecrets = map[string]string{
	addon.OIDCStorageCredentials.Purpose:     OIDCCredentialsSecret,
	addon.PrivatePlatformCredentials.Purpose: PrivatePlatformCredentialsSecret,
	addon.ExternalDNSCredentials.Purpose:     ExternalDNSCredentialsSecret,
}

// Install is the rendered install: the objects in apply order, each carrying
// the hash of its desired content.
type Install struct {
	Objects []*unstructured.Unstructured
	// Image is the operator image.
	Image string
}

// Cluster is what the management cluster already has that changes the
// install.
type Cluster struct {
	// PrivateCAPITypes: hcp-fleet installed the private Cluster API CRDs
	// (*.cluster.hypershift.openshift.io, pkg/capi in Private mode), so the
	// operator runs with --private-capi-types, as `hypershift install
	// --private-capi-types` would set it up (openshift/enhancements#1927): it then creates the
	// CAPI objects of new hosted clusters in the private groups and runs
	// their CAPI controllers behind the API proxy. The flag follows the
	// CRDs, not the HostingConfig's capiMode, because Auto is resolved by
	// pkg/capi on the cluster, and the operator must not look for private
	// types before they exist.
	PrivateCAPITypes bool
}

// Render computes the install for a HostingConfig spec, the credentials
// it references (every one addon.CredentialRefs lists must be in creds) and
// the management cluster's relevant state. It is a pure function: the same
// input always gives the same objects and hashes.
func Render(spec *v1alpha1.HostingConfigSpec, creds Credentials, cluster Cluster) (*Install, error) {
	if spec == nil {
		spec = &v1alpha1.HostingConfigSpec{}
	}
	image := DefaultImage
	var overrides map[string]v1alpha1.ImagePullSpec
	if op := spec.Operator; op != nil {
		if op.Image != "" {
			image = op.Image
		}
		overrides = op.ImageOverrides
	}
	var install v1alpha1.InstallOptions
	if spec.Install != nil {
		install = *spec.Install
	}

	crds, err := crdObjects()
	if err != nil {
		return nil, err
	}
	objs := append([]runtime.Object{}, crds...)
	objs = append(objs,
		&corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: Namespace,
			Labels: map[string]string{"hypershift.openshift.io/monitoring": "true"}}},
		&corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: metav1.ObjectMeta{Name: ServiceAccountName, Namespace: Namespace}},
		operatorClusterRole(),
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: "hypershift-operator"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hypershift-operator"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccountName, Namespace: Namespace}},
		},
		&rbacv1.Role{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "Role"),
			ObjectMeta: metav1.ObjectMeta{Name: "hypershift-operator", Namespace: Namespace},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"*"}},
			},
		},
		&rbacv1.RoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: "hypershift-operator", Namespace: Namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "hypershift-operator"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccountName, Namespace: Namespace}},
		},
	)
	// The credentials, before the Deployments that mount them.
	for _, ref := range addon.CredentialRefs(spec) {
		data, ok := creds[ref.Purpose]
		if !ok {
			return nil, fmt.Errorf("%s: no %s credentials to install", ref.Field, ref.Purpose)
		}
		objs = append(objs, &corev1.Secret{
			TypeMeta:   typeMeta("v1", "Secret"),
			ObjectMeta: metav1.ObjectMeta{Name: credentialSecrets[ref.Purpose], Namespace: Namespace},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{CredentialsKey: data},
		})
	}
	for _, pc := range priorityClasses {
		objs = append(objs, &schedulingv1.PriorityClass{
			TypeMeta: typeMeta("scheduling.k8s.io/v1", "PriorityClass"), ObjectMeta: metav1.ObjectMeta{Name: pc.name},
			Value: pc.value, Description: pc.desc, PreemptionPolicy: pc.preemption,
		})
	}
	operatorCreds := credentialsHash(creds, addon.OIDCStorageCredentials, addon.PrivatePlatformCredentials)
	objs = append(objs, operatorDeployment(image, overrides, install, cluster, operatorCreds), &corev1.Service{
		TypeMeta:   typeMeta("v1", "Service"),
		ObjectMeta: metav1.ObjectMeta{Name: DeploymentName, Namespace: Namespace, Labels: map[string]string{"name": DeploymentName}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"name": DeploymentName},
			Ports: []corev1.ServicePort{
				{Name: "metrics", Port: 9393, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP},
				{Name: "manager", Port: 443, TargetPort: intstr.FromString("manager"), Protocol: corev1.ProtocolTCP},
			},
		},
	})
	if dns := install.ExternalDNS; dns != nil {
		objs = append(objs, externalDNSObjects(dns, credentialsHash(creds, addon.ExternalDNSCredentials))...)
	}

	out := &Install{Image: image}
	for _, o := range objs {
		u, err := toUnstructured(o)
		if err != nil {
			return nil, err
		}
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[ManagedByLabel] = ManagedByValue
		u.SetLabels(labels)
		hash, err := contentHash(u)
		if err != nil {
			return nil, err
		}
		annotations := u.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[AppliedHashAnnotation] = hash
		u.SetAnnotations(annotations)
		out.Objects = append(out.Objects, u)
	}
	return out, nil
}

// operatorClusterRole: the operator creates a namespace per hosted control
// plane and runs its whole control plane there (deployments, RBAC it hands
// to control-plane components, routes, CAPI objects), so it needs broad
// cluster-wide rights, as with `hypershift install`.
func operatorClusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
		ObjectMeta: metav1.ObjectMeta{Name: "hypershift-operator"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"hypershift.openshift.io", "certificates.hypershift.openshift.io", "scheduling.hypershift.openshift.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			{APIGroups: []string{"cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io", "controlplane.cluster.x-k8s.io",
				"cluster.hypershift.openshift.io", "infrastructure.cluster.hypershift.openshift.io", "capi-provider.agent-install.openshift.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces", "secrets", "configmaps", "services", "serviceaccounts", "pods", "pods/log", "endpoints", "events", "persistentvolumeclaims"}, Verbs: []string{"*"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "replicasets", "daemonsets"}, Verbs: []string{"*"}},
			{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles", "rolebindings", "clusterroles", "clusterrolebindings"}, Verbs: []string{"*"}},
			{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"*"}},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies", "ingresses"}, Verbs: []string{"*"}},
			{APIGroups: []string{"route.openshift.io"}, Resources: []string{"routes", "routes/custom-host"}, Verbs: []string{"*"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"*"}},
			{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status", "signers"}, Verbs: []string{"*"}},
			{APIGroups: []string{"config.openshift.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"operator.openshift.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"monitoring.coreos.com"}, Resources: []string{"servicemonitors", "podmonitors", "prometheusrules"}, Verbs: []string{"*"}},
			{APIGroups: []string{"agent-install.openshift.io", "extensions.hive.openshift.io", "hive.openshift.io", "metal3.io", "kubevirt.io", "cdi.kubevirt.io", "snapshot.storage.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"*"}},
			{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"}, Verbs: []string{"*"}},
			{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
			{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
			{APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"priorityclasses"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
}

// credentialsHash hashes the credentials of the given kinds, or is "" when
// creds holds none of them.
func credentialsHash(creds Credentials, kinds ...addon.Credential) string {
	h := sha256.New()
	found := false
	for _, k := range kinds {
		if data, ok := creds[k.Purpose]; ok {
			found = true
			_, _ = fmt.Fprintf(h, "%s:%d:", k.Purpose, len(data))
			h.Write(data)
		}
	}
	if !found {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// podAnnotations are the pod template's annotations: the credentials hash,
// when its pods mount credentials.
func podAnnotations(credsHash string) map[string]string {
	if credsHash == "" {
		return nil
	}
	return map[string]string{CredentialsHashAnnotation: credsHash}
}

func operatorDeployment(image string, overrides map[string]v1alpha1.ImagePullSpec, install v1alpha1.InstallOptions, cluster Cluster, credsHash string) *appsv1.Deployment {
	platform := "None"
	if pp := install.PrivatePlatform; pp != nil && pp.Type != "" {
		platform = string(pp.Type)
	}
	args := []string{"run", "--namespace=$(MY_NAMESPACE)", "--pod-name=$(MY_NAME)", "--metrics-addr=:9000",
		"--enable-ocp-cluster-monitoring=false", "--enable-ci-debug-output=false", "--private-platform=" + platform}
	if cluster.PrivateCAPITypes {
		args = append(args, PrivateCAPITypesFlag)
	}
	env := []corev1.EnvVar{
		{Name: "MY_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "MY_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}
	// IMAGE_* overrides, sorted so the rendering is stable.
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, corev1.EnvVar{Name: k, Value: string(overrides[k])})
	}
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	addSecret := func(name, secret, path string) {
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: true})
	}
	if s3 := install.OIDCStorage; s3 != nil {
		args = append(args,
			"--oidc-storage-provider-s3-bucket-name="+s3.Bucket,
			"--oidc-storage-provider-s3-region="+s3.Region,
			"--oidc-storage-provider-s3-credentials=/etc/oidc-storage-provider-s3-creds/credentials")
		addSecret("oidc-storage-provider-s3-creds", OIDCCredentialsSecret, "/etc/oidc-storage-provider-s3-creds")
	}
	if pp := install.PrivatePlatform; pp != nil && pp.AWS != nil && platform == "AWS" {
		env = append(env,
			corev1.EnvVar{Name: "AWS_SHARED_CREDENTIALS_FILE", Value: "/etc/provider/credentials"},
			corev1.EnvVar{Name: "AWS_REGION", Value: pp.AWS.Region},
			corev1.EnvVar{Name: "AWS_SDK_LOAD_CONFIG", Value: "1"})
		addSecret("credentials", PrivatePlatformCredentialsSecret, "/etc/provider")
	}
	labels := map[string]string{"name": DeploymentName, "app": DeploymentName, "hypershift.openshift.io/operator-component": DeploymentName}
	return &appsv1.Deployment{
		TypeMeta:   typeMeta("apps/v1", "Deployment"),
		ObjectMeta: metav1.ObjectMeta{Name: DeploymentName, Namespace: Namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": DeploymentName}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: podAnnotations(credsHash)},
				Spec: corev1.PodSpec{
					ServiceAccountName: ServiceAccountName,
					PriorityClassName:  "hypershift-operator",
					SecurityContext:    &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
						Weight: 10, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname,
							LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": DeploymentName}}},
					}}}},
					Containers: []corev1.Container{{
						Name:            "operator",
						Image:           image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Command:         []string{"/usr/bin/hypershift-operator"},
						Args:            args,
						Env:             env,
						Ports: []corev1.ContainerPort{
							{Name: "metrics", ContainerPort: 9000, Protocol: corev1.ProtocolTCP},
							{Name: "manager", ContainerPort: 9443, Protocol: corev1.ProtocolTCP},
						},
						LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/metrics", Port: intstr.FromInt32(9000)}},
							InitialDelaySeconds: 60, PeriodSeconds: 60, FailureThreshold: 5, TimeoutSeconds: 5},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/metrics", Port: intstr.FromInt32(9000)}},
							InitialDelaySeconds: 15, PeriodSeconds: 60, FailureThreshold: 3, TimeoutSeconds: 5},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: mustQuantity("10m"), corev1.ResourceMemory: mustQuantity("150Mi")}},
						SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true), RunAsUser: ptr.To[int64](1000),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
						VolumeMounts: mounts,
					}},
					Volumes: volumes,
				},
			},
		},
	}
}

// externalDNSObjects: external-dns with its own identity, which may only
// read the routes and services it publishes.
func externalDNSObjects(dns *v1alpha1.ExternalDNSConfig, credsHash string) []runtime.Object {
	args := []string{
		"--source=service", "--source=openshift-route",
		"--domain-filter=" + dns.DomainFilter,
		"--provider=" + string(dns.Provider),
		"--registry=txt", "--txt-suffix=-external-dns",
		"--label-filter=hypershift.openshift.io/route-visibility!=private",
		"--interval=1m", "--txt-cache-interval=1h",
	}
	if dns.TxtOwnerID != "" {
		args = append(args, "--txt-owner-id="+dns.TxtOwnerID)
	}
	var env []corev1.EnvVar
	switch dns.Provider {
	case "aws":
		args = append(args, "--aws-zone-type=public", "--aws-batch-change-interval=10s", "--aws-zones-cache-duration=1h")
		env = []corev1.EnvVar{{Name: "AWS_SHARED_CREDENTIALS_FILE", Value: "/etc/provider/credentials"}, {Name: "AWS_REGION", Value: "us-east-1"}}
	case "azure":
		args = append(args, "--azure-config-file=/etc/provider/credentials")
	}
	labels := map[string]string{"name": "external-dns", "app": "external-dns", "hypershift.openshift.io/operator-component": "external-dns"}
	return []runtime.Object{
		&corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: metav1.ObjectMeta{Name: "external-dns", Namespace: Namespace}},
		&rbacv1.ClusterRole{
			TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"), ObjectMeta: metav1.ObjectMeta{Name: "external-dns"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"route.openshift.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "nodes", "pods"}, Verbs: []string{"get", "list", "watch"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), ObjectMeta: metav1.ObjectMeta{Name: "external-dns"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "external-dns"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "external-dns", Namespace: Namespace}},
		},
		&appsv1.Deployment{
			TypeMeta:   typeMeta("apps/v1", "Deployment"),
			ObjectMeta: metav1.ObjectMeta{Name: "external-dns", Namespace: Namespace},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": "external-dns"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: podAnnotations(credsHash)},
					Spec: corev1.PodSpec{
						ServiceAccountName: "external-dns",
						PriorityClassName:  "hypershift-operator",
						Containers: []corev1.Container{{
							Name: "external-dns", Image: DefaultExternalDNSImage, ImagePullPolicy: corev1.PullIfNotPresent,
							Command: []string{"/external-dns"}, Args: args, Env: env,
							Ports:           []corev1.ContainerPort{{Name: "metrics", ContainerPort: 7979}},
							VolumeMounts:    []corev1.VolumeMount{{Name: "credentials", MountPath: "/etc/provider", ReadOnly: true}},
							SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true), Privileged: ptr.To(false)},
						}},
						Volumes: []corev1.Volume{{Name: "credentials", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: ExternalDNSCredentialsSecret}}}},
					},
				},
			},
		},
	}
}

// crdObjects decodes the generated HyperShift CRDs.
// installCRDs are the names of the CRDs the install holds.
var installCRDs = func() map[string]bool {
	crds, err := crdObjects()
	if err != nil {
		panic(err) // embedded at build time
	}
	names := make(map[string]bool, len(crds))
	for _, c := range crds {
		names[c.(*unstructured.Unstructured).GetName()] = true
	}
	return names
}()

func crdObjects() ([]runtime.Object, error) {
	entries, err := manifests.HyperShiftCRDs.ReadDir("hypershift")
	if err != nil {
		return nil, err
	}
	var out []runtime.Object
	for _, e := range entries {
		data, err := manifests.HyperShiftCRDs.ReadFile("hypershift/" + e.Name())
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yamlToUnstructured(data, u); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, u)
	}
	return out, nil
}

func toUnstructured(o runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := o.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	return u, nil
}

// contentHash hashes an object's desired content (without the hash itself).
func contentHash(u *unstructured.Unstructured) (string, error) {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12]), nil
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// ObjectKey names an object for messages: Kind namespace/name.
func ObjectKey(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + strings.Join([]string{u.GetNamespace(), u.GetName()}, "/")
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

func yamlToUnstructured(data []byte, u *unstructured.Unstructured) error {
	return yaml.Unmarshal(data, &u.Object)
}
