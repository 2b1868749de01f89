package fleettest

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
)

// ImageSetGVR is Hive's ClusterImageSet, which ACM hubs serve and admins
// publish releases with.
var ImageSetGVR = schema.GroupVersionResource{Group: "hive.openshift.io", Version: "v1", Resource: "clusterimagesets"}

// ServeClusterImageSets serves Hive's ClusterImageSet on the fleet's hub, as
// ACM does (schema open: the hub reads spec.releaseImage only), and waits
// until it is served.
func (e *Env) ServeClusterImageSets(t testing.TB) {
	t.Helper()
	applier, err := localfleet.NewApplier(e.Fleet.Hub.Config())
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "clusterimagesets.hive.openshift.io"},
		"spec": map[string]any{
			"group": "hive.openshift.io", "scope": "Cluster",
			"names": map[string]any{"kind": "ClusterImageSet", "listKind": "ClusterImageSetList", "plural": "clusterimagesets", "singular": "clusterimageset"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}},
		},
	}}
	if err := applier.Apply(context.Background(), crd); err != nil {
		t.Fatal(err)
	}
	e.Eventually(t, time.Minute, "ClusterImageSets served", func(ctx context.Context) error {
		_, err := dynamic.NewForConfigOrDie(e.Fleet.Hub.Config()).Resource(ImageSetGVR).List(ctx, metav1.ListOptions{})
		return err
	})
}
