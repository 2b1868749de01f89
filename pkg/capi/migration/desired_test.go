package migration

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		ann      map[string]string
		deleting bool
		want     Disposition
	}{
		{nil, false, Ignore},
		{map[string]string{AnnotationScope: ScopeLegacy}, false, Eligible},
		{map[string]string{AnnotationScope: ScopeLegacy}, true, Ignore},
		{map[string]string{AnnotationScope: ScopeLegacy, AnnotationMigrationFailed: "copy: x"}, false, Failed},
		{map[string]string{AnnotationScope: ScopeLegacy, AnnotationMigrationFailed: ""}, false, Failed},
		{map[string]string{AnnotationScope: ScopeLegacy, AnnotationMigrationInProgress: "true"}, true, InProgress},
		{map[string]string{AnnotationPrivateCAPITypes: "true"}, false, Migrated},
		// The enhancement's invalid state is the operators' to repair.
		{map[string]string{AnnotationPrivateCAPITypes: "true", AnnotationScope: ScopeLegacy}, false, Migrated},
	} {
		if got := Classify(tc.ann, tc.deleting); got != tc.want {
			t.Errorf("Classify(%v, %v) = %v, want %v", tc.ann, tc.deleting, got, tc.want)
		}
	}
}

// TestReferrerKinds pins the fixed list of kinds the migration re-points
// (and may list and patch): what carries CAPI ownerReferences in a HyperShift
// control-plane namespace, and nothing else.
func TestReferrerKinds(t *testing.T) {
	for _, tc := range []struct {
		group, resource string
		want            bool
	}{
		{"", "secrets", true},
		{"", "configmaps", true},
		{"capi-provider.agent-install.openshift.io", "agentmachines", true},
		{"capi-provider.agent-install.openshift.io", "agentclusters", true},
		{"", "pods", false},
		{"", "persistentvolumeclaims", false},
		{"apps", "deployments", false},
		{"route.openshift.io", "routes", false},
		{"hypershift.openshift.io", "hostedcontrolplanes", false},
		// CAPI groups are copied, not re-pointed.
		{"cluster.x-k8s.io", "machines", false},
		{"infrastructure.cluster.hypershift.openshift.io", "awsmachines", false},
	} {
		if got := IsReferrerResource(tc.group, tc.resource); got != tc.want {
			t.Errorf("IsReferrerResource(%q, %q) = %v, want %v", tc.group, tc.resource, got, tc.want)
		}
	}
}

func ref(av, kind, name, uid string, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: av, Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(controller), BlockOwnerDeletion: ptr.To(true)}
}

func TestOwnerEditsRoundTrip(t *testing.T) {
	orig := []metav1.OwnerReference{
		ref("v1", "ConfigMap", "keep", "c1", false),
		ref("cluster.x-k8s.io/v1beta2", "Machine", "m0", "old-m0", true),
		ref("infrastructure.cluster.x-k8s.io/v1beta2", "AWSCluster", "a", "old-a", false),
		ref("cluster.x-k8s.io/v1beta2", "Machine", "gone", "dangling", false),
	}
	copies := map[types.UID]types.UID{"old-m0": "new-m0", "old-a": "new-a"}
	mid, changed := WithPrivateOwners(orig, copies)
	if !changed || len(mid) != 6 {
		t.Fatalf("WithPrivateOwners: %v %v", changed, mid)
	}
	controllers := 0
	for _, r := range mid {
		if ptr.Deref(r.Controller, false) {
			controllers++
		}
	}
	if controllers != 1 {
		t.Errorf("%d controller references, want 1 (apiserver rejects more)", controllers)
	}
	if again, changed := WithPrivateOwners(mid, copies); changed || len(again) != len(mid) {
		t.Errorf("WithPrivateOwners is not idempotent: %v", again)
	}
	// Rollback gives back the original exactly.
	back, _ := WithoutPrivateOwners(mid)
	if b, o := mustJSON(back), mustJSON(orig); b != o {
		t.Errorf("rollback:\n%s\nwant\n%s", b, o)
	}
	// Commit: the original list with the CAPI owners re-pointed, in place.
	final, _ := FinalOwners(mid)
	want := []metav1.OwnerReference{
		ref("v1", "ConfigMap", "keep", "c1", false),
		ref("cluster.hypershift.openshift.io/v1beta2", "Machine", "m0", "new-m0", true),
		ref("infrastructure.cluster.hypershift.openshift.io/v1beta2", "AWSCluster", "a", "new-a", false),
		ref("cluster.x-k8s.io/v1beta2", "Machine", "gone", "dangling", false),
	}
	if f, w := mustJSON(final), mustJSON(want); f != w {
		t.Errorf("FinalOwners:\n%s\nwant\n%s", f, w)
	}
	if again, changed := FinalOwners(final); changed || mustJSON(again) != mustJSON(final) {
		t.Errorf("FinalOwners is not idempotent: %v", again)
	}
}

