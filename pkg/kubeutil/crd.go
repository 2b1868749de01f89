package kubeutil

import (
	"context"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Served reports whether mapper knows gvk: false, without an error, while
// the kind's CRD is not installed (or not established) yet.
func Served(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (bool, error) {
	_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	return err == nil, err
}

// WhenServed calls start once mapper knows gvk, checking every period, and
// again every period until start succeeds; it returns nil then, or ctx's
// error when ctx ends first. Watches of kinds whose CRD may be installed
// after the watcher starts (HyperShift's, say) begin this way. Errors of the
// mapper count as "not yet"; start reports its own.
func WhenServed(ctx context.Context, mapper meta.RESTMapper, gvk schema.GroupVersionKind, period time.Duration, start func(context.Context) error) error {
	return wait.PollUntilContextCancel(ctx, period, true, func(ctx context.Context) (bool, error) {
		if served, _ := Served(mapper, gvk); !served {
			return false, nil
		}
		return start(ctx) == nil, nil
	})
}

// WaitEstablished waits until every named CRD is Established, so that the
// caller can use its resources right away (e.g. right after installing it).
func WaitEstablished(ctx context.Context, c client.Reader, names []string, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, types.NamespacedName{Name: name}, crd); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if !Established(crd) {
				return false, nil
			}
		}
		return true, nil
	})
}

// Established reports whether the API server serves crd's resources.
func Established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
