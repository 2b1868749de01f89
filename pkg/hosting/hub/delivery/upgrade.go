package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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

// hostedClusterValues is the HostedCluster's feedback in work, or nil.
func hostedClusterValues(work *workv1.ManifestWork) Values {
	if work == nil {
		return nil
	}
	for _, m := range work.Status.ResourceStatus.Manifests {
		if m.ResourceMeta.Resource == "hostedclusters" {
			return valuesOf(m.StatusFeedbacks)
		}
	}
	return nil
}

// clusterVersionUpgradeable is the HostedCluster's ClusterVersionUpgradeable
// condition, as the feedback reports it, or nil.
func clusterVersionUpgradeable(v Values) *olmhub.Upgradeable {
	if v[fbUpgradeable] == "" {
		return nil
	}
	return &olmhub.Upgradeable{Status: v[fbUpgradeable], Reason: v[fbUpgradeableReason], Message: v[fbUpgradeableMessage]}
}

// upgradeReport is the agent's upgrade report, or nil and why it is not
// readable ("" when there is none).
func upgradeReport(v Values) (*olm.UpgradeReport, string) {
	raw := v[fbUpgradeReport]
	if raw == "" {
		return nil, ""
	}
	r, err := olm.DecodeUpgradeReport(raw)
	if err != nil {
		return nil, err.Error()
	}
	return &r, ""
}

// releaseMinor is the OpenShift minor of a release image: from its tag,
// from a ClusterImageSet naming it, or, pinned by digest, from the version
// the hosted cluster reports for it. from names the ClusterImageSet when
// one said it.
func releaseMinor(hcd *v1alpha1.HostedClusterDeployment, sets []unstructured.Unstructured, image string) (minor, from string) {
	if m := scheduling.ReleaseMinor(image); m != "" {
		return m, ""
	}
	if m, from := olmhub.ImageSetMinor(sets, image); m != "" {
		return m, "ClusterImageSet " + from
	}
	if v := hcd.Status.Version; v != nil && v.Desired.Image == image {
		if major, rest, ok := strings.Cut(v.Desired.Version, "."); ok {
			if minor, _, _ := strings.Cut(rest, "."); minor != "" {
				return major + "." + minor, ""
			}
		}
	}
	return "", ""
}

// imageSets lists the hub's ClusterImageSets when a release of hcd is
// pinned by digest (none otherwise, and none where Hive's CRD is not
// installed). Read live: few reconciles need them, and a cache would watch
// every ClusterImageSet for them.
func (r *Reconciler) imageSets(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) ([]unstructured.Unstructured, error) {
	digest := strings.Contains(hcd.Spec.HostedCluster.Spec.Release.Image, "@")
	for _, np := range hcd.Spec.NodePools {
		digest = digest || strings.Contains(np.Spec.Release.Image, "@")
	}
	if !digest {
		return nil, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(olmhub.ClusterImageSetGVK.GroupVersion().WithKind("ClusterImageSetList"))
	if err := r.reader.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing ClusterImageSets: %w", err)
	}
	return list.Items, nil
}

// reportMaxAge is Options.UpgradeReportMaxAge now (0: the gate's default).
func (r *Reconciler) reportMaxAge() time.Duration {
	if r.opts.UpgradeReportMaxAge == nil {
		return 0
	}
	return r.opts.UpgradeReportMaxAge()
}

// upgradeDecision applies the hub's upgrade gate (pkg/olm/hub.Decide) to
// hcd and what its ManifestWork delivers now. override is the release image
// the fleet admin's TenantPolicy lets it go to past OLM's block
// (spec.upgradeOverrides), or ""; reportMaxAge bounds the agent report's
// age (0: olmhub.DefaultReportMaxAge).
func upgradeDecision(hcd *v1alpha1.HostedClusterDeployment, work *workv1.ManifestWork, sets []unstructured.Unstructured, override string, now time.Time,
	reportMaxAge time.Duration) (olmhub.Decision, delivered) {
	d := deliveredBy(work)
	target := hcd.Spec.HostedCluster.Spec.Release.Image
	limits, reported := reportedLimits(work)
	hc := hostedClusterValues(work)
	report, problem := upgradeReport(hc)
	deliveredMinor, _ := releaseMinor(hcd, sets, d.release)
	targetMinor, from := releaseMinor(hcd, sets, target)
	waiting := now
	if work != nil && !work.CreationTimestamp.IsZero() {
		waiting = work.CreationTimestamp.Time
	}
	return olmhub.Decide(olmhub.Upgrade{
		Delivered: d.release, DeliveredMinor: deliveredMinor,
		Target: target, TargetMinor: targetMinor, TargetSource: from,
		Limits: limits, Reported: reported, Report: report, ReportProblem: problem,
		Allowed: override, HostedCluster: clusterVersionUpgradeable(hc),
		Now: now, Waiting: waiting, ReportMaxAge: reportMaxAge,
	}), d
}

// hold keeps a held upgrade out of spec: the HostedCluster stays on the
// delivered release, and so does every NodePool that would move above its
// minor (NodePools never run a newer minor than their HostedCluster).
// A NodePool whose release's minor cannot be told is held too: the hub
// cannot tell it stays below.
func (s *Spec) hold(hcd *v1alpha1.HostedClusterDeployment, sets []unstructured.Unstructured, d delivered) {
	s.HeldRelease = d.release
	heldMinor, _ := releaseMinor(hcd, sets, d.release)
	for _, np := range hcd.Spec.NodePools {
		image := np.Spec.Release.Image
		minor, _ := releaseMinor(hcd, sets, image)
		if image == d.nodePools[np.Name] || (minor != "" && heldMinor != "" && !olmhub.MinorAbove(minor, heldMinor)) {
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
