package delivery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
	olmhub "github.com/hcp-fleet/hcp-fleet/pkg/olm/hub"
)

// deliver creates or updates the ManifestWork when its input changed.
// u is hcd as read, with every field of its spec.
// olmPolicy is the OLM catalog policy of the host's HostingConfig (nil:
// none); upgrade is the upgrade gate's decision about what existing
// delivers now (current).
func (r *Reconciler) deliver(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, u *unstructured.Unstructured, cluster string, existing *workv1.ManifestWork,
	olmPolicy *v1alpha1.OLMConfig, policy *tenancy.Policy, upgrade olmhub.Decision, current delivered, sets []unstructured.Unstructured) (*workv1.ManifestWork, []string, *Problem, error) {
	spec, err := SpecFrom(u)
	if err != nil {
		// Reported in status; the next change of the spec retries.
		return nil, nil, &Problem{Reason: v1alpha1.ReasonApplyFailed, Message: err.Error()}, nil //nolint:nilerr // see above
	}
	spec.Annotations = r.opts.Annotations
	spec.Forced = policy.Forced()
	if spec.AgentNamespace, err = addon.InstallNamespaceOf(ctx, r.client, cluster); err != nil {
		return nil, nil, nil, err
	}
	spec.KeepDelivered(existing)
	// An adopted HostedCluster is taken over by one forced apply
	// (docs/operations.md).
	spec.Takeover = spec.Adopted && takingOver(existing)
	release := hcd.Spec.HostedCluster.Spec.Release.Image
	if upgrade.Hold {
		spec.hold(hcd, sets, current)
		release = spec.HeldRelease
	}
	spec.setOLMAnnotations(hcd, sets, olmPolicy, release, upgrade)
	dropped := spec.DroppedAnnotations()
	refs := spec.References()
	versions := make(map[string]string, len(refs))
	var missing []string
	for _, ref := range refs {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(ref.Kind))
		if err := r.client.Get(ctx, types.NamespacedName{Namespace: hcd.Namespace, Name: ref.Name}, m); err != nil {
			if apierrors.IsNotFound(err) {
				missing = append(missing, fmt.Sprintf("%s %s/%s (%s)", ref.Kind, hcd.Namespace, ref.Name, ref.Field))
				continue
			}
			return nil, nil, nil, err
		}
		versions[ref.Kind+"/"+ref.Name] = m.ResourceVersion
	}
	if len(missing) > 0 {
		return nil, nil, &Problem{Reason: v1alpha1.ReasonReferencedObjectNotFound,
			Message: "not delivered: " + strings.Join(missing, ", ") + " not found; it is delivered as soon as it exists"}, nil
	}
	hash, err := InputHash(spec, cluster, versions)
	if err != nil {
		return nil, nil, nil, err
	}
	specHash, err := InputHash(spec, cluster, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	key := client.ObjectKeyFromObject(hcd)
	refsOnly := false
	if existing != nil {
		r.created.Delete(key)
		if existing.Annotations[AnnotationInputHash] == hash {
			return nil, dropped, nil, nil
		}
		if existing.Annotations[AnnotationSpecHash] == specHash {
			// Only referenced objects changed: at most once per interval.
			refsOnly = true
			if wait := r.refreshes.wait(key, hcd.UID, specHash); wait > 0 {
				referenceRefreshesDelayed.WithLabelValues(hcd.Namespace).Inc()
				return nil, nil, nil, refreshLater{after: wait}
			}
		}
	} else if r.awaitingCache(hcd) {
		return nil, nil, nil, errCacheBehind
	}
	referenced := make(map[string]*unstructured.Unstructured, len(refs))
	for _, ref := range refs {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(ref.Kind))
		if err := r.reader.Get(ctx, types.NamespacedName{Namespace: hcd.Namespace, Name: ref.Name}, obj); err != nil {
			return nil, nil, nil, err
		}
		referenced[ref.Kind+"/"+ref.Name] = obj
	}
	if p := tooLarge(referenced, refs, hcd.Namespace, policy); p != nil {
		return nil, nil, p, nil
	}
	desired, err := Render(spec, cluster, referenced, hash)
	if desired != nil {
		desired.Annotations[AnnotationSpecHash] = specHash
	}
	if err != nil {
		// Reported in status; the next change of the spec retries.
		return nil, nil, &Problem{Reason: v1alpha1.ReasonApplyFailed, Message: err.Error()}, nil //nolint:nilerr // see above
	}
	if existing == nil {
		if err := r.client.Create(ctx, desired); err != nil {
			if apierrors.IsAlreadyExists(err) && r.ours(ctx, desired) {
				// Created moments ago (by the reconcile before this one) and
				// not in the cache yet: its event comes, and nothing is
				// reported meanwhile.
				return nil, nil, nil, errCacheBehind
			}
			err = fmt.Errorf("creating ManifestWork %s/%s: %w", desired.Namespace, desired.Name, err)
			return nil, nil, &Problem{Reason: v1alpha1.ReasonApplyFailed, Message: err.Error()}, err
		}
		workWrites.WithLabelValues("create").Inc()
		r.refreshes.wrote(key, hcd.UID, specHash, false)
		r.created.Store(client.ObjectKeyFromObject(hcd), createdWork{uid: hcd.UID, at: time.Now()})
		return desired, dropped, nil, nil
	}
	updated := existing.DeepCopy()
	updated.Labels = desired.Labels
	updated.Annotations = desired.Annotations
	updated.Spec = desired.Spec
	if err := r.client.Update(ctx, updated); err != nil {
		err = fmt.Errorf("updating ManifestWork %s/%s: %w", updated.Namespace, updated.Name, err)
		if apierrors.IsConflict(err) {
			return nil, nil, nil, err
		}
		return nil, nil, &Problem{Reason: v1alpha1.ReasonApplyFailed, Message: err.Error()}, err
	}
	workWrites.WithLabelValues("update").Inc()
	r.refreshes.wrote(key, hcd.UID, specHash, refsOnly)
	return updated, dropped, nil, nil
}

// refreshLater: a reference-only rewrite held back until after.
type refreshLater struct{ after time.Duration }

func (e refreshLater) Error() string {
	return fmt.Sprintf("a referenced object changed; the ManifestWork is rewritten in %s", e.after)
}

// errCacheBehind: a ManifestWork the cache does not show yet exists.
var errCacheBehind = errors.New("the ManifestWork exists but is not in the cache yet")

// cacheBehindRetry is when a reconcile that found errCacheBehind runs again
// at the latest (the ManifestWork's event normally comes first).
const cacheBehindRetry = time.Second

// ours reads the ManifestWork named like desired from the API server and
// reports whether it is the delivery's for the same HostedClusterDeployment.
func (r *Reconciler) ours(ctx context.Context, desired *workv1.ManifestWork) bool {
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(workv1.SchemeGroupVersion.WithKind("ManifestWork"))
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(desired), live); err != nil {
		return false
	}
	owner := workOwnerOf(live)
	return owner.Name != "" && owner == workOwnerOf(desired)
}
