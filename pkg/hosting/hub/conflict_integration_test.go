//go:build integration

package hub_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// foreignManager is the field manager of objects on the host that
// hcp-fleet did not create.
const foreignManager = "someone-else"

// TestForeignObjectIsNotTakenOver: a Secret someone else created on the
// management cluster with exactly the name an HCD's pull secret copy gets is
// not overwritten (the work agent applies without force): the HCD reports
// the conflict, naming the object, and is delivered once the object is
// gone; deleting an HCD does not delete a foreign object in its way.
func TestForeignObjectIsNotTakenOver(t *testing.T) {
	ctx := context.Background()
	ns := "conflict"
	tenant(t, ns)
	host := env.Fleet.Managed[0].Name
	hostingNS := v1alpha1.DefaultHostingNamespace
	secrets := hosts[host].Resource(scGVR).Namespace(hostingNS)
	// The hosting namespace exists before the HCD is delivered, as the
	// delivery would create it (CreateOnly, labelled as created by
	// hcp-fleet, so the agent's janitor removes it once nothing lives in it;
	// a foreign Secret in it keeps it).
	nsObj := &unstructured.Unstructured{}
	nsObj.SetAPIVersion("v1")
	nsObj.SetKind("Namespace")
	nsObj.SetName(hostingNS)
	nsObj.SetLabels(map[string]string{hosting.LabelCreatedNamespace: "true"})

	foreignData := base64.StdEncoding.EncodeToString([]byte(`{"auths":{"someone-else.example.com":{}}}`))
	createForeign := func(name string) {
		t.Helper()
		s := &unstructured.Unstructured{Object: map[string]any{"type": "Opaque", "data": map[string]any{".dockerconfigjson": foreignData}}}
		s.SetAPIVersion("v1")
		s.SetKind("Secret")
		s.SetNamespace(hostingNS)
		s.SetName(name)
		s.SetLabels(map[string]string{"owner": foreignManager})
		// Retried: the janitor may be removing an empty hosting namespace
		// another test left.
		env.Eventually(t, time.Minute, "foreign Secret "+hostingNS+"/"+name+" created", func(ctx context.Context) error {
			if _, err := hosts[host].Resource(nsGVR).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			if _, err := secrets.Create(ctx, s, metav1.CreateOptions{FieldManager: foreignManager}); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			return nil
		})
	}
	// assertUntouched: the foreign Secret still has its data and labels and
	// no owner (the work agent adds its AppliedManifestWork as owner to what
	// it applies, and deletes only what it owns).
	assertUntouched := func(name string) {
		t.Helper()
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("foreign Secret %s/%s: %v", hostingNS, name, err)
		}
		if d, _, _ := unstructured.NestedString(s.Object, "data", ".dockerconfigjson"); d != foreignData {
			t.Errorf("foreign Secret %s data overwritten: %q", name, d)
		}
		if l := s.GetLabels(); l["owner"] != foreignManager || l[hosting.LabelHCDName] != "" {
			t.Errorf("foreign Secret %s labels %v", name, l)
		}
		if len(s.GetOwnerReferences()) > 0 {
			t.Errorf("foreign Secret %s taken over: owners %v", name, s.GetOwnerReferences())
		}
	}
	pinned := func(spec map[string]any) {
		delete(spec, "placement")
		spec["hostingCluster"] = host
	}
	// Copy names are salted with the HCD's UID, so the foreign Secret can
	// only be created once the HCD exists: each HCD refers to a pull secret
	// the hub does not have yet, which holds its delivery
	// (ReferencedObjectNotFound) until heldPullSecret creates it.
	pullSecretOf := func(name string) func(spec map[string]any) {
		return func(spec map[string]any) {
			hc := spec["hostedCluster"].(map[string]any)["spec"].(map[string]any)
			hc["pullSecret"] = map[string]any{"name": "pull-" + name}
		}
	}
	heldPullSecret := func(name string) {
		t.Helper()
		waitCondition(t, ns, name, v1alpha1.ConditionDelivered, metav1.ConditionFalse, time.Minute)
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-" + name, Namespace: ns},
			StringData: map[string]string{".dockerconfigjson": `{"auths":{}}`}}
		if err := hubc.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// waitConflict waits for Delivered=False naming the conflicting Secret
	// and its manager.
	waitConflict := func(name, copyName string) {
		t.Helper()
		env.Eventually(t, time.Minute, ns+"/"+name+" Delivered=False naming the conflict", func(ctx context.Context) error {
			h, err := getHCD(ctx, ns, name)
			if err != nil {
				return err
			}
			c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionDelivered)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonOwnedByAnother || c.ObservedGeneration != h.Generation ||
				!strings.Contains(c.Message, "Secret "+hostingNS+"/"+copyName+" belongs to another field manager") ||
				!strings.Contains(c.Message, `conflict with "`+foreignManager+`"`) ||
				!strings.Contains(c.Message, "never merged") {
				return fmt.Errorf("Delivered %+v", c)
			}
			return nil
		})
	}

	// Case 1: the foreign Secret is there first.
	if err := hubc.Create(ctx, hcd(ns, "one", pinned, pullSecretOf("one"))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAndWait(t, ns, "one") })
	one := copyName(t, ns, "one", "pull-one")
	createForeign(one)
	heldPullSecret("one")
	waitConflict("one", one)
	assertUntouched(one)

	// Its owner removes it. The work agent retries a conflict on its resync
	// (minutes) or when the ManifestWork changes: change the HCD.
	if err := secrets.Delete(ctx, one, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := hubc.Patch(ctx, hcd(ns, "one"), client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"hostedCluster":{"labels":{"retry":"1"}}}}`))); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ns, "one", v1alpha1.ConditionDelivered, metav1.ConditionTrue, time.Minute)
	cp, err := secrets.Get(ctx, one, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d, _, _ := unstructured.NestedString(cp.Object, "data", ".dockerconfigjson"); d != base64.StdEncoding.EncodeToString([]byte(`{"auths":{}}`)) ||
		cp.GetLabels()[hosting.LabelHCDName] != "one" || cp.GetLabels()[hosting.LabelHCDNamespace] != ns {
		t.Errorf("delivered copy %s: data %q labels %v", one, d, cp.GetLabels())
	}

	// Case 2: deleting an HCD whose copy met a foreign Secret leaves the
	// foreign Secret alone.
	if err := hubc.Create(ctx, hcd(ns, "two", pinned, pullSecretOf("two"))); err != nil {
		t.Fatal(err)
	}
	two := copyName(t, ns, "two", "pull-two")
	createForeign(two)
	t.Cleanup(func() { _ = secrets.Delete(context.Background(), two, metav1.DeleteOptions{}) })
	heldPullSecret("two")
	waitConflict("two", two)
	deleteAndWait(t, ns, "two")
	assertUntouched(two)
}

// TestOrphanIsNotTakenOver: a HostedCluster left behind by deletionPolicy
// Orphan is not taken over by another tenant's HCD of the same name on the
// same host and hosting namespace: that one reports OwnedByAnother naming
// the HostedCluster, the HostedCluster keeps the first HCD's spec and
// labels, none of its status or its admin kubeconfig reaches the second,
// and deleting the second leaves it running.
func TestOrphanIsNotTakenOver(t *testing.T) {
	ctx := context.Background()
	nsA, nsB, name := "orphan-tenant-a", "orphan-tenant-b", "orphan-x"
	tenant(t, nsA)
	tenant(t, nsB)
	// Both teams may set spec.infraID (the built-in tenant policy leaves
	// it to the hub).
	allowInfraID(t, nsA, nsB)
	host := env.Fleet.Managed[0].Name
	hostingNS := v1alpha1.DefaultHostingNamespace
	hcs := hosts[host].Resource(hcGVR).Namespace(hostingNS)
	t.Cleanup(func() { _ = hcs.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	// Tenant A's hosted cluster, orphaned.
	a := hcd(nsA, name, func(spec map[string]any) {
		delete(spec, "placement")
		spec["hostingCluster"] = host
		spec["deletionPolicy"] = "Orphan"
	})
	createHCD(t, a)
	hA, _ := awaitCondition(t, nsA, name, v1alpha1.ConditionDelivered, metav1.ConditionTrue, v1alpha1.ReasonApplied)
	before, err := hcs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := before.GetLabels(); l[hosting.LabelHCDUID] != string(hA.UID) || l[hosting.LabelHCDNamespace] != nsA {
		t.Fatalf("A's HostedCluster labels %v, want %s=%s", l, hosting.LabelHCDUID, hA.UID)
	}
	infraID, _, _ := unstructured.NestedString(before.Object, "spec", "infraID")
	if infraID == "" {
		t.Fatal("A's HostedCluster has no infraID: the hub derives one")
	}
	if err := hubc.Delete(ctx, hcd(nsA, name)); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 2*time.Minute, nsA+"/"+name+" gone, its HostedCluster orphaned", func(ctx context.Context) error {
		if _, err := getHCD(ctx, nsA, name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("HCD still there (%v)", err)
		}
		hc, err := hcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("the orphaned HostedCluster: %w", err)
		}
		if hc.GetDeletionTimestamp() != nil || len(hc.GetOwnerReferences()) > 0 {
			return fmt.Errorf("the HostedCluster is not released: deleting %v, owners %v", hc.GetDeletionTimestamp(), hc.GetOwnerReferences())
		}
		return nil
	})

	// Tenant B asks for a hosted cluster of the same name there, differing
	// only in what HyperShift lets change (its infraID, free again once A
	// is gone, is the orphan's): nothing but ownership stands in the way.
	b := hcd(nsB, name, func(spec map[string]any) {
		delete(spec, "placement")
		spec["hostingCluster"] = host
		hc := spec["hostedCluster"].(map[string]any)
		hc["labels"] = map[string]any{"team": "b"}
		hc["spec"].(map[string]any)["infraID"] = infraID
		hc["spec"].(map[string]any)["channel"] = "stable-b"
	})
	createHCD(t, b)
	t.Cleanup(func() { deleteAndWait(t, nsB, name) })
	hB, _ := awaitCondition(t, nsB, name, v1alpha1.ConditionDelivered, metav1.ConditionFalse, v1alpha1.ReasonOwnedByAnother,
		"HostedCluster "+hostingNS+"/"+name+" belongs to another HostedClusterDeployment", "never merged", "explicit admin action")

	after, err := hcs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := after.GetLabels(); l[hosting.LabelHCDUID] != string(hA.UID) || l[hosting.LabelHCDNamespace] != nsA || l["team"] != "a" {
		t.Errorf("the orphaned HostedCluster's labels changed: %v", l)
	}
	if c, _, _ := unstructured.NestedString(after.Object, "spec", "channel"); c != "" {
		t.Errorf("the orphaned HostedCluster's spec.channel is %q, want A's (none)", c)
	}
	if id, _, _ := unstructured.NestedString(after.Object, "spec", "infraID"); id != infraID {
		t.Errorf("infraID %q, want A's %q", id, infraID)
	}
	for _, o := range after.GetOwnerReferences() {
		t.Errorf("the orphaned HostedCluster got an owner: %v", o)
	}
	// None of A's hosted cluster reaches B: no status, no kubeconfig.
	if hB.Status.ControlPlaneEndpoint != nil || hB.Status.Version != nil || hB.Status.KubeconfigSecret != nil {
		t.Errorf("B shows A's hosted cluster: endpoint %+v version %+v kubeconfig %+v", hB.Status.ControlPlaneEndpoint, hB.Status.Version, hB.Status.KubeconfigSecret)
	}
	if c := meta.FindStatusCondition(hB.Status.Conditions, v1alpha1.ConditionAvailable); c == nil || c.Status == metav1.ConditionTrue {
		t.Errorf("B Available %+v", c)
	}
	for _, key := range []types.NamespacedName{
		{Namespace: nsB, Name: hosting.AdminKubeconfigName(name)},
		{Namespace: host, Name: hosting.ExportedKubeconfigName(nsB, name)},
	} {
		if err := hubc.Get(ctx, key, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Errorf("kubeconfig Secret %s for B: %v", key, err)
		}
	}

	// Deleting B leaves A's HostedCluster running.
	deleteAndWait(t, nsB, name)
	hc, err := hcs.Get(ctx, name, metav1.GetOptions{})
	if err != nil || hc.GetDeletionTimestamp() != nil || hc.GetLabels()[hosting.LabelHCDUID] != string(hA.UID) {
		t.Errorf("the orphaned HostedCluster after B's deletion: %v", err)
	}
}
