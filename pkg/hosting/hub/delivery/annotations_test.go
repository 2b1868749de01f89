package delivery

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

func TestAnnotationPolicy(t *testing.T) {
	for _, tc := range []struct {
		name             string
		allowed          string
		copied, refusedK []string
	}{
		{
			name:    "default",
			allowed: DefaultHostedClusterAnnotations,
			copied:  []string{"team", "example.com/owner", "hypershift.openshift.io/cleanup-cloud-resources", "openshift.io/x", "hypershiftsim.example.com/degraded"},
			refusedK: []string{
				"hypershift.openshift.io/control-plane-operator-image", "hypershift.openshift.io/image-overrides",
				"hypershift.openshift.io/disable-pki-reconciliation", "hypershift.openshift.io/pod-security-admission-label-override",
				"hypershift.openshift.io/force-upgrade-to", "Hypershift.OpenShift.IO/control-plane-operator-image",
				"resource-request-override.hypershift.openshift.io/kube-apiserver.kube-apiserver",
				"hcpfleet.io/input-hash", "hypershiftsim.hcpfleet.io/degraded", "kubernetes.io/x", "node.k8s.io/x",
				"cluster.open-cluster-management.io/clusterset", "hypershift.openshift.io/migration-failed",
			},
		},
		{
			name:     "none allowed",
			allowed:  "",
			copied:   []string{"team", "example.com/owner"},
			refusedK: []string{"hypershift.openshift.io/cleanup-cloud-resources"},
		},
		{
			name:    "patterns",
			allowed: "hypershiftsim.hcpfleet.io/*, hypershift.openshift.io/*,resource-request-override.hypershift.openshift.io/*",
			copied: []string{"hypershiftsim.hcpfleet.io/degraded", "hypershift.openshift.io/control-plane-operator-image",
				"resource-request-override.hypershift.openshift.io/kube-apiserver.kube-apiserver"},
			refusedK: []string{"sub.hypershift.openshift.io/x", "kubernetes.io/x"},
		},
		{
			name:    "owned keys never pass",
			allowed: "hcpfleet.io/*,*/*,hypershift.openshift.io/migration-in-progress,hypershift.openshift.io/migration-failed",
			copied:  []string{"kubernetes.io/x", "hypershift.openshift.io/x"},
			refusedK: []string{"hcpfleet.io/input-hash", "HCPFleet.io/abandon-hosted-cluster",
				"hypershift.openshift.io/migration-in-progress", "hypershift.openshift.io/migration-failed"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseAnnotationPolicy(tc.allowed)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tc.copied {
				if !p.Allows(k) {
					t.Errorf("%s not copied", k)
				}
			}
			for _, k := range tc.refusedK {
				if p.Allows(k) {
					t.Errorf("%s copied", k)
				}
			}
		})
	}
	if _, err := ParseAnnotationPolicy("a/[b"); err == nil {
		t.Error("a malformed pattern was accepted")
	}
}

func TestAnnotationPolicyFilter(t *testing.T) {
	p, _ := ParseAnnotationPolicy(DefaultHostedClusterAnnotations)
	copied, dropped := p.Filter(map[string]string{
		"team": "a", "hypershift.openshift.io/image-overrides": "x", "hcpfleet.io/y": "z", "example.com/owner": "b",
	})
	if len(copied) != 2 || copied["team"] != "a" || copied["example.com/owner"] != "b" {
		t.Errorf("copied %v", copied)
	}
	if !slices.Equal(dropped, []string{"hcpfleet.io/y", "hypershift.openshift.io/image-overrides"}) {
		t.Errorf("dropped %v", dropped)
	}
	if copied, dropped := p.Filter(nil); copied != nil || dropped != nil {
		t.Errorf("nothing: copied %v dropped %v", copied, dropped)
	}
}

