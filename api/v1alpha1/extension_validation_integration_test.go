//go:build integration

package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// validExtension is a small HostedClusterExtension the schema accepts.
const validExtension = `
apiVersion: hcpfleet.io/v1alpha1
kind: HostedClusterExtension
metadata:
  name: valid
  namespace: validation
spec:
  hostedClusterSelector: {matchLabels: {env: test}}
  strategy:
    type: RollingUpgrade
    rollingUpgrade: {maxUnavailable: 2}
  availabilityProbes:
  - selector: {kind: {group: apps, kind: Deployment}}
    probes:
    - condition: {type: Available, status: "True"}
    - fieldsEqual: {fieldA: .status.updatedReplicas, fieldB: .status.replicas}
    - cel: {rule: "self.status.readyReplicas >= 1", message: no ready replica}
  phases:
  - name: rbac
    class: hosted-cluster
    objects:
    - object: {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: reader}, rules: []}
  - name: deploy
    objects:
    - object: {apiVersion: apps/v1, kind: Deployment, metadata: {name: op}, spec: {selector: {matchLabels: {a: b}}}}
`

// TestExtensionValidation: the API server refuses malformed phases, probes
// and strategies, each with a message that says what is wrong; the base
// object and its legitimate variations are accepted. What the objects of a
// phase may be is checked by pkg/extension.Validate (see ExtensionObject).
func TestExtensionValidation(t *testing.T) {
	ensureNamespace(t, validationNamespace)
	obj := func(o map[string]any) []any { return []any{map[string]any{"object": o}} }
	phase := func(class string, o map[string]any) []any {
		p := map[string]any{"name": "p", "objects": obj(o)}
		if class != "" {
			p["class"] = class
		}
		return []any{p}
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}
	rejects := []struct {
		name  string
		path  []string
		value any
		want  string
	}{
		{"unknown class", []string{"spec", "phases"},
			[]any{map[string]any{"name": "p", "class": "guest", "objects": obj(cm)}},
			`Unsupported value: "guest"`},
		{"duplicate phase", []string{"spec", "phases"},
			[]any{map[string]any{"name": "p", "objects": obj(cm)}, map[string]any{"name": "p", "objects": obj(cm)}},
			"Duplicate value"},
		{"no phases", []string{"spec", "phases"}, []any{}, "should have at least 1 items"},
		{"two probes in one", []string{"spec", "availabilityProbes"},
			[]any{map[string]any{"selector": map[string]any{"kind": map[string]any{"kind": "ConfigMap"}},
				"probes": []any{map[string]any{"condition": map[string]any{"type": "A", "status": "True"},
					"cel": map[string]any{"rule": "true", "message": "m"}}}}},
			"set exactly one of condition, fieldsEqual and cel"},
		{"fieldsEqual path", []string{"spec", "availabilityProbes"},
			[]any{map[string]any{"selector": map[string]any{"kind": map[string]any{"kind": "ConfigMap"}},
				"probes": []any{map[string]any{"fieldsEqual": map[string]any{"fieldA": "status.a", "fieldB": ".status.b"}}}}},
			"fieldsEqual paths start with '.'"},
		{"rolling without its settings", []string{"spec", "strategy"},
			map[string]any{"type": "RollingUpgrade"}, "spec.strategy.rollingUpgrade is required with type RollingUpgrade"},
		{"maxUnavailable zero", []string{"spec", "strategy", "rollingUpgrade", "maxUnavailable"}, int64(0),
			"maxUnavailable must be a number of at least 1"},
		{"maxUnavailable 0%", []string{"spec", "strategy", "rollingUpgrade", "maxUnavailable"}, "0%",
			"maxUnavailable must be a number of at least 1"},
		{"bad name", []string{"metadata", "name"}, "a.b", "metadata.name must be a lowercase RFC 1123 label"},
		{"unknown collision protection", []string{"spec", "phases"},
			[]any{map[string]any{"name": "p", "class": "hosted-cluster", "objects": []any{map[string]any{"object": cm, "collisionProtection": "None"}}}},
			`Unsupported value: "None"`},
		{"adoption next to the control plane", []string{"spec", "phases"},
			[]any{map[string]any{"name": "p", "objects": []any{map[string]any{"object": cm, "collisionProtection": "IfNoController"}}}},
			"collisionProtection IfNoController is allowed in hosted-cluster phases only"},
		{"rollback to revision 0", []string{"spec", "rollbackTo"}, map[string]any{"revision": int64(0)}, "should be greater than or equal to 1"},
		{"rollback without a revision", []string{"spec", "rollbackTo"}, map[string]any{}, "spec.rollbackTo.revision: Required value"},
		{"negative history", []string{"spec", "revisionHistoryLimit"}, int64(-1), "should be greater than or equal to 0"},
		{"history too long", []string{"spec", "revisionHistoryLimit"}, int64(101), "should be less than or equal to 100"},
	}
	for _, tc := range rejects {
		t.Run(tc.name, func(t *testing.T) {
			o := mustObject(t, validExtension)
			mustSet(t, o.Object, tc.value, tc.path...)
			err := k8s.Create(context.Background(), o, client.DryRunAll)
			if err == nil {
				t.Fatalf("accepted; want rejection with %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("rejected with\n  %v\nwant the message to contain\n  %q", err, tc.want)
			}
		})
	}
	accepts := []struct {
		name  string
		path  []string
		value any
	}{
		{"base", []string{"metadata", "name"}, "valid"},
		{"instant", []string{"spec", "strategy"}, map[string]any{"type": "Instant"}},
		{"percentage", []string{"spec", "strategy", "rollingUpgrade", "maxUnavailable"}, "25%"},
		{"namespaces and RBAC in the guest", []string{"spec", "phases"},
			phase("hosted-cluster", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "x"}})},
		{"adoption in the guest", []string{"spec", "phases"},
			[]any{map[string]any{"name": "p", "class": "hosted-cluster", "objects": []any{map[string]any{"object": cm, "collisionProtection": "IfNoController"}}}}},
		{"prevent next to the control plane", []string{"spec", "phases"},
			[]any{map[string]any{"name": "p", "objects": []any{map[string]any{"object": cm, "collisionProtection": "Prevent"}}}}},
		{"paused", []string{"spec", "strategy", "paused"}, true},
		{"rollback", []string{"spec", "rollbackTo"}, map[string]any{"revision": int64(3)}},
		{"no history", []string{"spec", "revisionHistoryLimit"}, int64(0)},
		{"core probe group", []string{"spec", "availabilityProbes"},
			[]any{map[string]any{"selector": map[string]any{"kind": map[string]any{"group": "", "kind": "ConfigMap"},
				"selector": map[string]any{"matchLabels": map[string]any{"a": "b"}}},
				"probes": []any{map[string]any{"cel": map[string]any{"rule": "has(self.data)", "message": "no data"}}}}}},
	}
	for _, tc := range accepts {
		t.Run("accepts "+tc.name, func(t *testing.T) {
			o := mustObject(t, validExtension)
			mustSet(t, o.Object, tc.value, tc.path...)
			if err := k8s.Create(context.Background(), o, client.DryRunAll); err != nil {
				t.Fatalf("rejected: %v", err)
			}
		})
	}
	t.Run("revisionHistoryLimit defaults to PKO's 10", func(t *testing.T) {
		o := mustObject(t, validExtension)
		if err := k8s.Create(context.Background(), o, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedInt64(o.Object, "spec", "revisionHistoryLimit"); got != 10 {
			t.Fatalf("revisionHistoryLimit %d", got)
		}
	})
}
