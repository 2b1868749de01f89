package delivery

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

func TestHostFieldManager(t *testing.T) {
	a, b := HostFieldManager(testUID), HostFieldManager("uid-2")
	if a == b || a != HostFieldManager(testUID) {
		t.Errorf("managers %q %q: one per UID, stable", a, b)
	}
	for _, m := range []string{a, b} {
		if !strings.HasPrefix(m, "work-agent-hcp-fleet-") || len(m) > maxFieldManagerLength || m == "work-agent-hcp-fleet-extension" {
			t.Errorf("manager %q", m)
		}
	}
}

// renderObjects renders s and returns its manifests by kind and its
// manifest configs.
func renderObjects(t *testing.T, s Spec) (*workv1.ManifestWork, map[string][]*unstructured.Unstructured) {
	t.Helper()
	referenced := map[string]*unstructured.Unstructured{}
	for _, r := range s.References() {
		referenced[r.Kind+"/"+r.Name] = &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"k": "dg=="}}}
	}
	work, err := Render(s, "cluster-1", referenced, "h")
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string][]*unstructured.Unstructured{}
	for _, m := range work.Spec.Workload.Manifests {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(m.Raw, &u.Object); err != nil {
			t.Fatal(err)
		}
		byKind[u.GetKind()] = append(byKind[u.GetKind()], u)
	}
	return work, byKind
}

// TestRenderOwnership: every object but the shared hosting Namespace
// carries the HCD's UID and is applied under the HCD's own field manager;
// the HostedCluster gets the derived infraID unless the tenant set one.
func TestRenderOwnership(t *testing.T) {
	s := testSpec(t)
	work, byKind := renderObjects(t, s)
	for kind, objs := range byKind {
		for _, o := range objs {
			_, has := o.GetLabels()[hosting.LabelHCDUID]
			switch {
			case kind == "Namespace" && has:
				t.Errorf("the shared hosting Namespace carries %s", hosting.LabelHCDUID)
			case kind != "Namespace" && o.GetLabels()[hosting.LabelHCDUID] != testUID:
				t.Errorf("%s %s labels %v", kind, o.GetName(), o.GetLabels())
			}
		}
	}
	if _, has := work.Labels[hosting.LabelHCDUID]; has || work.Labels[hosting.LabelHCDName] != "prod" {
		t.Errorf("ManifestWork labels %v", work.Labels)
	}
	for _, c := range work.Spec.ManifestConfigs[1:] {
		if m := c.UpdateStrategy.ServerSideApply.FieldManager; m != HostFieldManager(testUID) {
			t.Errorf("%s %s: field manager %q", c.ResourceIdentifier.Resource, c.ResourceIdentifier.Name, m)
		}
	}
	hc := byKind["HostedCluster"][0]
	if id, _, _ := unstructured.NestedString(hc.Object, "spec", "infraID"); id != scheduling.DeriveInfraID("prod", testUID) {
		t.Errorf("infraID %q, want the derived %q", id, scheduling.DeriveInfraID("prod", testUID))
	}

	// The tenant's own infraID is delivered as it is.
	s = testSpec(t)
	s.HostedCluster["spec"].(map[string]any)["infraID"] = "mine"
	_, byKind = renderObjects(t, s)
	if id, _, _ := unstructured.NestedString(byKind["HostedCluster"][0].Object, "spec", "infraID"); id != "mine" {
		t.Errorf("tenant's infraID rendered as %q", id)
	}
	if s.HostedCluster["spec"].(map[string]any)["infraID"] != "mine" {
		t.Error("Render changed the input")
	}
}

