// Package importer is the hub's import of hosted clusters: once a
// HostedClusterDeployment's hosted cluster is Available on its hosting
// cluster, it is represented on the hub by a ManagedCluster of the same name
// (hosted klusterlet mode, as ACM imports HyperShift clusters), and its admin
// kubeconfig, exported by the agent into the hosting cluster's namespace, is
// mirrored into the HostedClusterDeployment's namespace. Both go when the
// HostedClusterDeployment goes (finalizer hcpfleet.io/import). The
// ManagedCluster carries only the HostedClusterDeployment's labels the fleet
// admin allows (LabelPolicy; reserved keys never), and the Imported
// condition names the keys left out. A name whose hub namespace exists and
// is not a cluster namespace (another tenant's, say) is not imported at all:
// OCM would take that namespace as the cluster's (the hub reads namespaces
// for this: get only). The import can be turned off for the hub, a
// management cluster or one HostedClusterDeployment (optout.go), and where
// the hub serves ACM's KlusterletAddonConfig each imported cluster gets one
// (klusterletaddonconfig.go).
//
// It owns, on the HostedClusterDeployment, only status.managedCluster,
// status.kubeconfigSecret and the Imported condition, written with
// server-side apply under its own field manager, and its finalizer; the
// scheduler and delivery own the rest. One state of Imported is the
// delivery's to write first: WaitingForAvailable, from the binding until the
// import starts, which the delivery's status carries (the binding writes it,
// so the import has nothing to write while it waits); the import takes the
// condition over with its next state.
package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	hcdac "github.com/hcp-fleet/hcp-fleet/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

const (
	// FieldManager owns the import's status fields and the objects it
	// applies (ManagedCluster, mirrored Secret).
	FieldManager = "hcp-fleet-import"
	// Finalizer keeps an imported HostedClusterDeployment until its
	// ManagedCluster and mirrored kubeconfig are deleted.
	Finalizer = "hcpfleet.io/import"

	// managedClusterGonePoll rechecks a ManagedCluster being finalized.
	managedClusterGonePoll = 10 * time.Second
	// namespaceTakenPoll rechecks a refused import whose hub namespace is
	// someone else's (namespaces are not watched).
	namespaceTakenPoll = time.Minute
)

// Annotations ACM's import controller reads on a ManagedCluster to import a
// HyperShift hosted cluster in hosted klusterlet mode (the klusterlet runs on
// the hosting cluster), as the ACM hypershift-addon sets them.
const (
	AnnotationKlusterletDeployMode = "import.open-cluster-management.io/klusterlet-deploy-mode"
	AnnotationHostingClusterName   = "import.open-cluster-management.io/hosting-cluster-name"
	AnnotationCreatedVia           = "open-cluster-management/created-via"
	// CreatedViaHyperShift is the created-via value of hosted clusters.
	CreatedViaHyperShift = "hypershift"
)

// Options configure the import.
type Options struct {
	// Labels says which labels of a HostedClusterDeployment its
	// ManagedCluster carries (the zero value: none); reserved keys never.
	Labels LabelPolicy
	// NamePrefix starts the name of every ManagedCluster the hub imports
	// (--imported-cluster-name-prefix), so that a tenant cannot choose the
	// name of a cluster the admin has or will have: OCM makes that name a
	// hub namespace, and ManifestWorks, Policies and add-ons an admin aims
	// at it by name would reach the tenant's cluster.
	NamePrefix string
	// Disabled turns the import off for the whole hub
	// (--import-hosted-clusters=false, see optout.go).
	Disabled bool
	// ConfigNamespaces are where the HostingConfigs of management clusters
	// are taken from (their spec.hostedClusterImport).
	ConfigNamespaces hostmodel.ConfigNamespaces
	// KlusterletAddons are the add-ons the KlusterletAddonConfig of each
	// imported cluster enables (ParseKlusterletAddons), where the hub
	// serves that API.
	KlusterletAddons []string
	// KlusterletAddonConfigRecheck is how often a hub without
	// KlusterletAddonConfig looks for it again (0:
	// DefaultKlusterletAddonConfigRecheck).
	KlusterletAddonConfigRecheck time.Duration
}

// ClusterName is the name of hcd's ManagedCluster: the one its status
// records once it was imported (the admin's prefix may have changed since,
// and an imported cluster is never renamed), else prefix + its name.
func ClusterName(hcd *v1alpha1.HostedClusterDeployment, prefix string) string {
	if hcd.Status.ManagedCluster != "" {
		return hcd.Status.ManagedCluster
	}
	return prefix + hcd.Name
}

