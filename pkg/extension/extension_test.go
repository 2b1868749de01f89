package extension

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

func obj(t *testing.T, doc string) v1alpha1.ExtensionObject {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return v1alpha1.ExtensionObject{Object: runtime.RawExtension{Raw: raw}}
}

func u(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestValidate: each hostile or malformed object is refused with a message
// naming what is wrong, and the legitimate objects of both classes pass.
func TestValidate(t *testing.T) {
	cp := v1alpha1.PhaseClassControlPlane
	guest := v1alpha1.PhaseClassHostedCluster
	cases := []struct {
		name  string
		class v1alpha1.PhaseClass
		doc   string
		want  string // "" = accepted
	}{
		{"deployment next to the control plane", cp, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: op}, spec: {template: {spec: {serviceAccountName: op, containers: [{name: c}]}}}}`, ""},
		{"its service account", cp, `{apiVersion: v1, kind: ServiceAccount, metadata: {name: op}}`, ""},
		{"guest namespace", guest, `{apiVersion: v1, kind: Namespace, metadata: {name: x}}`, ""},
		{"guest cluster role", guest, `{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: x}}`, ""},
		{"guest object in a namespace", guest, `{apiVersion: v1, kind: ConfigMap, metadata: {name: x, namespace: team}}`, ""},
		{"other namespace on the management cluster", cp, `{apiVersion: v1, kind: ConfigMap, metadata: {name: x, namespace: hypershift}}`, "metadata.namespace must be empty in a phase without class"},
		{"role binding on the management cluster", cp, `{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: x}}`, "may not be written on the management cluster"},
		{"namespace on the management cluster", cp, `{apiVersion: v1, kind: Namespace, metadata: {name: x}}`, "may not be written on the management cluster"},
		{"network policy opening the control plane", cp, `{apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: {name: x}}`, "may not be written on the management cluster"},
		{"daemonset on every management node", cp, `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: x}}`, "may not be written on the management cluster"},
		{"endpoints anywhere", cp, `{apiVersion: v1, kind: Endpoints, metadata: {name: x}}`, "may not be written on the management cluster"},
		{"a Secret next to the control plane's keys", cp, `{apiVersion: v1, kind: Secret, type: kubernetes.io/service-account-token, metadata: {name: x, annotations: {kubernetes.io/service-account.name: control-plane-operator}}}`, "may not be written on the management cluster"},
		{"guest secret", guest, `{apiVersion: v1, kind: Secret, metadata: {name: x, namespace: team}}`, ""},
		{"running as the control-plane operator", cp, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: x}, spec: {template: {spec: {serviceAccountName: control-plane-operator}}}}`, `serviceAccountName "control-plane-operator" is not a ServiceAccount of this extension`},
		{"host network", cp, `{apiVersion: batch/v1, kind: Job, metadata: {name: x}, spec: {template: {spec: {hostNetwork: true}}}}`, "hostNetwork is not allowed"},
		{"host path", cp, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: x}, spec: {template: {spec: {volumes: [{name: v, hostPath: {path: /}}]}}}}`, "hostPath volumes"},
		{"a bare pod", cp, `{apiVersion: v1, kind: Pod, metadata: {name: x}}`, "may not be written on the management cluster"},
		{"privileged", cp, `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: x}, spec: {template: {spec: {containers: [{name: c, securityContext: {privileged: true}}]}}}}`, "privileged containers"},
		{"HostedCluster", cp, `{apiVersion: hypershift.openshift.io/v1beta1, kind: HostedCluster, metadata: {name: x}}`, "belongs to HyperShift"},
		{"HostedControlPlane in the guest too", guest, `{apiVersion: hypershift.openshift.io/v1beta1, kind: HostedControlPlane, metadata: {name: x}}`, "belongs to HyperShift"},
		{"CAPI private group", cp, `{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: AgentMachine, metadata: {name: x}}`, "belongs to HyperShift"},
		{"hcp-fleet", guest, `{apiVersion: hcpfleet.io/v1alpha1, kind: HostedClusterExtension, metadata: {name: x}}`, "belongs to HyperShift"},
		{"ManifestWork", cp, `{apiVersion: work.open-cluster-management.io/v1, kind: ManifestWork, metadata: {name: x}}`, "belongs to HyperShift"},
		{"generateName", guest, `{apiVersion: v1, kind: ConfigMap, metadata: {generateName: x-}}`, "generateName is not supported"},
		{"owner reference", guest, `{apiVersion: v1, kind: ConfigMap, metadata: {name: x, ownerReferences: [{apiVersion: v1, kind: Namespace, name: kube-system, uid: u}]}}`, "ownerReferences"},
		{"no kind", guest, `{apiVersion: v1, metadata: {name: x}}`, "apiVersion and kind are required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			phases := []v1alpha1.ExtensionPhase{{Name: "p", Class: tc.class, Objects: []v1alpha1.ExtensionObject{obj(t, tc.doc)}}}
			if strings.Contains(tc.doc, "serviceAccountName: op") {
				phases[0].Objects = append(phases[0].Objects, obj(t, `{apiVersion: v1, kind: ServiceAccount, metadata: {name: op}}`))
			}
			problems := Validate(phases)
			if tc.want == "" {
				if len(problems) > 0 {
					t.Fatalf("refused: %v", problems)
				}
				return
			}
			if len(problems) == 0 {
				t.Fatalf("accepted; want %q", tc.want)
			}
			if !strings.Contains(problems[0].Error(), tc.want) {
				t.Fatalf("refused with %q; want %q", problems[0].Error(), tc.want)
			}
		})
	}
	t.Run("duplicate across phases", func(t *testing.T) {
		cm := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}`)
		problems := Validate([]v1alpha1.ExtensionPhase{{Name: "a", Objects: []v1alpha1.ExtensionObject{cm}}, {Name: "b", Objects: []v1alpha1.ExtensionObject{cm}}})
		if len(problems) != 1 || !strings.Contains(problems[0].Error(), "also in phase a") {
			t.Fatalf("problems %v", problems)
		}
		// The same name in the guest is another object.
		problems = Validate([]v1alpha1.ExtensionPhase{{Name: "a", Objects: []v1alpha1.ExtensionObject{cm}}, {Name: "b", Class: guest, Objects: []v1alpha1.ExtensionObject{cm}}})
		if len(problems) != 0 {
			t.Fatalf("problems %v", problems)
		}
	})
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: op, generation: 3, labels: {app: op}}
spec: {replicas: 2}
status:
  observedGeneration: 3
  replicas: 2
  updatedReplicas: 1
  readyReplicas: 1
  conditions:
  - {type: Available, status: "False", message: "Deployment does not have minimum availability."}
  - {type: Progressing, status: "True"}
