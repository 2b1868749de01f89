package delivery

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
	olmhub "github.com/hcp-fleet/hcp-fleet/pkg/olm/hub"
)

// delivered is what a ManifestWork delivers now: the HostedCluster's release
// image and each NodePool's.
type delivered struct {
	release   string
	nodePools map[string]string
}

func deliveredBy(work *workv1.ManifestWork) delivered {
	d := delivered{nodePools: map[string]string{}}
	if work == nil {
		return d
	}
	for _, m := range work.Spec.Workload.Manifests {
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(m.Raw); err != nil {
			continue
		}
		image, _, _ := unstructured.NestedString(o.Object, "spec", "release", "image")
		switch o.GetKind() {
		case "HostedCluster":
			d.release = image
		case "NodePool":
			d.nodePools[o.GetName()] = image
		}
	}
	return d
}

// reportedLimits are the operator limits the agent reported on the
// HostedCluster (olm.AnnotationOperatorLimits, through the feedback);
// reported is false without a readable report.
func reportedLimits(work *workv1.ManifestWork) (limits []olm.Limit, reported bool) {
	if work == nil {
		return nil, false
	}
	for _, m := range work.Status.ResourceStatus.Manifests {
		if m.ResourceMeta.Resource != "hostedclusters" {
			continue
		}
		raw := valuesOf(m.StatusFeedbacks)[fbOperatorLimits]
		if raw == "" || json.Unmarshal([]byte(raw), &limits) != nil {
			return nil, false
		}
		return limits, true
	}
	return nil, false
}

// notUpgradeableReason is the reason of the HostedCluster's
// ClusterVersionUpgradeable=False, as the feedback reports it, or "".
func notUpgradeableReason(work *workv1.ManifestWork) string {
	if work == nil {
		return ""
	}
	for _, m := range work.Status.ResourceStatus.Manifests {
		if m.ResourceMeta.Resource != "hostedclusters" {
			continue
		}
		if v := valuesOf(m.StatusFeedbacks); v[fbUpgradeable] == "False" {
			return v[fbUpgradeableReason]
		}
	}
	return ""
}

// releaseMinor is the OpenShift minor of a release image: from its tag or,
// pinned by digest, from the version the hosted cluster reports for it.
func releaseMinor(hcd *v1alpha1.HostedClusterDeployment, image string) string {
	if m := scheduling.ReleaseMinor(image); m != "" {
		return m
	}
	if v := hcd.Status.Version; v != nil && v.Desired.Image == image {
		if major, rest, ok := strings.Cut(v.Desired.Version, "."); ok {
			if minor, _, _ := strings.Cut(rest, "."); minor != "" {
				return major + "." + minor
			}
		}
	}
	return ""
}

// upgradeDecision applies the hub's upgrade gate (pkg/olm/hub.Decide) to
// hcd and what its ManifestWork delivers now. override is the release image
// the fleet admin's TenantPolicy lets it go to past the gate
// (spec.upgradeOverrides), or "".
func upgradeDecision(hcd *v1alpha1.HostedClusterDeployment, work *workv1.ManifestWork, override string) (olmhub.Decision, delivered) {
	d := deliveredBy(work)
	target := hcd.Spec.HostedCluster.Spec.Release.Image
	limits, reported := reportedLimits(work)
	return olmhub.Decide(olmhub.Upgrade{
		Delivered: d.release, DeliveredMinor: releaseMinor(hcd, d.release),
		Target: target, TargetMinor: releaseMinor(hcd, target),
		Limits: limits, Reported: reported,
		Allowed: override, NotUpgradeableReason: notUpgradeableReason(work),
	}), d
}

// hold keeps a held upgrade out of spec: the HostedCluster stays on the
// delivered release, and so does every NodePool that would move above its
// minor (NodePools never run a newer minor than their HostedCluster).
func (s *Spec) hold(hcd *v1alpha1.HostedClusterDeployment, d delivered) {
	s.HeldRelease = d.release
	heldMinor := releaseMinor(hcd, d.release)
	for _, np := range hcd.Spec.NodePools {
		image := np.Spec.Release.Image
		if image == d.nodePools[np.Name] || !olmhub.MinorAbove(releaseMinor(hcd, image), heldMinor) {
			continue
		}
		if s.HeldNodePoolReleases == nil {
			s.HeldNodePoolReleases = map[string]string{}
		}
		if prev := d.nodePools[np.Name]; prev != "" {
			s.HeldNodePoolReleases[np.Name] = prev
		} else {
			s.HeldNodePoolReleases[np.Name] = d.release
		}
	}
}
