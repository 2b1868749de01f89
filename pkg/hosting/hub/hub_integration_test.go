//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/delivery"
)

var (
	env     *fleettest.Env
	hubc    client.Client
	hosts   map[string]dynamic.Interface
	hcGVR   = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	npGVR   = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "nodepools"}
	scGVR   = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	nsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	release = fleettest.Release
)

const lostHostTimeout = 3 * time.Second

// unavailableGrace is the hub's --host-unavailable-grace in this suite:
// shorter than the default (5m), so that TestLateHostKeepsItsShare sees a
// hold end within its time.
const unavailableGrace = 40 * time.Second

func TestMain(m *testing.M) {
	opts := hcpfleet.Options{
		Hub: func(o *hub.Options) {
			o.LostHostTimeout = lostHostTimeout
			o.HostUnavailableGrace = unavailableGrace
			o.MetricsBindAddress = endpoints.next("hub")
		},
		// The first management cluster's agent serves /metrics too.
		AgentArgs: func(cluster string) []string {
			if cluster != "cluster-1" {
				return nil
			}
			return []string{"--metrics-bind-address=" + endpoints.next("agent")}
		},
	}
	fleettest.MainWith(m, 3, opts, func(e *fleettest.Env) {
		env = e
		var err error
		if hubc, err = client.New(e.Fleet.Hub.Config(), client.Options{Scheme: hub.Scheme}); err != nil {
			panic(err)
		}
		hosts = map[string]dynamic.Interface{}
		for _, m := range e.Fleet.Managed {
			hosts[m.Name] = dynamic.NewForConfigOrDie(m.Config())
		}
		ctx := context.Background()
		if err := hcpfleet.EnableOnAll(ctx, e.Fleet); err != nil {
			panic(err)
		}
		// Every management cluster must run the operator before the tests
		// schedule onto it.
		deadline := time.Now().Add(3 * time.Minute)
		for _, m := range e.Fleet.Managed {
			for {
				mca := &addonv1alpha1.ManagedClusterAddOn{}
				err := hubc.Get(ctx, types.NamespacedName{Namespace: m.Name, Name: addon.Name}, mca)
				if err == nil && meta.IsStatusConditionTrue(mca.Status.Conditions, addon.ConditionHyperShiftOperatorInstalled) &&
					meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable) {
					break
				}
				if time.Now().After(deadline) {
					panic(fmt.Sprintf("add-on on %s not ready: %v %+v", m.Name, err, mca.Status.Conditions))
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
	})
}

// tenant creates a hub namespace bound to the global cluster set, with a
// Placement of the management clusters and a pull secret.
func tenant(t *testing.T, name string) {
	t.Helper()
	if err := fleettest.Tenant(context.Background(), hubc, name); err != nil {
		t.Fatal(err)
	}
}

// hcd is a HostedClusterDeployment with one node pool (fleettest.HCD).
func hcd(namespace, name string, mutate ...func(spec map[string]any)) *unstructured.Unstructured {
	return fleettest.HCD(namespace, name, mutate...)
}

// copyName is the name on its host of the copy of the Secret refName that
// the HostedClusterDeployment namespace/name refers to, salted with the UID
// it has now.
func copyName(t *testing.T, namespace, name, refName string) string {
	t.Helper()
	h, err := getHCD(context.Background(), namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	return delivery.CopyName(namespace, name, h.UID, delivery.KindSecret, refName)
}

func getHCD(ctx context.Context, namespace, name string) (*v1alpha1.HostedClusterDeployment, error) {
	h := &v1alpha1.HostedClusterDeployment{}
	return h, hubc.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, h)
}

// condition returns an error unless hcd's condition t has status want.
func condition(h *v1alpha1.HostedClusterDeployment, t string, want metav1.ConditionStatus) error {
	c := meta.FindStatusCondition(h.Status.Conditions, t)
	if c == nil {
		return fmt.Errorf("no %s condition yet (conditions %v)", t, h.Status.Conditions)
	}
	if c.Status != want {
		return fmt.Errorf("%s=%s (%s: %s), want %s", t, c.Status, c.Reason, c.Message, want)
	}
	return nil
}

func waitCondition(t *testing.T, namespace, name, condType string, want metav1.ConditionStatus, timeout time.Duration) *v1alpha1.HostedClusterDeployment {
	t.Helper()
	var h *v1alpha1.HostedClusterDeployment
	env.Eventually(t, timeout, fmt.Sprintf("%s/%s %s=%s", namespace, name, condType, want), func(ctx context.Context) error {
		var err error
		if h, err = getHCD(ctx, namespace, name); err != nil {
			return err
		}
		return condition(h, condType, want)
	})
	return h
}

func TestDeliverUpdateAndDelete(t *testing.T) {
	ctx := context.Background()
	ns := "flow"
	tenant(t, ns)
	// A HyperShift knob the default policy keeps off the HostedCluster, and
	// a tenant's own annotation that passes.
	const evil = "hypershift.openshift.io/control-plane-operator-image"
	u := hcd(ns, "alpha", func(spec map[string]any) {
		spec["hostedCluster"].(map[string]any)["annotations"] = map[string]any{evil: "evil.example.com/cpo", "example.com/owner": "team-a"}
	})
	if err := hubc.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	h := waitCondition(t, ns, "alpha", v1alpha1.ConditionScheduled, metav1.ConditionTrue, time.Minute)
	host := h.Status.HostingCluster
	if hosts[host] == nil {
		t.Fatalf("bound to %q, not a management cluster", host)
	}
	h = waitCondition(t, ns, "alpha", v1alpha1.ConditionDelivered, metav1.ConditionTrue, time.Minute)
	if h.Status.ManifestWork != hosting.WorkName(ns, "alpha") {
		t.Errorf("status.manifestWork %q", h.Status.ManifestWork)
	}
	if c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionDelivered); !strings.Contains(c.Message, evil) || strings.Contains(c.Message, "evil.example.com") {
		t.Errorf("Delivered message %q does not name the dropped annotation key (or names its value)", c.Message)
	}
	work := &workv1.ManifestWork{}
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: host, Name: hosting.WorkName(ns, "alpha")}, work); err != nil {
		t.Fatal(err)
	}
	if work.Labels[hosting.LabelHCDNamespace] != ns || work.Labels[hosting.LabelHCDName] != "alpha" {
		t.Errorf("ManifestWork labels %v", work.Labels)
	}

	// On the host: the HostedCluster with our labels, the renamed pull
	// secret and the unknown field; the node pool; the secret copy.
	hc, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, "alpha", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hc.GetLabels()["team"] != "a" || hc.GetLabels()[hosting.LabelHCDName] != "alpha" {
		t.Errorf("HostedCluster labels %v", hc.GetLabels())
	}
	if a := hc.GetAnnotations(); a["example.com/owner"] != "team-a" || a[evil] != "" {
		t.Errorf("HostedCluster annotations %v: want example.com/owner and not %s", a, evil)
	}
	pullCopy := copyName(t, ns, "alpha", "pull-secret")
	if name, _, _ := unstructured.NestedString(hc.Object, "spec", "pullSecret", "name"); name != pullCopy {
		t.Errorf("HostedCluster pull secret %q, want the delivered copy %s", name, pullCopy)
	}
	sec, err := hosts[host].Resource(scGVR).Namespace("clusters").Get(ctx, pullCopy, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec.GetLabels()[hosting.LabelHCDNamespace] != ns {
		t.Errorf("secret copy labels %v", sec.GetLabels())
	}
	if nsObj, err := hosts[host].Resource(nsGVR).Get(ctx, "clusters", metav1.GetOptions{}); err != nil || nsObj.GetLabels()[hosting.LabelCreatedNamespace] != "true" {
		t.Errorf("hosting namespace: %v, labels %v", err, nsObj.GetLabels())
	}

	// The stand-in operator makes it available; status flows back.
	h = waitCondition(t, ns, "alpha", v1alpha1.ConditionAvailable, metav1.ConditionTrue, 2*time.Minute)
	env.Eventually(t, time.Minute, "version, endpoint and node pools in status", func(ctx context.Context) error {
		if h, err = getHCD(ctx, ns, "alpha"); err != nil {
			return err
		}
		if h.Status.Version == nil || h.Status.Version.Current != "4.18.5" || h.Status.Version.Desired.Image != release {
			return fmt.Errorf("version %+v", h.Status.Version)
		}
		if h.Status.ControlPlaneEndpoint == nil || h.Status.ControlPlaneEndpoint.Host == "" {
			return fmt.Errorf("controlPlaneEndpoint %+v", h.Status.ControlPlaneEndpoint)
		}
		if len(h.Status.NodePools) != 1 || h.Status.NodePools[0].ReadyReplicas != 2 {
			return fmt.Errorf("nodePools %+v", h.Status.NodePools)
		}
		return condition(h, v1alpha1.ConditionNodePoolsReady, metav1.ConditionTrue)
	})
	if err := condition(h, v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionTrue); err != nil {
		t.Error(err)
	}
	// Available → imported: a ManagedCluster and the mirrored kubeconfig.
	h = waitCondition(t, ns, "alpha", v1alpha1.ConditionImported, metav1.ConditionTrue, time.Minute)
	if h.Status.ManagedCluster != "alpha" || h.Status.KubeconfigSecret == nil || h.Status.KubeconfigSecret.Name != hosting.AdminKubeconfigName("alpha") {
		t.Errorf("import status: managedCluster %q kubeconfigSecret %+v", h.Status.ManagedCluster, h.Status.KubeconfigSecret)
	}
	kubeconfig := &corev1.Secret{}
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: ns, Name: hosting.AdminKubeconfigName("alpha")}, kubeconfig); err != nil || len(kubeconfig.Data[hosting.KubeconfigKey]) == 0 {
		t.Errorf("mirrored kubeconfig: %v", err)
	}

	// A metadata-only change renders nothing new: no ManifestWork write.
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: host, Name: work.Name}, work); err != nil {
		t.Fatal(err)
	}
	rv := work.ResourceVersion
	reconciles := fleettest.Reconciles(t, "hcd-delivery")
	patch := []byte(`{"metadata":{"annotations":{"note":"unrelated"}}}`)
	if err := hubc.Patch(ctx, hcd(ns, "alpha"), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	env.Settled(t, "hcd-delivery", reconciles)
	// A spec change propagates: scale the node pool.
	patch = []byte(`{"spec":{"nodePools":[{"name":"alpha-workers","spec":{"clusterName":"alpha","replicas":3,"release":{"image":"` + release + `"},"management":{"upgradeType":"Replace"},"platform":{"type":"None"}}}]}}`)
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: host, Name: work.Name}, work); err != nil {
		t.Fatal(err)
	}
	if work.ResourceVersion != rv {
		t.Errorf("a metadata-only change rewrote the ManifestWork (resourceVersion %s → %s)", rv, work.ResourceVersion)
	}
	if err := hubc.Patch(ctx, hcd(ns, "alpha"), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, time.Minute, "replicas 3 on the host and in status", func(ctx context.Context) error {
		np, err := hosts[host].Resource(npGVR).Namespace("clusters").Get(ctx, "alpha-workers", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if r, _, _ := unstructured.NestedInt64(np.Object, "spec", "replicas"); r != 3 {
			return fmt.Errorf("host NodePool replicas %d", r)
		}
		if h, err = getHCD(ctx, ns, "alpha"); err != nil {
			return err
		}
		if len(h.Status.NodePools) != 1 || h.Status.NodePools[0].Replicas != 3 || h.Status.NodePools[0].ReadyReplicas != 3 {
			return fmt.Errorf("status nodePools %+v", h.Status.NodePools)
		}
		return nil
	})

	// Delete: the HostedCluster goes on the host first, then the HCD.
	if err := hubc.Delete(ctx, hcd(ns, "alpha")); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 2*time.Minute, "HostedClusterDeployment gone", func(ctx context.Context) error {
		if _, err := getHCD(ctx, ns, "alpha"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	for gvr, name := range map[schema.GroupVersionResource]string{hcGVR: "alpha", npGVR: "alpha-workers", scGVR: pullCopy} {
		if _, err := hosts[host].Resource(gvr).Namespace("clusters").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s clusters/%s still on the host after the HCD went: %v", gvr.Resource, name, err)
		}
	}
	mc := &unstructured.Unstructured{}
	mc.SetAPIVersion("cluster.open-cluster-management.io/v1")
	mc.SetKind("ManagedCluster")
	if err := hubc.Get(ctx, types.NamespacedName{Name: "alpha"}, mc); !apierrors.IsNotFound(err) {
		t.Errorf("the hosted cluster's ManagedCluster outlived its HCD: %v", err)
	}
}

func TestOrphan(t *testing.T) {
	ctx := context.Background()
	ns := "orphan"
	tenant(t, ns)
	if err := hubc.Create(ctx, hcd(ns, "keep", func(spec map[string]any) { spec["deletionPolicy"] = "Orphan" })); err != nil {
		t.Fatal(err)
	}
	h := waitCondition(t, ns, "keep", v1alpha1.ConditionDelivered, metav1.ConditionTrue, time.Minute)
	host := h.Status.HostingCluster
	if err := hubc.Delete(ctx, hcd(ns, "keep")); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, time.Minute, "HostedClusterDeployment and ManifestWork gone", func(ctx context.Context) error {
		if _, err := getHCD(ctx, ns, "keep"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("HCD still there (%v)", err)
		}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: host, Name: hosting.WorkName(ns, "keep")}, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ManifestWork still there (%v)", err)
		}
		return nil
	})
	hc, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, "keep", metav1.GetOptions{})
	if err != nil || hc.GetDeletionTimestamp() != nil {
		t.Fatalf("orphaned HostedCluster should keep running on %s: %v", host, err)
	}
	// Clean up behind the test (the stand-in tears it down).
	_ = hosts[host].Resource(hcGVR).Namespace("clusters").Delete(ctx, "keep", metav1.DeleteOptions{})
}

