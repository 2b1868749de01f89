// Package legacyfixture lays down one hosted cluster as a legacy HyperShift
// installation (standard CAPI types, Agent platform) leaves it on a
// management cluster, for the tests of the CAPI migration: the migration
// package's own (pkg/capi/migration, on internal/testenv) and the agent's
// on the local fleet (pkg/capi/feature). It creates and reads those objects
// through the client it is given and nothing else. Tests only.
package legacyfixture

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// API versions of the objects the fixture creates.
const (
	CoreAPIVersion  = "cluster.x-k8s.io/v1beta2"
	AgentAPIVersion = "capi-provider.agent-install.openshift.io/v1beta1"
	AgentGroup      = "capi-provider.agent-install.openshift.io"
	// StandardObjects is how many standard CAPI objects a fixture has
	// (Cluster, MachineDeployment, MachineSet, two Machines,
	// MachineHealthCheck).
	StandardObjects = 6
)

// Fixture is one hosted cluster: its HostedCluster (namespace "clusters",
// annotated scope: legacy) and the CAPI object graph and HyperShift
// Deployments of its control-plane namespace.
type Fixture struct {
	HostedCluster types.NamespacedName
	// Namespace is the hosted control-plane namespace.
	Namespace string
}

// Object is an unstructured object of the given kind.
func Object(apiVersion, kind, name string, obj map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: obj}
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetName(name)
	return o
}