// Reconciler imports HostedClusterDeployments.
type Reconciler struct {
	client client.Client
	labels LabelPolicy
	prefix string
	// secrets reads only Secrets labelled hcpfleet.io/admin-kubeconfig (the
	// exported and mirrored kubeconfigs), from a cache of its own, so the
	// hub does not cache every Secret of the hub.
	secrets client.Reader
	// namespaces reads hub namespaces one at a time, uncached (get only).
	namespaces client.Reader
	recorder   record.EventRecorder

	hubDisabled      bool
	configNamespaces hostmodel.ConfigNamespaces
	policies         *tenancy.Resolver
	klusterletAddons []string
	addonConfigs     *addonConfigAPI
}

// imports counts import outcomes (transitions of the Imported condition
// into Imported or ImportFailed).
var imports = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "hcpfleet_hub_imports_total", Help: "Hosted clusters imported as ManagedClusters (result=imported) or refused (result=failed)."}, []string{"result"})

func init() { metrics.Registry.MustRegister(imports) }

// Setup registers the import controller with the hub manager.
func Setup(mgr ctrl.Manager, opts Options) error {
	adminKubeconfig, err := labels.NewRequirement(hosting.LabelAdminKubeconfig, selection.Equals, []string{"true"})
	if err != nil {
		return err
	}
	secrets, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: labels.NewSelector().Add(*adminKubeconfig)}},
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(secrets); err != nil {
		return err
	}
	r := &Reconciler{client: mgr.GetClient(), labels: opts.Labels, prefix: opts.NamePrefix, secrets: secrets, namespaces: mgr.GetAPIReader(), recorder: mgr.GetEventRecorderFor(hcdstatus.EventSource),
		hubDisabled: opts.Disabled, configNamespaces: opts.ConfigNamespaces, policies: &tenancy.Resolver{Reader: mgr.GetClient()},
		klusterletAddons: opts.KlusterletAddons}
	recheck := opts.KlusterletAddonConfigRecheck
	if recheck <= 0 {
		recheck = DefaultKlusterletAddonConfigRecheck
	}
	disco, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	r.addonConfigs = &addonConfigAPI{discovery: disco, informers: mgr.GetCache(), reader: mgr.GetClient(), recheck: recheck, events: make(chan event.GenericEvent)}
	if err := mgr.Add(r.addonConfigs); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("hcd-import").
		For(&v1alpha1.HostedClusterDeployment{}).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(hcdFromLabels)).
		WatchesRawSource(source.Kind(secrets, client.Object(&corev1.Secret{}), handler.EnqueueRequestsFromMapFunc(hcdFromLabels))).
		// What turns the import off or on again (optout.go).
		Watches(&addonv1alpha1.ManagedClusterAddOn{}, handler.EnqueueRequestsFromMapFunc(boundToCluster(mgr.GetClient()))).
		Watches(&v1alpha1.HostingConfig{}, handler.EnqueueRequestsFromMapFunc(configuredBy(mgr.GetClient()))).
		Watches(&v1alpha1.TenantPolicy{}, handler.EnqueueRequestsFromMapFunc(tenancy.Governed(mgr.GetClient())), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesMetadata(tenancy.NamespaceMetadata(), handler.EnqueueRequestsFromMapFunc(tenancy.Governed(mgr.GetClient())), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		// The hub starts serving KlusterletAddonConfig (ACM installed).
		WatchesRawSource(source.Channel(r.addonConfigs.events, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// hcdFromLabels maps an object carrying the hcd labels to its
// HostedClusterDeployment.
func hcdFromLabels(_ context.Context, obj client.Object) []reconcile.Request {
	ns, name := obj.GetLabels()[hosting.LabelHCDNamespace], obj.GetLabels()[hosting.LabelHCDName]
	if ns == "" || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// Reconcile imports one HostedClusterDeployment, or cleans up after it.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	hcd := &v1alpha1.HostedClusterDeployment{} // read only: never written back
	if err := r.client.Get(ctx, req.NamespacedName, hcd); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if hcd.DeletionTimestamp != nil {
		return r.cleanUp(ctx, hcd)
	}
	imported := controllerutil.ContainsFinalizer(hcd, Finalizer)
	host := hcd.Status.HostingCluster
	available := meta.IsStatusConditionTrue(hcd.Status.Conditions, v1alpha1.ConditionAvailable)
	if !imported && host == "" {
		// Nothing to say before the binding (Scheduled says why it waits):
		// a condition written now would be written again, naming the host,
		// right after the binding, once more per HostedClusterDeployment in
		// a burst.
		return reconcile.Result{}, nil
	}
	if !imported && !available {
		if c := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionImported); c == nil || c.Reason == v1alpha1.ReasonWaitingForAvailable {
			// The delivery's status carries WaitingForAvailable from the
			// binding on (the binding itself writes it, see
			// delivery.BindingStatus) and keeps it current (its message, its
			// observedGeneration) until the import writes its next state:
			// one writer of this state, no write of the import's own per
			// hosted cluster, one event.
			return reconcile.Result{}, nil
		}
		// Over a state of the import's own (an import refused, then the
		// hosted cluster went unavailable): the delivery leaves those alone.
		return reconcile.Result{}, r.applyStatus(ctx, hcd, importStatus{condition: hcdstatus.WaitingForAvailable(host)})
	}

	off, err := r.importOff(ctx, hcd)
	if err != nil {
		return reconcile.Result{}, err
	}
	if off != "" {
		keep, res, err := r.notImported(ctx, hcd, off)
		if !keep || err != nil {
			return res, err
		}
	}
	name := ClusterName(hcd, r.prefix)
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		return reconcile.Result{}, r.applyStatus(ctx, hcd, importStatus{condition: metav1.Condition{
			Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonImportFailed,
			Message: fmt.Sprintf("the ManagedCluster name %s (--imported-cluster-name-prefix %q and the HostedClusterDeployment's name) is not a valid cluster name: %s",
				name, r.prefix, strings.Join(msgs, "; "))}})
	}
	mc := &clusterv1.ManagedCluster{}
	err = r.client.Get(ctx, types.NamespacedName{Name: name}, mc)
	if client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	}
	mcFound := err == nil
	if mcFound && !ours(mc, hcd) {
		return reconcile.Result{}, r.applyStatus(ctx, hcd, importStatus{condition: metav1.Condition{
			Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonImportFailed,
			Message: fmt.Sprintf("ManagedCluster %s already exists and does not belong to this HostedClusterDeployment (it lacks the labels %s=%s, %s=%s); rename one of them",
				name, hosting.LabelHCDNamespace, hcd.Namespace, hosting.LabelHCDName, hcd.Name)}})
	}
	if apierrors.IsNotFound(err) {
		taken, err := r.namespaceTaken(ctx, name)
		if err != nil {
			return reconcile.Result{}, err
		}
		if taken != "" {
			return reconcile.Result{RequeueAfter: namespaceTakenPoll}, r.applyStatus(ctx, hcd, importStatus{condition: metav1.Condition{
				Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonImportFailed, Message: taken}})
		}
	}
	if !imported {
		// The finalizer first, so nothing created below can be orphaned.
		if err := kubeutil.AddFinalizer(ctx, r.client, hcd, Finalizer); err != nil {
			return reconcile.Result{}, err
		}
	}
	if host == "" {
		// Cannot happen once imported (hostingCluster is set once), but
		// never apply an empty hosting-cluster annotation.
		return reconcile.Result{}, r.applyStatus(ctx, hcd, importStatus{condition: hcdstatus.WaitingForAvailable(host)})
	}
	// Tenants write HostedClusterDeployments; the ManagedCluster is
	// cluster-scoped and written with the hub's identity, so it carries only
	// the labels the fleet admin allows, and the tenant is told which keys
	// were left out.
	copied, dropped := r.labels.Filter(hcd.Labels)
	// Applied only when the cached ManagedCluster differs: every status
	// change of the HostedClusterDeployment and of the ManagedCluster comes
	// here, and an apply that changes nothing is still a request.
	if !mcFound || !ManagedClusterUpToDate(mc, DesiredManagedCluster(hcd, name, host, copied)) {
		if mc, err = r.applyManagedCluster(ctx, hcd, name, host, copied); err != nil {
			return reconcile.Result{}, err
		}
	}
	retry, err := r.ensureKlusterletAddonConfig(ctx, hcd, mc)
	if err != nil {
		return reconcile.Result{}, err
	}
	note := droppedMessage(dropped) + keptNote(off)
	status := importStatus{managedCluster: name}
	mirrored, err := r.mirrorKubeconfig(ctx, hcd, host)
	if err != nil {
		return reconcile.Result{}, err
	}
	if mirrored {
		status.kubeconfigSecret = hosting.AdminKubeconfigName(hcd.Name)
		status.condition = metav1.Condition{Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonImported,
			Message: fmt.Sprintf("ManagedCluster %s (hosted mode on %s) exists and the admin kubeconfig is in Secret %s%s", name, host, status.kubeconfigSecret, note)}
	} else {
		status.condition = metav1.Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonWaitingForKubeconfig,
			Message: fmt.Sprintf("ManagedCluster %s exists; waiting for the agent on %s to export the admin kubeconfig (Secret %s/%s)%s",
				name, host, host, hosting.ExportedKubeconfigName(hcd.Namespace, hcd.Name), note)}
	}
	return reconcile.Result{RequeueAfter: retry}, r.applyStatus(ctx, hcd, status)
}

