//go:build integration

package hub_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	agentcmd "github.com/hcp-fleet/hcp-fleet/pkg/cmd/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm/agent/operatorlimits"
	olmhub "github.com/hcp-fleet/hcp-fleet/pkg/olm/hub"
)

// One local fleet for the package: a hub and one management cluster whose
// HyperShift stand-in runs a real guest API server (with OLM's CRDs) for
// every hosted cluster.
var (
	env   *fleettest.Env
	hubc  client.Client
	host  dynamic.Interface
	hcGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
)

func TestMain(m *testing.M) {
	// Read the guests' operators often.
	opts := hcpfleet.Options{AgentArgs: func(string) []string {
		return []string{"--olm-operator-limits-resync=1s", "--olm-operator-limits-guest-retry=2s",
			"--olm-subscription-defaults-resync=1s", "--olm-subscription-defaults-guest-retry=2s"}
	},
		Hub:          func(o *hub.Options) { o.UpgradeReportMaxAge = reportMaxAge.get },
		AgentOptions: agentcmd.Options{OperatorLimits: operatorlimits.Options{ReportRefresh: reportRefresh.get}},
	}
	fleettest.MainWithGuests(m, 1, opts, func(e *fleettest.Env) {
		env = e
		var err error
		if hubc, err = client.New(e.Fleet.Hub.Config(), client.Options{Scheme: hub.Scheme}); err != nil {
			panic(err)
		}
		host = dynamic.NewForConfigOrDie(e.Fleet.Managed[0].Config())
		ctx := context.Background()
		if err := hcpfleet.EnableOnAll(ctx, e.Fleet); err != nil {
			panic(err)
		}
		if err := hcpfleet.WaitHostsReady(ctx, e.Fleet, hubc, os.Stdout, 3*time.Minute); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	})
}

// timing is a timing a test changes while the fleet's hub or agent runs:
// their options read it at each use; 0 leaves the product's default.
type timing struct{ d atomic.Int64 }

func (k *timing) get() time.Duration  { return time.Duration(k.d.Load()) }
func (k *timing) set(d time.Duration) { k.d.Store(int64(d)) }

// The upgrade gate's bound on the agent's report's age (hub) and how often
// the agent rewrites an unchanged report.
var reportMaxAge, reportRefresh timing

const (
	rel4175 = "quay.io/openshift-release-dev/ocp-release:4.17.5-multi"
	rel4176 = "quay.io/openshift-release-dev/ocp-release:4.17.6-multi"
	rel4180 = "quay.io/openshift-release-dev/ocp-release:4.18.0-multi"
	rel4190 = "quay.io/openshift-release-dev/ocp-release:4.19.0-multi"
)

var csvGVR = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "clusterserviceversions"}

func csv(namespace, name, max string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"namespace": namespace, "name": name, "annotations": map[string]any{
			olm.PropertiesAnnotation: `{"properties":[{"type":"olm.maxOpenShiftVersion","value":"` + max + `"}]}`}},
		"spec": map[string]any{"displayName": name, "install": map[string]any{"strategy": "deployment"}},
	}}
	u.SetLabels(labels)
	return u
}

