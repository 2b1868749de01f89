package delivery

import (
	"strings"
	"testing"
	"time"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

const (
	rel418 = "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"
	rel419 = "quay.io/openshift-release-dev/ocp-release:4.19.0-multi"
)

func upgradeSpec(t *testing.T, hcImage, poolImage string) (Spec, *v1alpha1.HostedClusterDeployment) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"namespace": "team-a", "name": "prod", "uid": testUID},
		"spec": map[string]any{
			"hostedCluster": map[string]any{"spec": map[string]any{"release": map[string]any{"image": hcImage}}},
			"nodePools": []any{map[string]any{"name": "workers", "spec": map[string]any{
				"clusterName": "prod", "release": map[string]any{"image": poolImage}}}},
		},
	}}
	s, err := SpecFrom(u)
	if err != nil {
		t.Fatal(err)
	}
	hcd := &v1alpha1.HostedClusterDeployment{}
	hcd.Spec.HostedCluster.Spec.Release = hyperv1.Release{Image: hcImage}
	hcd.Spec.NodePools = []v1alpha1.NodePoolTemplate{{Name: "workers"}}
	hcd.Spec.NodePools[0].Spec.Release = hyperv1.Release{Image: poolImage}
	return s, hcd
}

func rendered(t *testing.T, s Spec) (*workv1.ManifestWork, delivered) {
	t.Helper()
	w, err := Render(s, "c1", nil, "h")
	if err != nil {
		t.Fatal(err)
	}
	return w, deliveredBy(w)
}

// TestHeldUpgrade: with the agent's report of an operator limited to 4.18,
// a 4.18 → 4.19 change of the HCD renders the 4.18 release for the
// HostedCluster and its NodePool; without a report it is held too (fail
// closed), pending while the ManifestWork is younger than the bound.
func TestHeldUpgrade(t *testing.T) {
	old, _ := upgradeSpec(t, rel418, rel418)
	work, _ := rendered(t, old)
	now := time.Now()
	work.CreationTimestamp = metav1.NewTime(now.Add(-time.Minute))
	report := `[{"namespace":"operators","name":"old-db.v1","max":"4.18"}]`
	fresh := olm.UpgradeReport{ObservedAt: now.Add(-10 * time.Second), ClusterVersion: &olm.Upgradeable{Status: "True"}}.Encode()
	str := func(name, v string) workv1.FeedbackValue {
		return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.String, String: ptr.To(v)}}
	}
	work.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{
		ResourceMeta:    workv1.ManifestResourceMeta{Resource: "hostedclusters", Name: "prod"},
		StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{str(fbOperatorLimits, report), str(fbUpgradeReport, fresh)}},
	}}

	next, hcd := upgradeSpec(t, rel419, rel419)
	decision, current := upgradeDecision(hcd, work, nil, "", now, 0)
	if !decision.Hold || len(decision.Blocking) != 1 || decision.Blocking[0] != (olm.Limit{Namespace: "operators", Name: "old-db.v1", MaxOpenShiftVersion: "4.18"}) {
		t.Fatalf("decision %+v", decision)
	}
	next.hold(hcd, nil, current)
	if _, d := rendered(t, next); d.release != rel418 || d.nodePools["workers"] != rel418 {
		t.Errorf("held upgrade renders %s and node pool %s, want both %s", d.release, d.nodePools["workers"], rel418)
	}
	heldHash, _ := InputHash(next, "c1", nil)
	free, _ := upgradeSpec(t, rel419, rel419)
	if freeHash, _ := InputHash(free, "c1", nil); freeHash == heldHash {
		t.Error("the hold does not change the input hash: releasing it would not rewrite the ManifestWork")
	}

	// The ClusterVersion blocks for another reason: held for that, and
	// named.
	work.Status.ResourceStatus.Manifests[0].StatusFeedbacks.Values = append(work.Status.ResourceStatus.Manifests[0].StatusFeedbacks.Values,
		str(fbUpgradeable, "False"), str(fbUpgradeableReason, "AdminAckRequired"), str(fbUpgradeableMessage, "ack it"))
	if decision, _ := upgradeDecision(hcd, work, nil, "", now, 0); !decision.Hold || decision.Reason != v1alpha1.ReasonClusterVersionNotUpgradeable ||
		!strings.Contains(decision.Message, "AdminAckRequired: ack it") {
		t.Errorf("not upgradeable: %+v", decision)
	}

	work.Status.ResourceStatus.Manifests = nil
	if decision, _ := upgradeDecision(hcd, work, nil, "", now, 0); !decision.Hold || decision.Reason != v1alpha1.ReasonUpgradeReportPending {
		t.Errorf("without a report: %+v", decision)
	}
}