// namespaceTaken says why a ManagedCluster named name must not be created,
// or "": OCM makes the hub namespace of a ManagedCluster's name its cluster
// namespace (labels it, binds the cluster's agents there, deletes the
// ManifestWorks and ManagedClusterAddOns in it when the cluster goes). A
// namespace of that name that exists and is not already the cluster
// namespace of a ManagedCluster of that name (OCM keeps them after the
// cluster is gone) is someone else's: another tenant's, the tenant's own,
// the hub's.
func (r *Reconciler) namespaceTaken(ctx context.Context, name string) (string, error) {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := r.namespaces.Get(ctx, types.NamespacedName{Name: name}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("reading namespace %s: %w", name, err)
	}
	if ns.Labels[clusterv1.ClusterNameLabelKey] == name {
		return "", nil
	}
	return fmt.Sprintf("not imported: namespace %s exists on the hub and is not a cluster namespace, and a ManagedCluster %s would make OCM take it as its cluster namespace; rename the HostedClusterDeployment",
		name, name), nil
}

// ours: the ManagedCluster was created for this HostedClusterDeployment.
func ours(obj metav1.Object, hcd *v1alpha1.HostedClusterDeployment) bool {
	return obj.GetLabels()[hosting.LabelHCDNamespace] == hcd.Namespace && obj.GetLabels()[hosting.LabelHCDName] == hcd.Name
}

