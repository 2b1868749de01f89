package kubeutil

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

func TestRecordConditionTransitions(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message}
	}
	live := []metav1.Condition{
		cond("Scheduled", metav1.ConditionFalse, "CapacityExhausted", "all full"),
		cond("Delivered", metav1.ConditionFalse, "WaitingForApply", "1 of 2"),
		cond("Degraded", metav1.ConditionFalse, "AsExpected", "fine"),
	}
	applied := []metav1.Condition{
		// status flip: an event naming both states
		cond("Scheduled", metav1.ConditionTrue, "Scheduled", "onto cluster-1"),
		// message only: none
		cond("Delivered", metav1.ConditionFalse, "WaitingForApply", "2 of 2"),
		// unhealthy, secret name in the message: a Warning without the message
		cond("Degraded", metav1.ConditionTrue, "ReferencedObjectNotFound", "Secret ns/very-secret-name not found"),
		// new, healthy with the generic reason: the type is the reason
		cond("Available", metav1.ConditionTrue, "AsExpected", "up"),
		// new, unhealthy but on the way: Normal
		cond("Imported", metav1.ConditionFalse, "WaitingForAvailable", "later"),
		// Progressing is neither healthy nor not
		cond("Progressing", metav1.ConditionFalse, "AsExpected", "done"),
		// Unknown is never a Warning
		cond("NodePoolsReady", metav1.ConditionUnknown, "StatusUnknown", "?"),
	}
	rec := record.NewFakeRecorder(20)
	RecordConditionTransitions(rec, &corev1.ConfigMap{}, live, applied, TrueIsHealthy,
		func(r string) bool { return r == "WaitingForAvailable" }, "management cluster cluster-1")
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		if strings.Contains(e, "very-secret-name") {
			t.Errorf("event carries the condition's message: %q", e)
		}
		if !strings.Contains(e, "management cluster cluster-1") {
			t.Errorf("event lacks the detail: %q", e)
		}
		got = append(got, e[:strings.Index(e, " is ")])
	}
	want := []string{
		"Normal Scheduled Scheduled",
		"Warning ReferencedObjectNotFound Degraded",
		"Normal Available Available",
		"Normal WaitingForAvailable Imported",
		"Normal Progressing Progressing",
		"Normal StatusUnknown NodePoolsReady",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events\n got %q\nwant %q", got, want)
	}
	// The nil recorder records nothing and does not panic.
	RecordConditionTransitions(nil, &corev1.ConfigMap{}, nil, applied, TrueIsHealthy, nil, "")
}
