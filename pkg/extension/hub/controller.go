package hub

import (
	"context"
	"fmt"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// Finalizer keeps a HostedClusterExtension until its ManifestWorks are gone,
// that is until the agents tore the extension down everywhere (or its hosted
// clusters went away).
const Finalizer = "hcpfleet.io/extension-rollout"

var workWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "hcpfleet_hub_extension_work_writes_total",
	Help: "ManifestWork creates, updates and deletes by the HostedClusterExtension rollout."}, []string{"verb"})

func init() { metrics.Registry.MustRegister(workWrites) }

// Reconciler rolls HostedClusterExtensions out.
type Reconciler struct {
	client client.Client
	// reader reads the API server itself, for the confirmation that no
	// work is left before the finalizer goes.
	reader client.Reader
}

// Setup registers the rollout with mgr.
func Setup(mgr ctrl.Manager) error {
	r := &Reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader()}
	return ctrl.NewControllerManagedBy(mgr).
		Named("extension-rollout").
		For(&v1alpha1.HostedClusterExtension{}).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(workOwner)).
		// Its revisions: one deleted by someone else is made again.
		Owns(&appsv1.ControllerRevision{}).
		// Selection, availability and deletion of hosted clusters.
		Watches(&v1alpha1.HostedClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(r.inNamespace)).
		Complete(r)
}

func workOwner(_ context.Context, o client.Object) []reconcile.Request {
	l := o.GetLabels()
	if l[extension.LabelExtension] == "" || l[hosting.LabelHCDNamespace] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: l[hosting.LabelHCDNamespace], Name: l[extension.LabelExtension]}}}
}

