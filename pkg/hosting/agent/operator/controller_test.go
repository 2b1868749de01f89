package operator

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
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

func TestHostedClustersExistMessage(t *testing.T) {
	page := func(n int, remaining *int64, cont string) *unstructured.UnstructuredList {
		l := &unstructured.UnstructuredList{}
		for i := range n {
			hc := unstructured.Unstructured{}
			hc.SetNamespace("clusters")
			hc.SetName(fmt.Sprintf("hc-%d", i))
			l.Items = append(l.Items, hc)
		}
		l.SetRemainingItemCount(remaining)
		l.SetContinue(cont)
		return l
	}
	for _, tc := range []struct {
		name string
		page *unstructured.UnstructuredList
		want string
	}{
		{"all on one page", page(2, nil, ""), "2 HostedClusters still run on this cluster (clusters/hc-0, clusters/hc-1): "},
		{"counted rest", page(10, ptr.To[int64](490), "token"), "500 HostedClusters still run on this cluster (clusters/hc-0, "},
		{"uncounted rest", page(10, nil, "token"), "More than 10 HostedClusters still run on this cluster ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := hostedClustersExistMessage(tc.page)
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got %q, want prefix %q", got, tc.want)
			}
			if strings.Count(got, "clusters/") != len(tc.page.Items) {
				t.Errorf("names %d HostedClusters, want the %d of the page: %q", strings.Count(got, "clusters/"), len(tc.page.Items), got)
			}
		})
	}
}

// TestRolloutPhase: a Deployment counts rolled out as `kubectl rollout
// status` decides; an old replica still available while the new one is not
// (a crash-looping image) is not a healthy operator.
func TestRolloutPhase(t *testing.T) {
	for _, tc := range []struct {
		name string
		gen  int64
		st   appsv1.DeploymentStatus
		want string
	}{
		{"spec not seen yet", 2, appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}, "RollingOut"},
		{"not updated", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 0, AvailableReplicas: 1}, "RollingOut"},
		{"old replica left, still available", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 1, AvailableReplicas: 1}, "RollingOut"},
		{"updated, not available", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 0}, "WaitingForAvailability"},
		{"done", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}, ""},
	} {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: tc.gen}, Status: tc.st}
		if got := rolloutPhase(d, 1); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
