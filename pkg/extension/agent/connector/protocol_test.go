package connector

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// TestHashAndPredicate: a report answers exactly one request and delete
// list, and the connector's own report writes do not wake it.
func TestHashAndPredicate(t *testing.T) {
	if Hash("a", "b") == Hash("a", "c") || Hash("ab", "") == Hash("a", "b") {
		t.Fatal("different requests hash alike")
	}
	cm := func(req, report string) *corev1.ConfigMap {
		return &corev1.ConfigMap{Data: map[string]string{KeyRequest: req, KeyReport: report}}
	}
	p := requestChanged{}
	if p.Update(event.UpdateEvent{ObjectOld: cm("r", "1"), ObjectNew: cm("r", "2")}) {
		t.Error("a report write woke the connector")
	}
	if !p.Update(event.UpdateEvent{ObjectOld: cm("r", "1"), ObjectNew: cm("s", "1")}) {
		t.Error("a new request did not wake the connector")
	}
	if RequestName("hcpfleet-extension-a", "guest") != "hcpfleet-extension-a.phase.guest" {
		t.Errorf("request name %q", RequestName("hcpfleet-extension-a", "guest"))
	}
}
