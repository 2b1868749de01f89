//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
	olmhub "github.com/hcp-fleet/hcp-fleet/pkg/olm/hub"
)

// gated is one HostedClusterDeployment under the upgrade gate, with what
// the tests read of it.
type gated struct {
	t    *testing.T
	hcd  *unstructured.Unstructured
	name string
}

func newGated(t *testing.T, ns, name, release string, annotations map[string]any) *gated {
	t.Helper()
	ctx := context.Background()
	if err := fleettest.Tenant(ctx, hubc, ns); err != nil {
		t.Fatal(err)
	}
	spec := fleettest.HostedCluster(v1alpha1.DefaultHostingNamespace, name).Object["spec"].(map[string]any)
	spec["release"] = map[string]any{"image": release}
	hc := map[string]any{"spec": spec}
	if annotations != nil {
		hc["annotations"] = annotations
	}
	hcd := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"placement": "hosts", "hostedCluster": hc}}}
	hcd.SetAPIVersion(v1alpha1.GroupVersion.String())
	hcd.SetKind("HostedClusterDeployment")
	hcd.SetNamespace(ns)
	hcd.SetName(name)
	if err := hubc.Create(ctx, hcd); err != nil {
		t.Fatal(err)
	}
	return &gated{t: t, hcd: hcd, name: name}
}

func (g *gated) patch(patch string) {
	g.t.Helper()
	if err := hubc.Patch(context.Background(), g.hcd, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		g.t.Fatal(err)
	}
}

func (g *gated) setRelease(image string) {
	g.t.Helper()
	g.patch(fmt.Sprintf(`{"spec":{"hostedCluster":{"spec":{"release":{"image":%q}}}}}`, image))
}

func (g *gated) hostedCluster(ctx context.Context) (*unstructured.Unstructured, error) {
	return host.Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, g.name, metav1.GetOptions{})
}

// waitUpgradeBlocked waits for UpgradeBlocked of the HCD's current
// generation with status and reason and a message saying each of says.
func (g *gated) waitUpgradeBlocked(status metav1.ConditionStatus, reason string, says ...string) *metav1.Condition {
	g.t.Helper()
	var c *metav1.Condition
	env.Eventually(g.t, 3*time.Minute, fmt.Sprintf("UpgradeBlocked=%s %s %q", status, reason, says), func(ctx context.Context) error {
		h := &v1alpha1.HostedClusterDeployment{}
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(g.hcd), h); err != nil {
			return err
		}
		c = meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionUpgradeBlocked)
		if c == nil || c.ObservedGeneration != h.Generation || c.Status != status || c.Reason != reason {
			return fmt.Errorf("UpgradeBlocked %+v (generation %d)", c, h.Generation)
		}
		for _, s := range says {
			if !strings.Contains(c.Message, s) {
				return fmt.Errorf("UpgradeBlocked message %q", c.Message)
			}
		}
		return nil
	})
	return c
}

// wantRelease asserts the HostedCluster is still asked for image (after a
// positive signal: the hub's decision about the current generation).
func (g *gated) wantRelease(image string) {
	g.t.Helper()
	// The HostedCluster exists once the first delivery reached the host
	// (the positive signal); what it runs is then asserted, not awaited.
	var h *unstructured.Unstructured
	env.Eventually(g.t, 3*time.Minute, "the HostedCluster delivered", func(ctx context.Context) error {
		var err error
		h, err = g.hostedCluster(ctx)
		return err
	})
	if got, _, _ := unstructured.NestedString(h.Object, "spec", "release", "image"); got != image {
		g.t.Errorf("HostedCluster release %s, want %s (held)", got, image)
	}
	// Held means never forced past the gate: a force-upgrade-to naming the
	// release it runs (left from an upgrade the admin allowed before,
	// until the delivery renders again) forces nothing.
	if forced := h.GetAnnotations()[olm.AnnotationForceUpgradeTo]; forced != "" && forced != image {
		g.t.Errorf("HostedCluster forced to %s", forced)
	}
}

func (g *gated) waitRelease(image, version string) {
	g.t.Helper()
	env.Eventually(g.t, 3*time.Minute, "the HostedCluster on "+image, func(ctx context.Context) error {
		h, err := g.hostedCluster(ctx)
		if err != nil {
			return err
		}
		got, _, _ := unstructured.NestedString(h.Object, "spec", "release", "image")
		desired, _, _ := unstructured.NestedString(h.Object, "status", "version", "desired", "version")
		if got != image || (version != "" && desired != version) {
			return fmt.Errorf("release %s, desired version %s", got, desired)
		}
		return nil
	})
}

