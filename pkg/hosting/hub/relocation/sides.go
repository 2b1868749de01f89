package relocation

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// sides is what the hub holds of a move: the pause work and the delivery's
// ManifestWork on the source, the ManifestWork on the destination (nil:
// none), and what their feedback says.
type sides struct {
	pause, source, destination *workv1.ManifestWork
	pauseFacts, destFacts      HostedClusterFacts
	// sourceLost, destinationLost: that side's ManagedCluster is gone or
	// reports itself unavailable.
	sourceLost, destinationLost bool
}

// destinationReleased: no ManifestWork on the destination, or, when the
// destination is lost, its deletion asked for. A lost cluster's work agent
// removes what it applied only once it reports again: a rollback that
// waited for that would leave the source paused for as long, so it
// resumes the source as soon as the destination's copy is deleted on the
// hub. That copy was never bound: the import, the kubeconfig mirror and
// the API server's DNS name still point at the source.
func (s sides) destinationReleased() bool {
	return s.destination == nil || s.destinationLost && s.destination.DeletionTimestamp != nil
}

// read reads both sides of hcr's move from the hub's cache.
func (r *Reconciler) read(ctx context.Context, hcr *v1alpha1.HostedClusterRelocation, hcd *v1alpha1.HostedClusterDeployment) (sides, error) {
	var s sides
	var err error
	st := hcr.Status
	if s.pause, err = r.work(ctx, st.Source, PauseWorkName(hcd.Namespace, hcd.Name)); err != nil {
		return s, err
	}
	if s.source, err = r.work(ctx, st.Source, hosting.WorkName(hcd.Namespace, hcd.Name)); err != nil {
		return s, err
	}
	if s.destination, err = r.work(ctx, st.Destination, hosting.WorkName(hcd.Namespace, hcd.Name)); err != nil {
		return s, err
	}
	if s.pause != nil {
		s.pauseFacts = Observe(s.pause)
	}
	if s.destination != nil {
		s.destFacts = Observe(s.destination)
	}
	return s, nil
}

func (r *Reconciler) work(ctx context.Context, namespace, name string) (*workv1.ManifestWork, error) {
	w := &workv1.ManifestWork{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, w); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return w, nil
}

// observed is what Next decides on. Pure.
func (s sides) observed(hcr *v1alpha1.HostedClusterRelocation, hcd *v1alpha1.HostedClusterDeployment, overdue string) Observed {
	st := hcr.Status
	o := Observed{Switched: st.Switched, BoundTo: hcd.Status.HostingCluster, Cancelled: hcr.DeletionTimestamp != nil,
		DestinationLost: s.destinationLost, SourceLost: s.sourceLost, Overdue: overdue}
	o.SourcePaused = s.pause != nil && s.pauseFacts.Paused
	if Phase(st.Phase) == PhaseRollingBack {
		// The rollback's last step removes the pause work once the source
		// reconciles again: until it is gone, the source counts as paused.
		o.SourcePaused = s.pause != nil
	}
	o.SnapshotURL = st.SnapshotURL
	if o.SnapshotURL == "" && s.pauseFacts.Paused {
		o.SnapshotURL = s.pauseFacts.SnapshotURL
	}
	o.Source = Identity{InfraID: st.InfraID, ClusterID: st.ClusterID}
	if o.Source == (Identity{}) {
		o.Source = s.pauseFacts.Identity
	}
	if s.destination != nil {
		o.DestinationApplied = Applied(s.destination)
		o.DestinationAvailable = s.destFacts.Available
		o.Destination = s.destFacts.Identity
	}
	o.DestinationGone = s.destinationReleased()
	o.SourceGone = s.source == nil && s.pause == nil
	return o
}

// Applied: the work agent applied work's current generation. Pure.
func Applied(work *workv1.ManifestWork) bool {
	c := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied)
	return c != nil && c.Status == "True" && c.ObservedGeneration == work.Generation
}