func TestBadInputIsReportedAndRecovers(t *testing.T) {
	ctx := context.Background()
	ns := "bad-input"
	tenant(t, ns)
	// A referenced secret that does not exist yet.
	if err := hubc.Create(ctx, hcd(ns, "nokey", func(spec map[string]any) {
		spec["hostedCluster"].(map[string]any)["spec"].(map[string]any)["sshKey"] = map[string]any{"name": "ssh-key"}
	})); err != nil {
		t.Fatal(err)
	}
	h := waitCondition(t, ns, "nokey", v1alpha1.ConditionDelivered, metav1.ConditionFalse, time.Minute)
	env.Eventually(t, time.Minute, "ReferencedObjectNotFound", func(ctx context.Context) error {
		h, _ = getHCD(ctx, ns, "nokey")
		c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionDelivered)
		if c == nil || c.Reason != v1alpha1.ReasonReferencedObjectNotFound ||
			!strings.Contains(c.Message, "Secret bad-input/ssh-key (spec.hostedCluster.spec.sshKey.name) not found") {
			return fmt.Errorf("Delivered %+v", c)
		}
		return condition(h, v1alpha1.ConditionDegraded, metav1.ConditionTrue)
	})
	if err := hubc.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ssh-key", Namespace: ns}, StringData: map[string]string{"id_rsa.pub": "ssh-ed25519 AAAA"}}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ns, "nokey", v1alpha1.ConditionDelivered, metav1.ConditionTrue, time.Minute)

	// A field our HyperShift types do not know is kept and delivered, not
	// silently dropped, for a team the admin trusts with every field (for
	// others the built-in tenant policy refuses it); a host whose HyperShift
	// does not know it either refuses it, and the refusal is reported.
	if err := fleettest.SetTenantPolicy(ctx, hubc, ns, func(s *v1alpha1.TenantPolicySpec) { s.Fields.AllowAll = true }); err != nil {
		t.Fatal(err)
	}
	if err := hubc.Create(ctx, hcd(ns, "future", func(spec map[string]any) {
		spec["hostedCluster"].(map[string]any)["spec"].(map[string]any)["futureField"] = map[string]any{"enabled": true}
	})); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, time.Minute, "the host's refusal of an unknown field in status", func(ctx context.Context) error {
		h, err := getHCD(ctx, ns, "future")
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionDelivered)
		if c == nil || c.Reason != v1alpha1.ReasonApplyFailed || !strings.Contains(c.Message, ".spec.futureField: field not declared in schema") {
			return fmt.Errorf("Delivered %+v", c)
		}
		work := &workv1.ManifestWork{}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: h.Status.HostingCluster, Name: h.Status.ManifestWork}, work); err != nil {
			return err
		}
		for _, m := range work.Spec.Workload.Manifests {
			if strings.Contains(string(m.Raw), `"futureField":{"enabled":true}`) {
				return nil
			}
		}
		return fmt.Errorf("futureField not in the ManifestWork")
	})
	if err := hubc.Patch(ctx, hcd(ns, "future"), client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"hostedCluster":{"spec":{"futureField":null}}}}`))); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ns, "future", v1alpha1.ConditionDelivered, metav1.ConditionTrue, time.Minute)

	// A release no management cluster supports is not scheduled, and says why.
	if err := hubc.Create(ctx, hcd(ns, "ancient", func(spec map[string]any) {
		spec["hostedCluster"].(map[string]any)["spec"].(map[string]any)["release"] = map[string]any{"image": "quay.io/openshift-release-dev/ocp-release:4.9.0-x86_64"}
	})); err != nil {
		t.Fatal(err)
	}
	h = waitCondition(t, ns, "ancient", v1alpha1.ConditionScheduled, metav1.ConditionFalse, time.Minute)
	c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionScheduled)
	if c.Reason != v1alpha1.ReasonReleaseNotSupported || !strings.Contains(c.Message, "3 clusters: 3 release not supported") ||
		!strings.Contains(c.Message, "does not support OpenShift 4.9") {
		t.Errorf("Scheduled: %s: %s", c.Reason, c.Message)
	}
	// A pinned cluster outside the namespace's cluster sets is refused.
	other := "no-binding"
	if err := hubc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := hubc.Create(ctx, hcd(other, "pinned", func(spec map[string]any) {
		delete(spec, "placement")
		spec["hostingCluster"] = env.Fleet.Managed[0].Name
	})); err != nil {
		t.Fatal(err)
	}
	h = waitCondition(t, other, "pinned", v1alpha1.ConditionScheduled, metav1.ConditionFalse, time.Minute)
	if c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionScheduled); c.Reason != v1alpha1.ReasonHostingClusterNotAllowed {
		t.Errorf("pinned outside cluster sets: %s: %s", c.Reason, c.Message)
	}
	// Binding the set lets it through.
	if err := hubc.Create(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: "global", Namespace: other}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"}}); err != nil {
		t.Fatal(err)
	}
	h = waitCondition(t, other, "pinned", v1alpha1.ConditionScheduled, metav1.ConditionTrue, time.Minute)
	if h.Status.HostingCluster != env.Fleet.Managed[0].Name {
		t.Errorf("pinned HCD bound to %s", h.Status.HostingCluster)
	}
	for _, key := range [][2]string{{ns, "nokey"}, {ns, "future"}, {ns, "ancient"}, {other, "pinned"}} {
		deleteAndWait(t, key[0], key[1])
	}
}

// TestHostingNamespacePolicy: tenants cannot deliver hosted clusters into
// reserved namespaces, and only into those the management clusters'
// HostingConfig allows; revoking a namespace stops delivery without tearing
// anything down.
func TestHostingNamespacePolicy(t *testing.T) {
	ctx := context.Background()
	ns := "policy"
	tenant(t, ns)
	if err := hubc.Create(ctx, hcd(ns, "system", func(spec map[string]any) { spec["hostingNamespace"] = "kube-system" })); err == nil ||
		!strings.Contains(err.Error(), "spec.hostingNamespace kube-system is reserved") {
		t.Errorf("HostedClusterDeployment into kube-system: %v, want refused as reserved", err)
	}
	// The fleet's default HostingConfig lists none: clusters only.
	if err := hubc.Create(ctx, hcd(ns, "team-x", func(spec map[string]any) { spec["hostingNamespace"] = "team-x" })); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, time.Minute, "team-x Scheduled=False, HostingNamespaceNotAllowed", func(ctx context.Context) error {
		h, err := getHCD(ctx, ns, "team-x")
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionScheduled)
		if c == nil || c.Status != metav1.ConditionFalse || c.ObservedGeneration != h.Generation {
			return fmt.Errorf("Scheduled %+v (generation %d)", c, h.Generation)
		}
		if c.Reason != v1alpha1.ReasonHostingNamespaceNotAllowed || !strings.Contains(c.Message, "3 clusters: 3 hosting namespace not allowed") ||
			!strings.Contains(c.Message, "hosting namespace team-x is not allowed by HostingConfig hcp-fleet/default (allows clusters)") {
			return fmt.Errorf("Scheduled: %s: %s", c.Reason, c.Message)
		}
		if h.Status.HostingCluster != "" {
			return fmt.Errorf("bound to %s", h.Status.HostingCluster)
		}
		return nil
	})

	// The admin allows it: scheduled and delivered.
	allow := func(list string) {
		t.Helper()
		config := &v1alpha1.HostingConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "hcp-fleet", Name: "default"}}
		if err := hubc.Patch(ctx, config, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"hostingNamespaces":`+list+`}}`))); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		allow("null")
		// Leave the shared fleet settled: every agent runs with the restored
		// HostingConfig.
		waitHostingConfigApplied(t, "agents report the restored HostingConfig", nil)
	})
	allow(`["clusters","team-x"]`)
	h := waitCondition(t, ns, "team-x", v1alpha1.ConditionDelivered, metav1.ConditionTrue, 2*time.Minute)
	host := h.Status.HostingCluster
	if _, err := hosts[host].Resource(hcGVR).Namespace("team-x").Get(ctx, "team-x", metav1.GetOptions{}); err != nil {
		t.Fatalf("HostedCluster team-x/team-x on %s: %v", host, err)
	}
	work := &workv1.ManifestWork{}
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: host, Name: hosting.WorkName(ns, "team-x")}, work); err != nil {
		t.Fatal(err)
	}

	// Revoked: not delivered any more, but what runs is left alone.
	allow("null")
	env.Eventually(t, time.Minute, "team-x Delivered=False, HostingNamespaceNotAllowed", func(ctx context.Context) error {
		h, err := getHCD(ctx, ns, "team-x")
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionDelivered)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonHostingNamespaceNotAllowed ||
			!strings.Contains(c.Message, "hosting namespace team-x is not allowed on management cluster "+host+" by HostingConfig hcp-fleet/default (allows clusters)") {
			return fmt.Errorf("Delivered %+v", c)
		}
		return nil
	})
	current := &workv1.ManifestWork{}
	if err := hubc.Get(ctx, client.ObjectKeyFromObject(work), current); err != nil || current.DeletionTimestamp != nil || current.Generation != work.Generation {
		t.Errorf("ManifestWork after the namespace was revoked: %v, deleting %v, generation %d → %d", err, current.DeletionTimestamp, work.Generation, current.Generation)
	}
	if hc, err := hosts[host].Resource(hcGVR).Namespace("team-x").Get(ctx, "team-x", metav1.GetOptions{}); err != nil || hc.GetDeletionTimestamp() != nil {
		t.Errorf("HostedCluster after the namespace was revoked: %v", err)
	}
	// Deletion still works.
	deleteAndWait(t, ns, "team-x")
}

