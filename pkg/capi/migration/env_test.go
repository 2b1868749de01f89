package migration

import (
	"context"

	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/manifests"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/internal/testenv"
)

// env is one real kube-apiserver with the HostedCluster CRD and both the
// standard and the private CAPI CRDs (core + Agent provider).
type env struct {
	cfg    *rest.Config
	c      client.WithWatch
	disco  discovery.DiscoveryInterface
	scheme *runtime.Scheme
}

func startEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	cfg := testenv.Start(t)
	cfg.QPS, cfg.Burst = 1000, 2000
	ctrl.SetLogger(logr.Discard())
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	opts := crds.Options{Providers: []crds.Provider{crds.ProviderAgent}}
	std, err := crds.Build(crds.ModeStandard, opts)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := crds.Build(crds.ModePrivate, opts)
	if err != nil {
		t.Fatal(err)
	}
	all := std
	for _, p := range priv {
		if groups.IsPrivate(p.Spec.Group) {
			all = append(all, p)
		}
	}
	b, err := manifests.HyperShiftCRDs.ReadFile("hypershift/hypershift.openshift.io_hostedclusters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hcCRD := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(b, hcCRD); err != nil {
		t.Fatal(err)
	}
	all = append(all, hcCRD)
	res, err := (&crds.Installer{Client: c}).Install(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.WaitEstablished(ctx, c, res.Applied, time.Minute); err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &env{cfg: cfg, c: c, disco: memory.NewMemCacheClient(dc), scheme: s}
}

func testOptions() Options {
	o, _ := Options{Proxy: ProxySidecar{Image: "quay.io/hcp-fleet/agent:test", Command: []string{"/agent"}, Args: []string{"capi-proxy"}}}.withDefaults()
	return o
}

func (e *env) reconciler(c client.Client, opts Options) *reconciler {
	return &reconciler{client: c, reader: e.c, disco: e.disco, opts: opts, now: time.Now}
}

// fixture is one hosted cluster: its HostedCluster (namespace "clusters") and
// the CAPI object graph and HyperShift Deployments of its control-plane
// namespace, as HyperShift with the Agent provider lays them down.
type fixture struct {
	hc types.NamespacedName
	ns string
}

func u(apiVersion, kind, name string, obj map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: obj}
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetName(name)
	return o
}

func owner(o *unstructured.Unstructured, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Name: o.GetName(), UID: o.GetUID(), Controller: ptr.To(controller), BlockOwnerDeletion: ptr.To(true)}
}

const (
	coreV    = "cluster.x-k8s.io/v1beta2"
	agentV   = "capi-provider.agent-install.openshift.io/v1beta1"
	agentGrp = "capi-provider.agent-install.openshift.io"
)