func TestPrivateCopyAndOrder(t *testing.T) {
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": "c", "namespace": "ns", "uid": "u-c", "resourceVersion": "7", "generation": int64(2), "finalizers": []any{"cluster.cluster.x-k8s.io"}, "labels": map[string]any{"cluster.x-k8s.io/cluster-name": "c"}},
		"spec":     map[string]any{"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSCluster", "name": "c"}},
		"status":   map[string]any{"phase": "Provisioned"},
	}}
	md := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
		"metadata": map[string]any{"name": "a-md", "namespace": "ns", "uid": "u-md", "ownerReferences": []any{map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "name": "c", "uid": "u-c"}}},
	}}
	ms := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
		"metadata": map[string]any{"name": "0-ms", "namespace": "ns", "uid": "u-ms", "ownerReferences": []any{map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment", "name": "a-md", "uid": "u-md"}}},
	}}
	order, err := CreationOrder([]*unstructured.Unstructured{ms, md, cluster})
	if err != nil {
		t.Fatal(err)
	}
	if order[0] != cluster || order[1] != md || order[2] != ms {
		t.Errorf("order %s %s %s", order[0].GetKind(), order[1].GetKind(), order[2].GetKind())
	}
	c, err := PrivateCopy(cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.GetAPIVersion() != "cluster.hypershift.openshift.io/v1beta2" || c.GetUID() != "" || c.GetResourceVersion() != "" || c.GetGeneration() != 0 {
		t.Errorf("copy metadata: %v", c.Object["metadata"])
	}
	if g, _, _ := unstructured.NestedString(c.Object, "spec", "infrastructureRef", "apiGroup"); g != "infrastructure.cluster.hypershift.openshift.io" {
		t.Errorf("infrastructureRef.apiGroup %q", g)
	}
	if len(c.GetFinalizers()) != 1 || c.GetLabels()["cluster.x-k8s.io/cluster-name"] != "c" {
		t.Errorf("finalizers/labels not kept: %v %v", c.GetFinalizers(), c.GetLabels())
	}
	m, err := PrivateCopy(md, map[types.UID]types.UID{"u-c": "new-c"})
	if err != nil {
		t.Fatal(err)
	}
	if r := m.GetOwnerReferences()[0]; r.UID != "new-c" || r.APIVersion != "cluster.hypershift.openshift.io/v1beta2" {
		t.Errorf("owner %+v", r)
	}
	// A cycle is refused.
	cluster.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "MachineSet", Name: "0-ms", UID: "u-ms"}})
	if _, err := CreationOrder([]*unstructured.Unstructured{ms, md, cluster}); err == nil {
		t.Error("CreationOrder accepted an ownerReference cycle")
	}
}

func TestSwitchedToProxy(t *testing.T) {
	orig := appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](2),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "manager", Env: []corev1.EnvVar{{Name: "KUBECONFIG", Value: "/old"}, {Name: "X", Value: "y"}}},
		}}},
	}
	p := ProxySidecar{Image: "agent:1", Args: []string{"capi-proxy"}, Port: 9443}
	got := SwitchedToProxy(orig, SwitchSidecar, p)
	if len(got.Template.Spec.Containers) != 2 || got.Template.Spec.Containers[1].Name != "capi-api-proxy" {
		t.Fatalf("containers %v", names(got.Template.Spec.Containers))
	}
	if a := got.Template.Spec.Containers[1].Args; len(a) != 2 || a[1] != "--listen=127.0.0.1:9443" {
		t.Errorf("sidecar args %v", a)
	}
	env := got.Template.Spec.Containers[0].Env
	if len(env) != 2 || env[0].Value != proxyKubeconfigDir+"/kubeconfig" || env[1].Value != "y" {
		t.Errorf("manager env %v", env)
	}
	if *got.Replicas != 2 || orig.Template.Spec.Containers[0].Env[0].Value != "/old" {
		t.Errorf("replicas %d / original mutated", *got.Replicas)
	}
	if mustJSON(SwitchedToProxy(got, SwitchSidecar, p)) != mustJSON(got) {
		t.Error("SwitchedToProxy is not idempotent")
	}
	sig := SwitchedToProxy(orig, SwitchSignal, p)
	if e := sig.Template.Spec.Containers[0].Env; len(e) != 3 || e[2].Name != PrivateCAPITypesEnv || len(sig.Template.Spec.Volumes) != 0 {
		t.Errorf("signal: %v", e)
	}
	if mustJSON(SwitchedToProxy(orig, SwitchNone, p)) != mustJSON(orig) {
		t.Error("SwitchNone changed the spec")
	}
	cm, err := ProxyKubeconfig("ns", p)
	if err != nil {
		t.Fatal(err)
	}
	if want := "server: http://127.0.0.1:9443"; !contains(cm.Data["kubeconfig"], want) {
		t.Errorf("kubeconfig %q lacks %q", cm.Data["kubeconfig"], want)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func names(cs []corev1.Container) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return strings.Join(out, ",")
}