// legacyWork is a ManifestWork as an older hub wrote it: one field manager
// for every HCD and a HostedCluster with infraID (possibly none).
func legacyWork(t *testing.T, manager, infraID string) *workv1.ManifestWork {
	t.Helper()
	hc := map[string]any{"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
		"metadata": map[string]any{"name": "prod", "namespace": "clusters"}, "spec": map[string]any{}}
	if infraID != "" {
		hc["spec"].(map[string]any)["infraID"] = infraID
	}
	raw, err := json.Marshal(hc)
	if err != nil {
		t.Fatal(err)
	}
	w := &workv1.ManifestWork{}
	w.Spec.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"clusters"}}`)}},
		{RawExtension: runtime.RawExtension{Raw: raw}}}
	w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{
		{ResourceIdentifier: workv1.ResourceIdentifier{Resource: "namespaces", Name: "clusters"},
			UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeCreateOnly}},
		applyConfig(hyperShiftGroup, "hostedclusters", "clusters", "prod", manager),
	}
	return w
}

// TestKeepDelivered: a ManifestWork an older hub wrote keeps its field
// manager (its objects' fields are held by it) and its HostedCluster's
// infraID (immutable; none when HyperShift generated it); a new one gets
// the HCD's own manager and the derived infraID.
func TestKeepDelivered(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		existing              *workv1.ManifestWork
		wantManager, wantID   string
		wantInfraIDInManifest bool
	}{
		{"new", nil, HostFieldManager(testUID), scheduling.DeriveInfraID("prod", testUID), true},
		{"older hub, no infraID", legacyWork(t, LegacyHostFieldManager, ""), LegacyHostFieldManager, "", false},
		{"older hub, tenant's infraID", legacyWork(t, LegacyHostFieldManager, "old-id"), LegacyHostFieldManager, "old-id", true},
		{"this hub", legacyWork(t, HostFieldManager(testUID), "prod-abcde"), HostFieldManager(testUID), "prod-abcde", true},
		{"someone else's manager is not taken", legacyWork(t, "kubectl", "x"), HostFieldManager(testUID), "x", true},
		{"another HCD's manager is not taken", legacyWork(t, HostFieldManager("uid-2"), "y"), HostFieldManager(testUID), "y", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSpec(t)
			s.KeepDelivered(tc.existing)
			if s.HostFieldManager != tc.wantManager || s.InfraID != tc.wantID {
				t.Errorf("manager %q infraID %q, want %q %q", s.HostFieldManager, s.InfraID, tc.wantManager, tc.wantID)
			}
			work, byKind := renderObjects(t, s)
			for _, c := range work.Spec.ManifestConfigs[1:] {
				if m := c.UpdateStrategy.ServerSideApply.FieldManager; m != tc.wantManager {
					t.Errorf("%s: field manager %q", c.ResourceIdentifier.Resource, m)
				}
			}
			id, found, _ := unstructured.NestedString(byKind["HostedCluster"][0].Object, "spec", "infraID")
			if found != tc.wantInfraIDInManifest || id != tc.wantID {
				t.Errorf("rendered infraID %q (found %v)", id, found)
			}
			// The uid label is delivered in every case: the legacy
			// manager adds it, no one holds it yet.
			if byKind["HostedCluster"][0].GetLabels()[hosting.LabelHCDUID] != testUID {
				t.Errorf("HostedCluster labels %v", byKind["HostedCluster"][0].GetLabels())
			}
		})
	}
	// What is kept is part of the input hash.
	a, b := testSpec(t), testSpec(t)
	b.KeepDelivered(legacyWork(t, LegacyHostFieldManager, ""))
	ha, _ := InputHash(a, "c", nil)
	hb, _ := InputHash(b, "c", nil)
	if ha == hb {
		t.Error("the field manager and infraID do not change the input hash")
	}
}

// TestComputeStatusOwnedByAnother: a manifest the host refused with a
// server-side apply conflict is reported as OwnedByAnother, naming the
// object and who holds it, even beside other failures.
func TestComputeStatusOwnedByAnother(t *testing.T) {
	other := HostFieldManager("uid-other")
	for _, tc := range []struct {
		name, message, want string
	}{
		{"another HCD", `Failed to apply manifest: Apply failed with 2 conflicts: conflicts with "` + other + `":
- .metadata.labels.hcpfleet.io/hcd-uid
- .spec.release.image`, `HostedCluster clusters/x belongs to another HostedClusterDeployment (field manager "` + other + `") and is never merged`},
		{"no manager named", `Apply failed with 1 conflict: something new`, ""},
		{"another HCD, one per line", `Failed to apply manifest: Apply failed with 1 conflict: conflict with "` + other + `" using hypershift.openshift.io/v1beta1: .metadata.labels.hcpfleet.io/hcd-uid`,
			`HostedCluster clusters/x belongs to another HostedClusterDeployment (field manager "` + other + `") and is never merged`},
		{"a legacy one", `Apply failed with 1 conflict: conflict with "work-agent-hcp-fleet" using hypershift.openshift.io/v1beta1: .spec.infraID`,
			`HostedCluster clusters/x belongs to another HostedClusterDeployment (field manager "work-agent-hcp-fleet") and is never merged`},
		{"someone else", `Apply failed with 2 conflicts: conflict with "kubectl" using hypershift.openshift.io/v1beta1: .spec.a
