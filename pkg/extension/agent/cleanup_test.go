package agent

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

func release(ns, name string, held bool, deletedAgo time.Duration, now time.Time) corev1.ConfigMap {
	cm := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if held {
		cm.Finalizers = []string{"other", extension.Finalizer}
	}
	if deletedAgo > 0 {
		t := metav1.NewTime(now.Add(-deletedAgo))
		cm.DeletionTimestamp = &t
	}
	return cm
}

func names(cms []corev1.ConfigMap) []string {
	var out []string
	for _, cm := range cms {
		out = append(out, cm.Namespace+"/"+cm.Name)
	}
	return out
}

func TestSortReleasesAtCleanup(t *testing.T) {
	now := time.Now()
	grace := 3 * time.Minute
	got := sortReleases([]corev1.ConfigMap{
		release("clusters-a", "active", true, 0, now),
		release("clusters-b", "tearing", true, time.Minute, now),
		release("clusters-c", "overdue", true, 4*time.Minute, now),
		release("clusters-d", "released", false, 5*time.Minute, now), // finalizer gone: not the cleanup's business
		release("clusters-e", "never-held", false, 0, now),
	}, now, grace)
	for what, pair := range map[string][2][]string{
		"active":      {names(got.active), {"clusters-a/active"}},
		"tearingDown": {names(got.tearingDown), {"clusters-b/tearing"}},
		"overdue":     {names(got.overdue), {"clusters-c/overdue"}},
	} {
		if strings.Join(pair[0], ",") != strings.Join(pair[1], ",") {
			t.Errorf("%s = %v, want %v", what, pair[0], pair[1])
		}
	}
}

func TestActiveMessageNamesAtMostFive(t *testing.T) {
	now := time.Now()
	var active []corev1.ConfigMap
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		active = append(active, release("clusters-"+n, "hcpfleet-extension-x", true, 0, now))
	}
	msg := activeMessage(active)
	for _, want := range []string{"clusters-a/hcpfleet-extension-x", "clusters-e/hcpfleet-extension-x", "and 2 more", "HostedClusterDeployments"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "clusters-f/") {
		t.Errorf("message %q names more than five", msg)
	}
}
