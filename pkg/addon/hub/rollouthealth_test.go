package hub

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	workv1 "open-cluster-management.io/api/work/v1"
	"open-cluster-management.io/ocm/pkg/work/spoke/conditions"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// The rules are evaluated by the OCM work agent's own condition reader, so
// an expression its CEL environment rejects fails here.
func TestRolloutHealthRules(t *testing.T) {
	reader, err := conditions.NewConditionReader()
	if err != nil {
		t.Fatal(err)
	}
	configs := rolloutHealthManifestConfigs()
	rules := func(resource string) []workv1.ConditionRule {
		for _, c := range configs {
			if c.ResourceIdentifier.Resource == resource {
				return c.ConditionRules
			}
		}
		t.Fatalf("no rule for %s", resource)
		return nil
	}
	deployment := func(status map[string]any) *unstructured.Unstructured {
		obj := map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": AgentDeployment, "namespace": "hcp-fleet-agent", "generation": int64(2)},
			"spec":     map[string]any{"replicas": int64(1)},
		}
		if status != nil {
			obj["status"] = status
		}
		return &unstructured.Unstructured{Object: obj}
	}
	configMap := func(annotations map[string]any) *unstructured.Unstructured {
		meta := map[string]any{"name": addon.HostingConfigMap, "namespace": "hcp-fleet-agent"}
		if annotations != nil {
			meta["annotations"] = annotations
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}}
	}
	for _, tc := range []struct {
		name     string
		obj      *unstructured.Unstructured
		resource string
		want     metav1.ConditionStatus
		message  string
	}{
		{"rolled out and available", deployment(map[string]any{"observedGeneration": int64(2), "replicas": int64(1), "updatedReplicas": int64(1), "availableReplicas": int64(1)}),
			"deployments", metav1.ConditionTrue, "rolled out and is available"},
		{"spec not seen yet", deployment(map[string]any{"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1), "availableReplicas": int64(1)}),
			"deployments", metav1.ConditionFalse, "1 of 1 replicas available"},
		{"old replica left", deployment(map[string]any{"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(1), "availableReplicas": int64(1)}),
			"deployments", metav1.ConditionFalse, "not rolled out"},
		{"new replica crash-loops", deployment(map[string]any{"observedGeneration": int64(2), "replicas": int64(1), "updatedReplicas": int64(1), "availableReplicas": int64(0)}),
			"deployments", metav1.ConditionFalse, "0 of 1 replicas available"},
		{"no status", deployment(nil), "deployments", metav1.ConditionFalse, "not rolled out"},
		{"healthy with this revision", configMap(map[string]any{addon.HostingConfigRevisionAnnotation: "abc", addon.OperatorHealthyRevisionAnnotation: "abc"}),
			"configmaps", metav1.ConditionTrue, "healthy with HostingConfig revision abc"},
		{"healthy with an older revision", configMap(map[string]any{addon.HostingConfigRevisionAnnotation: "abc", addon.OperatorHealthyRevisionAnnotation: "old"}),
			"configmaps", metav1.ConditionFalse, "has not reported the HyperShift operator healthy with HostingConfig revision abc (see the add-on's HyperShiftOperatorInstalled"},
		{"no answer", configMap(map[string]any{addon.HostingConfigRevisionAnnotation: "abc"}), "configmaps", metav1.ConditionFalse, "revision abc"},
		// An older hub renders no revision: nothing to answer, never
		// Available by accident.
		{"no revision, no answer", configMap(nil), "configmaps", metav1.ConditionFalse, "has not reported"},
		{"no revision, an answer", configMap(map[string]any{addon.OperatorHealthyRevisionAnnotation: ""}), "configmaps", metav1.ConditionFalse, "has not reported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := reader.EvaluateConditions(context.Background(), tc.obj, rules(tc.resource))
			if len(got) != 1 {
				t.Fatalf("conditions %+v, want one", got)
			}
			c := got[0]
			if c.Type != workv1.ManifestAvailable || c.Status != tc.want || c.Reason != workv1.ConditionRuleEvaluated || !strings.Contains(c.Message, tc.message) {
				t.Errorf("got %s=%s %s %q, want %s=%s with %q", c.Type, c.Status, c.Reason, c.Message, workv1.ManifestAvailable, tc.want, tc.message)
			}
		})
	}
}

// The addon-framework merges a ManifestConfig with the health prober's of
// the same resource identifier and drops its condition rules: the rules must
// name other identifiers.
func TestRolloutHealthRulesSurviveTheProbe(t *testing.T) {
	for _, probe := range healthProber().WorkProber.ProbeFields {
		for _, c := range rolloutHealthManifestConfigs() {
			if c.ResourceIdentifier == probe.ResourceIdentifier {
				t.Errorf("condition rules on %+v share the health prober's identifier", c.ResourceIdentifier)
			}
		}
	}
}

func TestHostingConfigRevision(t *testing.T) {
	base := hostingConfigRevision(`{"operator":{"image":"a"}}`, "hcp-fleet/default", "")
	if len(base) != 16 {
		t.Errorf("revision %q, want 16 hex digits", base)
	}
	if got := hostingConfigRevision(`{"operator":{"image":"a"}}`, "hcp-fleet/default", ""); got != base {
		t.Errorf("the same content has revisions %s and %s", base, got)
	}
	for _, other := range [][3]string{
		{`{"operator":{"image":"b"}}`, "hcp-fleet/default", ""},
		{`{"operator":{"image":"a"}}`, "hcp-fleet/other", ""},
		{`{"operator":{"image":"a"}}`, "hcp-fleet/default", `["missing"]`},
		// Parts do not run into each other.
		{`{"operator":{"image":"a"}}hcp-fleet/default`, "", ""},
	} {
		if got := hostingConfigRevision(other[0], other[1], other[2]); got == base {
			t.Errorf("%q has the revision of the base content", other)
		}
	}
}

// The HostingConfig ConfigMap carries the revision of exactly what it hands
// the agent, and a changed spec is a new revision.
func TestHostingConfigMapCarriesRevision(t *testing.T) {
	revision := func(v agentValues) string {
		t.Helper()
		objs, err := RenderAgent(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, cm := range find[*corev1.ConfigMap](objs) {
			if cm.Name == addon.HostingConfigMap {
				if want := hostingConfigRevision(cm.Data[addon.HostingConfigKey], cm.Data[addon.HostingConfigRefKey], cm.Data[addon.CredentialProblemsKey]); cm.Annotations[addon.HostingConfigRevisionAnnotation] != want {
					t.Errorf("annotations %v, want %s=%s", cm.Annotations, addon.HostingConfigRevisionAnnotation, want)
				}
				return cm.Annotations[addon.HostingConfigRevisionAnnotation]
			}
		}
		t.Fatalf("no ConfigMap %s rendered", addon.HostingConfigMap)
		return ""
	}
	v := values()
	before := revision(v)
	v.HostingConfigSpec = `{"capiMode":"Auto","operator":{"image":"example.com/hypershift:next"}}`
	if after := revision(v); after == before {
		t.Errorf("a new operator image kept revision %s", before)
	}
}
