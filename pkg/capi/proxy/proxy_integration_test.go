//go:build integration

package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/hcp-fleet/hcp-fleet/internal/testenv"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
)

// env is a real apiserver with only the private CAPI CRDs, a proxy in front
// of it on loopback, and clients on both sides.
type env struct {
	direct    *rest.Config // straight to the apiserver: objects at rest
	proxied   *rest.Config // through the proxy
	addr      string
	scheme    *runtime.Scheme
	dc        client.Client // direct, typed core + unstructured
	mu        sync.Mutex
	bodyTypes map[string][]string // request Content-Types seen by the proxy, by path
}

func capiScheme(t testing.TB) *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func startEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	cfg := testenv.Start(t)
	e := &env{direct: cfg, scheme: capiScheme(t), bodyTypes: map[string][]string{}}
	var err error
	e.dc, err = client.New(cfg, client.Options{Scheme: e.scheme})
	if err != nil {
		t.Fatal(err)
	}
	want, err := crds.Build(crds.ModePrivate, crds.Options{Providers: []crds.Provider{crds.ProviderAgent}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&crds.Installer{Client: e.dc}).Install(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.WaitEstablished(ctx, e.dc, res.Applied, time.Minute); err != nil {
		t.Fatal(err)
	}

	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > 0 {
			e.mu.Lock()
			e.bodyTypes[r.URL.Path] = append(e.bodyTypes[r.URL.Path], r.Header.Get("Content-Type"))
			e.mu.Unlock()
		}
		p.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	e.addr = lis.Addr().String()
	e.proxied = ClientConfig(e.addr)
	return e
}

func (e *env) proxyClient(t testing.TB, s *runtime.Scheme) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(e.proxied, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// atRest reads an object straight from the apiserver.
func (e *env) atRest(t *testing.T, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if err := e.dc.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u); err != nil {
		t.Fatalf("at rest %s %s/%s: %v", kind, ns, name, err)
	}
	return u
}

func str(t *testing.T, u *unstructured.Unstructured, path ...string) string {
	t.Helper()
	s, _, err := unstructured.NestedString(u.Object, path...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const (
	stdGV  = "cluster.x-k8s.io/v1beta2"
	privGV = "cluster.hypershift.openshift.io/v1beta2"
)

func TestProxyAgainstAPIServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := startEnv(t)
	ns := "clusters-a"
	if err := e.dc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}

	t.Run("the apiserver has no standard CAPI types", func(t *testing.T) {
		dc := discovery.NewDiscoveryClientForConfigOrDie(e.direct)
		if _, err := dc.ServerResourcesForGroupVersion(stdGV); !apierrors.IsNotFound(err) {
			t.Fatalf("direct %s: %v", stdGV, err)
		}
		if _, err := dc.ServerResourcesForGroupVersion(privGV); err != nil {
			t.Fatalf("direct %s: %v", privGV, err)
		}
	})

	t.Run("discovery through the proxy shows the standard groups", func(t *testing.T) {
		for _, legacy := range []bool{false, true} {
			dc := discovery.NewDiscoveryClientForConfigOrDie(e.proxied)
			dc.UseLegacyDiscovery = legacy
			groups, resources, err := dc.ServerGroupsAndResources()
			if err != nil {
				t.Fatalf("legacy=%v: %v", legacy, err)
			}
			var names []string
			for _, g := range groups {
				names = append(names, g.Name)
				if strings.Contains(g.Name, "hypershift.openshift.io") {
					t.Errorf("legacy=%v: private group %s visible", legacy, g.Name)
				}
				if g.Name == "cluster.x-k8s.io" && g.PreferredVersion.GroupVersion != stdGV {
					t.Errorf("legacy=%v: preferred %v", legacy, g.PreferredVersion)
				}
			}
			for _, want := range []string{"cluster.x-k8s.io", "addons.cluster.x-k8s.io", "ipam.cluster.x-k8s.io", "capi-provider.agent-install.openshift.io", "apps"} {
				if !slices.Contains(names, want) {
					t.Errorf("legacy=%v: group %s missing from %v", legacy, want, names)
				}
			}
			found := map[string]bool{}
			for _, rl := range resources {
				if rl.GroupVersion == stdGV {
					for _, r := range rl.APIResources {
						found[r.Name] = true
					}
				}
			}
			for _, r := range []string{"clusters", "clusters/status", "machines", "machinedeployments", "machinedeployments/scale", "machinesets"} {
				if !found[r] {
					t.Errorf("legacy=%v: %s/%s missing", legacy, stdGV, r)
				}
			}
		}
	})

	typed := e.proxyClient(t, e.scheme)
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster", Name: "c1"},
			ControlPlaneRef:   clusterv1.ContractVersionedObjectReference{APIGroup: "hypershift.openshift.io", Kind: "HostedControlPlane", Name: "c1"},
		},
	}
	t.Run("typed CAPI client: create and get", func(t *testing.T) {
		if err := typed.Create(ctx, cluster); err != nil {
			t.Fatal(err)
		}
		got := &clusterv1.Cluster{}
		if err := typed.Get(ctx, client.ObjectKeyFromObject(cluster), got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.InfrastructureRef.APIGroup != "infrastructure.cluster.x-k8s.io" || got.Spec.ControlPlaneRef.APIGroup != "hypershift.openshift.io" {
			t.Fatalf("through the proxy: %+v", got.Spec)
		}
		rest := e.atRest(t, privGV, "Cluster", ns, "c1")
		if rest.GetAPIVersion() != privGV || str(t, rest, "spec", "infrastructureRef", "apiGroup") != "infrastructure.cluster.hypershift.openshift.io" ||
			str(t, rest, "spec", "controlPlaneRef", "apiGroup") != "hypershift.openshift.io" || rest.GetLabels()[clusterv1.ClusterNameLabel] != "c1" {
			t.Fatalf("at rest: %v", rest.Object)
		}
	})

	md := &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "md1", Namespace: ns},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: "c1",
			Replicas:    ptr.To[int32](2),
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"pool": "a"}},
				Spec: clusterv1.MachineSpec{
					ClusterName:       "c1",
					Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate", Name: "t"}},
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachineTemplate", Name: "t"},
				},
			},
		},
	}
	t.Run("typed CAPI client: owner references between CAPI objects", func(t *testing.T) {
		if err := controllerutil.SetOwnerReference(cluster, md, e.scheme); err != nil {
			t.Fatal(err)
		}
		if md.OwnerReferences[0].APIVersion != stdGV {
			t.Fatalf("the client thinks in standard groups: %v", md.OwnerReferences)
		}
		if err := typed.Create(ctx, md); err != nil {
			t.Fatal(err)
		}
		rest := e.atRest(t, privGV, "MachineDeployment", ns, "md1")
		if rest.GetOwnerReferences()[0].APIVersion != privGV ||
			str(t, rest, "spec", "template", "spec", "bootstrap", "configRef", "apiGroup") != "bootstrap.cluster.hypershift.openshift.io" {
			t.Fatalf("at rest: %v", rest.Object)
		}
		for _, mf := range rest.GetManagedFields() {
			if mf.APIVersion != privGV {
				t.Errorf("managedFields at rest: %s", mf.APIVersion)
			}
		}
		got := &clusterv1.MachineDeployment{}
		if err := typed.Get(ctx, client.ObjectKeyFromObject(md), got); err != nil {
			t.Fatal(err)
		}
		if got.OwnerReferences[0].APIVersion != stdGV || got.Spec.Template.Spec.InfrastructureRef.APIGroup != "infrastructure.cluster.x-k8s.io" {
			t.Fatalf("through the proxy: %v %+v", got.OwnerReferences, got.Spec.Template.Spec.InfrastructureRef)
		}
		for _, mf := range got.ManagedFields {
			if mf.APIVersion != stdGV {
				t.Errorf("managedFields through the proxy: %s", mf.APIVersion)
			}
		}
	})

	t.Run("watch: typed and raw streams carry standard groups", func(t *testing.T) {
		w, err := typed.Watch(ctx, &clusterv1.MachineList{}, client.InNamespace(ns))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		dyn := dynamic.NewForConfigOrDie(e.proxied)
		machines := schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machines"}
		rw, err := dyn.Resource(machines).Namespace(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer rw.Stop()

		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: ns}, Spec: md.Spec.Template.Spec}
		if err := controllerutil.SetControllerReference(md, m, e.scheme); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := typed.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		ev := next(t, w.ResultChan())
		if ev.Type != watch.Added || ev.Object.(*clusterv1.Machine).Name != "m1" {
			t.Fatalf("typed event %v %T", ev.Type, ev.Object)
		}
		t.Logf("create→typed watch event through the proxy: %v", time.Since(start))
		rev := next(t, rw.ResultChan())
		u := rev.Object.(*unstructured.Unstructured)
		if u.GetAPIVersion() != stdGV || u.GetOwnerReferences()[0].APIVersion != stdGV ||
			str(t, u, "spec", "infrastructureRef", "apiGroup") != "infrastructure.cluster.x-k8s.io" {
			t.Fatalf("raw event object: %v", u.Object)
		}
		// a modification arrives as well
		patch := client.MergeFrom(m.DeepCopy())
		m.Labels = map[string]string{"touched": "yes"}
		if err := typed.Patch(ctx, m, patch); err != nil {
			t.Fatal(err)
		}
		if ev := next(t, w.ResultChan()); ev.Type != watch.Modified || ev.Object.(*clusterv1.Machine).Labels["touched"] != "yes" {
			t.Fatalf("modified event: %v", ev)
		}
	})

	t.Run("informer cache through the proxy", func(t *testing.T) {
		cctx, ccancel := context.WithCancel(ctx)
		defer ccancel()
		ca, err := cache.New(e.proxied, cache.Options{Scheme: e.scheme})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ca.GetInformer(cctx, &clusterv1.MachineDeployment{}); err != nil {
			t.Fatal(err)
		}
		go func() { _ = ca.Start(cctx) }()
		if !ca.WaitForCacheSync(cctx) {
			t.Fatal("cache did not sync")
		}
		got := &clusterv1.MachineDeployment{}
		if err := ca.Get(cctx, client.ObjectKeyFromObject(md), got); err != nil {
			t.Fatal(err)
		}
		if got.OwnerReferences[0].APIVersion != stdGV {
			t.Fatalf("cached owner: %v", got.OwnerReferences)
		}
	})

	t.Run("patch: merge and server-side apply", func(t *testing.T) {
		before := md.DeepCopy()
		md.Spec.Replicas = ptr.To[int32](3)
		md.Spec.Template.Spec.InfrastructureRef.Name = "t2"
		if err := typed.Patch(ctx, md, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
		rest := e.atRest(t, privGV, "MachineDeployment", ns, "md1")
		if r, _, _ := unstructured.NestedInt64(rest.Object, "spec", "replicas"); r != 3 {
			t.Fatalf("replicas at rest %d", r)
		}

		// JSON patch, addressed by path only
		jp := []byte(`[{"op":"replace","path":"/spec/template/spec/bootstrap/configRef/apiGroup","value":"bootstrap.cluster.x-k8s.io"},{"op":"replace","path":"/spec/template/spec/bootstrap/configRef/name","value":"t3"}]`)
		if err := typed.Patch(ctx, md, client.RawPatch(types.JSONPatchType, jp)); err != nil {
			t.Fatal(err)
		}
		rest = e.atRest(t, privGV, "MachineDeployment", ns, "md1")
		if str(t, rest, "spec", "template", "spec", "bootstrap", "configRef", "apiGroup") != "bootstrap.cluster.hypershift.openshift.io" {
			t.Fatalf("JSON patch at rest: %v", rest.Object["spec"])
		}

		intent := func() runtime.ApplyConfiguration {
			return client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: map[string]any{
				"apiVersion": stdGV, "kind": "Cluster",
				"metadata": map[string]any{"name": "c1", "namespace": ns, "annotations": map[string]any{"applied": "yes"}},
				"spec": map[string]any{
					"paused":            true,
					"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerCluster", "name": "c1"},
				},
			}})
		}
		if err := typed.Apply(ctx, intent(), client.FieldOwner("ssa-test"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
		rest = e.atRest(t, privGV, "Cluster", ns, "c1")
		if p, _, _ := unstructured.NestedBool(rest.Object, "spec", "paused"); !p || rest.GetAnnotations()["applied"] != "yes" {
			t.Fatalf("apply at rest: %v", rest.Object)
		}
		var ssa *metav1.ManagedFieldsEntry
		for i, mf := range rest.GetManagedFields() {
			if mf.Manager == "ssa-test" {
				ssa = &rest.GetManagedFields()[i]
			}
		}
		if ssa == nil || ssa.APIVersion != privGV || ssa.Operation != metav1.ManagedFieldsOperationApply {
			t.Fatalf("apply entry at rest: %+v", ssa)
		}
		got := &clusterv1.Cluster{}
		_ = typed.Get(ctx, client.ObjectKeyFromObject(cluster), got)
		for _, mf := range got.ManagedFields {
			if mf.APIVersion != stdGV {
				t.Errorf("managedFields through the proxy: %s %s", mf.Manager, mf.APIVersion)
			}
		}
		// Re-applying the same intent is a no-op (the proxy's translation is stable).
		rv := got.ResourceVersion
		if err := typed.Apply(ctx, intent(), client.FieldOwner("ssa-test"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
		_ = typed.Get(ctx, client.ObjectKeyFromObject(cluster), got)
		if got.ResourceVersion != rv {
			t.Errorf("idempotent apply bumped resourceVersion %s → %s", rv, got.ResourceVersion)
		}
	})

	t.Run("update status", func(t *testing.T) {
		got := &clusterv1.Cluster{}
		if err := typed.Get(ctx, client.ObjectKeyFromObject(cluster), got); err != nil {
			t.Fatal(err)
		}
		got.Status.Phase = string(clusterv1.ClusterPhaseProvisioned)
		got.Status.Conditions = []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()}}
		if err := typed.Status().Update(ctx, got); err != nil {
			t.Fatal(err)
		}
		rest := e.atRest(t, privGV, "Cluster", ns, "c1")
		if str(t, rest, "status", "phase") != "Provisioned" {
			t.Fatalf("status at rest: %v", rest.Object["status"])
		}
	})

	t.Run("a Secret owned by a Cluster: standard through the proxy, private at rest", func(t *testing.T) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "c1-kubeconfig", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
			StringData: map[string]string{"note": "cluster.x-k8s.io/v1beta2 stays as data"}}
		if err := controllerutil.SetControllerReference(cluster, s, e.scheme); err != nil {
			t.Fatal(err)
		}
		if err := typed.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		e.mu.Lock()
		cts := e.bodyTypes["/api/v1/namespaces/"+ns+"/secrets"]
		e.mu.Unlock()
		if !slices.Contains(cts, "application/vnd.kubernetes.protobuf") {
			t.Errorf("expected controller-runtime to send the Secret as protobuf, saw %v", cts)
		}
		rest := &corev1.Secret{}
		if err := e.dc.Get(ctx, client.ObjectKeyFromObject(s), rest); err != nil {
			t.Fatal(err)
		}
		if rest.OwnerReferences[0].APIVersion != privGV || string(rest.Data["note"]) != "cluster.x-k8s.io/v1beta2 stays as data" {
			t.Fatalf("at rest: %v %q", rest.OwnerReferences, rest.Data["note"])
		}
		got := &corev1.Secret{}
		if err := typed.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
			t.Fatal(err)
		}
		if got.OwnerReferences[0].APIVersion != stdGV {
			t.Fatalf("through the proxy: %v", got.OwnerReferences)
		}
		owned, err := controllerutil.HasOwnerReference(got.OwnerReferences, cluster, e.scheme)
		if err != nil || !owned {
			t.Fatalf("CAPI's ownership check fails through the proxy: %v %v", owned, err)
		}
		// The same over JSON (unstructured client) and in a list.
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cm", "namespace": ns, "ownerReferences": []any{map[string]any{"apiVersion": stdGV, "kind": "Cluster", "name": "c1", "uid": string(got.OwnerReferences[0].UID)}}},
			"data":     map[string]any{"apiVersion": stdGV}}}
		if err := typed.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		rcm := e.atRest(t, "v1", "ConfigMap", ns, "cm")
		if rcm.GetOwnerReferences()[0].APIVersion != privGV || str(t, rcm, "data", "apiVersion") != stdGV {
			t.Fatalf("ConfigMap at rest: %v", rcm.Object)
		}
		list := &corev1.SecretList{}
		if err := typed.List(ctx, list, client.InNamespace(ns)); err != nil || len(list.Items) != 1 || list.Items[0].OwnerReferences[0].APIVersion != stdGV {
			t.Fatalf("secret list through the proxy: %v %+v", err, list.Items)
		}
	})

	t.Run("unmodified controller-runtime client with unstructured objects", func(t *testing.T) {
		plain, err := client.New(e.proxied, client.Options{}) // default scheme: no CAPI types
		if err != nil {
			t.Fatal(err)
		}
		m := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": stdGV, "kind": "Machine",
			"metadata": map[string]any{"name": "m2", "namespace": ns},
			"spec": map[string]any{"clusterName": "c1",
				"bootstrap":         map[string]any{"dataSecretName": "x"},
				"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachine", "name": "m2"}},
		}}
		if err := plain.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(stdGV)
		list.SetKind("MachineList")
		if err := plain.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 2 || list.GetAPIVersion() != stdGV {
			t.Fatalf("list: %d items, %s", len(list.Items), list.GetAPIVersion())
		}
		for _, it := range list.Items {
			if it.GetAPIVersion() != stdGV || str(t, &it, "spec", "infrastructureRef", "apiGroup") != "infrastructure.cluster.x-k8s.io" {
				t.Fatalf("list item: %v", it.Object)
			}
		}
		if err := plain.Patch(ctx, m, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"infrastructureRef":{"apiGroup":"infrastructure.cluster.x-k8s.io","kind":"DockerMachine","name":"m2b"}}}`))); err != nil {
			t.Fatal(err)
		}
		if rest := e.atRest(t, privGV, "Machine", ns, "m2"); str(t, rest, "spec", "infrastructureRef", "apiGroup") != "infrastructure.cluster.hypershift.openshift.io" {
			t.Fatalf("merge patch at rest: %v", rest.Object["spec"])
		}
		// metadata-only client (what CAPI uses for CRD contract lookups)
		pm := &metav1.PartialObjectMetadata{}
		pm.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Machine"})
		if err := plain.Get(ctx, types.NamespacedName{Namespace: ns, Name: "m2"}, pm); err != nil {
			t.Fatal(err)
		}
		if err := plain.Delete(ctx, m); err != nil {
			t.Fatal(err)
		}
		err = plain.Get(ctx, client.ObjectKeyFromObject(m), m)
		var st apierrors.APIStatus
		if !apierrors.IsNotFound(err) || !errorsAs(err, &st) || st.Status().Details.Group != "cluster.x-k8s.io" || !strings.Contains(st.Status().Message, "machines.cluster.x-k8s.io") {
			t.Fatalf("NotFound through the proxy must name the standard group: %v", err)
		}
	})

	t.Run("CAPI contract lookup: CRDs by standard name", func(t *testing.T) {
		pm := &metav1.PartialObjectMetadata{}
		pm.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := typed.Get(ctx, types.NamespacedName{Name: "machinedeployments.cluster.x-k8s.io"}, pm); err != nil {
			t.Fatal(err)
		}
		if pm.Name != "machinedeployments.cluster.x-k8s.io" || pm.Labels[crds.ManagedByLabel] != crds.ManagedByValue {
			t.Fatalf("CRD metadata through the proxy: %s %v", pm.Name, pm.Labels)
		}
		full := &apiextensionsv1.CustomResourceDefinition{}
		if err := typed.Get(ctx, types.NamespacedName{Name: "clusters.cluster.x-k8s.io"}, full); err != nil || full.Spec.Group != "cluster.x-k8s.io" {
			t.Fatalf("CRD through the proxy: %v %s", err, full.Spec.Group)
		}
	})

	t.Run("kubectl through the proxy", func(t *testing.T) {
		out := kubectl(t, e.addr, "get", "clusters.cluster.x-k8s.io", "-A", "-o", "json")
		var l struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Items) != 1 || l.Items[0]["apiVersion"] != stdGV {
			t.Fatalf("kubectl get -o json: %v\n%s", err, out)
		}
		out = kubectl(t, e.addr, "get", "machinedeployments.cluster.x-k8s.io", "-n", ns)
		if !strings.Contains(out, "md1") || !strings.Contains(out, "c1") {
			t.Fatalf("kubectl get (table):\n%s", out)
		}
		out = kubectl(t, e.addr, "api-resources", "-o", "name")
		for _, want := range []string{"clusters.cluster.x-k8s.io", "machines.cluster.x-k8s.io", "machinedeployments.cluster.x-k8s.io", "ipaddresses.ipam.cluster.x-k8s.io"} {
			if !strings.Contains(out, want+"\n") {
				t.Errorf("kubectl api-resources lacks %s", want)
			}
		}
		if strings.Contains(out, "hypershift.openshift.io") {
			t.Errorf("kubectl api-resources shows private groups:\n%s", out)
		}
		// The apiserver publishes CRD OpenAPI documents asynchronously.
		deadline := time.Now().Add(time.Minute)
		for {
			resp, err := http.Get("http://" + e.addr + "/openapi/v3/apis/cluster.x-k8s.io/v1beta2")
			if err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("OpenAPI v3 for %s not served through the proxy: %v", stdGV, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		out = kubectl(t, e.addr, "explain", "clusters.cluster.x-k8s.io.spec.infrastructureRef")
		if !strings.Contains(out, "apiGroup") || !strings.Contains(out, "GROUP:      cluster.x-k8s.io") {
			t.Errorf("kubectl explain (OpenAPI v3 through the proxy):\n%s", out)
		}
		out = kubectl(t, e.addr, "label", "machinedeployments.cluster.x-k8s.io", "md1", "-n", ns, "kubectl=was-here")
		if rest := e.atRest(t, privGV, "MachineDeployment", ns, "md1"); rest.GetLabels()["kubectl"] != "was-here" {
			t.Fatalf("kubectl label: %s / %v", out, rest.GetLabels())
		}
	})

	t.Run("the platform's own standard CAPI stays invisible through the proxy", func(t *testing.T) {
		// Someone installs a standard Cluster CRD (v1beta1) next to ours.
		std, err := crds.Standard(crds.Options{CoreVersion: "v1beta1"})
		if err != nil {
			t.Fatal(err)
		}
		var platform *apiextensionsv1.CustomResourceDefinition
		for _, c := range std {
			if c.Name == "clusters.cluster.x-k8s.io" {
				platform = c
			}
		}
		platform.Labels = map[string]string{"clusterctl.cluster.x-k8s.io": ""}
		platform.Annotations = nil
		if _, err := (&crds.Installer{Client: e.dc, FieldManager: "clusterctl"}).Install(ctx, []*apiextensionsv1.CustomResourceDefinition{platform}); err != nil {
			t.Fatal(err)
		}
		if err := crds.WaitEstablished(ctx, e.dc, []string{platform.Name}, time.Minute); err != nil {
			t.Fatal(err)
		}
		dc := discovery.NewDiscoveryClientForConfigOrDie(e.proxied)
		groups, err := dc.ServerGroups()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, g := range groups.Groups {
			if g.Name == "cluster.x-k8s.io" {
				n++
				if len(g.Versions) != 1 || g.Versions[0].Version != "v1beta2" {
					t.Errorf("cluster.x-k8s.io through the proxy: %+v", g.Versions)
				}
			}
		}
		if n != 1 {
			t.Fatalf("cluster.x-k8s.io appears %d times", n)
		}
		list := &apiextensionsv1.CustomResourceDefinitionList{}
		if err := typed.List(ctx, list); err != nil {
			t.Fatal(err)
		}
		n = 0
		for _, c := range list.Items {
			if c.Name == "clusters.cluster.x-k8s.io" {
				n++
				if !crds.IsOurs(&c) || c.Spec.Group != "cluster.x-k8s.io" {
					t.Errorf("the CRD shown is not ours: %v", c.Labels)
				}
			}
		}
		if n != 1 {
			t.Fatalf("clusters.cluster.x-k8s.io listed %d times", n)
		}
		c2 := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c2", Namespace: ns}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(true)}}
		if err := typed.Create(ctx, c2); err != nil {
			t.Fatal(err)
		}
		e.atRest(t, privGV, "Cluster", ns, "c2")
		platformList := &unstructured.UnstructuredList{}
		platformList.SetAPIVersion("cluster.x-k8s.io/v1beta1")
		platformList.SetKind("ClusterList")
		if err := e.dc.List(ctx, platformList, client.InNamespace(ns)); err != nil || len(platformList.Items) != 0 {
			t.Fatalf("the platform's group got objects: %v %d", err, len(platformList.Items))
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := typed.Delete(ctx, md); err != nil {
			t.Fatal(err)
		}
		err := typed.Get(ctx, client.ObjectKeyFromObject(md), &clusterv1.MachineDeployment{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("after delete: %v", err)
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(privGV)
		u.SetKind("MachineDeployment")
		if err := e.dc.Get(ctx, types.NamespacedName{Namespace: ns, Name: "md1"}, u); !apierrors.IsNotFound(err) {
			t.Fatalf("still at rest: %v", err)
		}
	})
}

func next(t *testing.T, ch <-chan watch.Event) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event within 30s")
	}
	return watch.Event{}
}

func errorsAs(err error, st *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	if ok {
		*st = s
	}
	return ok
}

// kubectl runs the kubectl built next to kube-apiserver against the proxy.
func kubectl(t *testing.T, addr string, args ...string) string {
	t.Helper()
	dir, err := testenv.Assets()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "kubectl")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("kubectl not found in %s: run `make k8s-bins`", dir)
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: p\n  cluster:\n    server: http://%s\ncontexts:\n- name: p\n  context:\n    cluster: p\n    user: u\nusers:\n- name: u\n  user: {}\ncurrent-context: p\n", addr)
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kc, "--cache-dir", filepath.Join(t.TempDir(), "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, out)
	}
	return string(out)
}
