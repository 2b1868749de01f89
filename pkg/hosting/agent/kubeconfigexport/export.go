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
// HostedCluster change or, at the latest, after the resync period.
//
// What it may do on the hub: get, apply and delete, by name, the exports of
// the HostedClusterDeployments bound to its cluster — a Role the hub keeps
// (pkg/hosting/hub/exportaccess) — and nothing else among its cluster
// namespace's Secrets; it never lists them. It applies an export when its
// content changed or reapplyAfter passed, and deletes the ones it wrote that
// are no longer wanted; the hub deletes an export with its
// HostedClusterDeployment.
package kubeconfigexport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
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

// DefaultResyncPeriod bounds how long a changed kubeconfig Secret (a
// rotation without a HostedCluster change) takes to reach the hub
// (--kubeconfig-export-resync).
const DefaultResyncPeriod = 30 * time.Second

var hostedClusterGVR = hosting.HostedClusterGVR

// Feature is the kubeconfig export as an agent feature.
func Feature() agent.Feature {
	resync := DefaultResyncPeriod
	return agent.Feature{Name: "kubeconfig-export", Cleanup: Cleanup,
		Flags: func(fs *flag.FlagSet) {
			fs.DurationVar(&resync, "kubeconfig-export-resync", resync,
				"How often the agent re-reads the hosted clusters' kubeconfig Secrets to export a rotation that changed no HostedCluster.")
		},
		Setup: func(mgr ctrl.Manager, env *agent.Env) error { return setup(mgr, env, resync) }}
}

// deliveredSelector selects the HostedClusters the hub delivered.
func deliveredSelector() labels.Selector {
	ns, _ := labels.NewRequirement(hosting.LabelHCDNamespace, selection.Exists, nil)
	name, _ := labels.NewRequirement(hosting.LabelHCDName, selection.Exists, nil)
	return labels.NewSelector().Add(*ns, *name)
}

type reconciler struct {
	env     *agent.Env
	mapper  meta.RESTMapper
	managed client.Reader // uncached: kubeconfig Secrets by name
	// binder gives the agent its grants (addon.AgentHostingNamespaceRole)
	// in a HostedCluster's namespace before it reads the kubeconfig there.
	binder *kubeutil.Binder
	hub    client.Client // uncached, the agent's hub identity
	resync time.Duration

	// written: the exports this agent applied since it started (by name).
	written map[string]written

	// informer holds the delivered HostedClusters once the CRD exists.
	informer atomic.Pointer[toolscache.SharedIndexInformer]
}

var (
	exportKey        = reconcile.Request{NamespacedName: types.NamespacedName{Name: "kubeconfig-export"}}
	hostedClusterGVK = hostedClusterGVR.GroupVersion().WithKind("HostedCluster")
)

