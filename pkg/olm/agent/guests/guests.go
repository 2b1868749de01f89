// Package guests is how the agent's OLM features reach the hosted clusters
// the hub delivered: the delivered HostedClusters on the management cluster
// (one label-selected list per pass, uncached) and, for each, a client of its
// guest API server as its admin, from the kubeconfig Secret HyperShift
// publishes (read by name with the grant the kubeconfig export uses,
// addon.AgentHostingNamespaceRole). A guest that could not be read is left
// alone for Retry, so an unreachable one costs one attempt per Retry instead
// of one per pass.
package guests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// Timeout bounds each request to a hosted cluster's API server, so one
// unreachable guest does not hold up the others for long.
const Timeout = 10 * time.Second

// HostedClusterGVR is HyperShift's HostedCluster.
var HostedClusterGVR = hosting.HostedClusterGVR

// Visitor visits the delivered hosted clusters' guests. Not safe for
// concurrent use: one controller (one worker) owns it.
type Visitor struct {
	// Managed is the management cluster.
	Managed dynamic.Interface
	// Retry is how long a guest that could not be read is left alone.
	Retry   time.Duration
	secrets client.Reader // uncached: kubeconfig Secrets by name
	binder  *kubeutil.Binder
	scheme  *runtime.Scheme
	// failed: when visiting a hosted cluster (by UID) last failed.
	failed map[types.UID]time.Time
}

// New is a Visitor whose guest clients know scheme.
func New(mgr ctrl.Manager, env *agent.Env, scheme *runtime.Scheme, retry time.Duration) (*Visitor, error) {
	dyn, err := dynamic.NewForConfig(env.Managed)
	if err != nil {
		return nil, err
	}
	return &Visitor{Managed: dyn, Retry: retry, secrets: mgr.GetAPIReader(), scheme: scheme, failed: map[types.UID]time.Time{},
		binder: &kubeutil.Binder{Client: mgr.GetClient(), ClusterRole: addon.AgentHostingNamespaceRole,
			Probe: authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets"}}}, nil
}

// Each calls visit for every delivered HostedCluster whose guest is there
// (its kubeconfig published, not being deleted) and was not failing
// recently. It returns the errors of the failed visits, joined; the others
// went through. None when HyperShift's CRDs are not installed yet.
func (v *Visitor) Each(ctx context.Context, visit VisitFunc) error {
	selector := labels.NewSelector()
	for _, l := range []string{hosting.LabelHCDNamespace, hosting.LabelHCDName} {
		req, _ := labels.NewRequirement(l, selection.Exists, nil)
		selector = selector.Add(*req)
	}
	list, err := v.Managed.Resource(HostedClusterGVR).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil // no HyperShift CRDs yet
	}
	if err != nil {
		return err
	}
	var errs []error
	now := time.Now()
	seen := make(map[types.UID]bool, len(list.Items))
	for i := range list.Items {
		hc := &list.Items[i]
		seen[hc.GetUID()] = true
		if at, ok := v.failed[hc.GetUID()]; ok && now.Sub(at) < v.Retry {
			continue
		}
		if err := v.visit(ctx, hc, visit); err != nil {
			v.failed[hc.GetUID()] = now
			errs = append(errs, fmt.Errorf("HostedCluster %s/%s: %w", hc.GetNamespace(), hc.GetName(), err))
			continue
		}
		delete(v.failed, hc.GetUID())
	}
	for uid := range v.failed {
		if !seen[uid] {
			delete(v.failed, uid)
		}
	}
	return errors.Join(errs...)
}

func (v *Visitor) visit(ctx context.Context, hc *unstructured.Unstructured, visit VisitFunc) error {
	secretName, _, _ := unstructured.NestedString(hc.Object, "status", "kubeconfig", "name")
	if secretName == "" || hc.GetDeletionTimestamp() != nil {
		return nil
	}
	guest, err := v.client(ctx, hc.GetNamespace(), secretName)
	if err != nil || guest == nil {
		return err
	}
	return visit(ctx, hc, guest)
}

// client is a client of the hosted cluster as its admin, or nil while its
// kubeconfig Secret is not there.
func (v *Visitor) client(ctx context.Context, namespace, secretName string) (client.Client, error) {
	if err := v.binder.Ensure(ctx, namespace); err != nil {
		return nil, err
	}
	secret := &corev1.Secret{}
	err := v.binder.Checked(namespace, v.secrets.Get(ctx, types.NamespacedName{Namespace: namespace, Name: secretName}, secret))
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig Secret %s/%s: %w", namespace, secretName, err)
	}
	data := secret.Data[hosting.KubeconfigKey]
	if len(data) == 0 {
		return nil, nil
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig Secret %s/%s: %w", namespace, secretName, err)
	}
	cfg.Timeout = Timeout
	return client.New(cfg, client.Options{Scheme: v.scheme})
}

// Annotate sets (value non-nil) or removes (nil) one annotation of hc on
// the management cluster by merge patch, when it differs. A HostedCluster
// gone meanwhile is no error.
func (v *Visitor) Annotate(ctx context.Context, hc *unstructured.Unstructured, key string, value *string, fieldManager string) error {
	current, ok := hc.GetAnnotations()[key]
	if (value == nil && !ok) || (value != nil && ok && current == *value) {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]*string{key: value}}})
	_, err := v.Managed.Resource(HostedClusterGVR).Namespace(hc.GetNamespace()).Patch(ctx, hc.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("annotating HostedCluster %s/%s: %w", hc.GetNamespace(), hc.GetName(), err)
	}
	return nil
}