`

// TestProbes: condition, fieldsEqual and CEL probes with the messages the
// hub shows; selectors by group, kind and labels.
func TestProbes(t *testing.T) {
	probes := func(p ...v1alpha1.ExtensionProbe) []v1alpha1.ExtensionProbeSet {
		return []v1alpha1.ExtensionProbeSet{{Selector: v1alpha1.ExtensionProbeSelector{Kind: v1alpha1.ExtensionGroupKind{Group: "apps", Kind: "Deployment"}}, Probes: p}}
	}
	cond := v1alpha1.ExtensionProbe{Condition: &v1alpha1.ConditionProbe{Type: "Available", Status: "True"}}
	fields := v1alpha1.ExtensionProbe{FieldsEqual: &v1alpha1.FieldsEqualProbe{FieldA: ".status.updatedReplicas", FieldB: ".status.replicas"}}
	celP := func(rule string) v1alpha1.ExtensionProbe {
		return v1alpha1.ExtensionProbe{CEL: &v1alpha1.CELProbe{Rule: rule, Message: "custom message"}}
	}
	cases := []struct {
		name string
		sets []v1alpha1.ExtensionProbeSet
		edit func(o *unstructured.Unstructured)
		want string
	}{
		{"condition false", probes(cond), nil, "condition Available=True, is False: Deployment does not have minimum availability."},
		{"condition true", probes(cond), func(o *unstructured.Unstructured) { setCond(o, "True") }, ""},
		{"condition of an older generation", probes(cond), func(o *unstructured.Unstructured) {
			setCond(o, "True")
			o.SetGeneration(4)
		}, "status not yet observed for generation 4"},
		{"condition missing", probes(v1alpha1.ExtensionProbe{Condition: &v1alpha1.ConditionProbe{Type: "Ready", Status: "True"}}), nil, "condition Ready=True, condition missing"},
		{"fields differ", probes(fields), nil, ".status.updatedReplicas == .status.replicas: 1 != 2"},
		{"fields equal", probes(fields), func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, int64(2), "status", "updatedReplicas")
		}, ""},
		{"field missing", probes(v1alpha1.ExtensionProbe{FieldsEqual: &v1alpha1.FieldsEqualProbe{FieldA: ".status.nope", FieldB: ".status.replicas"}}), nil, ".status.nope is missing"},
		{"cel false", probes(celP("self.status.readyReplicas == self.spec.replicas")), nil, "custom message"},
		{"cel true", probes(celP("self.status.readyReplicas >= 1 && self.metadata.labels.app == 'op'")), nil, ""},
		{"cel with the apiserver's libraries", probes(celP("quantity('1Gi').isGreaterThan(quantity('1Mi')) && url('https://a.example.com/x').getHost() == 'a.example.com'")), nil, ""},
		{"cel with optionals", probes(celP("self.status.?availableReplicas.orValue(0) >= self.spec.replicas")), nil, "custom message"},
		{"cel on a missing field", probes(celP("self.status.nope == 1")), nil, "custom message (no such key: nope)"},
		{"first failure wins", probes(fields, cond), nil, ".status.updatedReplicas == .status.replicas"},
		{"other kind not probed", []v1alpha1.ExtensionProbeSet{{Selector: v1alpha1.ExtensionProbeSelector{Kind: v1alpha1.ExtensionGroupKind{Group: "apps", Kind: "StatefulSet"}}, Probes: []v1alpha1.ExtensionProbe{cond}}}, nil, ""},
		{"core group is not apps", []v1alpha1.ExtensionProbeSet{{Selector: v1alpha1.ExtensionProbeSelector{Kind: v1alpha1.ExtensionGroupKind{Kind: "Deployment"}}, Probes: []v1alpha1.ExtensionProbe{cond}}}, nil, ""},
		{"label selector matches", []v1alpha1.ExtensionProbeSet{{Selector: v1alpha1.ExtensionProbeSelector{Kind: v1alpha1.ExtensionGroupKind{Group: "apps", Kind: "Deployment"},
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "op"}}}, Probes: []v1alpha1.ExtensionProbe{cond}}}, nil, "condition Available=True"},
		{"label selector does not match", []v1alpha1.ExtensionProbeSet{{Selector: v1alpha1.ExtensionProbeSelector{Kind: v1alpha1.ExtensionGroupKind{Group: "apps", Kind: "Deployment"},
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}}, Probes: []v1alpha1.ExtensionProbe{cond}}}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := u(t, deployment)
			if tc.edit != nil {
				tc.edit(o)
			}
			got := Probe(tc.sets, o)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("Probe = %q, want %q", got, tc.want)
			}
		})
	}
}

func setCond(o *unstructured.Unstructured, status string) {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	conds[0].(map[string]any)["status"] = status
	_ = unstructured.SetNestedSlice(o.Object, conds, "status", "conditions")
}

// TestProbeProblems: rules that cannot work are found before delivery.
func TestProbeProblems(t *testing.T) {
	sets := []v1alpha1.ExtensionProbeSet{{Probes: []v1alpha1.ExtensionProbe{
		{CEL: &v1alpha1.CELProbe{Rule: "self.a ==", Message: "m"}},
		{CEL: &v1alpha1.CELProbe{Rule: "'a' + 'b'", Message: "m"}},
		{CEL: &v1alpha1.CELProbe{Rule: "has(self.status)", Message: "m"}},
		{FieldsEqual: &v1alpha1.FieldsEqualProbe{FieldA: ".a[", FieldB: ".b"}},
	}}}
	got := ProbeProblems(sets)
	if len(got) != 3 || !strings.Contains(got[0], "does not compile") || !strings.Contains(got[1], "not a bool") || !strings.Contains(got[2], "fieldsEqual") {
		t.Fatalf("problems %q", got)
	}
}

func ref(phase, kind, name string) ObjectRef {
	return ObjectRef{Phase: phase, Version: "v1", Kind: kind, Name: name}
}

// TestTeardownOrder: removal reverses the apply order phase by phase, and
// only what a new revision dropped is removed.
func TestTeardownOrder(t *testing.T) {
	applied := Merge(nil, ref("rbac", "ClusterRole", "r"), ref("rbac", "Namespace", "n"))
	applied = Merge(applied, ref("deploy", "Deployment", "d"))
	applied = Merge(applied, ref("config", "ConfigMap", "c"), ref("rbac", "Namespace", "n"))
	if len(applied) != 4 {
		t.Fatalf("applied %v", applied)
	}
	var order []string
	for _, group := range TeardownPhases(Teardown(applied)) {
		var names []string
		for _, r := range group {
			names = append(names, r.Name)
		}
		order = append(order, group[0].Phase+":"+strings.Join(names, ","))
	}
	if got := strings.Join(order, " "); got != "config:c deploy:d rbac:n,r" {
		t.Fatalf("teardown %s", got)
	}
	plan := Plan([]v1alpha1.ExtensionPhase{
		{Name: "rbac", Objects: []v1alpha1.ExtensionObject{obj(t, `{apiVersion: v1, kind: ClusterRole, metadata: {name: r}}`)}},
		{Name: "config", Objects: []v1alpha1.ExtensionObject{obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`)}},
	})
	removed := Removed(applied, Refs(plan))
	if len(removed) != 2 || removed[0].Name != "d" || removed[1].Name != "n" {
		t.Fatalf("removed %v", removed)
	}
	if left := Without(applied, removed...); len(left) != 2 {
		t.Fatalf("left %v", left)
	}
}