func setup(mgr ctrl.Manager, env *agent.Env, resync time.Duration) error {
	hub, err := client.New(env.Hub, client.Options{Scheme: agent.Scheme})
	if err != nil {
		return err
	}
	binder := &kubeutil.Binder{Client: mgr.GetClient(), ClusterRole: addon.AgentHostingNamespaceRole,
		Probe: authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets"}}
	r := &reconciler{env: env, mapper: mgr.GetRESTMapper(), managed: mgr.GetAPIReader(), binder: binder, hub: hub, resync: resync, written: map[string]written{}}
	export := agent.NewSingleRequest(exportKey)
	export.Requeue() // the first pass
	return export.Controller(mgr, "kubeconfig-export").
		WatchesRawSource(agent.WatchWhenServed(mgr.GetRESTMapper(), hostedClusterGVK, r.startInformer)).
		Complete(r)
}

// Reconcile makes the exported Secrets on the hub match the delivered
// HostedClusters' kubeconfigs.
func (r *reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	if r.env.AddonDeleting(ctx) {
		return reconcile.Result{}, nil // the cleanup removes what was exported
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
	if _, err := r.apply(ctx, desired); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: r.resync}, nil
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

// reapplyAfter is how long an export this agent wrote is trusted to be
// unchanged on the hub before it is applied again (a no-op on the server
// when it is), so that an export edited or deleted on the hub comes back.
const reapplyAfter = 10 * time.Minute

// written is an export the agent applied: a hash of what it wrote, and when.
type written struct {
	hash string
	at   time.Time
}

// apply server-side applies each desired export that is not known to be on
// the hub already, and deletes the exports this agent wrote that are no
// longer desired. The agent's hub identity may read and write only the
// exports of the HostedClusterDeployments bound to its cluster, by name
// (the hub's exportaccess), and cannot list Secrets: an export it is not (or
// no longer) allowed is skipped, and one left behind by an earlier run is
// the hub's to delete with its HostedClusterDeployment.
func (r *reconciler) apply(ctx context.Context, desired map[string]*corev1.Secret) (forbidden int, err error) {
	log := ctrl.LoggerFrom(ctx)
	var errs []error
	now := time.Now()
	for _, name := range slices.Sorted(maps.Keys(desired)) {
		want := desired[name]
		hash := contentHash(want)
		if w, ok := r.written[name]; ok && w.hash == hash && now.Sub(w.at) < reapplyAfter {
			continue
		}
		err := r.hub.Apply(ctx, applyConfiguration(want), client.FieldOwner(FieldManager), client.ForceOwnership)
		switch {
		case apierrors.IsForbidden(err):
			// The HostedClusterDeployment is not bound here (yet, or any
			// more: orphaned): the hub grants its export to no one here.
			log.V(1).Info("not allowed to export this kubeconfig to the hub", "secret", want.Namespace+"/"+name)
			forbidden++
		case err != nil:
			errs = append(errs, fmt.Errorf("exporting kubeconfig %s/%s: %w", want.Namespace, name, err))
		default:
			r.written[name] = written{hash: hash, at: now}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.written)) {
		if _, ok := desired[name]; ok {
			continue
		}
		err := r.hub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.env.Options.ClusterName, Name: name}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
			errs = append(errs, fmt.Errorf("deleting exported kubeconfig %s/%s: %w", r.env.Options.ClusterName, name, err))
			continue
		}
		delete(r.written, name)
	}
	return forbidden, errors.Join(errs...)
}

// FieldManager owns the exported Secrets on the hub.
const FieldManager = "hcp-fleet-kubeconfig-export"

// applyConfiguration is the server-side apply form of an export.
func applyConfiguration(s *corev1.Secret) *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(s.Name, s.Namespace).WithLabels(s.Labels).WithType(s.Type).WithData(s.Data)
}

// contentHash identifies what an export holds.
func contentHash(s *corev1.Secret) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		_, _ = fmt.Fprintf(h, "l%d:%s=%d:%s;", len(k), k, len(s.Labels[k]), s.Labels[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Data)) {
		_, _ = fmt.Fprintf(h, "d%d:%s=%d:", len(k), k, len(s.Data[k]))
		h.Write(s.Data[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Cleanup deletes the kubeconfigs this agent exported to the hub for the
// HostedClusters delivered to its cluster. The agent cannot list Secrets on
// the hub; an export it does not know of (its HostedCluster already gone) is
// deleted by the hub with its HostedClusterDeployment.
func Cleanup(ctx context.Context, env *agent.Env) error {
	hub, err := client.New(env.Hub, client.Options{Scheme: agent.Scheme})
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(env.Managed)
	if err != nil {
		return err
	}
	ns := env.Options.ClusterName
	hcs, err := dyn.Resource(hostedClusterGVR).List(ctx, metav1.ListOptions{LabelSelector: deliveredSelector().String()})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil // no HyperShift CRDs: nothing was exported
	}
	if err != nil {
		return fmt.Errorf("listing delivered HostedClusters: %w", err)
	}
	for _, hc := range hcs.Items {
		hcdNamespace, hcdName := hc.GetLabels()[hosting.LabelHCDNamespace], hc.GetLabels()[hosting.LabelHCDName]
		name := hosting.ExportedKubeconfigName(hcdNamespace, hcdName)
		err := hub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
			return fmt.Errorf("deleting exported kubeconfig %s/%s on the hub: %w", ns, name, err)
		}
	}
	return nil
}
