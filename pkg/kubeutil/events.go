package kubeutil

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// ConditionPolarity says which status of a condition type is healthy, or
// "" when neither is a problem.
type ConditionPolarity func(conditionType string) (healthy metav1.ConditionStatus)

// TrueIsHealthy is the usual polarity: True is healthy, except for types
// named ...Degraded or ...Blocked (healthy when False) and ...Progressing
// (neither).
func TrueIsHealthy(conditionType string) metav1.ConditionStatus {
	switch {
	case strings.HasSuffix(conditionType, "Progressing"):
		return ""
	case strings.HasSuffix(conditionType, "Degraded") || strings.HasSuffix(conditionType, "Blocked"):
		return metav1.ConditionFalse
	}
	return metav1.ConditionTrue
}

// RecordConditionTransitions records one Event on obj for each condition of
// applied whose status or reason differs from the same type in live (or
// that live lacks): the transitions a user follows with kubectl describe or
// kubectl get events. A message-only change records nothing (messages carry
// counts that change often). The event's reason is the condition's reason,
// or its type where the reason is the generic AsExpected. The message names
// the condition, its status and reason, what it was before, and detail
// (when not empty) — never the condition's message, which may name Secrets
// (a missing pull secret, the mirrored kubeconfig): events reach audiences
// that may not read the object, and carry no Secret names or values. A
// condition in its unhealthy state (polarity) is a Warning unless
// inProgress says its reason is expected on the way (e.g. waiting for a
// rollout); everything else is Normal. recorder may be nil.
func RecordConditionTransitions(recorder record.EventRecorder, obj runtime.Object, live, applied []metav1.Condition, polarity ConditionPolarity, inProgress func(reason string) bool, detail string) {
	if recorder == nil {
		return
	}
	for _, c := range applied {
		old := meta.FindStatusCondition(live, c.Type)
		if old != nil && old.Status == c.Status && old.Reason == c.Reason {
			continue
		}
		eventType := corev1.EventTypeNormal
		if healthy := polarity(c.Type); healthy != "" && c.Status != healthy && c.Status != metav1.ConditionUnknown &&
			(inProgress == nil || !inProgress(c.Reason)) {
			eventType = corev1.EventTypeWarning
		}
		reason := c.Reason
		if reason == "AsExpected" || reason == "" {
			reason = c.Type
		}
		msg := fmt.Sprintf("%s is %s (%s)", c.Type, c.Status, c.Reason)
		if old != nil {
			msg += fmt.Sprintf(", was %s (%s)", old.Status, old.Reason)
		}
		if detail != "" {
			msg += "; " + detail
		}
		msg += "; the condition's message says more"
		recorder.Event(obj, eventType, reason, msg)
	}
}