func deleteAndWait(t *testing.T, namespace, name string) {
	t.Helper()
	if err := hubc.Delete(context.Background(), hcd(namespace, name)); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	// Deletion crosses the hub, the host's work agent and the HyperShift
	// stand-in's finalizer; under the whole suite's load that took over two
	// minutes once.
	env.Eventually(t, 4*time.Minute, "deleting "+namespace+"/"+name, func(ctx context.Context) error {
		if _, err := getHCD(ctx, namespace, name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}

var _ = delivery.Finalizer

// appliedHostingConfigs returns, per management cluster, the spec hash of
// the HostingConfig its agent reports running with ("" when none).
func appliedHostingConfigs(ctx context.Context) (map[string]string, error) {
	applied := map[string]string{}
	for _, m := range env.Fleet.Managed {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: m.Name, Name: addon.Name}, mca); err != nil {
			return nil, err
		}
		if hash, ok := desiredHostingConfigApplied(mca); ok &&
			meta.IsStatusConditionTrue(mca.Status.Conditions, addon.ConditionHyperShiftOperatorInstalled) {
			applied[m.Name] = hash
		}
	}
	return applied, nil
}

// desiredHostingConfigApplied returns the spec hash of the HostingConfig
// mca desires and whether its agent reports running with it while the
// add-on is Available.
func desiredHostingConfigApplied(mca *addonv1alpha1.ManagedClusterAddOn) (hash string, applied bool) {
	for _, ref := range mca.Status.ConfigReferences {
		if ref.Resource == "hostingconfigs" && ref.DesiredConfig != nil {
			hash = ref.DesiredConfig.SpecHash
		}
	}
	c := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionHostingConfigApplied)
	return hash, hash != "" && c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, hash) &&
		meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
}

// waitHostingConfigApplied waits until every management cluster's agent
// runs with the HostingConfig its add-on resolves now (the desired spec
// hash applied, and not one of before, the hashes the agents ran with before
// the change), and its add-on is Available with the operator installed: the
// hub resolves a change for each add-on in turn, so an add-on may still
// desire the old spec for a while.
func waitHostingConfigApplied(t *testing.T, what string, before map[string]string) {
	t.Helper()
	env.Eventually(t, 2*time.Minute, what, func(ctx context.Context) error {
		applied, err := appliedHostingConfigs(ctx)
		if err != nil {
			return err
		}
		for _, m := range env.Fleet.Managed {
			hash := applied[m.Name]
			if hash == "" {
				return fmt.Errorf("%s: the desired HostingConfig not applied yet", m.Name)
			}
			for _, old := range before {
				if hash == old {
					return fmt.Errorf("%s: still runs with the HostingConfig of before (spec hash %s)", m.Name, hash)
				}
			}
		}
		return nil
	})
}
