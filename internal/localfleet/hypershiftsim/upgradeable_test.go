package hypershiftsim

import (
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestIncompatibleOperators: OLM's rule as the stand-in plays it, from
// upstream's helpers.go: the next minor after the current version decides,
// copies count for nothing, unreadable properties block.
func TestIncompatibleOperators(t *testing.T) {
	csv := func(name, props string, labels map[string]string) operatorsv1alpha1.ClusterServiceVersion {
		c := operatorsv1alpha1.ClusterServiceVersion{}
		c.Namespace, c.Name, c.Labels = "operators", name, labels
		if props != "" {
			c.Annotations = map[string]string{olmPropertiesAnnotation: props}
		}
		return c
	}
	max := func(v string) string { return `{"properties":[{"type":"olm.maxOpenShiftVersion","value":` + v + `}]}` }
	csvs := []operatorsv1alpha1.ClusterServiceVersion{
		csv("old-db.v1", max(`"4.17"`), nil),
		csv("copy.v1", max(`"4.17"`), map[string]string{"olm.copiedFrom": "other"}),
		csv("fine.v1", max(`"4.18"`), nil),
		csv("none.v1", "", nil),
		csv("number.v1", max(`4.17`), nil),
		csv("patch.v1", max(`"4.17.1"`), nil),
		csv("empty.v1", max(`""`), nil),
		csv("twice.v1", `{"properties":[{"type":"olm.maxOpenShiftVersion","value":"4.19"},{"type":"olm.maxOpenShiftVersion","value":"4.20"}]}`, nil),
		csv("garbage.v1", "not json", nil),
	}
	skews, err := incompatibleOperators(csvs, "4.17.5")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range skews {
		got = append(got, s.name)
	}
	if want := "empty.v1 garbage.v1 number.v1 old-db.v1 patch.v1 twice.v1"; strings.Join(got, " ") != want {
		t.Errorf("incompatible %v, want %s", got, want)
	}
	status, reason, msg := olmUpgradeable(skews, "4.17.5")
	if status != "False" || reason != ReasonIncompatibleOperatorsInstalled ||
		!strings.Contains(msg, "to 4.18.0 or higher") || !strings.Contains(msg, "operators/old-db.v1 is incompatible with OpenShift minor versions greater than 4.17") {
		t.Errorf("Upgradeable %s %s %q", status, reason, msg)
	}
	// On 4.16 the next minor, 4.17, is supported by a 4.17 limit.
	if skews, _ := incompatibleOperators(csvs[:1], "4.16.9"); len(skews) != 0 {
		t.Errorf("4.17 limit on 4.16: %v", skews)
	}
}

// TestCVOUpgradeable: the ClusterVersion's Upgradeable from the
// ClusterOperators and admin gates, as the CVO aggregates them.
func TestCVOUpgradeable(t *testing.T) {
	co := func(name, reason string) configv1.ClusterOperator {
		c := configv1.ClusterOperator{}
		c.Name = name
		c.Status.Conditions = []configv1.ClusterOperatorStatusCondition{{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse, Reason: reason, Message: "why"}}
		return c
	}
	if c := cvoUpgradeable(nil, nil, nil, "4.17.5"); c != nil {
		t.Errorf("nothing blocks: %+v", c)
	}
	if c := cvoUpgradeable([]configv1.ClusterOperator{co("operator-lifecycle-manager", ReasonIncompatibleOperatorsInstalled)}, nil, nil, "4.17.5"); c == nil ||
		c.Reason != ReasonIncompatibleOperatorsInstalled || c.Message != "Cluster operator operator-lifecycle-manager should not be upgraded between minor versions: why" {
		t.Errorf("one operator: %+v", c)
	}
	if c := cvoUpgradeable([]configv1.ClusterOperator{co("a", "X"), co("b", "Y")}, nil, nil, "4.17.5"); c == nil || c.Reason != "ClusterOperatorsNotUpgradeable" {
		t.Errorf("two operators: %+v", c)
	}
	gates := map[string]string{"ack-4.17-kube-1.31-api-removals-in-4.18": "Kubernetes 1.31 removes APIs", "ack-4.16-old": "old"}
	if c := cvoUpgradeable(nil, gates, nil, "4.17.5"); c == nil || c.Reason != "AdminAckRequired" || c.Message != "Kubernetes 1.31 removes APIs" {
		t.Errorf("gate: %+v", c)
	}
	if c := cvoUpgradeable(nil, gates, map[string]string{"ack-4.17-kube-1.31-api-removals-in-4.18": "true"}, "4.17.5"); c != nil {
		t.Errorf("acked gate: %+v", c)
	}
	if c := cvoUpgradeable([]configv1.ClusterOperator{co("a", "X")}, gates, nil, "4.17.5"); c == nil || c.Reason != "MultipleReasons" ||
		!strings.HasPrefix(c.Message, "Cluster should not be upgraded between minor versions for multiple reasons: X,AdminAckRequired") {
		t.Errorf("two checks: %+v", c)
	}
}

func TestUpgradeBlocked(t *testing.T) {
	const (
		r4175 = "quay.io/openshift-release-dev/ocp-release:4.17.5-multi"
		r4176 = "quay.io/openshift-release-dev/ocp-release:4.17.6-multi"
		r4180 = "quay.io/openshift-release-dev/ocp-release:4.18.0-multi"
	)
	hc := func(image string, upgradeable metav1.ConditionStatus, annotations map[string]string) *hyperv1.HostedCluster {
		h := &hyperv1.HostedCluster{}
		h.Annotations = annotations
		h.Spec.Release.Image = image
		h.Status.Version = &hyperv1.ClusterVersionStatus{Desired: configv1.Release{Image: r4175, Version: "4.17.5"}}
		if upgradeable != "" {
			h.Status.Conditions = []metav1.Condition{{Type: string(hyperv1.ClusterVersionUpgradeable), Status: upgradeable}}
		}
		return h
	}
	for name, tc := range map[string]struct {
		hc      *hyperv1.HostedCluster
		blocked bool
	}{
		"minor upgrade, not upgradeable":         {hc(r4180, metav1.ConditionFalse, nil), true},
		"minor upgrade, upgradeable":             {hc(r4180, metav1.ConditionTrue, nil), false},
		"minor upgrade, no condition":            {hc(r4180, "", nil), false},
		"z-stream, not upgradeable":              {hc(r4176, metav1.ConditionFalse, nil), false},
		"no upgrade":                             {hc(r4175, metav1.ConditionFalse, nil), false},
		"forced to exactly this release":         {hc(r4180, metav1.ConditionFalse, map[string]string{hyperv1.ForceUpgradeToAnnotation: r4180}), false},
		"forced to another release":              {hc(r4180, metav1.ConditionFalse, map[string]string{hyperv1.ForceUpgradeToAnnotation: r4176}), true},
		"z-stream forced to another release too": {hc(r4176, metav1.ConditionFalse, map[string]string{hyperv1.ForceUpgradeToAnnotation: r4180}), true},
	} {
		if err := upgradeBlocked(tc.hc); (err != nil) != tc.blocked {
			t.Errorf("%s: blocked %v, want %v", name, err, tc.blocked)
		}
	}
}
