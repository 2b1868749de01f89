//go:build integration

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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

	"github.com/hcp-fleet/hcp-fleet/internal/legacyfixture"
	"github.com/hcp-fleet/hcp-fleet/internal/testenv"
	"github.com/hcp-fleet/hcp-fleet/manifests"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
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

// fixture is one hosted cluster (legacyfixture): its HostedCluster
// (namespace "clusters") and the CAPI object graph and HyperShift
// Deployments of its control-plane namespace, as HyperShift with the Agent
// provider lays them down.
type fixture struct {
	hc types.NamespacedName
	ns string
}

func u(apiVersion, kind, name string, obj map[string]any) *unstructured.Unstructured {
	return legacyfixture.Object(apiVersion, kind, name, obj)
}

func (e *env) newFixture(t *testing.T, name string) fixture {
	t.Helper()
	f, err := legacyfixture.Create(context.Background(), e.c, name)
	if err != nil {
		t.Fatal(err)
	}
	if f.Namespace != ControlPlaneNamespace(f.HostedCluster.Namespace, f.HostedCluster.Name) {
		t.Fatalf("fixture control-plane namespace %s", f.Namespace)
	}
	return fixture{hc: f.HostedCluster, ns: f.Namespace}
}

// markAvailable plays the Deployment controller and the kubelet (none run
// here): every Deployment in ns reports its current generation observed and
// all desired replicas available.
func (e *env) markAvailable(t *testing.T, ns string) {
	t.Helper()
	if err := legacyfixture.MarkAvailable(context.Background(), e.c, ns, nil); err != nil {
		t.Fatal(err)
	}
}

// everyKind is every namespaced kind the apiserver serves (but Events):
// "nothing lost" is checked on all of them, not only on the kinds the
// migration itself lists.
func (e *env) everyKind(t *testing.T) []gvkInfo {
	t.Helper()
	lists, err := e.disco.ServerPreferredNamespacedResources()
	if err != nil {
		t.Fatal(err)
	}
	var out []gvkInfo
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range l.APIResources {
			if !strings.Contains(res.Name, "/") && res.Name != "events" && slices.Contains(res.Verbs, "list") {
				out = append(out, gv.WithKind(res.Kind))
			}
		}
	}
	return out
}

// snapshot is everything in a control-plane namespace (every kind), plus the
// HostedCluster's annotations.
type snapshot struct {
	objects     map[string]*unstructured.Unstructured // "<apiVersion> <kind> <name>"
	deployments map[string]*appsv1.Deployment
	hcAnn       map[string]string
}

func (e *env) snapshot(t *testing.T, f fixture) snapshot {
	t.Helper()
	ctx := context.Background()
	objs, err := listAll(ctx, e.c, f.ns, e.everyKind(t))
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
	if nStd != legacyfixture.StandardObjects {
		t.Errorf("fixture had %d standard objects, want %d", nStd, legacyfixture.StandardObjects)
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