// TestOperatorAwareUpgrades runs the upgrade gate end to end on a real guest
// API server: the agent reads the hosted cluster's CSVs and the hub holds a
// minor upgrade an installed operator does not support (UpgradeBlocked
// names it), while a z-stream goes through and a copied CSV counts for
// nothing; deleting the operator releases the hold by itself; the
// documented annotation moves a held upgrade and sets HyperShift's
// force-upgrade-to.
func TestOperatorAwareUpgrades(t *testing.T) {
	ctx := context.Background()
	ns := "olm-upgrades"
	if err := fleettest.Tenant(ctx, hubc, ns); err != nil {
		t.Fatal(err)
	}
	hc := fleettest.HostedCluster(v1alpha1.DefaultHostingNamespace, "gated").Object["spec"].(map[string]any)
	hc["release"] = map[string]any{"image": rel4175}
	hcd := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"placement": "hosts", "hostedCluster": map[string]any{"spec": hc}}}}
	hcd.SetAPIVersion(v1alpha1.GroupVersion.String())
	hcd.SetKind("HostedClusterDeployment")
	hcd.SetNamespace(ns)
	hcd.SetName("gated")
	if err := hubc.Create(ctx, hcd); err != nil {
		t.Fatal(err)
	}

	hostedCluster := func(ctx context.Context) (*unstructured.Unstructured, error) {
		return host.Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, "gated", metav1.GetOptions{})
	}
	// The guest, as its admin (the kubeconfig the stand-in publishes).
	guest := guestOf(t, v1alpha1.DefaultHostingNamespace, "gated")
	waitReport := func(want string) {
		t.Helper()
		env.Eventually(t, 2*time.Minute, "the agent's report "+want, func(ctx context.Context) error {
			h, err := hostedCluster(ctx)
			if err != nil {
				return err
			}
			if got := h.GetAnnotations()[olm.AnnotationOperatorLimits]; !strings.Contains(got, want) {
				return fmt.Errorf("report %q", got)
			}
			// And on the hub, where the gate reads it: the ManifestWork's
			// feedback, which the work agent scrapes apart from the
			// annotation's write.
			d := &v1alpha1.HostedClusterDeployment{}
			if err := hubc.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gated"}, d); err != nil {
				return err
			}
			w := &workv1.ManifestWork{}
			if err := hubc.Get(ctx, types.NamespacedName{Namespace: d.Status.HostingCluster, Name: hosting.WorkName(ns, "gated")}, w); err != nil {
				return err
			}
			for _, m := range w.Status.ResourceStatus.Manifests {
				for _, v := range m.StatusFeedbacks.Values {
					if v.Name == "olm-operator-limits" && v.Value.String != nil && strings.Contains(*v.Value.String, want) {
						return nil
					}
				}
			}
			return fmt.Errorf("the hub's ManifestWork feedback does not carry %s yet", want)
		})
	}
	waitReport("[]")

	for _, n := range []string{"operators", "team-a"} {
		if _, err := guest.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx,
			&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": n}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := guest.Resource(csvGVR).Namespace("operators").Create(ctx, csv("operators", "old-db.v1", "4.17", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// OLM's copy of it in another namespace: never counted.
	if _, err := guest.Resource(csvGVR).Namespace("team-a").Create(ctx,
		csv("team-a", "old-db.v1", "4.17", map[string]string{"olm.copiedFrom": "operators"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReport(`"name":"old-db.v1","max":"4.17"`)

	setRelease := func(image string) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"hostedCluster":{"spec":{"release":{"image":%q}}}}}`, image)
		if err := hubc.Patch(ctx, hcd, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	// waitUpgradeBlocked waits for UpgradeBlocked of the HCD's current
	// generation: the hub's decision about the spec just written.
	waitUpgradeBlocked := func(status metav1.ConditionStatus, reason string) *metav1.Condition {
		t.Helper()
		var c *metav1.Condition
		env.Eventually(t, 2*time.Minute, fmt.Sprintf("UpgradeBlocked=%s %s", status, reason), func(ctx context.Context) error {
			h := &v1alpha1.HostedClusterDeployment{}
			if err := hubc.Get(ctx, client.ObjectKeyFromObject(hcd), h); err != nil {
				return err
			}
			c = meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionUpgradeBlocked)
			if c == nil || c.ObservedGeneration != h.Generation || c.Status != status || c.Reason != reason {
				return fmt.Errorf("UpgradeBlocked %+v (generation %d)", c, h.Generation)
			}
			return nil
		})
		return c
	}
	waitRelease := func(image string) *unstructured.Unstructured {
		t.Helper()
		var h *unstructured.Unstructured
		env.Eventually(t, 2*time.Minute, "the HostedCluster on "+image, func(ctx context.Context) error {
			var err error
			if h, err = hostedCluster(ctx); err != nil {
				return err
			}
			if got, _, _ := unstructured.NestedString(h.Object, "spec", "release", "image"); got != image {
				return fmt.Errorf("release %s", got)
			}
			return nil
		})
		return h
	}

	// A z-stream is never held.
	setRelease(rel4176)
	waitRelease(rel4176)
	waitUpgradeBlocked(metav1.ConditionFalse, v1alpha1.ReasonAsExpected)

	// A minor upgrade the operator does not support is held.
	setRelease(rel4180)
	c := waitUpgradeBlocked(metav1.ConditionTrue, v1alpha1.ReasonOperatorIncompatible)
	if !strings.Contains(c.Message, "operators/old-db.v1 (olm.maxOpenShiftVersion 4.17)") || strings.Contains(c.Message, "team-a") {
		t.Errorf("UpgradeBlocked message %q: want the operator and its limit, not its copy", c.Message)
	}
	if h, err := hostedCluster(ctx); err != nil {
		t.Fatal(err)
	} else if got, _, _ := unstructured.NestedString(h.Object, "spec", "release", "image"); got != rel4176 {
		t.Errorf("held upgrade reached the HostedCluster: release %s", got)
	}

	// Removing the operator releases the hold (its copy stays).
	if err := guest.Resource(csvGVR).Namespace("operators").Delete(ctx, "old-db.v1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRelease(rel4180)
	waitUpgradeBlocked(metav1.ConditionFalse, v1alpha1.ReasonAsExpected)

	// The next operator holds 4.19; the admin's override moves that one
	// release (a TenantPolicy, which tenants cannot write).
	if _, err := guest.Resource(csvGVR).Namespace("operators").Create(ctx, csv("operators", "pinned.v2", "4.18", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReport(`"name":"pinned.v2","max":"4.18"`)
	setRelease(rel4190)
	waitUpgradeBlocked(metav1.ConditionTrue, v1alpha1.ReasonOperatorIncompatible)
	if err := fleettest.AllowUpgrade(ctx, hubc, hcd.GetNamespace(), hcd.GetName(), rel4190); err != nil {
		t.Fatal(err)
	}
	waitRelease(rel4190)
	// HyperShift's force-upgrade-to follows once the hub has read back
	// that OLM's block is what stops the upgrade (ClusterVersionUpgradeable
	// False, IncompatibleOperatorsInstalled): the override lifts only that.
	env.Eventually(t, 2*time.Minute, "the HostedCluster forced to "+rel4190, func(ctx context.Context) error {
		h, err := hostedCluster(ctx)
		if err != nil {
			return err
		}
		if got := h.GetAnnotations()[olm.AnnotationForceUpgradeTo]; got != rel4190 {
			return fmt.Errorf("%s = %q", olm.AnnotationForceUpgradeTo, got)
		}
		return nil
	})
	waitUpgradeBlocked(metav1.ConditionFalse, olmhub.ReasonUpgradeAllowed)
}

func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

// TestStandInRefusesUngatedUpgrade is the same situation without the hub's
// gate: a HostedCluster made directly on the management cluster, whose
// guest runs an operator limited to 4.17, is asked for 4.18 together with
// another change. The HyperShift stand-in, like the operator, reports
// ClusterVersionUpgradeable=False, refuses the upgrade and skips the rest of
// the reconcile, so the other change does not go through either — until
// force-upgrade-to names the release.
func TestStandInRefusesUngatedUpgrade(t *testing.T) {
	ctx := context.Background()
	ns := "ungated"
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	secretGVR := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if _, err := host.Resource(nsGVR).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := host.Resource(secretGVR).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "pull-secret"},
		"stringData": map[string]any{".dockerconfigjson": `{"auths":{}}`}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hc := fleettest.HostedCluster(ns, "direct")
	_ = unstructured.SetNestedField(hc.Object, rel4175, "spec", "release", "image")
	if _, err := host.Resource(hcGVR).Namespace(ns).Create(ctx, hc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	guest := guestOf(t, ns, "direct")
	if _, err := guest.Resource(nsGVR).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "operators"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := guest.Resource(csvGVR).Namespace("operators").Create(ctx, csv("operators", "old-db.v1", "4.17", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	condition := func(h *unstructured.Unstructured, condType string) map[string]any {
		conds, _, _ := unstructured.NestedSlice(h.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == condType {
				return m
			}
		}
		return nil
	}
	waitHC := func(what string, cond func(h *unstructured.Unstructured) error) *unstructured.Unstructured {
		t.Helper()
		var h *unstructured.Unstructured
		env.Eventually(t, 2*time.Minute, what, func(ctx context.Context) error {
			var err error
			if h, err = host.Resource(hcGVR).Namespace(ns).Get(ctx, "direct", metav1.GetOptions{}); err != nil {
				return err
			}
			return cond(h)
		})
		return h
	}
	waitHC("ClusterVersionUpgradeable=False from the guest's operator", func(h *unstructured.Unstructured) error {
		if c := condition(h, "ClusterVersionUpgradeable"); c == nil || c["status"] != "False" || c["reason"] != "IncompatibleOperatorsInstalled" {
			return fmt.Errorf("ClusterVersionUpgradeable %v", c)
		}
		return nil
	})

	// 4.18 and, in the same change, an unrelated one (a degraded control
	// plane the stand-in would report).
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"injected"}},"spec":{"release":{"image":%q}}}`, hypershiftsim.AnnotationDegraded, rel4180)
	h, err := host.Resource(hcGVR).Namespace(ns).Patch(ctx, "direct", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	generation := h.GetGeneration()
	// The positive signal: the stand-in reconciled this generation.
	h = waitHC("the stand-in saw the upgrade request", func(h *unstructured.Unstructured) error {
		if c := condition(h, "ClusterVersionUpgradeable"); c == nil || c["observedGeneration"] != generation {
			return fmt.Errorf("ClusterVersionUpgradeable %v, generation %d", c, generation)
		}
		return nil
	})
	if desired, _, _ := unstructured.NestedString(h.Object, "status", "version", "desired", "image"); desired != rel4175 {
		t.Errorf("the refused upgrade rolled out: desired %s", desired)
	}
	if c := condition(h, "Degraded"); c != nil && c["status"] == "True" {
		t.Errorf("the rest of the reconcile ran although the upgrade was refused: Degraded %v", c)
	}

	// force-upgrade-to naming exactly 4.18 lets both through.
	patch = fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, olm.AnnotationForceUpgradeTo, rel4180)
	if _, err := host.Resource(hcGVR).Namespace(ns).Patch(ctx, "direct", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitHC("the forced upgrade and the other change", func(h *unstructured.Unstructured) error {
		desired, _, _ := unstructured.NestedString(h.Object, "status", "version", "desired", "image")
		if c := condition(h, "Degraded"); desired != rel4180 || c == nil || c["status"] != "True" {
			return fmt.Errorf("desired %s, Degraded %v", desired, c)
		}
		return nil
	})
}

// guestOf is a client of the hosted cluster namespace/name's guest API
// server as its admin, once OLM's CRDs are served there.
func guestOf(t *testing.T, namespace, name string) dynamic.Interface {
	t.Helper()
	var guest dynamic.Interface
	env.Eventually(t, 3*time.Minute, "the guest API server of "+namespace+"/"+name, func(ctx context.Context) error {
		s, err := host.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(namespace).
			Get(ctx, hypershiftsim.KubeconfigSecretName(name), metav1.GetOptions{})
		if err != nil {
			return err
		}
		data, _, _ := unstructured.NestedString(s.Object, "data", hosting.KubeconfigKey)
		kubeconfig, err := decodeBase64(data)
		if err != nil {
			return err
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
		if err != nil {
			return err
		}
		if guest, err = dynamic.NewForConfig(cfg); err != nil {
			return err
		}
		_, err = guest.Resource(csvGVR).List(ctx, metav1.ListOptions{})
		return err
	})
	return guest
}

var subscriptionGVR = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "subscriptions"}

// TestSubscriptionDefaults: the fleet's Subscription defaults (HostingConfig)
// land on a guest Subscription that sets no placement, and only there — one
// with its own node selector is never written (asserted once the hub shows
// the agent's report naming it); the HostedClusterDeployment's own defaults
// win and replace what the agent set; an HCD opting out ({}) has the agent
// remove them again.
func TestSubscriptionDefaults(t *testing.T) {
	ctx := context.Background()
	ns, name := "olm-subscriptions", "placed"
	if err := fleettest.Tenant(ctx, hubc, ns); err != nil {
		t.Fatal(err)
	}
	hostingConfig := func(patch string) {
		t.Helper()
		hc := &v1alpha1.HostingConfig{}
		hc.SetNamespace("hcp-fleet")
		hc.SetName("default")
		if err := hubc.Patch(context.Background(), hc, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	hostingConfig(`{"spec":{"olm":{"subscriptionDefaults":{"nodeSelector":{"fleet.example.com/reaches-control-plane":"true"}}}}}`)
	t.Cleanup(func() { hostingConfig(`{"spec":{"olm":null}}`) })
	hcd := fleettest.HCD(ns, name, func(spec map[string]any) { delete(spec, "nodePools") })
	if err := hubc.Create(ctx, hcd); err != nil {
		t.Fatal(err)
	}
	guest := guestOf(t, v1alpha1.DefaultHostingNamespace, name)
	if _, err := guest.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx,
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "operators"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subscription := func(name string, config map[string]any) *unstructured.Unstructured {
		t.Helper()
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
			"metadata": map[string]any{"namespace": "operators", "name": name},
			"spec":     map[string]any{"name": name, "channel": "stable", "source": "redhat-operators", "sourceNamespace": "openshift-marketplace", "config": config},
		}}
		created, err := guest.Resource(subscriptionGVR).Namespace("operators").Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return created
	}
	// One without placement (other config fields stay), one with its own.
	subscription("plain", map[string]any{"env": []any{map[string]any{"name": "LOG_LEVEL", "value": "debug"}}})
	mine := subscription("mine", map[string]any{"nodeSelector": map[string]any{"pool": "mine"}})

	waitApplied := func(want string) {
		t.Helper()
		env.Eventually(t, 2*time.Minute, "SubscriptionDefaultsApplied=True: "+want, func(ctx context.Context) error {
			h := &v1alpha1.HostedClusterDeployment{}
			if err := hubc.Get(ctx, client.ObjectKeyFromObject(hcd), h); err != nil {
				return err
			}
			c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionSubscriptionDefaultsApplied)
			if c == nil || c.ObservedGeneration != h.Generation || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, want) {
				return fmt.Errorf("SubscriptionDefaultsApplied %+v (generation %d)", c, h.Generation)
			}
			return nil
		})
	}
	placement := func(name string) (nodeSelector map[string]any, tolerations []any, mark string, sub *unstructured.Unstructured) {
		t.Helper()
		sub, err := guest.Resource(subscriptionGVR).Namespace("operators").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		nodeSelector, _, _ = unstructured.NestedMap(sub.Object, "spec", "config", "nodeSelector")
		tolerations, _, _ = unstructured.NestedSlice(sub.Object, "spec", "config", "tolerations")
		return nodeSelector, tolerations, sub.GetAnnotations()[olm.AnnotationSubscriptionDefaulted], sub
	}
	// The report reaching the hub names "mine": the agent saw it.
	waitApplied("set on 1 Subscriptions; 1 keep their own node selector or tolerations: operators/mine")
	if _, _, _, sub := placement("mine"); sub.GetResourceVersion() != mine.GetResourceVersion() {
		t.Errorf("the Subscription with its own node selector was written: %v", sub.Object)
	}
	nodeSelector, tolerations, mark, sub := placement("plain")
	if fmt.Sprint(nodeSelector) != "map[fleet.example.com/reaches-control-plane:true]" || tolerations != nil || mark == "" {
		t.Errorf("plain: nodeSelector %v, tolerations %v, mark %q; want the fleet's defaults, marked", nodeSelector, tolerations, mark)
	}
	if vars, _, _ := unstructured.NestedSlice(sub.Object, "spec", "config", "env"); len(vars) != 1 {
		t.Errorf("plain lost its other config: env %v", vars)
	}

	// The HCD's own defaults win, and replace what the agent set.
	if err := hubc.Patch(ctx, hcd, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"olm":{"subscriptionDefaults":{`+
		`"nodeSelector":{"pool":"infra"},"tolerations":[{"key":"infra","operator":"Exists","effect":"NoSchedule"}]}}}}`))); err != nil {
		t.Fatal(err)
	}
	waitApplied("set on 1 Subscriptions; 1 keep")
	nodeSelector, tolerations, _, _ = placement("plain")
	if fmt.Sprint(nodeSelector) != "map[pool:infra]" || len(tolerations) != 1 {
		t.Errorf("plain: nodeSelector %v, tolerations %v; want the HostedClusterDeployment's defaults", nodeSelector, tolerations)
	}
	if _, _, _, sub := placement("mine"); sub.GetResourceVersion() != mine.GetResourceVersion() {
		t.Errorf("the Subscription with its own node selector was written: %v", sub.Object)
	}

	// Opting out ({}) removes what the agent set, and the condition.
	if err := hubc.Patch(ctx, hcd, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"olm":{"subscriptionDefaults":{"nodeSelector":null,"tolerations":null}}}}`))); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 2*time.Minute, "the defaults removed from plain", func(ctx context.Context) error {
		nodeSelector, tolerations, mark, _ := placement("plain")
		if nodeSelector != nil || tolerations != nil || mark != "" {
			return fmt.Errorf("nodeSelector %v, tolerations %v, mark %q", nodeSelector, tolerations, mark)
		}
		h := &v1alpha1.HostedClusterDeployment{}
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(hcd), h); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionSubscriptionDefaultsApplied); c != nil {
			return fmt.Errorf("SubscriptionDefaultsApplied %+v", c)
		}
		return nil
	})
	if _, _, _, sub := placement("mine"); sub.GetResourceVersion() != mine.GetResourceVersion() {
		t.Errorf("the Subscription with its own node selector was written: %v", sub.Object)
	}
}
