package namespacegc

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// These tests drive the reconciler's timing with a fake clock and fake
// clients standing for the cache and the API server; the janitor against
// real API servers is in the integration test.

const testGrace = 30 * time.Second

func testScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := workv1.Install(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func labelledNamespace() *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters", UID: "uid-1",
		Labels: map[string]string{hosting.LabelCreatedNamespace: "true"}}}
}

type fixture struct {
	r     *reconciler
	now   time.Time
	api   client.Client
	cache client.Client
}

// newFixture: the cache holds cached, the API server holds live (both get
// the namespace unless it is in neither).
func newFixture(t *testing.T, cached, live []client.Object, funcs *interceptor.Funcs) *fixture {
	s := testScheme(t)
	apiBuilder := fake.NewClientBuilder().WithScheme(s).WithObjects(live...)
	if funcs != nil {
		apiBuilder = apiBuilder.WithInterceptorFuncs(*funcs)
	}
	f := &fixture{now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC),
		api: apiBuilder.Build(), cache: fake.NewClientBuilder().WithScheme(s).WithObjects(cached...).Build()}
	f.r = &reconciler{cached: f.cache, live: f.api, writer: f.api, grace: testGrace,
		now: func() time.Time { return f.now }, emptySince: map[string]emptyMark{}}
	return f
}

func (f *fixture) reconcile(t *testing.T) reconcile.Result {
	t.Helper()
	res, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "clusters"}})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return res
}

func (f *fixture) exists(t *testing.T) bool {
	t.Helper()
	err := f.api.Get(context.Background(), types.NamespacedName{Name: "clusters"}, &corev1.Namespace{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func rootCA() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: "clusters"}}
}

func TestReconcileDeletesAfterGracePeriod(t *testing.T) {
	f := newFixture(t, []client.Object{labelledNamespace()}, []client.Object{labelledNamespace(), rootCA()}, nil)
	if res := f.reconcile(t); res.RequeueAfter != testGrace || !f.exists(t) {
		t.Fatalf("first seen empty: requeue after %s, exists %v; want %s and kept", res.RequeueAfter, f.exists(t), testGrace)
	}
	f.now = f.now.Add(testGrace / 3)
	if res := f.reconcile(t); res.RequeueAfter != testGrace*2/3 || !f.exists(t) {
		t.Fatalf("empty for a third of the grace period: requeue after %s, exists %v; want %s and kept", res.RequeueAfter, f.exists(t), testGrace*2/3)
	}
	f.now = f.now.Add(testGrace * 2 / 3)
	f.reconcile(t)
	if f.exists(t) {
		t.Fatal("empty for the grace period: namespace not deleted")
	}
}

func TestReconcileRechecksLiveBeforeDeleting(t *testing.T) {
	// The cache saw nothing, but the API server has a ConfigMap delivered
	// meanwhile (ConfigMaps are read live anyway) and a HostedCluster's
	// AppliedManifestWork the cache has not caught up with.
	work := &workv1.AppliedManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "hub-hcd-team-a.hc-1"},
		Status: workv1.AppliedManifestWorkStatus{AppliedResources: []workv1.AppliedManifestResourceMeta{{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: "hypershift.openshift.io", Resource: "hostedclusters", Namespace: "clusters", Name: "hc-1"}}}}}
	f := newFixture(t, []client.Object{labelledNamespace()}, []client.Object{labelledNamespace(), work}, nil)
	f.reconcile(t)
	f.now = f.now.Add(testGrace)
	if res := f.reconcile(t); res.RequeueAfter != resyncPeriod || !f.exists(t) {
		t.Fatalf("live AppliedManifestWork: requeue after %s, exists %v; want %s and kept", res.RequeueAfter, f.exists(t), resyncPeriod)
	}
	// Once the live view is empty again, a whole grace period starts over.
	if err := f.api.Delete(context.Background(), work); err != nil {
		t.Fatal(err)
	}
	if res := f.reconcile(t); res.RequeueAfter != testGrace || !f.exists(t) {
		t.Fatalf("empty again: requeue after %s, exists %v; want a new grace period of %s", res.RequeueAfter, f.exists(t), testGrace)
	}
}

func TestReconcileKeepsWhatItDoesNotOwn(t *testing.T) {
	unlabelled := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters", UID: "uid-1"}}
	userSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "clusters"}}
	for name, tc := range map[string]struct{ cached, live []client.Object }{
		"unlabelled":  {[]client.Object{unlabelled}, []client.Object{unlabelled.DeepCopy()}},
		"user Secret": {[]client.Object{labelledNamespace()}, []client.Object{labelledNamespace(), userSecret}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.cached, tc.live, nil)
			for range 3 {
				f.reconcile(t)
				f.now = f.now.Add(testGrace)
			}
			if !f.exists(t) {
				t.Error("deleted")
			}
		})
	}
}

func TestReconcileDeletesOnlyTheVersionChecked(t *testing.T) {
	// Someone changes the namespace between the live check and the delete:
	// the resourceVersion precondition makes the delete fail, and the
	// janitor starts over.
	funcs := &interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
		live := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
			return err
		}
		live.Annotations = map[string]string{"touched": "true"}
		if err := c.Update(ctx, live); err != nil {
			return err
		}
		return c.Delete(ctx, obj, opts...)
	}}
	f := newFixture(t, []client.Object{labelledNamespace()}, []client.Object{labelledNamespace()}, funcs)
	f.reconcile(t)
	f.now = f.now.Add(testGrace)
	if res := f.reconcile(t); res.RequeueAfter == 0 {
		t.Errorf("conflicting delete: no requeue")
	}
	if !f.exists(t) {
		t.Fatal("namespace changed after the check must stay")
	}
	if _, marked := f.r.emptySince["clusters"]; marked {
		t.Error("after a conflict the grace period must start over")
	}
}

func TestCleanup(t *testing.T) {
	ns := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Labels: labels}}
	}
	created := map[string]string{hosting.LabelCreatedNamespace: "true"}
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(
		ns("empty", created), ns("busy", created), ns("filled-meanwhile", created), ns("unlabelled", nil),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: "busy"}},
	).Build()
	ctx := context.Background()
	waited := false
	err := cleanup(ctx, c, testGrace, func(context.Context) error {
		waited = true
		// A delivery arrives during the grace period.
		return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "delivered", Namespace: "filled-meanwhile"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !waited {
		t.Error("cleanup deleted without waiting the grace period")
	}
	for name, want := range map[string]bool{"empty": false, "busy": true, "filled-meanwhile": true, "unlabelled": true} {
		err := c.Get(ctx, types.NamespacedName{Name: name}, &corev1.Namespace{})
		if exists := err == nil; exists != want {
			t.Errorf("namespace %s exists %v, want %v (%v)", name, exists, want, err)
		}
	}

	// Nothing to delete: no wait.
	waited = false
	if err := cleanup(ctx, c, testGrace, func(context.Context) error { waited = true; return nil }); err != nil || waited {
		t.Errorf("second cleanup: err %v, waited %v; want neither", err, waited)
	}
}
