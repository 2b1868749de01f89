package agent

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// The agent answers the hub's revision of the HostingConfig ConfigMap with
// the operator's health, writes only when the answer changes, and never
// answers for content the ConfigMap no longer holds.
func TestReportOperatorHealth(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: addon.HostingConfigMap,
		Annotations: map[string]string{addon.HostingConfigRevisionAnnotation: "r1"}},
		Data: map[string]string{addon.HostingConfigKey: "{}"}}
	kube := fake.NewSimpleClientset(cm)
	env := &Env{Options: &Options{AddonNamespace: "ns", HostingConfigMap: addon.HostingConfigMap}, ManagedClient: kube, HostingConfig: newHostingConfigSource()}
	// load is what the hosting-config reconciler does on the ConfigMap's
	// events.
	load := func() *HostingConfig {
		t.Helper()
		live, err := kube.CoreV1().ConfigMaps("ns").Get(ctx, addon.HostingConfigMap, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hc, err := parseHostingConfig(live)
		if err != nil {
			t.Fatal(err)
		}
		env.HostingConfig.set(hc, live)
		return hc
	}
	patches := func() int {
		n := 0
		for _, a := range kube.Actions() {
			if a.GetVerb() == "patch" {
				n++
			}
		}
		return n
	}
	answer := func() string {
		t.Helper()
		return load().HealthyRevision
	}

	hc := load()
	if hc.Revision != "r1" {
		t.Fatalf("revision %q, want r1", hc.Revision)
	}
	steps := []struct {
		name    string
		hc      *HostingConfig
		healthy bool
		want    string
		patches int
	}{
		{"healthy", hc, true, "r1", 1},
		{"healthy again: no write", hc, true, "r1", 1},
		{"unhealthy: the answer is withdrawn", hc, false, "", 2},
		{"unhealthy again: no write", hc, false, "", 2},
		{"an older content is not answered", &HostingConfig{Revision: "r0"}, true, "", 2},
		{"healthy once more", hc, true, "r1", 3},
	}
	for _, s := range steps {
		if err := env.ReportOperatorHealth(ctx, s.hc, s.healthy); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := answer(); got != s.want {
			t.Errorf("%s: answer %q, want %q", s.name, got, s.want)
		}
		if got := patches(); got != s.patches {
			t.Errorf("%s: %d patches so far, want %d", s.name, got, s.patches)
		}
	}

	// The cache has not seen the last answer yet: a withdrawal is still
	// written.
	stale := *hc
	stale.HealthyRevision = ""
	env.HostingConfig.set(&stale, cm)
	if err := env.ReportOperatorHealth(ctx, hc, false); err != nil {
		t.Fatal(err)
	}
	if got := patches(); got != 4 {
		t.Errorf("a withdrawal over a stale cache: %d patches, want 4", got)
	}
	if got := answer(); got != "" {
		t.Errorf("answer %q after the withdrawal, want none", got)
	}

	// A ConfigMap from a hub that renders no revision is never answered.
	legacy := &HostingConfig{Spec: []byte("{}")}
	env.HostingConfig.set(legacy, cm)
	if err := env.ReportOperatorHealth(ctx, legacy, true); err != nil {
		t.Fatal(err)
	}
	if got := patches(); got != 4 {
		t.Errorf("a ConfigMap without revision was patched: %d patches", got)
	}
}
