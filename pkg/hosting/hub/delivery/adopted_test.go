package delivery

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// TestRenderAdopted: an adopted deployment's kept references are neither
// copied nor renamed, the others are; its HostedCluster carries the adopted
// identity; the HostedCluster and NodePools are applied with force while
// Takeover, without it after.
func TestRenderAdopted(t *testing.T) {
	base := testSpec(t)
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"namespace": "team-a", "name": "prod", "uid": testUID, "annotations": map[string]any{
			hcdstatus.AnnotationAdoptedFrom:       "cluster-1/clusters/prod",
			hcdstatus.AnnotationAdoptedReferences: "Secret/pull-secret,Secret/prod-ssh",
			hcdstatus.AnnotationAdoptedIdentity:   "infraID=prod-x,clusterID=cid-1",
		}},
		"spec": map[string]any{"hostedCluster": base.HostedCluster, "nodePools": []any{base.NodePools[0]}},
	}}
	s, err := SpecFrom(u)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Adopted || !s.KeptReferences["Secret/pull-secret"] || !s.KeptReferences["Secret/prod-ssh"] {
		t.Fatalf("spec %+v: want adopted with two kept references", s)
	}
	referenced := map[string]*unstructured.Unstructured{}
	for _, r := range s.References() {
		if s.KeptReferences[r.Kind+"/"+r.Name] {
			t.Errorf("kept reference %s/%s is to be copied", r.Kind, r.Name)
		}
		referenced[r.Kind+"/"+r.Name] = &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{}, "metadata": map[string]any{"name": r.Name}}}
	}
	for _, takeover := range []bool{true, false} {
		s.Takeover = takeover
		work, err := Render(s, "cluster-1", referenced, "h")
		if err != nil {
			t.Fatal(err)
		}
		secrets := 0
		for _, m := range work.Spec.Workload.Manifests {
			var o map[string]any
			if err := json.Unmarshal(m.Raw, &o); err != nil {
				t.Fatal(err)
			}
			switch o["kind"] {
			case "Secret":
				secrets++
			case "HostedCluster":
				hc := &unstructured.Unstructured{Object: o}
				if ps, _, _ := unstructured.NestedString(hc.Object, "spec", "pullSecret", "name"); ps != "pull-secret" {
					t.Errorf("pullSecret %q, want kept", ps)
				}
				infraID, _, _ := unstructured.NestedString(hc.Object, "spec", "infraID")
				clusterID, _, _ := unstructured.NestedString(hc.Object, "spec", "clusterID")
				if infraID != "prod-x" || clusterID != "cid-1" {
					t.Errorf("identity %q %q, want the adopted prod-x cid-1", infraID, clusterID)
				}
				if oidc, _, _ := unstructured.NestedSlice(hc.Object, "spec", "configuration", "oauth", "identityProviders"); len(oidc) != 2 {
					t.Errorf("identity providers %v", oidc)
				}
			}
		}
		if secrets != 2 { // htpasswd and oidc, not the kept two
			t.Errorf("takeover %v: %d Secrets delivered, want 2", takeover, secrets)
		}
		for _, c := range work.Spec.ManifestConfigs {
			force := c.UpdateStrategy.ServerSideApply != nil && c.UpdateStrategy.ServerSideApply.Force
			hyper := c.ResourceIdentifier.Resource == "hostedclusters" || c.ResourceIdentifier.Resource == "nodepools"
			if force != (hyper && takeover) {
				t.Errorf("takeover %v: %s/%s force %v", takeover, c.ResourceIdentifier.Resource, c.ResourceIdentifier.Name, force)
			}
		}
	}
	// Without adopted-from the references annotation is ignored: a tenant's
	// HCD cannot keep anything (the admission policy refuses it anyway).
	delete(u.Object["metadata"].(map[string]any)["annotations"].(map[string]any), hcdstatus.AnnotationAdoptedFrom)
	if s, _ := SpecFrom(u); s.Adopted || len(s.KeptReferences) != 0 {
		t.Errorf("not adopted: %+v", s.KeptReferences)
	}
}