// annotatedSpec is testSpec with spec.hostedCluster.annotations.
func annotatedSpec(t *testing.T, annotations map[string]any, allowed string) Spec {
	t.Helper()
	s := testSpec(t)
	s.HostedCluster["annotations"] = annotations
	var err error
	if s.Annotations, err = ParseAnnotationPolicy(allowed); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRenderFiltersHostedClusterAnnotations(t *testing.T) {
	const evil = "hypershift.openshift.io/control-plane-operator-image"
	s := annotatedSpec(t, map[string]any{evil: "evil.example.com/cpo", "example.com/owner": "team-a"}, DefaultHostedClusterAnnotations)
	referenced := map[string]*unstructured.Unstructured{}
	for _, r := range s.References() {
		referenced[r.Kind+"/"+r.Name] = &unstructured.Unstructured{Object: map[string]any{}}
	}
	hostedCluster := func(w *workv1.ManifestWork) *unstructured.Unstructured {
		for _, m := range w.Spec.Workload.Manifests {
			var o map[string]any
			if err := json.Unmarshal(m.Raw, &o); err != nil {
				t.Fatal(err)
			}
			if o["kind"] == "HostedCluster" {
				return &unstructured.Unstructured{Object: o}
			}
		}
		t.Fatal("no HostedCluster")
		return nil
	}
	work, err := Render(s, "cluster-1", referenced, "h")
	if err != nil {
		t.Fatal(err)
	}
	if a := hostedCluster(work).GetAnnotations(); a["example.com/owner"] != "team-a" || a[evil] != "" || len(a) != 1 {
		t.Errorf("HostedCluster annotations %v", a)
	}

	// The admin allows it: it passes, and the input hash changes.
	allowed := annotatedSpec(t, map[string]any{evil: "evil.example.com/cpo", "example.com/owner": "team-a"}, "hypershift.openshift.io/*")
	if work, err = Render(allowed, "cluster-1", referenced, "h"); err != nil {
		t.Fatal(err)
	}
	if a := hostedCluster(work).GetAnnotations(); a[evil] != "evil.example.com/cpo" {
		t.Errorf("allowed: HostedCluster annotations %v", a)
	}
	h1, _ := InputHash(s, "c1", nil)
	h2, _ := InputHash(allowed, "c1", nil)
	if h1 == h2 {
		t.Error("the input hash ignores what the policy drops")
	}
}

// TestInputHashStableWithoutDroppedAnnotations: a HostedClusterDeployment
// whose annotations all pass has the same hash whatever the policy.
func TestInputHashStableWithoutDroppedAnnotations(t *testing.T) {
	s := annotatedSpec(t, map[string]any{"example.com/owner": "team-a"}, DefaultHostedClusterAnnotations)
	got, _ := InputHash(s, "c1", map[string]string{"Secret/pull-secret": "1"})
	s.Annotations = AnnotationPolicy{}
	if other, _ := InputHash(s, "c1", map[string]string{"Secret/pull-secret": "1"}); other != got {
		t.Error("the hash depends on the policy though nothing is dropped")
	}
}

func TestDeliveredNamesDroppedAnnotations(t *testing.T) {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: "w", Generation: 1}}
	w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 1}}
	status, reason, msg := deliveredCondition(Observed{Work: w, DroppedAnnotations: []string{"hypershift.openshift.io/image-overrides"}})
	if status != metav1.ConditionTrue || reason != v1alpha1.ReasonApplied || !strings.Contains(msg, "hypershift.openshift.io/image-overrides") {
		t.Errorf("Delivered %s %s %q", status, reason, msg)
	}
	if _, _, msg := deliveredCondition(Observed{Work: w}); strings.Contains(msg, "annotations") {
		t.Errorf("nothing dropped: %q", msg)
	}
	var many []string
	for i := range 12 {
		many = append(many, "hcpfleet.io/k"+string(rune('a'+i)))
	}
	if _, _, msg := deliveredCondition(Observed{Work: w, DroppedAnnotations: many}); !strings.Contains(msg, "and 2 more") {
		t.Errorf("many dropped: %q", msg)
	}
}

// NodePool annotations go through the same policy (HyperShift reads
// overrides from them too), and their dropped keys are named with the node
// pool.
func TestRenderFiltersNodePoolAnnotations(t *testing.T) {
	const evil = "hypershift.openshift.io/nodepool-image-override"
	s := annotatedSpec(t, nil, DefaultHostedClusterAnnotations)
	delete(s.HostedCluster, "annotations")
	s.NodePools[0]["annotations"] = map[string]any{evil: "evil.example.com/rhcos", "example.com/owner": "team-a", "hcpfleet.io/hcd-name": "other"}
	referenced := map[string]*unstructured.Unstructured{}
	for _, r := range s.References() {
		referenced[r.Kind+"/"+r.Name] = &unstructured.Unstructured{Object: map[string]any{}}
	}
	work, err := Render(s, "cluster-1", referenced, "h")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range work.Spec.Workload.Manifests {
		var o map[string]any
		if err := json.Unmarshal(m.Raw, &o); err != nil {
			t.Fatal(err)
		}
		if o["kind"] != "NodePool" {
			continue
		}
		found = true
		if a := (&unstructured.Unstructured{Object: o}).GetAnnotations(); a["example.com/owner"] != "team-a" || len(a) != 1 {
			t.Errorf("NodePool annotations %v", a)
		}
	}
	if !found {
		t.Fatal("no NodePool")
	}
	name, _ := s.NodePools[0]["name"].(string)
	if got, want := s.DroppedAnnotations(), []string{name + ": hcpfleet.io/hcd-name", name + ": " + evil}; !slices.Equal(got, want) {
		t.Errorf("dropped %q, want %q", got, want)
	}
}
