package agent

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/connector"
)

// TestConnectorRules: the connector may patch only the requests named, and
// with none named it gets no patch rule at all (an empty resourceNames
// would grant every ConfigMap); it never gets Secrets.
func TestConnectorRules(t *testing.T) {
	if rules := connectorRules(nil); len(rules) != 1 || slices.Contains(rules[0].Verbs, "patch") {
		t.Fatalf("without requests: %+v", rules)
	}
	rules := connectorRules([]string{"a.phase.x"})
	if len(rules) != 2 || !slices.Equal(rules[1].ResourceNames, []string{"a.phase.x"}) || !slices.Equal(rules[1].Verbs, []string{"patch"}) {
		t.Fatalf("with a request: %+v", rules)
	}
	for _, r := range rules {
		if !slices.Equal(r.Resources, []string{"configmaps"}) {
			t.Fatalf("a rule on %v", r.Resources)
		}
	}
	d := connectorDeployment("clusters-a", "example.com/agent:v1", []string{"/agent"})
	c := d.Spec.Template.Spec.Containers[0]
	if c.Args[0] != connector.Command || c.Image != "example.com/agent:v1" || d.Spec.Template.Spec.ServiceAccountName != connector.Name ||
		d.Spec.Template.Spec.Volumes[0].Secret.SecretName != extension.GuestKubeconfigSecret || !c.VolumeMounts[0].ReadOnly {
		t.Fatalf("deployment %+v", d.Spec.Template.Spec)
	}
}

// TestRemotePlacement: an object of a hosted-cluster phase takes the
// placement and state the connector reported for it.
func TestRemotePlacement(t *testing.T) {
	o := extension.Object{Ref: extension.ObjectRef{Phase: "p", Class: v1alpha1.PhaseClassHostedCluster, Version: "v1", Kind: "ConfigMap", Name: "c"},
		Object: &unstructured.Unstructured{Object: map[string]any{}}}
	placed := o.Ref
	placed.Namespace = "default"
	tg := &target{class: v1alpha1.PhaseClassHostedCluster, remote: &remote{byKey: map[string]connector.ObjectReport{
		o.Ref.Key(): {Ref: placed, State: v1alpha1.ObjectStateUnavailable, Reason: extension.ReasonProbeFailure, Message: "m"}}}}
	got := tg.place(o)
	if got.Ref != placed || got.Object.GetNamespace() != "default" {
		t.Fatalf("placed %+v", got.Ref)
	}
	if v := tg.remote.state(got); v.State != v1alpha1.ObjectStateUnavailable || v.Reason != extension.ReasonProbeFailure || v.Message != "m" {
		t.Fatalf("state %+v", v)
	}
	if v := tg.remote.claim(got); v.State != "" {
		t.Fatalf("an object the connector applied is refused: %+v", v)
	}
	other := o
	other.Ref.Name = "other"
	if v := tg.remote.state(other); v.State != v1alpha1.ObjectStatePending {
		t.Fatalf("an object without a report is %s", v.State)
	}
	// A refusal the connector reported keeps the object out of the record.
	refused := o
	refused.Ref.Name = "refused"
	tg.remote.byKey[refused.Ref.Key()] = connector.ObjectReport{Ref: refused.Ref, State: v1alpha1.ObjectStateRefused, Reason: extension.ReasonObjectRefused, Message: "collision"}
	if v := tg.remote.claim(refused); v.State != v1alpha1.ObjectStateRefused || v.Message != "collision" {
		t.Fatalf("a reported refusal is %+v", v)
	}
	// Placing keeps the object's collision protection.
	o.Collision = v1alpha1.CollisionProtectionIfNoController
	if got := tg.place(o); got.Collision != v1alpha1.CollisionProtectionIfNoController {
		t.Fatalf("placing lost the collision protection: %q", got.Collision)
	}
}