// waitHostedCluster waits until the HostedCluster satisfies ok.
func (g *gated) waitHostedCluster(what string, ok func(h *unstructured.Unstructured) error) {
	g.t.Helper()
	env.Eventually(g.t, 3*time.Minute, what, func(ctx context.Context) error {
		h, err := g.hostedCluster(ctx)
		if err != nil {
			return err
		}
		return ok(h)
	})
}

func hcCondition(h *unstructured.Unstructured, condType string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(h.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == condType {
			return m
		}
	}
	return nil
}

func create(t *testing.T, c dynamic.Interface, gvr schema.GroupVersionResource, obj map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	r := c.Resource(gvr)
	var err error
	if ns := u.GetNamespace(); ns != "" {
		_, err = r.Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{})
	} else {
		_, err = r.Create(context.Background(), u, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

var (
	nsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

func namespace(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
}

func configMap(ns, name string, data map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": ns, "name": name}, "data": data}
}

// TestUpgradeGateHoldsForAnyReason: the gate holds a minor upgrade while
// the hosted cluster is not upgradeable for a reason that is not OLM's (a
// pending admin ack, as the stand-in's CVO reports it from the guest's
// admin-gates), names it, and an upgrade override does not lift it; the
// admin's ack releases it. A release pinned by digest is held until a
// ClusterImageSet names its version, then gated like a tag (here by an
// operator's limit), and released when the operator goes.
func TestUpgradeGateHoldsForAnyReason(t *testing.T) {
	ctx := context.Background()
	g := newGated(t, "gate-reasons", "reasons", rel4175, nil)
	guest := guestOf(t, v1alpha1.DefaultHostingNamespace, "reasons")
	g.waitHostedCluster("the agent's upgrade report and ClusterVersionUpgradeable=True", func(h *unstructured.Unstructured) error {
		report := h.GetAnnotations()[olm.AnnotationUpgradeReport]
		if c := hcCondition(h, "ClusterVersionUpgradeable"); report == "" || c == nil || c["status"] != "True" {
			return fmt.Errorf("report %q, ClusterVersionUpgradeable %v", report, c)
		}
		return nil
	})

	// An admin gate for the current minor, not acked: CVO's AdminAckRequired.
	const gate = "ack-4.17-kube-1.31-api-removals-in-4.18"
	for _, n := range []string{"openshift-config-managed", "openshift-config", "operators"} {
		create(t, guest, nsGVR, namespace(n))
	}
	create(t, guest, configMapGVR, configMap("openshift-config-managed", "admin-gates", map[string]any{gate: "Kubernetes 1.31 removes several APIs which require admin consideration."}))
	g.waitHostedCluster("ClusterVersionUpgradeable=False AdminAckRequired", func(h *unstructured.Unstructured) error {
		if c := hcCondition(h, "ClusterVersionUpgradeable"); c == nil || c["status"] != "False" || c["reason"] != "AdminAckRequired" {
			return fmt.Errorf("ClusterVersionUpgradeable %v", c)
		}
		return nil
	})
	g.setRelease(rel4180)
	g.waitUpgradeBlocked(metav1.ConditionTrue, v1alpha1.ReasonClusterVersionNotUpgradeable,
		"ClusterVersionUpgradeable is False (AdminAckRequired: Kubernetes 1.31 removes several APIs")
	g.wantRelease(rel4175)

	// The override names the release, but lifts OLM's block only.
	if err := fleettest.AllowUpgrade(ctx, hubc, "gate-reasons", "reasons", rel4180); err != nil {
		t.Fatal(err)
	}
	g.waitUpgradeBlocked(metav1.ConditionTrue, v1alpha1.ReasonClusterVersionNotUpgradeable, "AdminAckRequired", "lifts only the block by installed operators")
	g.wantRelease(rel4175)

	// The admin acks: released.
	create(t, guest, configMapGVR, configMap("openshift-config", "admin-acks", map[string]any{gate: "true"}))
	g.waitRelease(rel4180, "4.18.0")
	g.waitUpgradeBlocked(metav1.ConditionFalse, olmhub.ReasonUpgradeAllowed)

	// A release pinned by digest, which the stand-in serves as 4.19.0,
	// with an operator limited to 4.18 installed.
	digest := "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("a1", 32)
	hypershiftsim.ServeRelease(digest, "4.19.0")
	create(t, guest, csvGVR, csv("operators", "pinned.v1", "4.18", nil).Object)
	g.waitHostedCluster("the agent's report of pinned.v1", func(h *unstructured.Unstructured) error {
		if got := h.GetAnnotations()[olm.AnnotationOperatorLimits]; !strings.Contains(got, `"name":"pinned.v1","max":"4.18"`) {
			return fmt.Errorf("report %q", got)
		}
		return nil
	})
	g.setRelease(digest)
	g.waitUpgradeBlocked(metav1.ConditionTrue, v1alpha1.ReasonReleaseVersionUnknown, "the OpenShift version of "+digest+" is not known; publish a ClusterImageSet")
	g.wantRelease(rel4180)

	// The admin publishes it, as ACM names ClusterImageSets.
	env.ServeClusterImageSets(t)
	create(t, dynamic.NewForConfigOrDie(env.Fleet.Hub.Config()), fleettest.ImageSetGVR, map[string]any{
		"apiVersion": "hive.openshift.io/v1", "kind": "ClusterImageSet",
		"metadata": map[string]any{"name": "img4.19.0-multi-appsub"}, "spec": map[string]any{"releaseImage": digest}})
	g.waitUpgradeBlocked(metav1.ConditionTrue, v1alpha1.ReasonOperatorIncompatible, "from OpenShift 4.18 to 4.19", "operators/pinned.v1 (olm.maxOpenShiftVersion 4.18)")
	g.wantRelease(rel4180)

	if err := guest.Resource(csvGVR).Namespace("operators").Delete(ctx, "pinned.v1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	g.waitRelease(digest, "4.19.0")
	g.waitUpgradeBlocked(metav1.ConditionFalse, v1alpha1.ReasonAsExpected)
}

// TestUpgradeGateFailsClosed: without a report from the agent (the hosted
// cluster's control plane never comes up, so nothing can read it) a minor
// upgrade is held, first waiting for the report, then, past the bound,
// saying it never arrived; the report arriving releases it. A report that
// grows older than the bound (the agent stops refreshing it) holds the
// next upgrade, naming its age; a fresh one releases it.
func TestUpgradeGateFailsClosed(t *testing.T) {
	t.Cleanup(func() { reportMaxAge.set(0); reportRefresh.set(0) })
	// The hub waits for a report from the ManifestWork's creation on; the
	// test must see it waiting before the bound runs out, however long the
	// delivery took on a loaded machine. So the bound is what the delivery
	// took (at most, counted from the deployment's creation) plus a margin
	// for seeing the hold, not a fixed one large enough for the worst case
	// that every run would wait out.
	const margin = 15 * time.Second
	start := time.Now()
	g := newGated(t, "gate-silent", "silent", rel4175, map[string]any{hypershiftsim.AnnotationNeverAvailable: "held down by the test"})
	g.waitUpgradeBlocked(metav1.ConditionFalse, v1alpha1.ReasonAsExpected, "no release upgrade pending")
	bound := time.Since(start).Truncate(time.Second) + margin
	reportMaxAge.set(bound)
	g.setRelease(rel4180)
	g.waitUpgradeBlocked(metav1.ConditionTrue, v1alpha1.ReasonUpgradeReportPending,
		"no report from the agent of the hosted cluster's operators and ClusterVersion yet; waiting for it (up to "+bound.String()+")")
	g.wantRelease(rel4175)
	// Nothing changes on the hub meanwhile: the hub decides again when the
	// bound runs out by itself.
	g.waitUpgradeBlocked(metav1.ConditionTrue, v1alpha1.ReasonUpgradeReportMissing, "arrived in the "+bound.String()+" since")
	g.wantRelease(rel4175)

	// The control plane comes up; the agent reports; released.
	g.patch(fmt.Sprintf(`{"spec":{"hostedCluster":{"annotations":{%q:null}}}}`, hypershiftsim.AnnotationNeverAvailable))
	g.waitRelease(rel4180, "4.18.0")
	g.waitUpgradeBlocked(metav1.ConditionFalse, v1alpha1.ReasonAsExpected)

	// The agent stops refreshing an unchanged report: once it is older
	// than the bound, the next minor upgrade is held. A shorter bound here
	// (nothing is pending while it changes) for a shorter wait; it still
	// leaves the refreshed report (every second, fed back every second)
	// room to count as fresh.
	bound = margin
	reportMaxAge.set(bound)
	reportRefresh.set(time.Hour)
	g.waitHostedCluster("the report older than the bound", func(h *unstructured.Unstructured) error {
		r, err := olm.DecodeUpgradeReport(h.GetAnnotations()[olm.AnnotationUpgradeReport])
		if err != nil {
			return err
		}
		if age := time.Since(r.ObservedAt); age <= bound+2*time.Second {
			return fmt.Errorf("report %s old", age.Round(time.Second))
		}
		return nil
	})
	g.setRelease(rel4190)
	g.waitUpgradeBlocked(metav1.ConditionTrue, v1alpha1.ReasonUpgradeReportMissing, "older than the bound of "+bound.String())
	g.wantRelease(rel4180)
	reportRefresh.set(time.Second)
	g.waitRelease(rel4190, "4.19.0")
	g.waitUpgradeBlocked(metav1.ConditionFalse, v1alpha1.ReasonAsExpected)
}