// act makes phase's write (each is idempotent: the same facts write
// nothing twice).
func (r *Reconciler) act(ctx context.Context, hcr *v1alpha1.HostedClusterRelocation, hcd *v1alpha1.HostedClusterDeployment, phase Phase, s sides) error {
	switch phase {
	case PhasePausing, PhaseBackingUp, PhaseVerifying, PhaseSwitching:
		return r.ensurePause(ctx, hcr, hcd, s.pause, true)
	case PhaseRestoring:
		if err := r.ensurePause(ctx, hcr, hcd, s.pause, true); err != nil || s.destination != nil {
			return err
		}
		if s.source == nil {
			return fmt.Errorf("the delivery's ManifestWork %s/%s, which the destination's is copied from, is gone", hcr.Status.Source, hosting.WorkName(hcd.Namespace, hcd.Name))
		}
		agentNamespace, err := addon.InstallNamespaceOf(ctx, r.client, hcr.Status.Destination)
		if err != nil {
			return err
		}
		dest, err := DestinationWork(s.source, hcr.Status.Destination, agentNamespace, hcr.Status.SnapshotURL, hcr.Status.ClusterID)
		if err != nil {
			return err
		}
		return client.IgnoreAlreadyExists(r.client.Create(ctx, dest))
	case PhaseCleaningSource:
		// The pause work first: left alone it would create the
		// HostedCluster again once the source's ManifestWork deleted it.
		// Deleting it orphans: the source stays paused.
		if s.pause != nil {
			return r.remove(ctx, s.pause)
		}
		if s.source != nil {
			return r.removeKeepingCloud(ctx, s.source, hostingNamespace(hcd), true)
		}
	case PhaseRollingBack:
		if !s.destinationReleased() {
			// The cloud resources are the source's, which runs on.
			return r.removeKeepingCloud(ctx, s.destination, hostingNamespace(hcd), !s.destinationLost)
		}
		if s.pause == nil {
			return nil
		}
		if !s.pauseFacts.Running {
			return r.ensurePause(ctx, hcr, hcd, s.pause, false)
		}
		return r.remove(ctx, s.pause)
	}
	return nil
}

// ensurePause writes the pause work (paused or resuming) when it is not
// as desired.
func (r *Reconciler) ensurePause(ctx context.Context, hcr *v1alpha1.HostedClusterRelocation, hcd *v1alpha1.HostedClusterDeployment, live *workv1.ManifestWork, paused bool) error {
	return r.applyPause(ctx, hcr.Status.Source, hcd, live, paused)
}

// applyPause writes hcd's pause work on cluster (paused or resuming) when
// it is not as desired.
func (r *Reconciler) applyPause(ctx context.Context, cluster string, hcd *v1alpha1.HostedClusterDeployment, live *workv1.ManifestWork, paused bool) error {
	agentNamespace, err := addon.InstallNamespaceOf(ctx, r.client, cluster)
	if err != nil {
		return err
	}
	desired, err := PauseWork(cluster, agentNamespace, hcd.Namespace, hcd.Name, hostingNamespace(hcd), hcd.Name, paused)
	if err != nil {
		return err
	}
	if live == nil {
		return client.IgnoreAlreadyExists(r.client.Create(ctx, desired))
	}
	if equality.Semantic.DeepEqual(live.Spec, desired.Spec) && live.Labels[hosting.LabelBackup] != "" {
		return nil
	}
	updated := live.DeepCopy()
	updated.Spec = desired.Spec
	// A pause work written by an older hub gets the backup label too.
	updated.Labels = desired.Labels
	return r.client.Update(ctx, updated)
}

// removeKeepingCloud deletes a ManifestWork that delivers a HostedCluster
// without destroying the cloud resources the other side uses: first its
// HostedCluster carries HyperShift's cleanup-cloud-resources "false" and
// the work deletes all but the hosting namespace (MarkKeepCloud), and, when
// waitApplied, the agent applied that; then the ManifestWork is deleted.
func (r *Reconciler) removeKeepingCloud(ctx context.Context, work *workv1.ManifestWork, hostingNamespace string, waitApplied bool) error {
	if work.DeletionTimestamp != nil {
		return nil
	}
	marked, changed, err := MarkKeepCloud(work, hostingNamespace)
	if err != nil {
		return err
	}
	if changed {
		return r.client.Update(ctx, marked)
	}
	if waitApplied && !Applied(work) {
		return nil
	}
	return r.remove(ctx, work)
}

func (r *Reconciler) remove(ctx context.Context, work *workv1.ManifestWork) error {
	if work.DeletionTimestamp != nil {
		return nil
	}
	return client.IgnoreNotFound(r.client.Delete(ctx, work, client.Preconditions{UID: &work.UID}))
}

func hostingNamespace(hcd *v1alpha1.HostedClusterDeployment) string {
	if hcd.Spec.HostingNamespace != "" {
		return hcd.Spec.HostingNamespace
	}
	return v1alpha1.DefaultHostingNamespace
}