// TestRollout: Instant goes everywhere at once; RollingUpgrade keeps at
// most maxUnavailable hosted clusters without the available revision and
// stops at a failure.
func TestRollout(t *testing.T) {
	var targets []Target
	for i := range 6 {
		targets = append(targets, Target{Name: fmt.Sprintf("hc-%d", i), Ready: true})
	}
	targets = append(targets, Target{Name: "not-ready"})
	if got := Rollout(v1alpha1.ExtensionRolloutStrategy{Type: v1alpha1.ExtensionStrategyInstant}, 1, targets); len(got) != 6 || got["not-ready"] {
		t.Fatalf("instant %v", got)
	}
	rolling := v1alpha1.ExtensionRolloutStrategy{Type: v1alpha1.ExtensionStrategyRollingUpgrade,
		RollingUpgrade: &v1alpha1.RollingUpgradeStrategy{MaxUnavailable: intstr.FromInt32(2)}}
	step := func() map[string]bool {
		got := Rollout(rolling, 1, targets)
		for i := range targets {
			if got[targets[i].Name] {
				targets[i].Delivered = 1
			}
		}
		return got
	}
	if got := step(); len(got) != 2 || !got["hc-0"] || !got["hc-1"] {
		t.Fatalf("first step %v", got)
	}
	if got := step(); len(got) != 2 {
		t.Fatalf("nothing became available, yet %v", got)
	}
	targets[0].Observed, targets[0].State = 1, v1alpha1.ExtensionStateAvailable
	if got := step(); len(got) != 3 || !got["hc-2"] {
		t.Fatalf("after one available %v", got)
	}
	targets[1].Observed, targets[1].State = 1, v1alpha1.ExtensionStateFailed
	if got := step(); len(got) != 3 {
		t.Fatalf("went on after a failure: %v", got)
	}
	targets[1].State = v1alpha1.ExtensionStateAvailable
	targets[2].Observed, targets[2].State = 1, v1alpha1.ExtensionStateAvailable
	if got := step(); len(got) != 5 || !got["hc-3"] || !got["hc-4"] {
		t.Fatalf("after the fix %v", got)
	}
	// Revision 2 over a fleet where revision 1 is available on hc-0..hc-2,
	// failed on hc-3 and never reached hc-4 and hc-5: hc-3's failure counts
	// toward maxUnavailable, and the new revision reaches it at once.
	for i := range targets[:6] {
		targets[i].Delivered, targets[i].Observed, targets[i].State = 1, 1, v1alpha1.ExtensionStateAvailable
	}
	targets[3].State = v1alpha1.ExtensionStateFailed
	targets[4].Delivered, targets[4].Observed, targets[4].State = 0, 0, ""
	targets[5].Delivered, targets[5].Observed, targets[5].State = 0, 0, ""
	if got := Rollout(rolling, 2, targets); len(got) != 2 || !got["hc-3"] || !got["hc-0"] {
		t.Fatalf("revision 2: the failed one and one more (maxUnavailable 2), got %v", got)
	}
	targets[0].Delivered, targets[3].Delivered = 2, 2
	targets[1].Delivered, targets[1].State = 1, v1alpha1.ExtensionStateProgressing // unavailable at the old revision, not ready
	targets[1].Ready = false
	if got := Rollout(rolling, 2, targets); len(got) != 2 {
		t.Fatalf("three unavailable (two at revision 2, one at revision 1) with maxUnavailable 2: nothing more, got %v", got)
	}
	targets[3].Observed, targets[3].State = 2, v1alpha1.ExtensionStateFailed
	if got := Rollout(rolling, 2, targets); len(got) != 2 || !got["hc-0"] || !got["hc-3"] {
		t.Fatalf("stopped by a failure at revision 2: only those that have it keep it, got %v", got)
	}
	if n := MaxUnavailable(&v1alpha1.RollingUpgradeStrategy{MaxUnavailable: intstr.FromString("25%")}, 6); n != 1 {
		t.Fatalf("25%% of 6 = %d", n)
	}
	if n := MaxUnavailable(&v1alpha1.RollingUpgradeStrategy{MaxUnavailable: intstr.FromString("50%")}, 6); n != 3 {
		t.Fatalf("50%% of 6 = %d", n)
	}
}

// TestNames: work names of different (namespace, extension, HCD) never
// collide, and the release is JSON both sides read alike.
func TestNames(t *testing.T) {
	a, b := WorkName("ns", "a-b", "c"), WorkName("ns", "a", "b-c")
	if a == b {
		t.Fatalf("collision %s", a)
	}
	if long := WorkName(strings.Repeat("n", 63), strings.Repeat("e", 63), strings.Repeat("h", 63)); len(long) > 253 {
		t.Fatalf("too long %d", len(long))
	}
	r := Release{Extension: "ns/e", Revision: 2, Phases: []v1alpha1.ExtensionPhase{{Name: "p", Objects: []v1alpha1.ExtensionObject{obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`)}}}}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Release
	if err := json.Unmarshal(raw, &back); err != nil || len(Plan(back.Phases)[0].Objects) != 1 {
		t.Fatalf("round trip %v %v", err, back)
	}
}