func ownLabels(hcd *v1alpha1.HostedClusterDeployment) map[string]string {
	return map[string]string{hosting.LabelHCDNamespace: hcd.Namespace, hosting.LabelHCDName: hcd.Name}
}

// mirrorKubeconfig copies the exported kubeconfig into the
// HostedClusterDeployment's namespace; without one, any stale mirror goes.
func (r *Reconciler) mirrorKubeconfig(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, host string) (bool, error) {
	exported := &corev1.Secret{}
	err := r.secrets.Get(ctx, types.NamespacedName{Namespace: host, Name: hosting.ExportedKubeconfigName(hcd.Namespace, hcd.Name)}, exported)
	if apierrors.IsNotFound(err) || (err == nil && len(exported.Data[hosting.KubeconfigKey]) == 0) {
		return false, r.deleteMirror(ctx, hcd)
	}
	if err != nil {
		return false, err
	}
	lbls := ownLabels(hcd)
	lbls[hosting.LabelAdminKubeconfig] = "true"
	mirror := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{
			"name": hosting.AdminKubeconfigName(hcd.Name), "namespace": hcd.Namespace, "labels": lbls,
			"ownerReferences": []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "HostedClusterDeployment",
				Name: hcd.Name, UID: hcd.UID, Controller: ptr.To(true)}},
		},
		"type": string(corev1.SecretTypeOpaque),
		"data": map[string][]byte{hosting.KubeconfigKey: exported.Data[hosting.KubeconfigKey]},
	}
	live := &corev1.Secret{}
	err = r.secrets.Get(ctx, types.NamespacedName{Namespace: hcd.Namespace, Name: hosting.AdminKubeconfigName(hcd.Name)}, live)
	// Owned by this very HostedClusterDeployment: one restored from a
	// backup has another UID, and the garbage collector would delete a
	// mirror still owned by the earlier one.
	if err == nil && string(live.Data[hosting.KubeconfigKey]) == string(exported.Data[hosting.KubeconfigKey]) && ours(live, hcd) &&
		slices.ContainsFunc(live.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == hcd.UID }) {
		return true, nil // up to date: no write
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hcd.Namespace, Name: hosting.AdminKubeconfigName(hcd.Name)}}
	if err := apply(ctx, r.client, secret, mirror); err != nil {
		return false, fmt.Errorf("mirroring the admin kubeconfig into Secret %s/%s: %w", hcd.Namespace, secret.Name, err)
	}
	return true, nil
}

