// Package kubeconfigexport is the agent feature that carries hosted
// clusters' admin kubeconfigs from the management cluster to the hub: for
// every HostedCluster the hub delivered (it carries the hcpfleet.io/hcd-*
// labels) whose status.kubeconfig names a Secret that exists, the agent
// copies that Secret's "kubeconfig" into a Secret in the cluster's own
// namespace on the hub, named hosting.ExportedKubeconfigName, from where the
// hub's import mirrors it into the HostedClusterDeployment's namespace.
//
// What it caches on the management cluster: only HostedClusters carrying the
// hcd labels (its own label-selected informer, started once the HyperShift
// CRDs exist). The kubeconfig Secrets are read one by one by name, uncached,
// so the agent never caches the Secrets of a management cluster that runs
// hundreds of control planes; a rotated kubeconfig is picked up on the next
// HostedCluster change or, at the latest, after ResyncPeriod.
package kubeconfigexport

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// ResyncPeriod bounds how long a changed kubeconfig Secret (a rotation
// without a HostedCluster change) takes to reach the hub.
var ResyncPeriod = 30 * time.Second

var hostedClusterGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}

// Feature is the kubeconfig export as an agent feature.
func Feature() agent.Feature {
	return agent.Feature{Name: "kubeconfig-export", Setup: setup, Cleanup: Cleanup}
}

// deliveredSelector selects the HostedClusters the hub delivered.
func deliveredSelector() labels.Selector {
	ns, _ := labels.NewRequirement(hosting.LabelHCDNamespace, selection.Exists, nil)
	name, _ := labels.NewRequirement(hosting.LabelHCDName, selection.Exists, nil)
	return labels.NewSelector().Add(*ns, *name)
}

// exportedSelector selects the Secrets this feature writes on the hub.
func exportedSelector() labels.Selector {
	return deliveredSelector().Add(must(labels.NewRequirement(hosting.LabelAdminKubeconfig, selection.Equals, []string{"true"})))
}

func must(r *labels.Requirement, err error) labels.Requirement {
	if err != nil {
		panic(err)
	}
	return *r
}

type reconciler struct {
	env     *agent.Env
	mapper  meta.RESTMapper
	managed client.Reader // uncached: kubeconfig Secrets by name
	// binder gives the agent its grants (addon.AgentHostingNamespaceRole)
	// in a HostedCluster's namespace before it reads the kubeconfig there.
	binder *kubeutil.Binder
	hub    client.Client // uncached, the agent's hub identity

	// informer holds the delivered HostedClusters once the CRD exists.
	informer atomic.Pointer[toolscache.SharedIndexInformer]
}

var (
	exportKey        = reconcile.Request{NamespacedName: types.NamespacedName{Name: "kubeconfig-export"}}
	hostedClusterGVK = hostedClusterGVR.GroupVersion().WithKind("HostedCluster")
)

func setup(mgr ctrl.Manager, env *agent.Env) error {
	hub, err := client.New(env.Hub, client.Options{Scheme: agent.Scheme})
	if err != nil {
		return err
	}
	binder := &kubeutil.Binder{Client: mgr.GetClient(), ClusterRole: addon.AgentHostingNamespaceRole,
		Probe: authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets"}}
	r := &reconciler{env: env, mapper: mgr.GetRESTMapper(), managed: mgr.GetAPIReader(), binder: binder, hub: hub}
	export := agent.NewSingleRequest(exportKey)
	export.Requeue() // the first pass
	return export.Controller(mgr, "kubeconfig-export").
		WatchesRawSource(agent.WatchWhenServed(mgr.GetRESTMapper(), hostedClusterGVK, r.startInformer)).
		Complete(r)
}

// Reconcile makes the exported Secrets on the hub match the delivered
// HostedClusters' kubeconfigs.
func (r *reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	if deleting, err := r.env.AddonDeleting(ctx); err != nil || deleting {
		return reconcile.Result{}, err // the cleanup removes what was exported
	}
	hostedClusters, err := r.hostedClusters()
	if err != nil {
		return reconcile.Result{}, err
	}
	desired := map[string]*corev1.Secret{}
	for _, hc := range hostedClusters {
		secret, err := r.exportFor(ctx, hc)
		if err != nil {
			return reconcile.Result{}, err
		}
		if secret != nil {
			desired[secret.Name] = secret
		}
	}
	if err := r.apply(ctx, desired); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: ResyncPeriod}, nil
}

// hostedClusters lists the delivered HostedClusters from the label-selected
// informer; none when the HostedCluster CRD does not exist.
func (r *reconciler) hostedClusters() ([]*unstructured.Unstructured, error) {
	if served, err := kubeutil.Served(r.mapper, hostedClusterGVK); !served {
		return nil, err // nil without the CRD: no HyperShift CRDs, no HostedClusters
	}
	informer := r.informer.Load()
	if informer == nil || !(*informer).HasSynced() {
		return nil, errors.New("HostedCluster informer not synced yet")
	}
	var out []*unstructured.Unstructured
	for _, obj := range (*informer).GetStore().List() {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out, nil
}

// startInformer runs, for as long as the controller (ctx), an informer of
// the delivered HostedClusters whose events requeue the export, and
// requeues it once the informer is in sync.
func (r *reconciler) startInformer(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	dyn, err := dynamic.NewForConfig(r.env.Managed)
	if err != nil {
		return err
	}
	selector := deliveredSelector().String()
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) {
		o.LabelSelector = selector
	})
	informer := factory.ForResource(hostedClusterGVR).Informer()
	if _, err := informer.AddEventHandler(agent.EnqueueFor(queue, func(client.Object) []reconcile.Request {
		return []reconcile.Request{exportKey}
	})); err != nil {
		return err
	}
	r.informer.Store(&informer)
	go informer.Run(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return fmt.Errorf("waiting for the HostedCluster informer: %w", ctx.Err())
	}
	queue.Add(exportKey)
	return nil
}

