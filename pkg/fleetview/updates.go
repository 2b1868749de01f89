package fleetview

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	olmhub "github.com/hcp-fleet/hcp-fleet/pkg/olm/hub"
)

// Updates are the releases a HostedClusterDeployment may go to: the
// updates its hosted cluster reports (status.version.availableUpdates)
// that a ClusterImageSet on the hub publishes (ACM's convention for the
// releases clusters may run), and the conditional updates with the risks
// that keep them from being taken silently.
type Updates struct {
	// MayGoTo are the available updates a ClusterImageSet publishes,
	// newest first.
	MayGoTo []string `json:"mayGoTo,omitempty"`
	// Unpublished are the available updates no ClusterImageSet publishes
	// (or all of them, when the ClusterImageSets could not be read).
	Unpublished []string `json:"unpublished,omitempty"`
	// Conditional are the conditional updates not recommended, as
	// "4.18.11 (EtcdSlow, OVNDrops)": a ReleaseRollout takes one only when
	// it accepts those risks by name.
	Conditional []string `json:"conditional,omitempty"`
	// ImageSetsUnknown says why the ClusterImageSets could not be read
	// ("" when they were).
	ImageSetsUnknown string `json:"imageSetsUnknown,omitempty"`
}

// imageSets are the hub's ClusterImageSets, or why they cannot be read (a
// tenant may not list them; a hub without Hive has none).
func imageSets(ctx context.Context, c client.Reader) ([]unstructured.Unstructured, string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(olmhub.ClusterImageSetGVK.GroupVersion().WithKind("ClusterImageSetList"))
	switch err := c.List(ctx, list); {
	case err == nil:
		return list.Items, "", nil
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return nil, "", nil
	case apierrors.IsForbidden(err):
		return nil, "ClusterImageSets not readable", nil
	default:
		return nil, "", ReadError(err, "list", "clusterimagesets.hive.openshift.io", "")
	}
}

// UpdatesOf are v's updates against the ClusterImageSets sets; unknown says
// why the sets could not be read. Nil when v reports none.
func UpdatesOf(v *v1alpha1.HostedClusterVersionStatus, sets []unstructured.Unstructured, unknown string) *Updates {
	if v == nil || len(v.AvailableUpdates) == 0 && len(v.ConditionalUpdates) == 0 {
		return nil
	}
	u := &Updates{ImageSetsUnknown: unknown}
	for _, a := range v.AvailableUpdates {
		if unknown == "" && published(sets, a) {
			u.MayGoTo = append(u.MayGoTo, a.Version)
		} else {
			u.Unpublished = append(u.Unpublished, a.Version)
		}
	}
	for _, cu := range v.ConditionalUpdates {
		if cu.Recommended == metav1.ConditionTrue {
			continue // among the available updates
		}
		var risks []string
		for _, r := range cu.Risks {
			risks = append(risks, r.Name)
		}
		if len(risks) == 0 {
			risks = append(risks, cu.Reason)
		}
		u.Conditional = append(u.Conditional, fmt.Sprintf("%s (%s)", cu.Release.Version, strings.Join(risks, ", ")))
	}
	return u
}

// published: a ClusterImageSet's spec.releaseImage is r's image, or names
// r's version.
func published(sets []unstructured.Unstructured, r v1alpha1.ReleaseStatus) bool {
	for _, s := range sets {
		image, _, _ := unstructured.NestedString(s.Object, "spec", "releaseImage")
		if image != "" && image == r.Image {
			return true
		}
		if v, _ := olmhub.ImageSetVersion(sets, image); v != "" && v == r.Version {
			return true
		}
	}
	return false
}

// String is the updates in one line.
func (u *Updates) String() string {
	var parts []string
	if len(u.MayGoTo) > 0 {
		parts = append(parts, "may go to "+strings.Join(u.MayGoTo, ", "))
	}
	if len(u.Unpublished) > 0 {
		why := "no ClusterImageSet"
		if u.ImageSetsUnknown != "" {
			why = u.ImageSetsUnknown
		}
		parts = append(parts, fmt.Sprintf("available but not published (%s): %s", why, strings.Join(u.Unpublished, ", ")))
	}
	if len(u.Conditional) > 0 {
		parts = append(parts, "conditional, not recommended (risks): "+strings.Join(u.Conditional, ", "))
	}
	return strings.Join(parts, "; ")
}

// collectUpdates sets each deployment's updates, reading the
// ClusterImageSets once, only when some hosted cluster reports updates.
func (s *Snapshot) collectUpdates(ctx context.Context, c client.Reader, hcds []v1alpha1.HostedClusterDeployment) error {
	var sets []unstructured.Unstructured
	var unknown string
	read := false
	for i := range hcds {
		v := hcds[i].Status.Version
		if v == nil || len(v.AvailableUpdates) == 0 && len(v.ConditionalUpdates) == 0 {
			continue
		}
		if !read {
			var err error
			if sets, unknown, err = imageSets(ctx, c); err != nil {
				return err
			}
			read = true
		}
		// Deployments are in the order of hcds until Collect sorts them.
		s.Deployments[i].Updates = UpdatesOf(v, sets, unknown)
	}
	return nil
}

// ReleaseUpdates reads the updates of one HostedClusterDeployment against
// the hub's ClusterImageSets (for explain).
func ReleaseUpdates(ctx context.Context, c client.Reader, hcd *v1alpha1.HostedClusterDeployment) (*Updates, error) {
	v := hcd.Status.Version
	if v == nil || len(v.AvailableUpdates) == 0 && len(v.ConditionalUpdates) == 0 {
		return nil, nil
	}
	sets, unknown, err := imageSets(ctx, c)
	if err != nil {
		return nil, err
	}
	return UpdatesOf(v, sets, unknown), nil
}
