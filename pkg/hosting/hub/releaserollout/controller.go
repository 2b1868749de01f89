package releaserollout

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
	olmhub "github.com/hcp-fleet/hcp-fleet/pkg/olm/hub"
)

// FieldManager owns the release fields a rollout moves on each HCD, and the
// rollout's status. Its own manager, so `kubectl get --show-managed-fields`
// says who moved a release, and a tenant's later server-side apply of
// another release conflicts instead of silently undoing the move.
const FieldManager = "hcp-fleet-releaserollout"

// EventSource is the component of the Events the rollout records.
const EventSource = "hcp-fleet-releaserollout"

// Event reasons.
const (
	// EventReleaseMoved: the rollout moved a hosted cluster's release (on
	// the HCD and on the rollout).
	EventReleaseMoved = "ReleaseMoved"
)

var releaseMoves = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "hcpfleet_hub_release_rollout_moves_total",
	Help: "Release edits of HostedClusterDeployments by ReleaseRollouts, by part (control-plane, node-pools)."}, []string{"part"})

func init() { metrics.Registry.MustRegister(releaseMoves) }

// imageSetRecheck is how often a rollout whose release no ClusterImageSet
// names looks again: ClusterImageSets are read live, not watched.
const imageSetRecheck = 30 * time.Second

// Reconciler rolls ReleaseRollouts out.
type Reconciler struct {
	client client.Client
	// reader reads ClusterImageSets live (the hub does not cache them).
	reader   client.Reader
	recorder record.EventRecorder
	// policies are the TenantPolicies governing the rollouts' namespaces:
	// a rollout moves only to a release its namespace's policy allows.
	policies *tenancy.Resolver
	now      func() time.Time
}

// Setup registers the rollout controller with mgr.
func Setup(mgr ctrl.Manager) error {
	r := &Reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(),
		recorder: mgr.GetEventRecorderFor(EventSource), policies: &tenancy.Resolver{Reader: mgr.GetClient()}, now: time.Now}
	return ctrl.NewControllerManagedBy(mgr).
		Named("release-rollout").
		For(&v1alpha1.ReleaseRollout{}).
		// Health, blocks and selection of hosted clusters.
		Watches(&v1alpha1.HostedClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(r.inNamespace)).
		// Claims: another rollout of the namespace finishing (or going)
		// releases the hosted clusters it held.
		Watches(&v1alpha1.ReleaseRollout{}, handler.EnqueueRequestsFromMapFunc(r.inNamespace)).
		// The extensions' health gate between waves.
		Watches(&v1alpha1.HostedClusterExtension{}, handler.EnqueueRequestsFromMapFunc(r.inNamespace)).
		Complete(r)
}

