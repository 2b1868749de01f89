package delivery

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	hcdac "github.com/hcp-fleet/hcp-fleet/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/importer"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// applyStatus server-side applies the delivery's status fields when they
// differ from what the HostedClusterDeployment shows.
func (r *Reconciler) applyStatus(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, s Status) error {
	apply, conditions, changed := statusApply(hcd, s, metav1.Now())
	if !changed {
		return nil
	}
	key := client.ObjectKeyFromObject(hcd)
	sum, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if v, ok := r.written.Load(key); ok {
		if w := v.(writtenStatus); w.uid == hcd.UID && w.from == hcd.ResourceVersion && w.status == string(sum) {
			// Written already, from this same copy: the cache does not
			// show it yet, and its event comes.
			return nil
		}
	}
	if err := hcdstatus.Apply(ctx, r.client, apply, FieldManager); err != nil {
		if apierrors.IsConflict(err) {
			// A compare-and-swap (statusApply) on a copy the object has
			// moved past: the newer copy's event reconciles it again.
			ctrl.LoggerFrom(ctx).V(1).Info("status not written: the HostedClusterDeployment changed since it was read")
			return nil
		}
		return client.IgnoreNotFound(err)
	}
	r.written.Store(key, writtenStatus{uid: hcd.UID, from: hcd.ResourceVersion, status: string(sum)})
	countWrite(changedParts(hcd, s, conditions))
	hcdstatus.RecordTransitions(r.recorder, hcd, hcd.Status.HostingCluster, hcd.Status.Conditions, conditions)
	return nil
}

// writtenStatus is an entry of Reconciler.written: the status last written
// for a HostedClusterDeployment (its UID), computed from the copy at
// resourceVersion from.
type writtenStatus struct {
	uid    types.UID
	from   string
	status string
}

// statusApply is the status apply configuration that writes s over hcd's
// status, the conditions it applies, and whether it changes anything. It
// carries hcd's binding as it is (status.hostingCluster and the Scheduled
// condition): the scheduler and the delivery apply under one field manager
// (hcdstatus.FieldManager), so each apply holds all of their fields. Pure.
func statusApply(hcd *v1alpha1.HostedClusterDeployment, s Status, now metav1.Time) (*hcdac.HostedClusterDeploymentApplyConfiguration, []metav1.Condition, bool) {
	conditions, changed := hcdstatus.Conditions(hcd.Status.Conditions, s.Conditions, s.ObservedGeneration, now)
	// Conditions this controller sets only at times: one that goes away is a
	// change too (the apply below drops it).
	for _, t := range []string{v1alpha1.ConditionUpgradeBlocked, v1alpha1.ConditionSubscriptionDefaultsApplied, v1alpha1.ConditionCatalogsReady} {
		changed = changed || (meta.FindStatusCondition(hcd.Status.Conditions, t) != nil && meta.FindStatusCondition(s.Conditions, t) == nil)
	}
	changed = changed || hcd.Status.ObservedGeneration != s.ObservedGeneration || hcd.Status.ManifestWork != s.ManifestWork ||
		!equality.Semantic.DeepEqual(hcd.Status.Version, s.Version) ||
		!equality.Semantic.DeepEqual(hcd.Status.ControlPlaneEndpoint, s.ControlPlaneEndpoint) ||
		!equality.Semantic.DeepEqual(hcd.Status.NodePools, s.NodePools)
	if scheduled := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionScheduled); scheduled != nil {
		// As it is: its observedGeneration is the binding's.
		conditions = append(conditions, *scheduled)
		slices.SortStableFunc(conditions, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
	}
	status := hcdac.HostedClusterDeploymentStatus().
		WithObservedGeneration(s.ObservedGeneration).
		WithConditions(hcdstatus.ApplyConditions(conditions)...)
	if hcd.Status.HostingCluster != "" {
		status.WithHostingCluster(hcd.Status.HostingCluster)
	}
	if s.ManifestWork != "" {
		status.WithManifestWork(s.ManifestWork)
	}
	if v := s.Version; v != nil {
		desired := hcdac.ReleaseStatus()
		if v.Desired.Version != "" {
			desired.WithVersion(v.Desired.Version)
		}
		if v.Desired.Image != "" {
			desired.WithImage(v.Desired.Image)
		}
		version := hcdac.HostedClusterVersionStatus().WithDesired(desired)
		if v.Current != "" {
			version.WithCurrent(v.Current)
		}
		for _, h := range v.History {
			entry := hcdac.VersionHistoryEntry().WithState(h.State)
			if h.Version != "" {
				entry.WithVersion(h.Version)
			}
			if h.Image != "" {
				entry.WithImage(h.Image)
			}
			if h.StartedTime != nil {
				entry.WithStartedTime(*h.StartedTime)
			}
			if h.CompletionTime != nil {
				entry.WithCompletionTime(*h.CompletionTime)
			}
			version.WithHistory(entry)
		}
		withUpdates(version, v)
		status.WithVersion(version)
	}
	if e := s.ControlPlaneEndpoint; e != nil {
		status.WithControlPlaneEndpoint(hcdac.APIEndpoint().WithHost(e.Host).WithPort(e.Port))
	}
	for _, np := range s.NodePools {
		pool := hcdac.NodePoolStatus().WithName(np.Name).WithReplicas(np.Replicas).WithReadyReplicas(np.ReadyReplicas)
		if np.Version != "" {
			pool.WithVersion(np.Version)
		}
		status.WithNodePools(pool)
	}
	apply := hcdac.HostedClusterDeployment(hcd.Name, hcd.Namespace).WithStatus(status)
	if meta.FindStatusCondition(s.Conditions, v1alpha1.ConditionImported) != nil {
		// The import's WaitingForAvailable (carriesImportWaiting), decided
		// on this copy: applied only over it, so that it never takes back
		// a state the import wrote since.
		apply.WithResourceVersion(hcd.ResourceVersion)
	}
	return apply, conditions, changed
}