conflict with "kubectl-edit" using hypershift.openshift.io/v1beta1: .spec.b`,
			`HostedCluster clusters/x belongs to another field manager ("kubectl", "kubectl-edit") and is never merged`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := appliedWork(nil, nil)
			w.Status.Conditions[0].Status = metav1.ConditionFalse
			w.Status.ResourceStatus.Manifests[0].ResourceMeta.Kind = "HostedCluster"
			w.Status.ResourceStatus.Manifests[0].Conditions = []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, Message: tc.message}}
			// A NodePool failing for another reason does not hide it.
			w.Status.ResourceStatus.Manifests = append(w.Status.ResourceStatus.Manifests, workv1.ManifestCondition{
				ResourceMeta: workv1.ManifestResourceMeta{Kind: "NodePool", Resource: "nodepools", Name: "x-workers", Namespace: "clusters"},
				Conditions:   []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, Message: "admission webhook denied"}}})
			s := ComputeStatus(Observed{Generation: 1, Work: w, Host: upHost})
			c := cond(t, s, v1alpha1.ConditionDelivered)
			want := tc.want
			if want == "" {
				want = "HostedCluster clusters/x belongs to another HostedClusterDeployment or field manager and is never merged"
			}
			if c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonOwnedByAnother || !strings.Contains(c.Message, want) ||
				!strings.Contains(c.Message, "NodePool clusters/x-workers: admission webhook denied") || !strings.Contains(c.Message, "explicit admin action") {
				t.Errorf("Delivered %s %s: %s", c.Status, c.Reason, c.Message)
			}
			if d := cond(t, s, v1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue || d.Reason != v1alpha1.ReasonOwnedByAnother {
				t.Errorf("Degraded %s %s", d.Status, d.Reason)
			}
		})
	}
}

// TestFeedbackOfAnotherHCDIsNotShown: the work agent reads feedback from
// the object of the manifest's name even when the apply conflicted; from
// another HCD's HostedCluster (an orphan's) none of it shows.
func TestFeedbackOfAnotherHCDIsNotShown(t *testing.T) {
	theirs := map[string]string{fbOwnerUID: "uid-a", fbAvailable: "True", fbDesiredVersion: "4.18.5", fbDesiredImage: "img",
		fbEndpointHost: "api.orphan.example.com", fbEndpointPort: "6443"}
	w := appliedWork(theirs, map[string]workv1.StatusFeedbackResult{"x-workers": feedback(map[string]string{fbOwnerUID: "uid-a", fbReady: "True", fbReplicas: "2"})})
	w.Status.Conditions[0].Status = metav1.ConditionFalse
	w.Status.ResourceStatus.Manifests[0].Conditions = []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse,
		Message: `Apply failed with 1 conflict: conflict with "` + HostFieldManager("uid-a") + `" using hypershift.openshift.io/v1beta1: .metadata.labels.hcpfleet.io/hcd-uid`}}
	s := ComputeStatus(Observed{Generation: 1, UID: "uid-b", Work: w, Host: upHost, NodePools: []string{"x-workers"}})
	if c := cond(t, s, v1alpha1.ConditionAvailable); c.Status != metav1.ConditionUnknown {
		t.Errorf("Available %s: %s", c.Status, c.Message)
	}
	if s.ControlPlaneEndpoint != nil || s.Version != nil || s.NodePools[0].ReadyReplicas != 0 {
		t.Errorf("another HCD's feedback shown: endpoint %+v version %+v node pools %+v", s.ControlPlaneEndpoint, s.Version, s.NodePools)
	}
	// Its own shows; so does an unlabelled object's whose apply went
	// through (delivered by an older hub), but not one whose apply failed.
	s = ComputeStatus(Observed{Generation: 1, UID: "uid-a", Work: w, Host: upHost})
	if s.ControlPlaneEndpoint == nil || s.ControlPlaneEndpoint.Host != "api.orphan.example.com" {
		t.Errorf("own feedback not shown: %+v", s.ControlPlaneEndpoint)
	}
	delete(theirs, fbOwnerUID)
	w = appliedWork(theirs, nil)
	w.Status.ResourceStatus.Manifests[0].Conditions = []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue}}
	if s := ComputeStatus(Observed{Generation: 1, UID: "uid-b", Work: w, Host: upHost}); s.ControlPlaneEndpoint == nil {
		t.Error("an older hub's unlabelled object's feedback not shown")
	}
	w.Status.ResourceStatus.Manifests[0].Conditions[0].Status = metav1.ConditionFalse
	if s := ComputeStatus(Observed{Generation: 1, UID: "uid-b", Work: w, Host: upHost}); s.ControlPlaneEndpoint != nil {
		t.Error("an unlabelled object's feedback shown after a failed apply")
	}
}
