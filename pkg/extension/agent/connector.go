package agent

import (
	"context"
	"fmt"
	"path"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/connector"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// agentContainer is the agent's container in its Deployment, whose image
// and command the connector runs (the agent's image carries the connector
// subcommand).
const agentContainer = "agent"

// connectorLabels mark the connector's objects and select its pod.
var connectorLabels = map[string]string{"app.kubernetes.io/name": connector.Name, "app.kubernetes.io/managed-by": addon.AgentName}

// agentImage is the image and command of the agent's own container.
func (e *Engine) agentImage(ctx context.Context) (string, []string, error) {
	d := &appsv1.Deployment{}
	key := types.NamespacedName{Namespace: e.opts.AgentNamespace, Name: addon.AgentName}
	if err := e.reader.Get(ctx, key, d); err != nil {
		return "", nil, fmt.Errorf("reading the agent's Deployment %s for the connector's image: %w", key, err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == agentContainer || len(d.Spec.Template.Spec.Containers) == 1 {
			return c.Image, c.Command, nil
		}
	}
	return "", nil, fmt.Errorf("the agent's Deployment %s has no container %q", key, agentContainer)
}

// ensureConnector runs the connector in ns with a grant to report into the
// phase requests named (and those already there): its ServiceAccount, a
// Role and RoleBinding, and its Deployment, all server-side applied.
func (e *Engine) ensureConnector(ctx context.Context, ns string, request string) error {
	requests := &corev1.ConfigMapList{}
	if err := e.reader.List(ctx, requests, client.InNamespace(ns), client.MatchingLabels{connector.LabelPhaseRequest: "true"}); err != nil {
		return err
	}
	names := []string{request}
	for _, cm := range requests.Items {
		names = append(names, cm.Name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	image, command, err := e.agentImage(ctx)
	if err != nil {
		return err
	}
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: connector.Name, Namespace: ns, Labels: connectorLabels}
	}
	sa := &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta()}
	role := &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: meta(),
		Rules: connectorRules(names)}
	binding := &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: meta(),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: connector.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: connector.Name, Namespace: ns}}}
	deployment := connectorDeployment(ns, image, command)
	for _, o := range []client.Object{sa, role, binding, deployment} {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return err
		}
		delete(u, "status")
		unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u, "spec", "template", "metadata", "creationTimestamp")
		apply := &unstructured.Unstructured{Object: u}
		if err := e.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner(extension.FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("the extension connector's %s in %s: %w", o.GetObjectKind().GroupVersionKind().Kind, ns, err)
		}
	}
	return nil
}

// connectorRules is the connector's whole grant: read the phase requests
// of its namespace (watched by label; RBAC cannot select by label, so it
// may read the namespace's ConfigMaps) and write its report into exactly
// the requests named. No Secret: the kubelet mounts the service-network
// kubeconfig, the connector's identity never reads it.
func connectorRules(requests []string) []rbacv1.PolicyRule {
	rules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}
	if len(requests) > 0 { // an empty resourceNames would mean every ConfigMap
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: requests, Verbs: []string{"patch"}})
	}
	return rules
}

// connectorDeployment runs the agent's image with the connector subcommand,
// the guest kubeconfig Secret mounted, as a restricted pod.
func connectorDeployment(ns, image string, command []string) *appsv1.Deployment {
	labels := map[string]string{}
	for k, v := range connectorLabels {
		labels[k] = v
	}
	// HyperShift's NetworkPolicies let control-plane pods so labelled reach
	// the management cluster's API server (where the requests are).
	podLabels := map[string]string{"hypershift.openshift.io/need-management-kas-access": "true"}
	for k, v := range connectorLabels {
		podLabels[k] = v
	}
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: connector.Name, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
			// One connector at a time works on a namespace's requests.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: connectorLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{ServiceAccountName: connector.Name,
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{Name: "connector", Image: image, Command: command,
						Args: []string{connector.Command, "--namespace=" + ns,
							"--guest-kubeconfig=" + path.Join(connector.MountPath, hosting.KubeconfigKey)},
						VolumeMounts: []corev1.VolumeMount{{Name: "guest-kubeconfig", MountPath: connector.MountPath, ReadOnly: true}},
						SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}},
					Volumes: []corev1.Volume{{Name: "guest-kubeconfig", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
						SecretName: extension.GuestKubeconfigSecret, Items: []corev1.KeyToPath{{Key: hosting.KubeconfigKey, Path: hosting.KubeconfigKey}}}}}},
				}}}}
}

// removeConnector deletes the connector's objects in ns (the last release
// there is gone), the Deployment first so it stops before its grant goes.
func (e *Engine) removeConnector(ctx context.Context, ns string) error {
	e.waiting.forget(ns)
	return removeConnector(ctx, e.client, ns)
}

func removeConnector(ctx context.Context, c client.Client, ns string) error {
	m := metav1.ObjectMeta{Name: connector.Name, Namespace: ns}
	for _, o := range []client.Object{&appsv1.Deployment{ObjectMeta: m}, &rbacv1.RoleBinding{ObjectMeta: m}, &rbacv1.Role{ObjectMeta: m}, &corev1.ServiceAccount{ObjectMeta: m}} {
		if err := c.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("removing the extension connector from %s: %w", ns, err)
		}
	}
	return nil
}