func (r *Reconciler) inNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.HostedClusterExtensionList
	if err := r.client.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing HostedClusterExtensions", "namespace", o.GetNamespace())
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// Reconcile rolls one extension out.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ext := &v1alpha1.HostedClusterExtension{}
	if err := r.client.Get(ctx, req.NamespacedName, ext); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	works, err := r.works(ctx, ext)
	if err != nil {
		return ctrl.Result{}, err
	}
	if ext.DeletionTimestamp != nil {
		return ctrl.Result{}, r.remove(ctx, ext, works)
	}
	if !controllerutil.ContainsFinalizer(ext, Finalizer) {
		if err := kubeutil.AddFinalizer(ctx, r.client, ext, Finalizer); err != nil {
			return ctrl.Result{}, err
		}
	}
	history, err := r.history(ctx, ext)
	if err != nil {
		return ctrl.Result{}, err
	}
	inUse := map[int64]bool{}
	for _, w := range works {
		inUse[Delivered(w)] = true
	}
	plan := PlanHistory(ext, history, inUse)
	var problems []string
	if plan.Problem != "" {
		problems = append(problems, plan.Problem)
	}
	for _, p := range extension.Validate(plan.Current.Template.Phases) {
		problems = append(problems, p.Error())
	}
	problems = append(problems, extension.ProbeProblems(plan.Current.Template.AvailabilityProbes)...)
	if len(problems) > 0 && plan.Create {
		// Nothing new is made of a template that cannot be delivered: the
		// newest kept revision stays the current one.
		plan = keepHistory(history)
	}
	selector, err := metav1.LabelSelectorAsSelector(&ext.Spec.HostedClusterSelector)
	if err != nil {
		problems = append(problems, "spec.hostedClusterSelector: "+err.Error())
		selector = labels.Nothing()
	}
	var hcds v1alpha1.HostedClusterDeploymentList
	if err := r.client.List(ctx, &hcds, client.InNamespace(ext.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	paused := ext.Spec.Strategy.Paused
	selected := map[string]*v1alpha1.HostedClusterDeployment{}
	// kept: hosted clusters whose work stays though they are not selected
	// (any more): a paused rollout removes nothing from a hosted cluster
	// that still exists.
	kept := map[string]bool{}
	var targets []extension.Target
	for i := range hcds.Items {
		hcd := &hcds.Items[i]
		if hcd.DeletionTimestamp != nil {
			continue // removed below: its hosted cluster is going away
		}
		w := works[hcd.Name]
		if !selector.Matches(labels.Set(hcd.Labels)) {
			kept[hcd.Name] = paused && w != nil && hcd.Status.HostingCluster == w.Namespace
			continue
		}
		selected[hcd.Name] = hcd
		s := HostedClusterStatus(hcd.Name, w)
		targets = append(targets, extension.Target{Name: hcd.Name, Ready: ready(hcd), Delivered: Delivered(w), Observed: s.ObservedRevision, State: s.State})
	}
	var errs []error
	if len(problems) == 0 {
		if plan.Create {
			if err := r.createRevision(ctx, ext, plan); err != nil {
				return ctrl.Result{}, err
			}
		}
		revisions := map[int64]Revision{plan.Current.Number: plan.Current}
		for _, a := range plan.Archived {
			revisions[a.Number] = a
		}
		deliver := extension.Rollout(ext.Spec.Strategy, plan.Current.Number, targets)
		for name, hcd := range selected {
			// Delivered the current revision, or kept at the one it has:
			// rendered again at that revision, so that a pause (and its
			// end) reaches every hosted cluster, whichever revision it runs.
			rev, ok := plan.Current, deliver[name]
			if !ok && works[name] != nil {
				rev, ok = revisions[Delivered(works[name])]
			}
			if !ok {
				continue // nothing yet, or a revision from before the history
			}
			w, err := r.deliver(ctx, ext, rev, hcd, works[name])
			if err != nil {
				errs = append(errs, err)
				continue
			}
			works[name] = w
		}
		for _, name := range plan.Prune {
			if err := r.client.Delete(ctx, &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ext.Namespace, Name: name}}); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("pruning ControllerRevision %s/%s: %w", ext.Namespace, name, err))
			}
		}
	}
	// Works of hosted clusters no longer selected, being deleted, or moved.
	for name, w := range works {
		hcd := selected[name]
		if hcd != nil && hcd.Status.HostingCluster == w.Namespace || kept[name] {
			continue
		}
		if err := r.deleteWork(ctx, w); err != nil {
			errs = append(errs, err)
		}
	}
	statuses := make([]v1alpha1.ExtensionHostedClusterStatus, 0, len(selected))
	var removing []v1alpha1.ExtensionHostedClusterStatus
	for name, w := range works {
		if selected[name] == nil || selected[name].Status.HostingCluster != w.Namespace {
			removing = append(removing, HostedClusterStatus(name, w))
		}
	}
	for name := range selected {
		statuses = append(statuses, HostedClusterStatus(name, works[name]))
	}
	summary := Summarize(plan.Current.Number, statuses, problems)
	if paused {
		summary.Pause(plan.Current.Number, statuses)
	}
	if err := r.applyStatus(ctx, ext, summary, plan.Current, revisionsStatus(plan, statuses), append(statuses, removing...)); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return ctrl.Result{}, errs[0]
	}
	return ctrl.Result{}, nil
}

// ready: the hosted cluster is available (its control-plane namespace and
// the service-network kubeconfig exist) on its management cluster.
func ready(hcd *v1alpha1.HostedClusterDeployment) bool {
	return hcd.DeletionTimestamp == nil && hcd.Status.HostingCluster != "" &&
		meta.IsStatusConditionTrue(hcd.Status.Conditions, v1alpha1.ConditionAvailable)
}

// works are ext's ManifestWorks by HostedClusterDeployment name.
func (r *Reconciler) works(ctx context.Context, ext *v1alpha1.HostedClusterExtension) (map[string]*workv1.ManifestWork, error) {
	var list workv1.ManifestWorkList
	if err := r.client.List(ctx, &list, client.MatchingLabels{extension.LabelExtension: ext.Name, hosting.LabelHCDNamespace: ext.Namespace}); err != nil {
		return nil, err
	}
	out := map[string]*workv1.ManifestWork{}
	for i := range list.Items {
		w := &list.Items[i]
		out[w.Labels[hosting.LabelHCDName]] = w
	}
	return out, nil
}