// exportFor is the hub Secret for hc, or nil when hc has no kubeconfig yet.
func (r *reconciler) exportFor(ctx context.Context, hc *unstructured.Unstructured) (*corev1.Secret, error) {
	hcdNamespace, hcdName := hc.GetLabels()[hosting.LabelHCDNamespace], hc.GetLabels()[hosting.LabelHCDName]
	secretName, _, _ := unstructured.NestedString(hc.Object, "status", "kubeconfig", "name")
	if hcdNamespace == "" || hcdName == "" || secretName == "" || hc.GetDeletionTimestamp() != nil {
		return nil, nil
	}
	if err := r.binder.Ensure(ctx, hc.GetNamespace()); err != nil {
		return nil, err
	}
	live := &corev1.Secret{}
	err := r.binder.Checked(hc.GetNamespace(), r.managed.Get(ctx, types.NamespacedName{Namespace: hc.GetNamespace(), Name: secretName}, live))
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig Secret %s/%s of HostedCluster %s: %w", hc.GetNamespace(), secretName, hc.GetName(), err)
	}
	data, ok := live.Data[hosting.KubeconfigKey]
	if !ok || len(data) == 0 {
		return nil, nil
	}
	return ExportedSecret(r.env.Options.ClusterName, hcdNamespace, hcdName, data), nil
}

// ExportedSecret is the hub Secret carrying the admin kubeconfig of the
// hosted cluster of HostedClusterDeployment hcdNamespace/hcdName, in the
// hosting cluster's namespace.
func ExportedSecret(clusterNamespace, hcdNamespace, hcdName string, kubeconfig []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: clusterNamespace, Name: hosting.ExportedKubeconfigName(hcdNamespace, hcdName),
			Labels: map[string]string{
				hosting.LabelHCDNamespace: hcdNamespace, hosting.LabelHCDName: hcdName, hosting.LabelAdminKubeconfig: "true",
			},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{hosting.KubeconfigKey: kubeconfig},
	}
}

// apply creates, updates and deletes exported Secrets on the hub so they
// are exactly desired; unchanged ones are not written.
func (r *reconciler) apply(ctx context.Context, desired map[string]*corev1.Secret) error {
	ns := r.env.Options.ClusterName
	live := &corev1.SecretList{}
	if err := r.hub.List(ctx, live, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: exportedSelector()}); err != nil {
		return fmt.Errorf("listing exported kubeconfigs on the hub: %w", err)
	}
	var errs []error
	seen := map[string]bool{}
	for i := range live.Items {
		have := &live.Items[i]
		want, ok := desired[have.Name]
		seen[have.Name] = true
		switch {
		case !ok:
			if err := r.hub.Delete(ctx, have); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("deleting exported kubeconfig %s/%s: %w", ns, have.Name, err))
			}
		case !upToDate(have, want):
			have.Data = want.Data
			if have.Labels == nil {
				have.Labels = map[string]string{}
			}
			maps.Copy(have.Labels, want.Labels)
			if err := r.hub.Update(ctx, have); err != nil {
				errs = append(errs, fmt.Errorf("updating exported kubeconfig %s/%s: %w", ns, have.Name, err))
			}
		}
	}
	for name, want := range desired {
		if seen[name] {
			continue
		}
		err := r.hub.Create(ctx, want)
		if apierrors.IsAlreadyExists(err) {
			// A Secret of that name without our labels: take it over.
			existing := &corev1.Secret{}
			if err = r.hub.Get(ctx, client.ObjectKeyFromObject(want), existing); err == nil {
				existing.Data = want.Data
				if existing.Labels == nil {
					existing.Labels = map[string]string{}
				}
				maps.Copy(existing.Labels, want.Labels)
				err = r.hub.Update(ctx, existing)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("exporting kubeconfig %s/%s: %w", ns, name, err))
		}
	}
	return errors.Join(errs...)
}

func upToDate(have, want *corev1.Secret) bool {
	if string(have.Data[hosting.KubeconfigKey]) != string(want.Data[hosting.KubeconfigKey]) || len(have.Data) != len(want.Data) {
		return false
	}
	for k, v := range want.Labels {
		if have.Labels[k] != v {
			return false
		}
	}
	return true
}

// Cleanup deletes every kubeconfig this agent exported to the hub.
func Cleanup(ctx context.Context, env *agent.Env) error {
	hub, err := client.New(env.Hub, client.Options{Scheme: agent.Scheme})
	if err != nil {
		return err
	}
	ns := env.Options.ClusterName
	// List and delete one by one: the agent's hub role has no deletecollection.
	live := &corev1.SecretList{}
	if err := hub.List(ctx, live, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: exportedSelector()}); err != nil {
		return fmt.Errorf("listing exported kubeconfigs in %s on the hub: %w", ns, err)
	}
	for i := range live.Items {
		if err := hub.Delete(ctx, &live.Items[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting exported kubeconfig %s/%s on the hub: %w", ns, live.Items[i].Name, err)
		}
	}
	return nil
}
