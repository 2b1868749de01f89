package operator

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestDeploymentProblem(t *testing.T) {
	cond := func(typ appsv1.DeploymentConditionType, status corev1.ConditionStatus) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{Type: typ, Status: status, Reason: "R", Message: "m"}
	}
	for _, tc := range []struct {
		name  string
		conds []appsv1.DeploymentCondition
		want  string
	}{
		{"available", []appsv1.DeploymentCondition{cond(appsv1.DeploymentAvailable, corev1.ConditionTrue)}, ""},
		{"unavailable", []appsv1.DeploymentCondition{cond(appsv1.DeploymentAvailable, corev1.ConditionFalse)}, "; R: m"},
		{"replica failure", []appsv1.DeploymentCondition{cond(appsv1.DeploymentReplicaFailure, corev1.ConditionTrue)}, "; R: m"},
		{"no replica failure", []appsv1.DeploymentCondition{cond(appsv1.DeploymentReplicaFailure, corev1.ConditionFalse)}, ""},
	} {
		d := &appsv1.Deployment{Status: appsv1.DeploymentStatus{Conditions: tc.conds}}
		if got := deploymentProblem(d); got != tc.want {
			t.Errorf("%s: deploymentProblem = %q, want %q", tc.name, got, tc.want)
		}
	}
}