// BindingStatus is the scheduler's scheduling.BindingStatus: a binding is
// written with the status the delivery writes once it has written the
// ManifestWork and the work agent has not answered yet, so that the burst of
// a binding and its delivery writes the status once, not twice (the
// delivery then finds nothing to change). c is the hub's cache. What the
// delivery finds different when it gets there (a referenced Secret missing,
// a host that just went away) it writes as usual.
// grace is the delivery's Options.UnavailableGrace.
func BindingStatus(c client.Reader, grace time.Duration) scheduling.BindingStatus {
	return func(ctx context.Context, bound *v1alpha1.HostedClusterDeployment) (*hcdac.HostedClusterDeploymentApplyConfiguration, []metav1.Condition, error) {
		host, err := hostOf(ctx, c, bound.Status.HostingCluster, grace, time.Now())
		if err != nil {
			return nil, nil, err
		}
		apply, conditions, _ := statusApply(bound, ComputeStatus(written(bound, host)), metav1.Now())
		return apply, conditions, nil
	}
}

// written is what Reconcile observes right after it created hcd's
// ManifestWork on host.
func written(hcd *v1alpha1.HostedClusterDeployment, host Host) Observed {
	observed := Observed{Generation: hcd.Generation, UID: hcdstatus.IdentityUID(hcd), Host: host,
		Work: &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: host.Cluster, Name: hosting.WorkName(hcd.Namespace, hcd.Name)}}}
	for _, np := range hcd.Spec.NodePools {
		observed.NodePools = append(observed.NodePools, np.Name)
	}
	upgrade, _ := upgradeDecision(hcd, nil, nil, "", time.Now(), 0)
	observed.Upgrade = &upgrade
	observed.ImportStarted, observed.Imported = importOf(hcd)
	return observed
}

// importOf is what the delivery's status reads of the import: whether it
// started (its finalizer is there) and the Imported condition shown.
func importOf(hcd *v1alpha1.HostedClusterDeployment) (started bool, imported *metav1.Condition) {
	return controllerutil.ContainsFinalizer(hcd, importer.Finalizer), meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionImported)
}

// withUpdates adds v's available and conditional updates (the agent's
// release-updates report) to version.
func withUpdates(version *hcdac.HostedClusterVersionStatusApplyConfiguration, v *v1alpha1.HostedClusterVersionStatus) {
	release := func(r v1alpha1.ReleaseStatus) *hcdac.ReleaseStatusApplyConfiguration {
		out := hcdac.ReleaseStatus()
		if r.Version != "" {
			out.WithVersion(r.Version)
		}
		if r.Image != "" {
			out.WithImage(r.Image)
		}
		return out
	}
	for _, a := range v.AvailableUpdates {
		version.WithAvailableUpdates(release(a))
	}
	for _, c := range v.ConditionalUpdates {
		cu := hcdac.ConditionalUpdate().WithRelease(release(c.Release))
		if c.Recommended != "" {
			cu.WithRecommended(c.Recommended)
		}
		if c.Reason != "" {
			cu.WithReason(c.Reason)
		}
		for _, r := range c.Risks {
			risk := hcdac.UpdateRisk().WithName(r.Name)
			if r.Message != "" {
				risk.WithMessage(r.Message)
			}
			if r.URL != "" {
				risk.WithURL(r.URL)
			}
			if len(r.MatchingRules) > 0 {
				risk.WithMatchingRules(r.MatchingRules...)
			}
			cu.WithRisks(risk)
		}
		version.WithConditionalUpdates(cu)
	}
}