func (e *env) newFixture(t *testing.T, name string) fixture {
	t.Helper()
	ctx := context.Background()
	f := fixture{hc: types.NamespacedName{Namespace: "clusters", Name: name}, ns: ControlPlaneNamespace("clusters", name)}
	for _, ns := range []string{"clusters", f.ns} {
		if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	hc := u("hypershift.openshift.io/v1beta1", "HostedCluster", name, map[string]any{
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
	hc.SetAnnotations(map[string]string{AnnotationScope: ScopeLegacy, "example.com/keep": "me"})
	if err := e.c.Create(ctx, hc); err != nil {
		t.Fatal(err)
	}

	infra := name + "-x7k2p"
	create := func(o *unstructured.Unstructured, status map[string]any) *unstructured.Unstructured {
		t.Helper()
		o.SetNamespace(f.ns)
		if err := e.c.Create(ctx, o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if status != nil {
			o.Object["status"] = status
			if err := e.c.Status().Update(ctx, o); err != nil {
				t.Fatalf("status of %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
		return o
	}
	now := metav1.Now().Rfc3339Copy().Format(time.RFC3339)
	cond := func(typ, status, reason string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": typ + " is " + status, "lastTransitionTime": now, "observedGeneration": int64(1)}
	}
	clusterLabels := map[string]string{"cluster.x-k8s.io/cluster-name": infra}

	cluster := u(coreV, "Cluster", infra, map[string]any{"spec": map[string]any{
		"controlPlaneRef":      map[string]any{"apiGroup": "hypershift.openshift.io", "kind": "HostedControlPlane", "name": name},
		"infrastructureRef":    map[string]any{"apiGroup": agentGrp, "kind": "AgentCluster", "name": infra},
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

	ac := u(agentV, "AgentCluster", infra, map[string]any{"spec": map[string]any{
		"controlPlaneEndpoint": map[string]any{"host": "api." + name + ".example.com", "port": int64(6443)},
		"ignitionEndpoint":     map[string]any{"url": "https://ignition." + name + ".example.com"},
	}})
	ac.SetOwnerReferences([]metav1.OwnerReference{owner(cluster, true)})
	create(ac, map[string]any{"ready": true, "clusterDeploymentReference": map[string]any{"name": name, "namespace": f.ns}})

	amt := u(agentV, "AgentMachineTemplate", "np1-a1b2c3", map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"agentLabelSelector": map[string]any{"matchLabels": map[string]any{"pool": "np1"}},
	}}}})
	amt.SetOwnerReferences([]metav1.OwnerReference{owner(cluster, false)})
	create(amt, nil)

	machineSpec := func() map[string]any {
		return map[string]any{
			"clusterName":       infra,
			"bootstrap":         map[string]any{"dataSecretName": "user-data-np1"},
			"infrastructureRef": map[string]any{"apiGroup": agentGrp, "kind": "AgentMachine", "name": "np1-a1b2c3"},
			"version":           "4.18.5",
		}
	}
	mdLabels := map[string]string{"cluster.x-k8s.io/cluster-name": infra, "cluster.x-k8s.io/deployment-name": "np1"}
	md := u(coreV, "MachineDeployment", "np1", map[string]any{"spec": map[string]any{
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
	ms := u(coreV, "MachineSet", "np1-5f7d8", map[string]any{"spec": map[string]any{
		"clusterName": infra,
		"replicas":    int64(2),
		"selector":    map[string]any{"matchLabels": toAny(msLabels)},
		"template":    map[string]any{"metadata": map[string]any{"labels": toAny(msLabels)}, "spec": machineSpec()},
	}})
	ms.SetLabels(msLabels)
	ms.SetAnnotations(map[string]string{"machinedeployment.clusters.x-k8s.io/revision": "3"})
	ms.SetOwnerReferences([]metav1.OwnerReference{owner(md, true)})
	create(ms, map[string]any{"replicas": int64(2), "readyReplicas": int64(2), "availableReplicas": int64(2), "selector": "x=y", "observedGeneration": int64(1)})

	for i, phase := range []string{"Running", "Failed"} {
		mname := fmt.Sprintf("np1-5f7d8-m%d", i)
		m := u(coreV, "Machine", mname, map[string]any{"spec": map[string]any{
			"clusterName":       infra,
			"bootstrap":         map[string]any{"dataSecretName": "user-data-np1"},
			"infrastructureRef": map[string]any{"apiGroup": agentGrp, "kind": "AgentMachine", "name": mname},
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
		am := u(agentV, "AgentMachine", mname, map[string]any{"spec": map[string]any{"providerID": "agent://" + mname, "agentLabelSelector": map[string]any{"matchLabels": map[string]any{"pool": "np1"}}}})
		am.SetFinalizers([]string{"agentmachine.agent-install.openshift.io/deprovision"})
		am.SetOwnerReferences([]metav1.OwnerReference{owner(m, true)})
		create(am, map[string]any{"ready": true, "agentRef": map[string]any{"name": "agent-" + mname, "namespace": "agents"}})
		sec := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "data": map[string]any{"value": "dXNlcmRhdGE="}}}
		sec.SetName(mname + "-bootstrap")
		sec.SetOwnerReferences([]metav1.OwnerReference{owner(m, false)})
		create(sec, nil)
	}

	mhc := u(coreV, "MachineHealthCheck", "np1", map[string]any{"spec": map[string]any{
		"clusterName": infra,
		"selector":    map[string]any{"matchLabels": toAny(mdLabels)},
		"checks": map[string]any{"unhealthyNodeConditions": []any{
			map[string]any{"type": "Ready", "status": "False", "timeoutSeconds": int64(480)},
		}},
	}})
	mhc.SetOwnerReferences([]metav1.OwnerReference{owner(cluster, false)})
	create(mhc, map[string]any{"expectedMachines": int64(2), "currentHealthy": int64(1)})

	for _, d := range []struct {
		name     string
		replicas int32
	}{{"cluster-api", 1}, {"capi-provider", 1}, {"control-plane-operator", 1}, {"cluster-autoscaler", 0}, {"machine-approver", 1}, {"kube-apiserver", 3}} {
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: d.name, Namespace: f.ns, Labels: map[string]string{"hypershift.openshift.io/managed-by": "control-plane-operator"}, Annotations: map[string]string{"hypershift.openshift.io/release-image": "x"}},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(d.replicas),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": d.name}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": d.name}},
					Spec: corev1.PodSpec{
						ServiceAccountName: d.name,
						Containers: []corev1.Container{{
							Name: "manager", Image: "quay.io/openshift/" + d.name + ":4.18",
							Args: []string{"--namespace=" + f.ns, "--leader-elect"},
							Env:  []corev1.EnvVar{{Name: "MY_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}},
						}},
					},
				},
			},
		}
		if err := e.c.Create(ctx, dep); err != nil {
			t.Fatal(err)
		}
	}
	e.markAvailable(t, f.ns)
	return f
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// markAvailable plays the Deployment controller and the kubelet (none run
// here): every Deployment in ns reports its current generation observed and
// all desired replicas available.
func (e *env) markAvailable(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	l := &appsv1.DeploymentList{}
	if err := e.c.List(ctx, l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		d := &l.Items[i]
		n := ptr.Deref(d.Spec.Replicas, 1)
		want := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
		if equality.Semantic.DeepEqual(d.Status, want) {
			continue
		}
		d.Status = want
		if err := e.c.Status().Update(ctx, d); err != nil && !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
}

// snapshot is everything in a control-plane namespace the migration may
// touch, plus the HostedCluster's annotations.
type snapshot struct {
	objects     map[string]*unstructured.Unstructured // "<apiVersion> <kind> <name>"
	deployments map[string]*appsv1.Deployment
	hcAnn       map[string]string
}

func (e *env) snapshot(t *testing.T, f fixture) snapshot {
	t.Helper()
	ctx := context.Background()
	k, err := discoverKinds(e.disco)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := listAll(ctx, e.c, f.ns, slices.Concat(k.standard, k.private, k.referrers))
	if err != nil {
		t.Fatal(err)
	}
	s := snapshot{objects: map[string]*unstructured.Unstructured{}, deployments: map[string]*appsv1.Deployment{}}
	for _, o := range objs {
		if o.GetKind() == "Deployment" || o.GetKind() == "ReplicaSet" || o.GetKind() == "ServiceAccount" || o.GetKind() == "ConfigMap" && o.GetName() == "kube-root-ca.crt" {
			continue
		}
		s.objects[o.GetAPIVersion()+" "+o.GetKind()+" "+o.GetName()] = o
	}
	l := &appsv1.DeploymentList{}
	if err := e.c.List(ctx, l, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		s.deployments[l.Items[i].Name] = &l.Items[i]
	}
	hc := &metav1.PartialObjectMetadata{}
	hc.SetGroupVersionKind(HostedClusterGVK)
	if err := e.c.Get(ctx, f.hc, hc); err != nil {
		t.Fatal(err)
	}
	s.hcAnn = hc.Annotations
	return s
}

// comparable drops what any write changes (resourceVersion, generation,
// managedFields): the rest of the object must survive byte for byte.
func comparable(o *unstructured.Unstructured) string {
	c := o.DeepCopy()
	for _, f := range []string{"resourceVersion", "generation", "managedFields"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	b, _ := json.Marshal(c.Object)
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// assertUnchanged checks a rolled-back namespace against the snapshot taken
// before the migration: the same objects, each unchanged apart from
// resourceVersion-style metadata; Deployments with the same spec, labels and
// annotations.
func assertUnchanged(t *testing.T, before, after snapshot) {
	t.Helper()
	if !slices.Equal(sortedKeys(before.objects), sortedKeys(after.objects)) {
		t.Errorf("objects differ:\nbefore %v\nafter  %v", sortedKeys(before.objects), sortedKeys(after.objects))
	}
	for k, b := range before.objects {
		if a, ok := after.objects[k]; ok && comparable(a) != comparable(b) {
			t.Errorf("%s changed:\nbefore %s\nafter  %s", k, comparable(b), comparable(a))
		}
	}
	if !slices.Equal(sortedKeys(before.deployments), sortedKeys(after.deployments)) {
		t.Errorf("deployments differ: %v vs %v", sortedKeys(before.deployments), sortedKeys(after.deployments))
	}
	for name, b := range before.deployments {
		a := after.deployments[name]
		if a == nil {
			continue
		}
		bs, _ := json.Marshal(b.Spec)
		as, _ := json.Marshal(a.Spec)
		if string(bs) != string(as) {
			t.Errorf("deployment %s spec changed:\nbefore %s\nafter  %s", name, bs, as)
		}
		if !maps.Equal(a.Labels, b.Labels) || !maps.Equal(a.Annotations, b.Annotations) {
			t.Errorf("deployment %s metadata changed: %v %v -> %v %v", name, b.Labels, b.Annotations, a.Labels, a.Annotations)
		}
	}
}

// assertMigrated checks a migrated namespace against the snapshot taken
// before: every standard CAPI object has a private twin with the same spec
// (spec.paused as before), status, labels, annotations and finalizers, and
// ownerReferences that name the same owners in their private form by the
// owners' new UIDs; no standard CAPI object is left; referrers are unchanged
// except that their CAPI owners are the private copies; workloads switched.
func (e *env) assertMigrated(t *testing.T, f fixture, before snapshot, opts Options) {
	t.Helper()
	after := e.snapshot(t, f)
	uidOf := map[string]types.UID{} // "<kind> <name>" of private objects
	for _, o := range after.objects {
		if g := o.GroupVersionKind().Group; groups.IsStandard(g) {
			t.Errorf("standard object left: %s %s", o.GetKind(), o.GetName())
		} else if groups.IsPrivate(g) {
			uidOf[o.GetKind()+" "+o.GetName()] = o.GetUID()
		}
	}
	wantRefs := func(refs []metav1.OwnerReference) []metav1.OwnerReference {
		var out []metav1.OwnerReference
		for _, r := range refs {
			if av, ok := groups.ToPrivate.APIVersion(r.APIVersion); ok {
				r.APIVersion = av
				r.UID = uidOf[r.Kind+" "+r.Name]
				if r.UID == "" {
					t.Errorf("owner %s %s has no private copy", r.Kind, r.Name)
				}
			}
			out = append(out, r)
		}
		return out
	}
	nStd := 0
	for key, b := range before.objects {
		gvk := b.GroupVersionKind()
		if !groups.IsStandard(gvk.Group) {
			a := after.objects[key]
			if a == nil {
				t.Errorf("referrer %s is gone", key)
				continue
			}
			want := b.DeepCopy()
			want.SetOwnerReferences(wantRefs(b.GetOwnerReferences()))
			if comparable(a) != comparable(want) {
				t.Errorf("referrer %s:\nwant %s\ngot  %s", key, comparable(want), comparable(a))
			}
			continue
		}
		nStd++
		pav, _ := groups.ToPrivate.APIVersion(b.GetAPIVersion())
		a := after.objects[pav+" "+b.GetKind()+" "+b.GetName()]
		if a == nil {
			t.Errorf("no private copy of %s", key)
			continue
		}
		if a.GetUID() == b.GetUID() {
			t.Errorf("%s: copy has the original's UID", key)
		}
		for _, field := range []string{"spec", "status"} {
			bj, _ := json.Marshal(b.Object[field])
			aj, _ := json.Marshal(a.Object[field])
			if string(aj) != string(bj) {
				t.Errorf("%s %s:\nwant %s\ngot  %s", key, field, bj, aj)
			}
		}
		if !maps.Equal(a.GetLabels(), b.GetLabels()) || !maps.Equal(a.GetAnnotations(), b.GetAnnotations()) || !slices.Equal(a.GetFinalizers(), b.GetFinalizers()) {
			t.Errorf("%s metadata: want %v %v %v, got %v %v %v", key, b.GetLabels(), b.GetAnnotations(), b.GetFinalizers(), a.GetLabels(), a.GetAnnotations(), a.GetFinalizers())
		}
		wr, _ := json.Marshal(wantRefs(b.GetOwnerReferences()))
		gr, _ := json.Marshal(a.GetOwnerReferences())
		if string(wr) != string(gr) {
			t.Errorf("%s ownerReferences:\nwant %s\ngot  %s", key, wr, gr)
		}
	}
	if nStd != 6 {
		t.Errorf("fixture had %d standard objects, want 6", nStd)
	}
	// Annotations: migrated, lock released, everything else kept.
	wantAnn := maps.Clone(before.hcAnn)
	delete(wantAnn, AnnotationScope)
	wantAnn[AnnotationPrivateCAPITypes] = "true"
	if !maps.Equal(after.hcAnn, wantAnn) {
		t.Errorf("HostedCluster annotations: want %v, got %v", wantAnn, after.hcAnn)
	}
	// Workloads: switched from their original spec, with their replicas.
	for _, w := range opts.Workloads {
		b := before.deployments[w.Name]
		want := SwitchedToProxy(b.Spec, w.Switch, opts.Proxy)
		a := after.deployments[w.Name]
		if ptr.Deref(a.Spec.Replicas, -1) != ptr.Deref(b.Spec.Replicas, -2) {
			t.Errorf("%s replicas %d, want %d", w.Name, ptr.Deref(a.Spec.Replicas, -1), ptr.Deref(b.Spec.Replicas, -2))
		}
		if names(a.Spec.Template.Spec.Containers) != names(want.Template.Spec.Containers) {
			t.Errorf("%s containers %s, want %s", w.Name, names(a.Spec.Template.Spec.Containers), names(want.Template.Spec.Containers))
		}
		for i, c := range want.Template.Spec.Containers {
			if !slices.EqualFunc(c.Env, a.Spec.Template.Spec.Containers[i].Env, func(x, y corev1.EnvVar) bool { return x.Name == y.Name && x.Value == y.Value }) {
				t.Errorf("%s container %s env %v, want %v", w.Name, c.Name, a.Spec.Template.Spec.Containers[i].Env, c.Env)
			}
		}
	}
	bs, _ := json.Marshal(before.deployments["kube-apiserver"].Spec)
	as, _ := json.Marshal(after.deployments["kube-apiserver"].Spec)
	if string(bs) != string(as) {
		t.Errorf("kube-apiserver (not a CAPI workload) changed")
	}
	ctx := context.Background()
	if err := e.c.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: ProxyKubeconfigName}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("proxy kubeconfig: %v", err)
	}
	if err := e.c.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: stateConfigMapName}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("migration state left behind: %v", err)
	}
}

func names(cs []corev1.Container) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return strings.Join(out, ",")
}

func (e *env) hcAnnotations(t *testing.T, f fixture) map[string]string {
	t.Helper()
	hc := &metav1.PartialObjectMetadata{}
	hc.SetGroupVersionKind(HostedClusterGVK)
	if err := e.c.Get(context.Background(), f.hc, hc); err != nil {
		t.Fatal(err)
	}
	return hc.Annotations
}

// drive reconciles one HostedCluster until it settles (neither eligible nor
// in progress), playing the Deployment controller between rounds.
func (e *env) drive(t *testing.T, r *reconciler, f fixture) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		e.markAvailable(t, f.ns)
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: f.hc}); err != nil {
			t.Logf("reconcile %d: %v", i, err)
		}
		switch Classify(e.hcAnnotations(t, f), false) {
		case Migrated, Failed:
			return
		}
	}
	t.Fatalf("%s did not settle", f.hc)
}

// failingWrites fails the nth write (create, update, patch, delete, status
// update) matched by match, counting from 1.
func failingWrites(c client.WithWatch, n int, match func(verb string, obj client.Object) bool) client.WithWatch {
	count := 0
	hit := func(verb string, obj client.Object) error {
		if match(verb, obj) {
			count++
			if count == n {
				return fmt.Errorf("injected failure of %s %s %s", verb, obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName())
			}
		}
		return nil
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := hit("create", obj); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := hit("update", obj); err != nil {
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			if err := hit("patch", obj); err != nil {
				return err
			}
			return c.Patch(ctx, obj, p, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if err := hit("delete", obj); err != nil {
				return err
			}
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if err := hit("update-"+sub, obj); err != nil {
				return err
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	})
}

// crash is what a client that "crashes" panics with.
type crash struct{}

// crashingWrites panics (the process dies) right after the nth write of any
// kind went through, so the apiserver has it and the controller does not
// know.
func crashingWrites(c client.WithWatch, n int, writes *int) client.WithWatch {
	after := func(err error) error {
		*writes++
		if *writes == n {
			panic(crash{})
		}
		return err
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return after(c.Create(ctx, obj, opts...))
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return after(c.Update(ctx, obj, opts...))
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			return after(c.Patch(ctx, obj, p, opts...))
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return after(c.Delete(ctx, obj, opts...))
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return after(c.SubResource(sub).Update(ctx, obj, opts...))
		},
	})
}

// reconcileUntilCrash drives r until its client crashes; false if the
// migration settled first.
func (e *env) reconcileUntilCrash(t *testing.T, r *reconciler, f fixture) (crashed bool) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(crash); !ok {
				panic(p)
			}
			crashed = true
		}
	}()
	e.drive(t, r, f)
	return false
}

var errInjected = errors.New("injected")
