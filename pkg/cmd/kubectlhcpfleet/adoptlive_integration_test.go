//go:build integration

package kubectlhcpfleet_test

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
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/kubectlhcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/adoption"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// TestAdopt: a HostedCluster and its NodePool created directly on
// cluster-1 (as `hcp` would), running, are adopted into namespace team by
// `adopt --dry-run=false` without a restart: the HostedCluster and the
// NodePool keep their UIDs and generations and the stand-in rolls nothing
// out again (its version history is unchanged), the deployment is bound
// where it runs (Scheduled, reason Adopted), Delivered and Available, and
// the HostedCluster carries the deployment's labels. Before that, a tenant
// may not create an adoption, and an adoption into a namespace whose
// TenantPolicy refuses the HostedCluster's release creates nothing and
// writes nothing to the management cluster (PolicyViolation).
func TestAdopt(t *testing.T) {
	ctx := context.Background()
	const cluster, ns, name, strict = "cluster-1", v1alpha1.DefaultHostingNamespace, "adopt-live", "team-strict"
	host := hostOf(t, cluster)
	createUnmanaged(t, host, cluster, ns, name, name+"-infra", map[string]string{"example.com/made-by": "hcp"})
	np := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "NodePool",
		"metadata": map[string]any{"namespace": ns, "name": name + "-workers"},
		"spec": map[string]any{"clusterName": name, "replicas": int64(1), "management": map[string]any{"upgradeType": "Replace"},
			"platform": map[string]any{"type": "None"}, "release": map[string]any{"image": "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"}},
	}}
	if _, err := host.Resource(npGVR).Namespace(ns).Create(ctx, np, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.Resource(npGVR).Namespace(ns).Delete(context.Background(), name+"-workers", metav1.DeleteOptions{})
	})
	// The positive signal: it runs (the stand-in completed its rollout) and
	// its agent lists it.
	var before *unstructured.Unstructured
	env.Eventually(t, 3*time.Minute, "HostedCluster "+name+" Available and listed", func(ctx context.Context) error {
		got, err := host.Resource(hcGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s := conditionStatus(got, "Available"); s != "True" {
			return fmt.Errorf("Available=%q", s)
		}
		if h, _, _ := unstructured.NestedSlice(got.Object, "status", "version", "history"); len(h) == 0 {
			return fmt.Errorf("no version history yet")
		}
		if listed, err := inventoryLists(ctx, cluster, ns, name); err != nil || !listed {
			return fmt.Errorf("not listed (%v)", err)
		}
		before = got
		return nil
	})
	npBefore, err := host.Resource(npGVR).Namespace(ns).Get(ctx, name+"-workers", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	adoptionKey := types.NamespacedName{Namespace: cluster, Name: kubectlhcpfleet.AdoptionName(ns, name)}

	// A tenant cannot ask: it has no verb in the management clusters'
	// namespaces.
	if out, err := run(ctx, "adopt", cluster, ns+"/"+name, "--into", team, "--dry-run=false", "--as", "alice", "--as-group", team); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("a tenant created an adoption: %v\n%s", err, out)
	}

	// A namespace whose policy allows releases from elsewhere only: the
	// adoption is refused and nothing is created or delivered.
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: strict}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := fleettest.SetTenantPolicy(ctx, admin, strict, func(s *v1alpha1.TenantPolicySpec) {
		s.ReleaseImages = &v1alpha1.ReleaseImagePolicy{Repositories: []string{"registry.example.com/ocp-release"}}
	}); err != nil {
		t.Fatal(err)
	}
	out, err := run(ctx, "adopt", cluster, ns+"/"+name, "--into", strict, "--dry-run=false", "--wait", "3m", "-o", "json")
	if hca := decodeAdoption(t, out); err == nil || !hasCondition(hca, v1alpha1.ConditionAdopted, metav1.ConditionFalse, adoption.ReasonPolicyViolation) {
		t.Errorf("adopt into %s: %v, want refused with %s:\n%s", strict, err, adoption.ReasonPolicyViolation, out)
	}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: strict, Name: name}, &v1alpha1.HostedClusterDeployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("HostedClusterDeployment %s/%s after a refused adoption: %v", strict, name, err)
	}
	var works workv1.ManifestWorkList
	if err := admin.List(ctx, &works, client.InNamespace(cluster), client.MatchingLabels{hosting.LabelHCDName: name}); err != nil || len(works.Items) > 0 {
		t.Errorf("ManifestWorks for %s after a refused adoption: %d (%v)", name, len(works.Items), err)
	}
	if err := admin.Delete(ctx, &v1alpha1.HostedClusterAdoption{ObjectMeta: metav1.ObjectMeta{Namespace: adoptionKey.Namespace, Name: adoptionKey.Name}}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, time.Minute, "the refused adoption gone", func(ctx context.Context) error {
		if err := admin.Get(ctx, adoptionKey, &v1alpha1.HostedClusterAdoption{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})

	// Adopted into team.
	start := time.Now()
	out, err = run(ctx, "adopt", cluster, ns+"/"+name, "--into", team, "--dry-run=false", "--wait", "5m", "-o", "json")
	if hca := decodeAdoption(t, out); err != nil || !hasCondition(hca, v1alpha1.ConditionAdopted, metav1.ConditionTrue, adoption.ReasonAdopted) ||
		hca.Status.HostedClusterDeployment != team+"/"+name || hca.Status.AdoptedUID != string(before.GetUID()) {
		t.Fatalf("adopt into %s: %v:\n%s", team, err, out)
	}
	t.Logf("adopted in %s", time.Since(start).Round(time.Second))
	t.Cleanup(func() {
		hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: name}}
		if err := admin.Delete(context.Background(), hcd); client.IgnoreNotFound(err) != nil {
			t.Error(err)
		}
		env.Eventually(t, 2*time.Minute, "the adopted deployment gone", func(ctx context.Context) error {
			if err := admin.Get(ctx, client.ObjectKeyFromObject(hcd), hcd); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
		_ = admin.Delete(context.Background(), &v1alpha1.HostedClusterAdoption{ObjectMeta: metav1.ObjectMeta{Namespace: adoptionKey.Namespace, Name: adoptionKey.Name}})
	})
	hcd := &v1alpha1.HostedClusterDeployment{}
	// Delivered is waited for, not asserted once: the takeover force-applies
	// only until the first Delivered, so the delivery then renders the work
	// once more without force, and Delivered is False (WaitingForApply) until
	// the work agent applies that generation too.
	env.Eventually(t, 2*time.Minute, "the adopted deployment Available and Delivered", func(ctx context.Context) error {
		if err := admin.Get(ctx, types.NamespacedName{Namespace: team, Name: name}, hcd); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(hcd.Status.Conditions, v1alpha1.ConditionAvailable) ||
			!meta.IsStatusConditionTrue(hcd.Status.Conditions, v1alpha1.ConditionDelivered) {
			return fmt.Errorf("not Available and Delivered: %+v", hcd.Status.Conditions)
		}
		return nil
	})
	if s := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionScheduled); s == nil || s.Status != metav1.ConditionTrue || s.Reason != v1alpha1.ReasonAdopted ||
		hcd.Status.HostingCluster != cluster {
		t.Errorf("Scheduled %+v, bound to %q; want True (%s) on %s", s, hcd.Status.HostingCluster, v1alpha1.ReasonAdopted, cluster)
	}
	if got := scheduling.EffectiveInfraID(hcd); got != name+"-infra" {
		t.Errorf("the deployment's infraID %q, want the HostedCluster's %q", got, name+"-infra")
	}
	// Not restarted: the same objects, no spec change, no new rollout.
	after, err := host.Resource(hcGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetUID() != before.GetUID() || after.GetGeneration() != before.GetGeneration() {
		t.Errorf("HostedCluster UID %s generation %d after the adoption, want %s and %d", after.GetUID(), after.GetGeneration(), before.GetUID(), before.GetGeneration())
	}
	hb, _, _ := unstructured.NestedSlice(before.Object, "status", "version", "history")
	ha, _, _ := unstructured.NestedSlice(after.Object, "status", "version", "history")
	if len(ha) != len(hb) {
		t.Errorf("the stand-in rolled the HostedCluster out again: version history %v, before %v", ha, hb)
	}
	if l := after.GetLabels(); l[hosting.LabelHCDUID] != string(hcd.UID) || l["example.com/made-by"] != "hcp" {
		t.Errorf("HostedCluster labels %v: want the deployment's UID and its own kept", l)
	}
	npAfter, err := host.Resource(npGVR).Namespace(ns).Get(ctx, name+"-workers", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if npAfter.GetUID() != npBefore.GetUID() || npAfter.GetGeneration() != npBefore.GetGeneration() || npAfter.GetLabels()[hosting.LabelHCDUID] != string(hcd.UID) {
		t.Errorf("NodePool UID %s generation %d labels %v; want %s, %d and the deployment's UID", npAfter.GetUID(), npAfter.GetGeneration(), npAfter.GetLabels(),
			npBefore.GetUID(), npBefore.GetGeneration())
	}
	// The pull secret is the HostedCluster's own, not a copy from the hub.
	if ps, _, _ := unstructured.NestedString(after.Object, "spec", "pullSecret", "name"); ps != "pull-secret" {
		t.Errorf("spec.pullSecret.name %q after the adoption, want pull-secret kept", ps)
	}
}

// decodeAdoption reads the HostedClusterAdoption adopt -o json printed
// first (an error message may follow it).
func decodeAdoption(t *testing.T, out string) *v1alpha1.HostedClusterAdoption {
	t.Helper()
	hca := &v1alpha1.HostedClusterAdoption{}
	if err := json.NewDecoder(strings.NewReader(out)).Decode(hca); err != nil {
		t.Errorf("adopt output: %v:\n%s", err, out)
	}
	return hca
}

func hasCondition(hca *v1alpha1.HostedClusterAdoption, typ string, status metav1.ConditionStatus, reason string) bool {
	c := meta.FindStatusCondition(hca.Status.Conditions, typ)
	return c != nil && c.Status == status && c.Reason == reason
}

// conditionStatus is the status of a condition of an unstructured object.
func conditionStatus(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}