func owner(o *unstructured.Unstructured, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Name: o.GetName(), UID: o.GetUID(), Controller: ptr.To(controller), BlockOwnerDeletion: ptr.To(true)}
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Create makes the hosted cluster name as HyperShift with the Agent provider
// lays it down, on a cluster with the HostedCluster CRD and the standard CAPI
// and Agent infrastructure provider CRDs: Cluster (finalizer, status),
// AgentCluster owned by it, AgentMachineTemplate, MachineDeployment →
// MachineSet → two Machines (finalizers), each with an AgentMachine and a
// bootstrap Secret, a MachineHealthCheck, and the HyperShift Deployments
// (cluster-api, capi-provider, control-plane-operator, cluster-autoscaler at
// 0 replicas, machine-approver, kube-apiserver) with their ServiceAccounts,
// reported available (MarkAvailable).
func Create(ctx context.Context, c client.Client, name string) (Fixture, error) {
	ns := "clusters-" + strings.ReplaceAll(name, ".", "-")
	f := Fixture{HostedCluster: types.NamespacedName{Namespace: "clusters", Name: name}, Namespace: ns}
	for _, n := range []string{"clusters", f.Namespace} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return f, err
		}
	}
	hc := Object("hypershift.openshift.io/v1beta1", "HostedCluster", name, map[string]any{
		"spec": map[string]any{
			"release":    map[string]any{"image": "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"},
			"pullSecret": map[string]any{"name": "pull-secret"},
			"platform":   map[string]any{"type": "Agent", "agent": map[string]any{"agentNamespace": "agents"}},
			"dns":        map[string]any{"baseDomain": "example.com"},
			"networking": map[string]any{"networkType": "OVNKubernetes", "clusterNetwork": []any{map[string]any{"cidr": "10.132.0.0/14"}}, "serviceNetwork": []any{map[string]any{"cidr": "172.31.0.0/16"}}},
			"etcd":       map[string]any{"managementType": "Managed", "managed": map[string]any{"storage": map[string]any{"type": "PersistentVolume"}}},
			"services": []any{
				map[string]any{"service": "APIServer", "servicePublishingStrategy": map[string]any{"type": "NodePort", "nodePort": map[string]any{"address": "10.0.0.1"}}},
				map[string]any{"service": "OAuthServer", "servicePublishingStrategy": map[string]any{"type": "Route"}},
				map[string]any{"service": "Konnectivity", "servicePublishingStrategy": map[string]any{"type": "Route"}},
				map[string]any{"service": "Ignition", "servicePublishingStrategy": map[string]any{"type": "Route"}},
			},
		},
	})
	hc.SetNamespace("clusters")
	hc.SetAnnotations(map[string]string{"hypershift.openshift.io/scope": "legacy", "example.com/keep": "me"})
	if err := c.Create(ctx, hc); err != nil {
		return f, fmt.Errorf("creating HostedCluster %s: %w", name, err)
	}

	var errs []error
	infra := name + "-x7k2p"
	create := func(o *unstructured.Unstructured, status map[string]any) *unstructured.Unstructured {
		o.SetNamespace(f.Namespace)
		if err := c.Create(ctx, o); err != nil {
			errs = append(errs, fmt.Errorf("creating %s %s: %w", o.GetKind(), o.GetName(), err))
			return o
		}
		if status != nil {
			o.Object["status"] = status
			if err := c.Status().Update(ctx, o); err != nil {
				errs = append(errs, fmt.Errorf("status of %s %s: %w", o.GetKind(), o.GetName(), err))
			}
		}
		return o
	}
	now := metav1.Now().Rfc3339Copy().Format(time.RFC3339)
	cond := func(typ, status, reason string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": typ + " is " + status, "lastTransitionTime": now, "observedGeneration": int64(1)}
	}
	clusterLabels := map[string]string{"cluster.x-k8s.io/cluster-name": infra}

	cluster := Object(CoreAPIVersion, "Cluster", infra, map[string]any{"spec": map[string]any{
		"controlPlaneRef":      map[string]any{"apiGroup": "hypershift.openshift.io", "kind": "HostedControlPlane", "name": name},
		"infrastructureRef":    map[string]any{"apiGroup": AgentGroup, "kind": "AgentCluster", "name": infra},
		"controlPlaneEndpoint": map[string]any{"host": "api." + name + ".example.com", "port": int64(6443)},
	}})
	cluster.SetLabels(map[string]string{"hypershift.openshift.io/hosted-cluster": name})
	cluster.SetAnnotations(map[string]string{"hypershift.openshift.io/cluster": "clusters/" + name})
	cluster.SetFinalizers([]string{"cluster.cluster.x-k8s.io"})
	create(cluster, map[string]any{
		"phase":          "Provisioned",
		"initialization": map[string]any{"infrastructureProvisioned": true, "controlPlaneInitialized": true},
		"conditions":     []any{cond("Available", "True", "Available"), cond("RemoteConnectionProbe", "False", "ProbeFailed")},
	})
	if len(errs) > 0 {
		return f, errors.Join(errs...)
	}

	ac := Object(AgentAPIVersion, "AgentCluster", infra, map[string]any{"spec": map[string]any{
		"controlPlaneEndpoint": map[string]any{"host": "api." + name + ".example.com", "port": int64(6443)},
		"ignitionEndpoint":     map[string]any{"url": "https://ignition." + name + ".example.com"},
	}})
	ac.SetOwnerReferences([]metav1.OwnerReference{owner(cluster, true)})
	create(ac, map[string]any{"ready": true, "clusterDeploymentReference": map[string]any{"name": name, "namespace": f.Namespace}})

	amt := Object(AgentAPIVersion, "AgentMachineTemplate", "np1-a1b2c3", map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"agentLabelSelector": map[string]any{"matchLabels": map[string]any{"pool": "np1"}},
	}}}})
	amt.SetOwnerReferences([]metav1.OwnerReference{owner(cluster, false)})
	create(amt, nil)

	machineSpec := func() map[string]any {
		return map[string]any{
			"clusterName":       infra,
			"bootstrap":         map[string]any{"dataSecretName": "user-data-np1"},
			"infrastructureRef": map[string]any{"apiGroup": AgentGroup, "kind": "AgentMachine", "name": "np1-a1b2c3"},
			"version":           "4.18.5",
		}
	}
	mdLabels := map[string]string{"cluster.x-k8s.io/cluster-name": infra, "cluster.x-k8s.io/deployment-name": "np1"}
	md := Object(CoreAPIVersion, "MachineDeployment", "np1", map[string]any{"spec": map[string]any{
		"clusterName": infra,
		"replicas":    int64(2),
		"selector":    map[string]any{"matchLabels": toAny(mdLabels)},
		"template":    map[string]any{"metadata": map[string]any{"labels": toAny(mdLabels)}, "spec": machineSpec()},
	}})
	md.SetLabels(clusterLabels)
	md.SetAnnotations(map[string]string{"hypershift.openshift.io/nodePool": "clusters/np1", "machinedeployment.clusters.x-k8s.io/revision": "3"})
	md.SetOwnerReferences([]metav1.OwnerReference{owner(cluster, false)})
	create(md, map[string]any{"replicas": int64(2), "readyReplicas": int64(2), "availableReplicas": int64(2), "upToDateReplicas": int64(2), "phase": "Running", "observedGeneration": int64(1)})

	msLabels := map[string]string{"cluster.x-k8s.io/cluster-name": infra, "cluster.x-k8s.io/deployment-name": "np1", "machine-template-hash": "1234"}
	ms := Object(CoreAPIVersion, "MachineSet", "np1-5f7d8", map[string]any{"spec": map[string]any{
		"clusterName": infra,
		"replicas":    int64(2),
		"selector":    map[string]any{"matchLabels": toAny(msLabels)},
		"template":    map[string]any{"metadata": map[string]any{"labels": toAny(msLabels)}, "spec": machineSpec()},
	}})
	ms.SetLabels(msLabels)
	ms.SetAnnotations(map[string]string{"machinedeployment.clusters.x-k8s.io/revision": "3"})
	ms.SetOwnerReferences([]metav1.OwnerReference{owner(md, true)})
	create(ms, map[string]any{"replicas": int64(2), "readyReplicas": int64(2), "availableReplicas": int64(2), "selector": "x=y", "observedGeneration": int64(1)})
	if len(errs) > 0 {
		return f, errors.Join(errs...)
	}

	for i, phase := range []string{"Running", "Failed"} {
		mname := fmt.Sprintf("np1-5f7d8-m%d", i)
		m := Object(CoreAPIVersion, "Machine", mname, map[string]any{"spec": map[string]any{
			"clusterName":       infra,
			"bootstrap":         map[string]any{"dataSecretName": "user-data-np1"},
			"infrastructureRef": map[string]any{"apiGroup": AgentGroup, "kind": "AgentMachine", "name": mname},
			"providerID":        "agent://" + mname,
			"version":           "4.18.5",
		}})
		m.SetLabels(msLabels)
		m.SetAnnotations(map[string]string{"cluster.x-k8s.io/delete-machine": "yes"})
		m.SetFinalizers([]string{"machine.cluster.x-k8s.io"})
		m.SetOwnerReferences([]metav1.OwnerReference{owner(ms, true)})
		create(m, map[string]any{
			"phase":          phase,
			"nodeRef":        map[string]any{"name": "node-" + mname},
			"initialization": map[string]any{"infrastructureProvisioned": true, "bootstrapDataSecretCreated": true},
			"addresses":      []any{map[string]any{"type": "InternalIP", "address": fmt.Sprintf("10.0.0.%d", 10+i)}},
			"conditions":     []any{cond("Ready", map[bool]string{true: "True", false: "False"}[phase == "Running"], "Ready")},
		})
		am := Object(AgentAPIVersion, "AgentMachine", mname, map[string]any{"spec": map[string]any{"providerID": "agent://" + mname, "agentLabelSelector": map[string]any{"matchLabels": map[string]any{"pool": "np1"}}}})
		am.SetFinalizers([]string{"agentmachine.agent-install.openshift.io/deprovision"})
		am.SetOwnerReferences([]metav1.OwnerReference{owner(m, true)})
		create(am, map[string]any{"ready": true, "agentRef": map[string]any{"name": "agent-" + mname, "namespace": "agents"}})
		sec := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "data": map[string]any{"value": "dXNlcmRhdGE="}}}
		sec.SetName(mname + "-bootstrap")
		sec.SetOwnerReferences([]metav1.OwnerReference{owner(m, false)})
		create(sec, nil)
	}

	mhc := Object(CoreAPIVersion, "MachineHealthCheck", "np1", map[string]any{"spec": map[string]any{
		"clusterName": infra,
		"selector":    map[string]any{"matchLabels": toAny(mdLabels)},
		"checks": map[string]any{"unhealthyNodeConditions": []any{
			map[string]any{"type": "Ready", "status": "False", "timeoutSeconds": int64(480)},
		}},
	}})
	mhc.SetOwnerReferences([]metav1.OwnerReference{owner(cluster, false)})
	create(mhc, map[string]any{"expectedMachines": int64(2), "currentHealthy": int64(1)})
	if len(errs) > 0 {
		return f, errors.Join(errs...)
	}

	for _, d := range []struct {
		name     string
		replicas int32
	}{{"cluster-api", 1}, {"capi-provider", 1}, {"control-plane-operator", 1}, {"cluster-autoscaler", 0}, {"machine-approver", 1}, {"kube-apiserver", 3}} {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: d.name, Namespace: f.Namespace}}
		if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
			return f, err
		}
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: d.name, Namespace: f.Namespace, Labels: map[string]string{"hypershift.openshift.io/managed-by": "control-plane-operator"}, Annotations: map[string]string{"hypershift.openshift.io/release-image": "x"}},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(d.replicas),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": d.name}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": d.name}},
					Spec: corev1.PodSpec{
						ServiceAccountName: d.name,
						Containers: []corev1.Container{{
							Name: "manager", Image: "quay.io/openshift/" + d.name + ":4.18",
							Args: []string{"--namespace=" + f.Namespace, "--leader-elect"},
							Env:  []corev1.EnvVar{{Name: "MY_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}},
						}},
					},
				},
			},
		}
		if err := c.Create(ctx, dep); err != nil {
			return f, err
		}
	}
	return f, MarkAvailable(ctx, c, f.Namespace, nil)
}

// MarkAvailable plays the Deployment controller and the kubelet where none
// run: every Deployment in ns (but those skip selects) reports its current
// generation observed and all desired replicas available. A conflict (the
// Deployment changed meanwhile) is left for the next call.
func MarkAvailable(ctx context.Context, c client.Client, ns string, skip func(*appsv1.Deployment) bool) error {
	l := &appsv1.DeploymentList{}
	if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
		return err
	}
	for i := range l.Items {
		d := &l.Items[i]
		if skip != nil && skip(d) {
			continue
		}
		n := ptr.Deref(d.Spec.Replicas, 1)
		want := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
		if equality.Semantic.DeepEqual(d.Status, want) {
			continue
		}
		d.Status = want
		if err := c.Status().Update(ctx, d); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
