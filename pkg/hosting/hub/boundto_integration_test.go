//go:build integration

package hub_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// tenantClient is a client of the hub as a member of group ns, which holds
// the ClusterRole hcp-fleet:tenant in namespace ns only (bound as
// manifests/hub/50-tenant-clusterrole.yaml says).
func tenantClient(t *testing.T, ns string) client.Client {
	t.Helper()
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hcp-fleet-tenant"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hcp-fleet:tenant"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: ns}}}
	if err := hubc.Create(context.Background(), rb); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.Fleet.Hub.Config())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: ns + "-member", Groups: []string{ns, "system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: hub.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// refusedByPolicy is nil when err is the bound-to admission policy's
// refusal.
func refusedByPolicy(err error) error {
	return refusedByPolicyFor(err, hcdstatus.AnnotationBoundTo)
}

// refusedByPolicyFor is nil when err is the bound-to admission policy's
// refusal naming the annotation key.
func refusedByPolicyFor(err error, key string) error {
	if err == nil {
		return errors.New("allowed")
	}
	if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), key) {
		return fmt.Errorf("not the policy's refusal: %w", err)
	}
	return nil
}

// TestBoundToAnnotationPolicy: the ValidatingAdmissionPolicy of
// manifests/hub/40-boundto-admissionpolicy.yaml, on the local fleet's hub.
// The hub (its own ServiceAccount) writes the annotation when it delivers;
// a tenant can neither remove nor change it, nor create a deployment that
// carries one, while its other edits pass; a fleet admin may remove it.
// The same for hcdstatus.AnnotationIdentityUID, which the hub writes with
// it.
func TestBoundToAnnotationPolicy(t *testing.T) {
	ctx := context.Background()
	ns, name := "boundto", "guarded"
	tenant(t, ns)
	tc := tenantClient(t, ns)
	if err := tc.Create(ctx, hcd(ns, name)); err != nil {
		t.Fatalf("the tenant creates a deployment without the annotation: %v", err)
	}
	// Gone before the next test: the burst counts every slot of the fleet.
	t.Cleanup(func() { deleteAndWait(t, ns, name) })
	// The hub's own write is allowed: the delivery sets the annotation.
	var h *v1alpha1.HostedClusterDeployment
	env.Eventually(t, 2*time.Minute, "the hub writes "+hcdstatus.AnnotationBoundTo, func(ctx context.Context) error {
		var err error
		if h, err = getHCD(ctx, ns, name); err != nil {
			return err
		}
		if h.Status.HostingCluster == "" || h.Annotations[hcdstatus.AnnotationBoundTo] != h.Status.HostingCluster ||
			h.Annotations[hcdstatus.AnnotationIdentityUID] != string(h.UID) {
			return fmt.Errorf("annotations %v, bound to %q", h.Annotations, h.Status.HostingCluster)
		}
		return nil
	})
	host := h.Status.HostingCluster
	key := types.NamespacedName{Namespace: ns, Name: name}
	patchKey := func(c client.Client, key string, value *string) error {
		v := "null"
		if value != nil {
			v = fmt.Sprintf("%q", *value)
		}
		u := &v1alpha1.HostedClusterDeployment{}
		u.Namespace, u.Name = ns, name
		return c.Patch(ctx, u, client.RawPatch(types.MergePatchType,
			fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%s}}}`, key, v)))
	}
	patch := func(c client.Client, value *string) error { return patchKey(c, hcdstatus.AnnotationBoundTo, value) }
	other := "cluster-elsewhere"
	// Eventually only because the API server loads a new policy
	// asynchronously; the fleet installed it long before.
	env.Eventually(t, time.Minute, "a tenant's removal is refused", func(context.Context) error { return refusedByPolicy(patch(tc, nil)) })
	if err := refusedByPolicy(patch(tc, &other)); err != nil {
		t.Errorf("a tenant's change of the annotation: %v", err)
	}
	forged := hcd(ns, "forged")
	forged.SetAnnotations(map[string]string{hcdstatus.AnnotationBoundTo: host})
	if err := refusedByPolicy(tc.Create(ctx, forged)); err != nil {
		t.Errorf("a tenant's create with the annotation: %v", err)
	}
	// The policy guards that one key: the tenant's other metadata edits
	// pass, with the annotation kept as it is.
	u := &v1alpha1.HostedClusterDeployment{}
	u.Namespace, u.Name = ns, name
	if err := tc.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"example.com/owner":"team-a"}}}`))); err != nil {
		t.Errorf("a tenant's own annotation: %v", err)
	}
	if err := hubc.Get(ctx, key, u); err != nil {
		t.Fatal(err)
	}
	if u.Annotations[hcdstatus.AnnotationBoundTo] != host {
		t.Errorf("annotation %s = %q after the refused edits, want %s", hcdstatus.AnnotationBoundTo, u.Annotations[hcdstatus.AnnotationBoundTo], host)
	}
	// The identity: a tenant who set it could take over the hosted
	// cluster of an earlier deployment of the same name.
	identity := hcdstatus.AnnotationIdentityUID
	if err := refusedByPolicyFor(patchKey(tc, identity, nil), identity); err != nil {
		t.Errorf("a tenant's removal of %s: %v", identity, err)
	}
	if err := refusedByPolicyFor(patchKey(tc, identity, &other), identity); err != nil {
		t.Errorf("a tenant's change of %s: %v", identity, err)
	}
	forgedIdentity := hcd(ns, "forged-identity")
	forgedIdentity.SetAnnotations(map[string]string{identity: string(h.UID)})
	if err := refusedByPolicyFor(tc.Create(ctx, forgedIdentity), identity); err != nil {
		t.Errorf("a tenant's create with %s: %v", identity, err)
	}
	if err := hubc.Get(ctx, key, u); err != nil {
		t.Fatal(err)
	}
	if u.Annotations[identity] != string(h.UID) {
		t.Errorf("annotation %s = %q after the refused edits, want %s", identity, u.Annotations[identity], h.UID)
	}
	// A fleet admin (who may write status) may remove it, as
	// docs/operations.md tells after a restore whose hosted cluster runs
	// nowhere any more; here it is put back at once by the delivery.
	if err := patch(hubc, nil); err != nil {
		t.Errorf("the admin's removal: %v", err)
	}
}