// deliver creates or updates the work carrying revision rev of ext to hcd.
func (r *Reconciler) deliver(ctx context.Context, ext *v1alpha1.HostedClusterExtension, rev Revision, hcd *v1alpha1.HostedClusterDeployment, existing *workv1.ManifestWork) (*workv1.ManifestWork, error) {
	if existing != nil && existing.DeletionTimestamp != nil {
		return existing, nil // a removal finishes first; the next reconcile delivers again
	}
	agentNamespace, err := addon.InstallNamespaceOf(ctx, r.client, hcd.Status.HostingCluster)
	if err != nil {
		return nil, err
	}
	desired, err := Render(ext, rev, Target{Name: hcd.Name, HostingCluster: hcd.Status.HostingCluster,
		ControlPlaneNamespace: extension.ControlPlaneNamespace(scheduling.RequestFor(hcd).HostingNamespace, hcd.Name),
		AgentNamespace:        agentNamespace})
	if err != nil {
		return nil, err
	}
	if existing == nil {
		if err := r.client.Create(ctx, desired); err != nil {
			return nil, fmt.Errorf("creating ManifestWork %s/%s: %w", desired.Namespace, desired.Name, err)
		}
		workWrites.WithLabelValues("create").Inc()
		return desired, nil
	}
	if existing.Annotations[AnnotationRenderHash] == desired.Annotations[AnnotationRenderHash] && equality.Semantic.DeepEqual(existing.Labels, desired.Labels) &&
		existing.Annotations[AnnotationRevision] == desired.Annotations[AnnotationRevision] {
		return existing, nil
	}
	updated := existing.DeepCopy()
	updated.Labels, updated.Annotations, updated.Spec = desired.Labels, desired.Annotations, desired.Spec
	if err := r.client.Update(ctx, updated); err != nil {
		return nil, fmt.Errorf("updating ManifestWork %s/%s: %w", updated.Namespace, updated.Name, err)
	}
	workWrites.WithLabelValues("update").Inc()
	return updated, nil
}

func (r *Reconciler) deleteWork(ctx context.Context, w *workv1.ManifestWork) error {
	if w.DeletionTimestamp != nil {
		return nil
	}
	if err := r.client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting ManifestWork %s/%s: %w", w.Namespace, w.Name, err)
	}
	workWrites.WithLabelValues("delete").Inc()
	return nil
}

// remove deletes every work of ext and lets ext go once they are gone.
func (r *Reconciler) remove(ctx context.Context, ext *v1alpha1.HostedClusterExtension, works map[string]*workv1.ManifestWork) error {
	if !controllerutil.ContainsFinalizer(ext, Finalizer) {
		return nil
	}
	if len(works) == 0 {
		// The cache may lag a work created moments ago: ask the API server.
		var live workv1.ManifestWorkList
		if err := r.reader.List(ctx, &live, client.MatchingLabels{extension.LabelExtension: ext.Name, hosting.LabelHCDNamespace: ext.Namespace}); err != nil {
			return err
		}
		if len(live.Items) == 0 {
			return client.IgnoreNotFound(kubeutil.RemoveFinalizer(ctx, r.client, ext, Finalizer))
		}
	}
	var statuses []v1alpha1.ExtensionHostedClusterStatus
	for name, w := range works {
		if err := r.deleteWork(ctx, w); err != nil {
			return err
		}
		s := HostedClusterStatus(name, w)
		s.State = v1alpha1.ExtensionStateRemoving
		statuses = append(statuses, s)
	}
	msg := fmt.Sprintf("removing the extension from %d hosted clusters, in reverse phase order", len(works))
	summary := Summary{Conditions: []metav1.Condition{
		{Type: ConditionAvailable, Status: metav1.ConditionFalse, Reason: ReasonRemoving, Message: msg},
		{Type: ConditionProgressing, Status: metav1.ConditionTrue, Reason: ReasonRemoving, Message: msg},
		removalDegraded(statuses),
	}}
	return r.applyStatus(ctx, ext, summary, Revision{Number: ext.Status.Revision, Name: ext.Status.ControllerRevision}, ext.Status.ArchivedRevisions, statuses)
}

