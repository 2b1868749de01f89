package kubeutil_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

func TestFinalizers(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", Finalizers: []string{"a"}},
		Data: map[string]string{"k": "v"}}
	c := fake.NewClientBuilder().WithObjects(cm).Build()
	read := func() *corev1.ConfigMap {
		t.Helper()
		got := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	expect := func(want ...string) *corev1.ConfigMap {
		t.Helper()
		got := read()
		if !slices.Equal(got.Finalizers, want) {
			t.Fatalf("finalizers %v, want %v", got.Finalizers, want)
		}
		if got.Data["k"] != "v" {
			t.Fatalf("data %v: a finalizer patch must touch metadata.finalizers only", got.Data)
		}
		return got
	}

	obj := read()
	stale := obj.DeepCopy()
	if err := kubeutil.AddFinalizer(ctx, c, obj, "b"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(obj.Finalizers, []string{"a", "b"}) {
		t.Errorf("obj not updated from the response: finalizers %v", obj.Finalizers)
	}
	live := expect("a", "b")

	// Already there: nothing is written.
	if err := kubeutil.AddFinalizer(ctx, c, live, "b"); err != nil {
		t.Fatal(err)
	}
	if rv := read().ResourceVersion; rv != live.ResourceVersion {
		t.Errorf("adding a present finalizer wrote (resourceVersion %s -> %s)", live.ResourceVersion, rv)
	}
	// Not there: nothing is written either.
	if err := kubeutil.RemoveFinalizer(ctx, c, live, "c"); err != nil {
		t.Fatal(err)
	}
	if rv := read().ResourceVersion; rv != live.ResourceVersion {
		t.Errorf("removing an absent finalizer wrote (resourceVersion %s -> %s)", live.ResourceVersion, rv)
	}

	// A copy read before the last change conflicts instead of losing "b".
	if err := kubeutil.RemoveFinalizer(ctx, c, stale, "a"); !apierrors.IsConflict(err) {
		t.Errorf("stale remove: err %v, want a Conflict", err)
	}
	expect("a", "b")

	if err := kubeutil.RemoveFinalizer(ctx, c, live, "a"); err != nil {
		t.Fatal(err)
	}
	live = expect("b")
	if err := kubeutil.RemoveFinalizer(ctx, c, live, "b"); err != nil {
		t.Fatal(err)
	}
	expect()

	gone := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gone", Finalizers: []string{"a"}}}
	if err := kubeutil.RemoveFinalizer(ctx, c, gone, "a"); !apierrors.IsNotFound(err) {
		t.Errorf("missing object: err %v, want NotFound", err)
	}
}