func (r *Reconciler) deleteMirror(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) error {
	live := &corev1.Secret{}
	err := r.secrets.Get(ctx, types.NamespacedName{Namespace: hcd.Namespace, Name: hosting.AdminKubeconfigName(hcd.Name)}, live)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !ours(live, hcd) {
		return nil
	}
	return client.IgnoreNotFound(r.client.Delete(ctx, live))
}

// cleanUp deletes the ManagedCluster and the mirrored kubeconfig of a
// HostedClusterDeployment being deleted, and lets it go only once the
// ManagedCluster is really gone: the registration hub finalizes a
// ManagedCluster (RBAC, cluster namespace), and a user who sees the HCD gone
// must not find its ManagedCluster still there, nor a new HCD of the same
// name collide with it.
func (r *Reconciler) cleanUp(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(hcd, Finalizer) {
		return reconcile.Result{}, nil
	}
	if err := r.deleteMirror(ctx, hcd); err != nil {
		return reconcile.Result{}, fmt.Errorf("deleting the mirrored kubeconfig %s/%s: %w", hcd.Namespace, hosting.AdminKubeconfigName(hcd.Name), err)
	}
	name := ClusterName(hcd, r.prefix)
	mc := &clusterv1.ManagedCluster{}
	err := r.client.Get(ctx, types.NamespacedName{Name: name}, mc)
	switch {
	case err == nil && ours(mc, hcd):
		if mc.DeletionTimestamp == nil {
			if err := r.client.Delete(ctx, mc); client.IgnoreNotFound(err) != nil {
				return reconcile.Result{}, fmt.Errorf("deleting ManagedCluster %s: %w", name, err)
			}
		}
		// The ManagedCluster's deletion event requeues; the period is a
		// backstop only.
		return reconcile.Result{RequeueAfter: managedClusterGonePoll}, client.IgnoreNotFound(r.applyStatus(ctx, hcd, importStatus{
			managedCluster: name,
			condition: metav1.Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonDeleting,
				Message: fmt.Sprintf("waiting for ManagedCluster %s to be deleted (finalizers: %v)", name, mc.Finalizers)}}))
	case client.IgnoreNotFound(err) != nil:
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, client.IgnoreNotFound(kubeutil.RemoveFinalizer(ctx, r.client, hcd, Finalizer))
}

// importStatus is what the import owns of the status.
type importStatus struct {
	managedCluster   string
	kubeconfigSecret string
	condition        metav1.Condition // Type is set by applyStatus
}

// applyStatus server-side applies the import's status fields; fields not in
// the apply (a managedCluster no longer ours) are released. Nothing is sent
// when they already hold these values.
func (r *Reconciler) applyStatus(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, s importStatus) error {
	cond := s.condition
	cond.Type = v1alpha1.ConditionImported
	conds, changed := hcdstatus.Conditions(hcd.Status.Conditions, []metav1.Condition{cond}, hcd.Generation, metav1.Now())
	liveSecret := ""
	if hcd.Status.KubeconfigSecret != nil {
		liveSecret = hcd.Status.KubeconfigSecret.Name
	}
	if !changed && hcd.Status.ManagedCluster == s.managedCluster && liveSecret == s.kubeconfigSecret {
		return nil
	}
	status := hcdac.HostedClusterDeploymentStatus().WithConditions(hcdstatus.ApplyConditions(conds)...)
	if s.managedCluster != "" {
		status.WithManagedCluster(s.managedCluster)
	}
	if s.kubeconfigSecret != "" {
		status.WithKubeconfigSecret(hcdac.SecretKeyReference().WithName(s.kubeconfigSecret).WithKey(hosting.KubeconfigKey))
	}
	if err := hcdstatus.Apply(ctx, r.client, hcdac.HostedClusterDeployment(hcd.Name, hcd.Namespace).WithStatus(status), FieldManager); err != nil {
		return err
	}
	if old := meta.FindStatusCondition(hcd.Status.Conditions, cond.Type); old == nil || old.Reason != cond.Reason {
		switch cond.Reason {
		case v1alpha1.ReasonImported:
			imports.WithLabelValues("imported").Inc()
		case v1alpha1.ReasonImportFailed:
			imports.WithLabelValues("failed").Inc()
		}
	}
	hcdstatus.RecordTransitions(r.recorder, hcd, hcd.Status.HostingCluster, hcd.Status.Conditions, conds)
	return nil
}

// apply server-side applies obj (a full apply configuration) as the import.
func apply(ctx context.Context, c client.Client, target client.Object, obj map[string]any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return c.Patch(ctx, target, client.RawPatch(types.ApplyPatchType, data), client.FieldOwner(FieldManager), client.ForceOwnership)
}