// inNamespace: every rollout of o's namespace, since a label change can
// select or unselect it and claims are decided among them all.
func (r *Reconciler) inNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.ReleaseRolloutList
	if err := r.client.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ReleaseRollouts", "namespace", o.GetNamespace())
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// Reconcile plans one rollout and applies the plan.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rr := &v1alpha1.ReleaseRollout{}
	if err := r.client.Get(ctx, req.NamespacedName, rr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if rr.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // nothing of its own to clean up: moved releases stay
	}
	completedAt := completionTime(rr)
	if !completedAt.IsZero() && !rr.Spec.Release.LatestZStream {
		// Completed for good (Compute): nothing to read, nothing to write.
		return ctrl.Result{}, nil
	}
	in := Input{Spec: rr.Spec, Now: r.now(), CompletedAt: completedAt, Wave: rr.Status.Wave}
	if t := rr.Status.WaveStartTime; t != nil {
		in.WaveStart = t.Time
	}
	selector, err := metav1.LabelSelectorAsSelector(&rr.Spec.HostedClusterSelector)
	if err != nil {
		in.Problem = "spec.hostedClusterSelector: " + err.Error()
		selector = labels.Nothing()
	}
	canaries := labels.Nothing()
	if rr.Spec.CanarySelector != nil {
		if canaries, err = metav1.LabelSelectorAsSelector(rr.Spec.CanarySelector); err != nil && in.Problem == "" {
			in.Problem = "spec.canarySelector: " + err.Error()
		}
	}
	inWindows, problem := windowSelectors(rr.Spec.MaintenanceWindows)
	if in.Problem == "" {
		in.Problem = problem
	}
	var rollouts v1alpha1.ReleaseRolloutList
	if err := r.client.List(ctx, &rollouts, client.InNamespace(rr.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	var extensions v1alpha1.HostedClusterExtensionList
	if err := r.client.List(ctx, &extensions, client.InNamespace(rr.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	notAvailable := extensionsNotAvailable(extensions.Items)
	requeue, err := r.release(ctx, rr, &in)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Plan from the cache; a plan that moves something is made again from
	// the API server itself, since a cache that lags a move made moments
	// ago would count that hosted cluster as pending and let more than
	// maxUnavailable upgrade at once.
	var plan Plan
	var selected map[string]*v1alpha1.HostedClusterDeployment
	for _, reader := range []client.Reader{r.client, r.reader} {
		var hcds v1alpha1.HostedClusterDeploymentList
		if err := reader.List(ctx, &hcds, client.InNamespace(rr.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return ctrl.Result{}, err
		}
		in, selected = observeAll(in, rr, rollouts.Items, canaries, inWindows, hcds.Items)
		for i := range in.HostedClusters {
			in.HostedClusters[i].Extensions = notAvailable[in.HostedClusters[i].Name]
		}
		plan = Compute(in)
		if len(plan.Moves) == 0 {
			break
		}
	}
	if plan.Frozen {
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	var errs []error
	for _, m := range plan.Moves {
		if err := r.move(ctx, rr, selected[m.Name], m); err != nil {
			// Stop: the next pass plans from what is there. The status
			// says the move failed rather than that it happened.
			errs = append(errs, err)
			plan.moveFailed(m.Name, err)
			break
		}
	}
	recordTransitions(r.recorder, rr, &plan, selected)
	if err := r.applyStatus(ctx, rr, &plan); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return ctrl.Result{}, errs[0]
	}
	if plan.Requeue > 0 && (requeue == 0 || plan.Requeue < requeue) {
		requeue = plan.Requeue
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// observeAll fills in's hosted clusters from hcds, the selected ones.
func observeAll(in Input, rr *v1alpha1.ReleaseRollout, rollouts []v1alpha1.ReleaseRollout, canaries labels.Selector,
	windows []labels.Selector, hcds []v1alpha1.HostedClusterDeployment) (Input, map[string]*v1alpha1.HostedClusterDeployment) {
	selected := map[string]*v1alpha1.HostedClusterDeployment{}
	in.HostedClusters = nil
	for i := range hcds {
		h := &hcds[i]
		if h.DeletionTimestamp != nil {
			continue
		}
		selected[h.Name] = h
		hc := Observe(h)
		hc.Canary = canaries != nil && canaries.Matches(labels.Set(h.Labels))
		hc.ClaimedBy, hc.ClaimedWhy = claimant(rr, rollouts, h)
		for i, w := range windows {
			if w.Matches(labels.Set(h.Labels)) {
				hc.Windows = append(hc.Windows, i)
			}
		}
		in.HostedClusters = append(in.HostedClusters, hc)
	}
	if in.Problem == "" && len(in.HostedClusters) == 0 {
		in.Problem = "spec.hostedClusterSelector selects no HostedClusterDeployment in this namespace"
	}
	return in, selected
}

// windowSelectors are the selectors of spec.maintenanceWindows (one
// without a selector selects every hosted cluster), or the problem with one.
func windowSelectors(ws []v1alpha1.SelectedMaintenanceWindow) ([]labels.Selector, string) {
	out := make([]labels.Selector, len(ws))
	for i := range ws {
		out[i] = labels.Everything()
		if ws[i].HostedClusterSelector == nil {
			continue
		}
		s, err := metav1.LabelSelectorAsSelector(ws[i].HostedClusterSelector)
		if err != nil {
			return nil, fmt.Sprintf("spec.maintenanceWindows[%d].hostedClusterSelector: %v", i, err)
		}
		out[i] = s
	}
	return out, ""
}

// Observe is what the planner needs of h.
func Observe(h *v1alpha1.HostedClusterDeployment) HostedCluster {
	conds := h.Status.Conditions
	hc := HostedCluster{Name: h.Name, Release: h.Spec.HostedCluster.Spec.Release.Image,
		Observed:       h.Status.ObservedGeneration == h.Generation,
		Progressing:    meta.IsStatusConditionTrue(conds, v1alpha1.ConditionProgressing),
		Degraded:       meta.IsStatusConditionTrue(conds, v1alpha1.ConditionDegraded),
		NodePoolsReady: meta.IsStatusConditionTrue(conds, v1alpha1.ConditionNodePoolsReady),
	}
	hc.Ready = h.Status.HostingCluster != "" && meta.IsStatusConditionTrue(conds, v1alpha1.ConditionDelivered) &&
		meta.IsStatusConditionTrue(conds, v1alpha1.ConditionAvailable) && !hc.Degraded
	if c := meta.FindStatusCondition(conds, v1alpha1.ConditionUpgradeBlocked); c != nil && c.Status == metav1.ConditionTrue {
		hc.Blocked = c.DeepCopy()
	}
	if v := h.Status.Version; v != nil {
		hc.Current = v.Current
		hc.Available, hc.Conditional = v.AvailableUpdates, v.ConditionalUpdates
		if len(v.History) > 0 {
			hc.Latest = v.History[0].DeepCopy()
		}
	}
	reported := map[string]string{}
	for _, p := range h.Status.NodePools {
		reported[p.Name] = p.Version
	}
	for _, p := range h.Spec.NodePools {
		hc.NodePools = append(hc.NodePools, NodePool{Name: p.Name, Release: p.Spec.Release.Image, Version: reported[p.Name]})
	}
	return hc
}

// extensionsNotAvailable are, per HostedClusterDeployment name, the
// extensions whose state on it is not Available ("name: state"); one being
// removed from it does not hold it.
func extensionsNotAvailable(exts []v1alpha1.HostedClusterExtension) map[string][]string {
	out := map[string][]string{}
	for i := range exts {
		x := &exts[i]
		for _, h := range x.Status.HostedClusters {
			if h.State != v1alpha1.ExtensionStateAvailable && h.State != v1alpha1.ExtensionStateRemoving {
				out[h.Name] = append(out[h.Name], fmt.Sprintf("%s: %s", x.Name, orDefault(string(h.State), "Pending")))
			}
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// claimant is the rollout of the namespace that selects h too, is still
// at work and goes before rr ("" none), and why: a fleet admin's rollout
// (LabelFleetAdminRollout) goes before a tenant's whatever their ages;
// among rollouts of the same kind the oldest goes first. So two rollouts
// never move the same hosted cluster to two releases.
func claimant(rr *v1alpha1.ReleaseRollout, all []v1alpha1.ReleaseRollout, h *v1alpha1.HostedClusterDeployment) (name, why string) {
	mine := isAdmin(rr)
	// A fleet admin's claim is named before an older tenant's: it is the
	// one this rollout really waits for.
	for i := range all {
		o := &all[i]
		if o.UID == rr.UID || o.DeletionTimestamp != nil || o.Spec.Abort || !completionTime(o).IsZero() {
			continue
		}
		theirs := isAdmin(o)
		older := o.CreationTimestamp.Before(&rr.CreationTimestamp) ||
			o.CreationTimestamp.Equal(&rr.CreationTimestamp) && o.Name < rr.Name
		first := theirs && !mine || theirs == mine && older
		if !first {
			continue
		}
		if s, err := metav1.LabelSelectorAsSelector(&o.Spec.HostedClusterSelector); err == nil && s.Matches(labels.Set(h.Labels)) {
			if theirs && !mine {
				return o.Name, "a fleet admin's rollout, which goes before this one"
			}
			if name == "" {
				name, why = o.Name, "older"
			}
		}
	}
	return name, why
}

// completionTime is when rr completed (zero: it has not). A status
// written before status.completionTime existed says it by its
// RolloutCompleted condition only.
func completionTime(rr *v1alpha1.ReleaseRollout) time.Time {
	if t := rr.Status.CompletionTime; t != nil {
		return t.Time
	}
	if c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRolloutCompleted); c != nil && c.Status == metav1.ConditionTrue {
		if c.LastTransitionTime.IsZero() {
			return time.Unix(0, 0).UTC() // completed, when not known
		}
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// isAdmin: rr is a fleet admin's rollout.
func isAdmin(rr *v1alpha1.ReleaseRollout) bool {
	return rr.Labels[v1alpha1.LabelFleetAdminRollout] == "true"
}

// release fills in's Version (one image) or Published (latest z-stream)
// and the problem with the release, if any; it returns when to look again
// although nothing changed (ClusterImageSets are not watched).
func (r *Reconciler) release(ctx context.Context, rr *v1alpha1.ReleaseRollout, in *Input) (time.Duration, error) {
	if in.Problem != "" {
		return 0, nil
	}
	policy, err := r.policies.For(ctx, rr.Namespace)
	if err != nil {
		return 0, err
	}
	if rr.Spec.Release.LatestZStream {
		// A ClusterImageSet published later is a newer z-stream to go to.
		in.Published, err = r.published(ctx, policy.ReleaseAllowed)
		return imageSetRecheck, err
	}
	in.Version, in.Problem, err = r.version(ctx, rr.Spec.Release.Image)
	if err != nil || in.Problem != "" {
		return imageSetRecheck, err
	}
	in.Problem = policy.ReleaseAllowed(rr.Spec.Release.Image)
	return 0, nil
}

// published are the releases the hub's ClusterImageSets publish with a
// version, that allowed lets the namespace run ("" from allowed: allowed).
func (r *Reconciler) published(ctx context.Context, allowed func(image string) string) ([]v1alpha1.ReleaseStatus, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(olmhub.ClusterImageSetGVK.GroupVersion().WithKind("ClusterImageSetList"))
	if err := r.reader.List(ctx, list); err != nil && !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("listing ClusterImageSets: %w", err)
	}
	var out []v1alpha1.ReleaseStatus
	for _, s := range list.Items {
		image, _, _ := unstructured.NestedString(s.Object, "spec", "releaseImage")
		if v, _ := olmhub.ImageSetVersion(list.Items, image); v != "" && allowed(image) == "" {
			out = append(out, v1alpha1.ReleaseStatus{Version: v, Image: image})
		}
	}
	return out, nil
}

// version is image's OpenShift version by the hub's ClusterImageSets, or
// the problem that there is none.
func (r *Reconciler) version(ctx context.Context, image string) (version, problem string, err error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(olmhub.ClusterImageSetGVK.GroupVersion().WithKind("ClusterImageSetList"))
	if err := r.reader.List(ctx, list); err != nil && !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
		return "", "", fmt.Errorf("listing ClusterImageSets: %w", err)
	}
	if v, _ := olmhub.ImageSetVersion(list.Items, image); v != "" {
		return v, "", nil
	}
	return "", fmt.Sprintf("no ClusterImageSet (hive.openshift.io/v1) names the version of %s: publish one whose spec.releaseImage is exactly that image "+
		"and whose name (img<version>-…) or label %s carries its version", image, olmhub.LabelClusterImageSetVersion), nil
}

// move server-side applies m's release fields of h. Every apply carries
// the release of the control plane and of every node pool, the unmoved ones
// at their current value: an apply that left out a field this manager
// applied before (for this rollout or an earlier one) would drop its
// ownership and so delete the field.
func (r *Reconciler) move(ctx context.Context, rr *v1alpha1.ReleaseRollout, h *v1alpha1.HostedClusterDeployment, m Move) error {
	target := m.Image
	release := func(image string) map[string]any { return map[string]any{"release": map[string]any{"image": image}} }
	cp := h.Spec.HostedCluster.Spec.Release.Image
	if m.ControlPlane {
		cp = target
	}
	spec := map[string]any{"hostedCluster": map[string]any{"spec": release(cp)}}
	moving := map[string]bool{}
	for _, n := range m.NodePools {
		moving[n] = true
	}
	var pools []any
	for _, p := range h.Spec.NodePools {
		image := p.Spec.Release.Image
		if moving[p.Name] {
			image = target
		}
		pools = append(pools, map[string]any{"name": p.Name, "spec": release(image)})
	}
	if len(pools) > 0 {
		spec["nodePools"] = pools
	}
	body := map[string]any{"apiVersion": v1alpha1.GroupVersion.String(), "kind": "HostedClusterDeployment",
		"metadata": map[string]any{"name": h.Name, "namespace": h.Namespace, "resourceVersion": h.ResourceVersion}, "spec": spec}
	patchTarget, patch, err := kubeutil.ApplyPatch(body)
	if err != nil {
		return err
	}
	// The resourceVersion makes it a compare-and-swap: the plan was made
	// from that version of the HCD.
	if err := r.client.Patch(ctx, patchTarget, patch, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("moving the release of HostedClusterDeployment %s/%s: %w", h.Namespace, h.Name, err)
	}
	part, what := "control-plane", "control plane"
	if !m.ControlPlane {
		part, what = "node-pools", fmt.Sprintf("node pools %v", m.NodePools)
	}
	releaseMoves.WithLabelValues(part).Inc()
	msg := fmt.Sprintf("ReleaseRollout %s moved the %s of %s to %s", rr.Name, what, h.Name, target)
	r.recorder.Event(h, "Normal", EventReleaseMoved, msg)
	r.recorder.Event(rr, "Normal", EventReleaseMoved, msg)
	return nil
}

// applyStatus server-side applies rr's status when it changed.
func (r *Reconciler) applyStatus(ctx context.Context, rr *v1alpha1.ReleaseRollout, p *Plan) error {
	c := p.Counts()
	conditions := append([]metav1.Condition(nil), rr.Status.Conditions...)
	for _, cond := range []metav1.Condition{p.Progressing, p.Completed} {
		cond.ObservedGeneration = rr.Generation
		cond.Message = kubeutil.ConditionMessage(cond.Message)
		if prev := meta.FindStatusCondition(conditions, cond.Type); prev == nil || prev.Status != cond.Status || prev.Reason != cond.Reason {
			kind := "Normal"
			if cond.Reason == v1alpha1.ReasonRolloutWaveFailed || cond.Reason == v1alpha1.ReasonRolloutInvalid {
				kind = "Warning"
			}
			if cond.Type == v1alpha1.ConditionRolloutProgressing {
				r.recorder.Event(rr, kind, cond.Reason, cond.Message)
			}
		}
		meta.SetStatusCondition(&conditions, cond)
	}
	status := v1alpha1.ReleaseRolloutStatus{ObservedGeneration: rr.Generation, Conditions: conditions,
		Wave: p.Wave, Waves: p.Waves, Selected: int32(len(p.HostedClusters)),
		Pending: c[v1alpha1.RolloutStatePending], Upgrading: c[v1alpha1.RolloutStateUpgrading], Done: c[v1alpha1.RolloutStateDone],
		Blocked: c[v1alpha1.RolloutStateBlocked], Failed: c[v1alpha1.RolloutStateFailed], HostedClusters: p.HostedClusters}
	if !p.WaveStart.IsZero() {
		status.WaveStartTime = &metav1.Time{Time: p.WaveStart}
	}
	if !p.CompletedAt.IsZero() {
		status.CompletionTime = &metav1.Time{Time: p.CompletedAt}
	}
	sort.Slice(status.HostedClusters, func(i, j int) bool { return status.HostedClusters[i].Name < status.HostedClusters[j].Name })
	if equality.Semantic.DeepEqual(withoutTimes(rr.Status), withoutTimes(status)) {
		return nil
	}
	metadata := map[string]any{"name": rr.Name, "namespace": rr.Namespace}
	if status.CompletionTime != nil {
		// Completion is recorded once: from a cache that does not show the
		// completion written a moment ago, the apply conflicts instead of
		// recording a second, later time.
		metadata["resourceVersion"] = rr.ResourceVersion
	}
	body := map[string]any{"apiVersion": v1alpha1.GroupVersion.String(), "kind": v1alpha1.ReleaseRolloutKind,
		"metadata": metadata, "status": status}
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
func withoutTimes(s v1alpha1.ReleaseRolloutStatus) v1alpha1.ReleaseRolloutStatus {
	s = *s.DeepCopy()
	for i := range s.Conditions {
		s.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	if len(s.HostedClusters) == 0 {
		s.HostedClusters = nil
	}
	return s
}
