package hypershiftsim

import (
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

func TestUpgradeableCondition(t *testing.T) {
	limits := []olm.Limit{{Namespace: "operators", Name: "old-db.v1", MaxOpenShiftVersion: "4.17"}}
	if c := upgradeableCondition(limits, "4.17.5", 3); c.Status != metav1.ConditionFalse || c.Reason != ReasonIncompatibleOperatorsInstalled ||
		!strings.Contains(c.Message, "operators/old-db.v1") || c.ObservedGeneration != 3 {
		t.Errorf("a 4.17 limit on a 4.17 cluster: %+v", c)
	}
	if c := upgradeableCondition(limits, "4.16.9", 3); c.Status != metav1.ConditionTrue {
		t.Errorf("a 4.17 limit on a 4.16 cluster (next minor 4.17 is supported): %+v", c)
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