// applyStatus server-side applies ext's status when it changed.
func (r *Reconciler) applyStatus(ctx context.Context, ext *v1alpha1.HostedClusterExtension, s Summary, current Revision, archived []v1alpha1.ExtensionRevision,
	hcs []v1alpha1.ExtensionHostedClusterStatus) error {
	sort.Slice(hcs, func(i, j int) bool { return hcs[i].Name < hcs[j].Name })
	now := metav1.Now()
	previous := map[string]v1alpha1.ExtensionHostedClusterStatus{}
	for _, h := range ext.Status.HostedClusters {
		previous[h.Name] = h
	}
	for i := range hcs {
		p, ok := previous[hcs[i].Name]
		if ok && p.State == hcs[i].State && p.LastTransitionTime != nil {
			hcs[i].LastTransitionTime = p.LastTransitionTime
		} else {
			hcs[i].LastTransitionTime = &now
		}
	}
	conditions := append([]metav1.Condition(nil), ext.Status.Conditions...)
	for _, c := range s.Conditions {
		c.ObservedGeneration = ext.Generation
		c.Message = kubeutil.ConditionMessage(c.Message)
		meta.SetStatusCondition(&conditions, c)
	}
	status := v1alpha1.HostedClusterExtensionStatus{ObservedGeneration: ext.Generation, Revision: current.Number, ControllerRevision: current.Name,
		ArchivedRevisions: archived, Conditions: conditions, Selected: s.Selected, Updated: s.Updated, Available: s.Available, Failed: s.Failed, HostedClusters: hcs}
	if len(hcs) == 0 {
		status.HostedClusters = nil
	}
	if equality.Semantic.DeepEqual(withoutTimes(ext.Status), withoutTimes(status)) {
		return nil
	}
	body := map[string]any{"apiVersion": v1alpha1.GroupVersion.String(), "kind": v1alpha1.HostedClusterExtensionKind,
		"metadata": map[string]any{"name": ext.Name, "namespace": ext.Namespace}, "status": status}
	target, patch, err := kubeutil.ApplyPatch(body)
	if err != nil {
		return err
	}
	err = r.client.Status().Patch(ctx, target, patch, client.FieldOwner(FieldManager), client.ForceOwnership)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// withoutTimes compares statuses regardless of transition times.
func withoutTimes(s v1alpha1.HostedClusterExtensionStatus) v1alpha1.HostedClusterExtensionStatus {
	s = *s.DeepCopy()
	for i := range s.Conditions {
		s.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	for i := range s.HostedClusters {
		s.HostedClusters[i].LastTransitionTime = nil
	}
	return s
}

// history is ext's revisions: the ControllerRevisions it controls (a
// ControllerRevision merely labelled for it is not its history).
func (r *Reconciler) history(ctx context.Context, ext *v1alpha1.HostedClusterExtension) ([]Revision, error) {
	var list appsv1.ControllerRevisionList
	if err := r.client.List(ctx, &list, client.InNamespace(ext.Namespace), client.MatchingLabels{extension.LabelExtension: ext.Name}); err != nil {
		return nil, err
	}
	var out []Revision
	for i := range list.Items {
		cr := &list.Items[i]
		if !metav1.IsControlledBy(cr, ext) || cr.DeletionTimestamp != nil {
			continue
		}
		rev, err := revisionOf(cr)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "ignoring a revision", "controllerRevision", cr.Name)
			continue
		}
		out = append(out, rev)
	}
	return out, nil
}

// createRevision makes plan's current revision. One the cache did not show
// yet is taken when it is the same revision of the same extension.
func (r *Reconciler) createRevision(ctx context.Context, ext *v1alpha1.HostedClusterExtension, plan HistoryPlan) error {
	cr, err := newControllerRevision(ext, plan.Current.Number, plan.Current.Template, plan.RollbackOf)
	if err != nil {
		return err
	}
	err = r.client.Create(ctx, cr)
	if apierrors.IsAlreadyExists(err) {
		live := &appsv1.ControllerRevision{}
		if err := r.reader.Get(ctx, client.ObjectKeyFromObject(cr), live); err != nil {
			return err
		}
		if metav1.IsControlledBy(live, ext) && live.Annotations[AnnotationTemplateHash] == cr.Annotations[AnnotationTemplateHash] {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("creating ControllerRevision %s/%s: %w", cr.Namespace, cr.Name, err)
	}
	return nil
}
