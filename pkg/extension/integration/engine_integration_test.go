//go:build integration

package integration_test

import (
	"context"
	"encoding/json"
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
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// The tests of PKO semantics (this file's name sorts before the file whose
// last test disables the add-on) share one hosted cluster with a real API server
// in namespace ext-pko, made once.
const pkoNS, pkoHCD = "ext-pko", "guest-pko"

var pkoReady bool

func pkoCluster(t *testing.T) (cpNS string, guest client.Client) {
	t.Helper()
	if !pkoReady {
		tenant(t, pkoNS)
		createHCD(t, pkoNS, pkoHCD)
		pkoReady = true
	}
	waitAvailable(t, pkoNS, pkoHCD)
	cpNS = extension.ControlPlaneNamespace(v1alpha1.DefaultHostingNamespace, pkoHCD)
	return cpNS, guestClient(t, pkoHCD)
}

func pkoSpec(phases ...any) map[string]any {
	return map[string]any{"hostedClusterSelector": map[string]any{"matchLabels": map[string]any{"extensions": "yes"}}, "phases": phases}
}

func configMap(name, namespace, value string) string {
	ns := ""
	if namespace != "" {
		ns = fmt.Sprintf(`,"namespace":%q`, namespace)
	}
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q%s},"data":{"value":%q}}`, name, ns, value)
}

func withCollision(o map[string]any, mode string) map[string]any {
	o["collisionProtection"] = mode
	return o
}

func getConfigMap(ctx context.Context, c client.Client, namespace, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	return cm, c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cm)
}

func deleteExtension(t *testing.T, name string) {
	t.Helper()
	if err := hubc.Delete(context.Background(), &v1alpha1.HostedClusterExtension{ObjectMeta: metav1.ObjectMeta{Namespace: pkoNS, Name: name}}); err != nil {
		t.Fatal(err)
	}
}

func waitExtensionGone(t *testing.T, name string, timeout time.Duration) {
	t.Helper()
	env.Eventually(t, timeout, "extension "+name+" removed", func(ctx context.Context) error {
		if _, err := getExtension(ctx, pkoNS, name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}

// TestCollidingExtensions: extension B lists an object extension A owns.
// B is refused on it (collision protection), and neither B dropping it nor
// B's removal deletes it: B never recorded it as its own, and only objects
// carrying B's UID are deleted. IfNoController adopts an unowned object
// in the hosted cluster and refuses one a controller owns.
func TestCollidingExtensions(t *testing.T) {
	ctx := context.Background()
	cpNS, guest := pkoCluster(t)
	applyExtension(t, pkoNS, "owner-a", pkoSpec(phase("config", "", obj(configMap("shared", "", "a")))))
	waitHostedCluster(t, pkoNS, "owner-a", pkoHCD, 2*time.Minute, "A available", stateIs(v1alpha1.ExtensionStateAvailable))
	a, _ := getExtension(ctx, pkoNS, "owner-a")
	intact := func(when string) {
		t.Helper()
		cm, err := getConfigMap(ctx, mgmt, cpNS, "shared")
		if err != nil || cm.Data["value"] != "a" || cm.Labels[extension.LabelExtensionUID] != string(a.UID) || cm.DeletionTimestamp != nil {
			t.Fatalf("%s: A's ConfigMap was touched: %v %v (%v)", when, cm.Data, cm.Labels, err)
		}
	}

	bSpec := func(shared bool) map[string]any {
		objects := []map[string]any{obj(configMap("b-own", "", "b"))}
		if shared {
			objects = append(objects, obj(configMap("shared", "", "b")))
		}
		return pkoSpec(phase("config", "", objects...))
	}
	applyExtension(t, pkoNS, "intruder-b", bSpec(true))
	refused := waitHostedCluster(t, pkoNS, "intruder-b", pkoHCD, 2*time.Minute, "B refused on A's object", stateIs(v1alpha1.ExtensionStateFailed))
	if refused.Failure == nil || refused.Failure.Reason != extension.ReasonObjectRefused || !strings.Contains(refused.Failure.Message, "belongs to another extension") {
		t.Fatalf("failure %+v", refused.Failure)
	}
	intact("B refused")
	// B drops it: the revision is available (the positive signal that the
	// engine deleted what it dropped), and A's object is still A's.
	applyExtension(t, pkoNS, "intruder-b", bSpec(false))
	waitHostedCluster(t, pkoNS, "intruder-b", pkoHCD, 2*time.Minute, "B without the shared object available", stateIs(v1alpha1.ExtensionStateAvailable))
	intact("B dropped it")
	// B lists it again (refused) and is removed: its own object goes, A's
	// stays.
	applyExtension(t, pkoNS, "intruder-b", bSpec(true))
	waitHostedCluster(t, pkoNS, "intruder-b", pkoHCD, 2*time.Minute, "B refused again", stateIs(v1alpha1.ExtensionStateFailed))
	deleteExtension(t, "intruder-b")
	waitExtensionGone(t, "intruder-b", 2*time.Minute)
	if ok, err := exists(ctx, mgmt, "v1", "ConfigMap", cpNS, "b-own"); ok || err != nil {
		t.Fatalf("B's own ConfigMap survived B's removal (%v)", err)
	}
	intact("B removed")

	// IfNoController in the hosted cluster: an unowned object is adopted
	// (and is A's from then on); one a controller owns is refused.
	if err := guest.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "adopt-me"}, Data: map[string]string{"value": "before"}}); err != nil {
		t.Fatal(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "owner"}}
	if err := guest.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	yes := true
	controlled := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "controlled", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &yes}}}, Data: map[string]string{"value": "theirs"}}
	if err := guest.Create(ctx, controlled); err != nil {
		t.Fatal(err)
	}
	adopt := pkoSpec(phase("config", "", obj(configMap("shared", "", "a"))),
		phase("guest", "hosted-cluster", withCollision(obj(configMap("adopt-me", "default", "after")), "IfNoController")))
	applyExtension(t, pkoNS, "owner-a", adopt)
	waitHostedCluster(t, pkoNS, "owner-a", pkoHCD, 2*time.Minute, "A adopted the unowned guest ConfigMap", stateIs(v1alpha1.ExtensionStateAvailable))
	if cm, err := getConfigMap(ctx, guest, "default", "adopt-me"); err != nil || cm.Data["value"] != "after" || cm.Labels[extension.LabelExtensionUID] != string(a.UID) {
		t.Fatalf("adopt-me not adopted: %v %v (%v)", cm.Data, cm.Labels, err)
	}
	adopt["phases"] = append(adopt["phases"].([]any), phase("controlled", "hosted-cluster",
		withCollision(obj(configMap("controlled", "default", "ours")), "IfNoController")))
	applyExtension(t, pkoNS, "owner-a", adopt)
	got := waitHostedCluster(t, pkoNS, "owner-a", pkoHCD, 2*time.Minute, "A refused on the controlled guest ConfigMap", stateIs(v1alpha1.ExtensionStateFailed))
	if got.Failure == nil || got.Failure.Reason != extension.ReasonObjectRefused || !strings.Contains(got.Failure.Message, "controlled by ConfigMap owner") {
		t.Fatalf("failure %+v", got.Failure)
	}
	if cm, err := getConfigMap(ctx, guest, "default", "controlled"); err != nil || cm.Data["value"] != "theirs" || cm.Labels[extension.LabelExtensionUID] != "" {
		t.Fatalf("the controlled ConfigMap was touched: %v %v (%v)", cm.Data, cm.Labels, err)
	}
	// Removal: A's own and adopted objects go, the controlled one stays.
	deleteExtension(t, "owner-a")
	waitExtensionGone(t, "owner-a", 2*time.Minute)
	for _, gone := range []struct {
		c        client.Client
		ns, name string
	}{{mgmt, cpNS, "shared"}, {guest, "default", "adopt-me"}} {
		if ok, err := exists(ctx, gone.c, "v1", "ConfigMap", gone.ns, gone.name); ok || err != nil {
			t.Fatalf("%s/%s left after A's removal (%v)", gone.ns, gone.name, err)
		}
	}
	if cm, err := getConfigMap(ctx, guest, "default", "controlled"); err != nil || cm.Data["value"] != "theirs" {
		t.Fatalf("the controlled ConfigMap went with A: %v (%v)", cm.Data, err)
	}
}

// setDeploymentAvailable reports a Deployment's Available condition as the
// Deployment controller would (the local fleet runs none for it).
func setDeploymentAvailable(t *testing.T, namespace, name string, available bool) {
	t.Helper()
	if available {
		markAvailable(t, namespace, name)
		return
	}
	ctx := context.Background()
	d := &unstructured.Unstructured{}
	d.SetAPIVersion("apps/v1")
	d.SetKind("Deployment")
	if err := mgmt.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, d); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	status := map[string]any{"observedGeneration": d.GetGeneration(), "replicas": int64(1), "updatedReplicas": int64(1),
		"readyReplicas": int64(0), "availableReplicas": int64(0), "conditions": []any{map[string]any{
			"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability.",
			"lastUpdateTime": now, "lastTransitionTime": now}}}
	patch, _ := json.Marshal(map[string]any{"status": status})
	if err := mgmt.Status().Patch(ctx, d, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// TestProbeFailureAfterAvailable: once available, the engine looks again
// only every 10 minutes (Resync) unless an applied object changes; the
// watches on applied objects report a probe that starts failing, and a
// guest object deleted behind the engine's back, within seconds.
func TestProbeFailureAfterAvailable(t *testing.T) {
	ctx := context.Background()
	cpNS, guest := pkoCluster(t)
	deployment := strings.ReplaceAll(cpDeployment(1), "audit-operator", "probed-operator")
	spec := pkoSpec(phase("operator", "", obj(deployment)), phase("guest", "hosted-cluster", obj(configMap("watched", "default", "v"))))
	spec["availabilityProbes"] = probes[:1] // the Deployment's
	applyExtension(t, pkoNS, "probed", spec)
	env.Eventually(t, 2*time.Minute, "the Deployment applied", func(ctx context.Context) error {
		if ok, err := exists(ctx, mgmt, "apps/v1", "Deployment", cpNS, "probed-operator"); !ok {
			return fmt.Errorf("not yet (%v)", err)
		}
		return nil
	})
	setDeploymentAvailable(t, cpNS, "probed-operator", true)
	waitHostedCluster(t, pkoNS, "probed", pkoHCD, 2*time.Minute, "available", stateIs(v1alpha1.ExtensionStateAvailable))

	// A guest object deleted: applied again within seconds.
	started := time.Now()
	if err := guest.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "watched"}}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 30*time.Second, "the deleted guest ConfigMap applied again", func(ctx context.Context) error {
		if ok, err := exists(ctx, guest, "v1", "ConfigMap", "default", "watched"); !ok {
			return fmt.Errorf("not yet (%v)", err)
		}
		return nil
	})
	fmt.Printf("guest object deleted after Available: applied again after %s\n", time.Since(started).Round(100*time.Millisecond))

	// The probe starts failing: Failed on the hub within seconds.
	started = time.Now()
	setDeploymentAvailable(t, cpNS, "probed-operator", false)
	failed := waitHostedCluster(t, pkoNS, "probed", pkoHCD, 30*time.Second, "the failing probe reported", stateIs(v1alpha1.ExtensionStateFailed))
	took := time.Since(started)
	if failed.Failure == nil || failed.Failure.Reason != extension.ReasonProbeFailure || failed.CurrentPhase != "operator" {
		t.Fatalf("failure %+v at %s", failed.Failure, failed.CurrentPhase)
	}
	fmt.Printf("probe failing after Available: reported on the hub after %s\n", took.Round(100*time.Millisecond))
	e, _ := getExtension(ctx, pkoNS, "probed")
	if c := meta.FindStatusCondition(e.Status.Conditions, "Degraded"); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Degraded %+v", c)
	}
	setDeploymentAvailable(t, cpNS, "probed-operator", true)
	waitHostedCluster(t, pkoNS, "probed", pkoHCD, 30*time.Second, "available again", stateIs(v1alpha1.ExtensionStateAvailable))
	deleteExtension(t, "probed")
	waitExtensionGone(t, "probed", 2*time.Minute)
}

// TestTeardownWaitsForReachableGuest: a revision reorders two guest
// phases; on removal the phase that is now last goes first, and while one
// of its objects is held by another controller's finalizer the teardown
// waits — past the engine's guest teardown timeout (guestTeardownTimeout,
// the agent's flag in this fleet), since the
// guest answers — and the other phase's object is not deleted until it is
// gone. Then everything goes.
func TestTeardownWaitsForReachableGuest(t *testing.T) {
	ctx := context.Background()
	cpNS, guest := pkoCluster(t)
	first := phase("first", "hosted-cluster", obj(configMap("slow-first", "default", "1")))
	second := phase("second", "hosted-cluster", obj(configMap("slow-second", "default", "2")))
	applyExtension(t, pkoNS, "slow", pkoSpec(first, second))
	waitHostedCluster(t, pkoNS, "slow", pkoHCD, 2*time.Minute, "available", stateIs(v1alpha1.ExtensionStateAvailable))
	applyExtension(t, pkoNS, "slow", pkoSpec(second, first))
	waitHostedCluster(t, pkoNS, "slow", pkoHCD, 2*time.Minute, "the reordered revision available", stateIs(v1alpha1.ExtensionStateAvailable))

	// Phase first is last now: it goes first. Another controller holds its
	// object.
	held, err := getConfigMap(ctx, guest, "default", "slow-first")
	if err != nil {
		t.Fatal(err)
	}
	held.Finalizers = append(held.Finalizers, "example.com/hold")
	if err := guest.Update(ctx, held); err != nil {
		t.Fatal(err)
	}
	deleteExtension(t, "slow")
	release := &corev1.ConfigMap{}
	env.Eventually(t, time.Minute, "the teardown waits on the held object", func(ctx context.Context) error {
		if err := mgmt.Get(ctx, types.NamespacedName{Namespace: cpNS, Name: extension.ReleaseName("slow")}, release); err != nil {
			return err
		}
		cm, err := getConfigMap(ctx, guest, "default", "slow-first")
		if err != nil || cm.DeletionTimestamp == nil {
			return fmt.Errorf("slow-first not being deleted (%v)", err)
		}
		if release.DeletionTimestamp == nil || !strings.Contains(release.Data[extension.KeyMessage], "waiting for 1 objects of phase first") {
			return fmt.Errorf("release message %q", release.Data[extension.KeyMessage])
		}
		return nil
	})
	// Past the timeout after which a silent guest's objects are abandoned, the
	// engine still waits: the release holds, the other phase's object is
	// untouched, and nothing says the guest is unreachable.
	deadline := release.DeletionTimestamp.Add(guestTeardownTimeout + 10*time.Second)
	env.Eventually(t, time.Minute, "the teardown still waiting after the guest timeout", func(ctx context.Context) error {
		if err := mgmt.Get(ctx, client.ObjectKeyFromObject(release), release); err != nil {
			return fmt.Errorf("the release went: %w", err)
		}
		if release.Data[extension.KeyReason] == extension.ReasonHostedClusterUnreachable {
			return fmt.Errorf("reported unreachable: %s", release.Data[extension.KeyMessage])
		}
		cm, err := getConfigMap(ctx, guest, "default", "slow-second")
		if err != nil || cm.DeletionTimestamp != nil {
			return fmt.Errorf("slow-second deleted before slow-first was gone (%v)", err)
		}
		if time.Now().Before(deadline) {
			return fmt.Errorf("%s until the old timeout", time.Until(deadline).Round(time.Second))
		}
		return nil
	})
	held, err = getConfigMap(ctx, guest, "default", "slow-first")
	if err != nil {
		t.Fatal(err)
	}
	held.Finalizers = nil
	if err := guest.Update(ctx, held); err != nil {
		t.Fatal(err)
	}
	waitExtensionGone(t, "slow", time.Minute)
	for _, name := range []string{"slow-first", "slow-second"} {
		if ok, err := exists(ctx, guest, "v1", "ConfigMap", "default", name); ok || err != nil {
			t.Fatalf("%s left in the hosted cluster (%v)", name, err)
		}
	}
}
