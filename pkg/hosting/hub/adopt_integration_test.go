//go:build integration

package hub_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/adoption"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// TestAdoptedFromAnnotationPolicy: the ValidatingAdmissionPolicy that
// guards hcpfleet.io/bound-to guards hcpfleet.io/adopted-from too, on which
// the adoption's takeover delivery is keyed (docs/operations.md, "Adopt"),
// and the adopted identity and kept references: a tenant can neither create
// a deployment that carries one nor add one to it, while its other edits
// pass.
func TestAdoptedFromAnnotationPolicy(t *testing.T) {
	ctx := context.Background()
	ns, name := "adopt-guard", "guarded"
	tenant(t, ns)
	tc := tenantClient(t, ns)
	// A Placement that does not exist: never scheduled, nothing delivered.
	unplaced := func(spec map[string]any) { spec["placement"] = "none" }
	refused := func(err error) error {
		if err == nil {
			return errors.New("allowed")
		}
		if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), adoption.AnnotationAdoptedFrom) {
			return fmt.Errorf("not the policy's refusal: %w", err)
		}
		return nil
	}
	// Eventually only because the API server loads a changed policy
	// asynchronously; the fleet installed it long before.
	env.Eventually(t, time.Minute, "a tenant's create with the annotation is refused", func(ctx context.Context) error {
		forged := hcd(ns, "forged", unplaced)
		forged.SetAnnotations(map[string]string{adoption.AnnotationAdoptedFrom: "cluster-1/clusters/someone-elses"})
		err := refused(tc.Create(ctx, forged))
		if err != nil {
			_ = hubc.Delete(ctx, hcd(ns, "forged"))
		}
		return err
	})
	if err := tc.Create(ctx, hcd(ns, name, unplaced)); err != nil {
		t.Fatalf("the tenant creates a deployment without the annotation: %v", err)
	}
	t.Cleanup(func() { deleteAndWait(t, ns, name) })
	u := &v1alpha1.HostedClusterDeployment{}
	u.Namespace, u.Name = ns, name
	add := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"cluster-1/clusters/someone-elses"}}}`, adoption.AnnotationAdoptedFrom)
	if err := refused(tc.Patch(ctx, u, client.RawPatch(types.MergePatchType, add))); err != nil {
		t.Errorf("a tenant adding the annotation: %v", err)
	}
	// The identity and the kept references an adopted deployment carries:
	// guarded the same way.
	for _, key := range []string{hcdstatus.AnnotationAdoptedIdentity, hcdstatus.AnnotationAdoptedReferences} {
		add := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"infraID=someone-elses"}}}`, key)
		if err := tc.Patch(ctx, u, client.RawPatch(types.MergePatchType, add)); err == nil || !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) ||
			!strings.Contains(err.Error(), key) {
			t.Errorf("a tenant adding %s: %v", key, err)
		}
	}
	if err := tc.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"example.com/owner":"team-a"}}}`))); err != nil {
		t.Errorf("a tenant's own annotation: %v", err)
	}
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	if _, ok := u.Annotations[adoption.AnnotationAdoptedFrom]; ok || u.Annotations["example.com/owner"] != "team-a" {
		t.Errorf("annotations after the tenant's edits: %v", u.Annotations)
	}
}
