//go:build integration

package hub_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/delivery"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// HostileTableEnv names the file TestHostileInputs writes its table to
// (besides the test log), so `make test`, whose output hides passing tests'
// logs, can print it.
const HostileTableEnv = "HCPFLEET_HOSTILE_TABLE"

// The catalogue's tenants: the attacker (hostileNS, and hostileNS2 for a
// second attacker namespace), the victim, and a namespace bound to no
// cluster set.
const (
	hostileNS   = "hostile-a"
	hostileNS2  = "hostile-c"
	victimNS    = "hostile-b"
	unboundNS   = "hostile-unbound"
	victimName  = "victim"
	hostileMark = "hostile-value"
)

// hostileRow is one hostile input: what it is, what must happen, and the
// check that runs it and returns what happened. A row whose gap is set
// documents a rule the product does not enforce yet: its check asserts the
// current behaviour (so the row fails, and must be updated, once the gap is
// closed) and the table marks it.
type hostileRow struct {
	name   string
	input  string
	expect string
	gap    string
	check  func(t *testing.T) string
}

// TestHostileInputs is the hostile-input catalogue (docs/security.md):
// malicious or malformed HostedClusterDeployments, HostingConfigs, a
// ManagedClusterAddOn configuration and hub objects, each refused at
// admission or reported in a condition, none crashing a controller or
// touching another tenant's objects. The rows run in parallel on the
// package's fleet; then the whole fleet is checked for leaks, and the table
// (input, expected, result) is logged and written to $HCPFLEET_HOSTILE_TABLE.
func TestHostileInputs(t *testing.T) {
	ctx := context.Background()
	for _, ns := range append([]string{hostileNS, hostileNS2, victimNS}, policyNamespaces...) {
		tenant(t, ns)
	}
	setUpPolicies(t)
	if err := hubc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unboundNS}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, ns := range append([]string{hostileNS, hostileNS2, victimNS, unboundNS}, policyNamespaces...) {
			deleteAllHCDs(t, ns)
		}
	})
	logFile := filepath.Join(env.Fleet.LogDir, "in-process.log")
	logStart := fileSize(logFile)

	v := setUpVictim(t)
	rows := hostileRows(v)
	results := make([]string, len(rows))
	t.Run("rows", func(t *testing.T) {
		for i, r := range rows {
			t.Run(r.name, func(t *testing.T) {
				t.Parallel()
				defer func() {
					if t.Failed() {
						results[i] = "FAILED (see the test output)"
					}
				}()
				results[i] = r.check(t)
			})
		}
	})

	// Nothing leaked, nothing crashed, the victim is untouched.
	invariants := []struct {
		name  string
		check func(t *testing.T) string
	}{
		{"the victim tenant's objects", func(t *testing.T) string {
			v.assertUntouched(t)
			return "its Secret, ConfigMap, HCD, HostedCluster, Secret copy and ManagedCluster unchanged"
		}},
		{"management clusters", func(t *testing.T) string {
			return assertNothingOutsideClusters(t)
		}},
		{"imported ManagedClusters", func(t *testing.T) string {
			return assertImportedClustersClean(t)
		}},
		{"hub process", func(t *testing.T) string {
			if err := env.Product.Err(); err != nil {
				t.Fatalf("the hub process failed while the catalogue ran: %v", err)
			}
			return "running, never restarted (Product.Err() is nil)"
		}},
		{"controllers", func(t *testing.T) string {
			lines, panics := panicsIn(logFile, logStart)
			if len(panics) > 0 {
				t.Fatalf("controllers panicked while the catalogue ran:\n%s", strings.Join(panics, "\n"))
			}
			if lines == 0 {
				t.Fatalf("no log lines to scan in %s", logFile)
			}
			return fmt.Sprintf("no panic in the %d log lines written while the catalogue ran", lines)
		}},
	}
	checked := make([]string, len(invariants))
	for i, inv := range invariants {
		t.Run("invariants/"+inv.name, func(t *testing.T) {
			defer func() {
				if t.Failed() {
					checked[i] = "FAILED (see the test output)"
				}
			}()
			checked[i] = inv.check(t)
		})
	}
	var footer []string
	for i, inv := range invariants {
		footer = append(footer, inv.name+": "+checked[i])
	}
	writeHostileTable(t, rows, results, footer)
}

// victim is another tenant's hosted cluster, delivered and imported before
// the catalogue runs, and what it looked like then.
type victim struct {
	host       string
	secret     *corev1.Secret
	configMap  *corev1.ConfigMap
	generation int64
	hcLabels   map[string]string
	copyName   string
}

const (
	victimSecret = "victim-secret"
	victimConfig = "victim-config"
)

func setUpVictim(t *testing.T) *victim {
	t.Helper()
	ctx := context.Background()
	host := env.Fleet.Managed[0].Name
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: victimSecret, Namespace: victimNS},
		StringData: map[string]string{"id_rsa.pub": "ssh-ed25519 AAAA victim-marker"}}
	if err := hubc.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: victimConfig, Namespace: victimNS}, Data: map[string]string{"config": "victim-marker"}}
	if err := hubc.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := hubc.Create(ctx, hcd(victimNS, victimName, pinTo(host), func(spec map[string]any) {
		hcSpec(spec)["sshKey"] = map[string]any{"name": victimSecret}
	})); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	h := waitCondition(t, victimNS, victimName, v1alpha1.ConditionImported, metav1.ConditionTrue, 3*time.Minute)
	v := &victim{host: host, generation: h.Generation, copyName: delivery.CopyName(victimNS, victimName, h.UID, delivery.KindSecret, victimSecret)}
	v.secret, v.configMap = &corev1.Secret{}, &corev1.ConfigMap{}
	if err := hubc.Get(ctx, client.ObjectKeyFromObject(s), v.secret); err != nil {
		t.Fatal(err)
	}
	if err := hubc.Get(ctx, client.ObjectKeyFromObject(cm), v.configMap); err != nil {
		t.Fatal(err)
	}
	hc, err := hosts[host].Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, victimName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v.hcLabels = hc.GetLabels()
	return v
}

// assertUntouched: the victim's Secret, HCD, HostedCluster, Secret copy and
// ManagedCluster are as they were.
func (v *victim) assertUntouched(t *testing.T) {
	ctx := context.Background()
	s := &corev1.Secret{}
	if err := hubc.Get(ctx, client.ObjectKeyFromObject(v.secret), s); err != nil || s.ResourceVersion != v.secret.ResourceVersion {
		t.Errorf("the victim's Secret changed: %v (resourceVersion %s → %s)", err, v.secret.ResourceVersion, s.ResourceVersion)
	}
	cm := &corev1.ConfigMap{}
	if err := hubc.Get(ctx, client.ObjectKeyFromObject(v.configMap), cm); err != nil || cm.ResourceVersion != v.configMap.ResourceVersion {
		t.Errorf("the victim's ConfigMap changed: %v (resourceVersion %s → %s)", err, v.configMap.ResourceVersion, cm.ResourceVersion)
	}
	h, err := getHCD(ctx, victimNS, victimName)
	if err != nil {
		t.Fatal(err)
	}
	if h.Generation != v.generation || h.Status.HostingCluster != v.host {
		t.Errorf("the victim's HCD changed: generation %d → %d, host %s", v.generation, h.Generation, h.Status.HostingCluster)
	}
	for _, c := range []string{v1alpha1.ConditionDelivered, v1alpha1.ConditionAvailable, v1alpha1.ConditionImported} {
		if err := condition(h, c, metav1.ConditionTrue); err != nil {
			t.Errorf("victim: %v", err)
		}
	}
	hc, err := hosts[v.host].Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, victimName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the victim's HostedCluster: %v", err)
	}
	if fmt.Sprint(hc.GetLabels()) != fmt.Sprint(v.hcLabels) {
		t.Errorf("the victim's HostedCluster labels changed: %v → %v", v.hcLabels, hc.GetLabels())
	}
	if name, _, _ := unstructured.NestedString(hc.Object, "spec", "sshKey", "name"); name != v.copyName {
		t.Errorf("the victim's HostedCluster sshKey %q, want %s", name, v.copyName)
	}
	cp, err := hosts[v.host].Resource(scGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, v.copyName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the victim's Secret copy: %v", err)
	}
	if d, _, _ := unstructured.NestedString(cp.Object, "data", "id_rsa.pub"); d != base64.StdEncoding.EncodeToString([]byte("ssh-ed25519 AAAA victim-marker")) ||
		cp.GetLabels()[hosting.LabelHCDNamespace] != victimNS {
		t.Errorf("the victim's Secret copy changed: data %q labels %v", d, cp.GetLabels())
	}
	mc := &clusterv1.ManagedCluster{}
	if err := hubc.Get(ctx, types.NamespacedName{Name: victimName}, mc); err != nil ||
		mc.Labels[hosting.LabelHCDNamespace] != victimNS || mc.Labels[hosting.LabelHCDName] != victimName {
		t.Errorf("the victim's ManagedCluster: %v, labels %v", err, mc.Labels)
	}
}

// assertNothingOutsideClusters: on every management cluster, everything
// delivered for the catalogue's tenants lives in the one hosting namespace
// the fleet allows (clusters).
func assertNothingOutsideClusters(t *testing.T) string {
	ctx := context.Background()
	selector := hosting.LabelHCDNamespace + " in (" + strings.Join([]string{hostileNS, hostileNS2, victimNS, unboundNS}, ",") + ")"
	count := 0
	for name, host := range hosts {
		for _, gvr := range []schema.GroupVersionResource{hcGVR, npGVR, scGVR, {Version: "v1", Resource: "configmaps"}} {
			list, err := host.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range list.Items {
				count++
				if o.GetNamespace() != v1alpha1.DefaultHostingNamespace {
					t.Errorf("%s: %s %s/%s delivered outside the allowed hosting namespace", name, gvr.Resource, o.GetNamespace(), o.GetName())
				}
			}
		}
	}
	return fmt.Sprintf("all %d HostedClusters, NodePools, Secrets and ConfigMaps delivered for the tenants are in %s", count, v1alpha1.DefaultHostingNamespace)
}

// assertImportedClustersClean: no ManagedCluster imported for the
// catalogue's tenants carries a label a tenant asked for with the hostile
// value, nor runs the hcp-fleet add-on.
func assertImportedClustersClean(t *testing.T) string {
	ctx := context.Background()
	var list clusterv1.ManagedClusterList
	if err := hubc.List(ctx, &list, client.HasLabels{hosting.LabelHCDNamespace}); err != nil {
		t.Fatal(err)
	}
	for _, mc := range list.Items {
		for k, v := range mc.Labels {
			if v == hostileMark {
				t.Errorf("ManagedCluster %s carries the tenant's label %s=%s", mc.Name, k, v)
			}
		}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: mc.Name, Name: addon.Name}, &addonv1alpha1.ManagedClusterAddOn{}); !apierrors.IsNotFound(err) {
			t.Errorf("imported ManagedCluster %s has the hcp-fleet add-on: %v", mc.Name, err)
		}
	}
	return fmt.Sprintf("none of the %d carries a tenant's %s label, none runs the add-on", len(list.Items), hostileMark)
}

func hostileRows(v *victim) []hostileRow {
	h1, h2, h3 := env.Fleet.Managed[0].Name, env.Fleet.Managed[1].Name, env.Fleet.Managed[2].Name
	var rows []hostileRow
	add := func(r hostileRow) { rows = append(rows, r) }

	// Admission: the HostedClusterDeployment schema.
	reserved := "is reserved"
	for _, c := range []struct{ name, ns string }{
		{"ns-kube-system", "kube-system"},
		{"ns-openshift", "openshift-monitoring"},
		{"ns-default", "default"},
		{"ns-hypershift", "hypershift"},
		{"ns-agent", "hcp-fleet-agent"},
		{"ns-ocm-agent", "open-cluster-management-agent"},
		{"ns-kube", "kube"},
		{"ns-hcp", "hcp"},
	} {
		add(hostileRow{name: "hcd/" + c.name, input: "spec.hostingNamespace: " + c.ns,
			expect: "refused: spec.hostingNamespace " + c.ns + " is reserved",
			check: func(t *testing.T) string {
				return refusedHCD(t, hcd(hostileNS, c.name, withNS(c.ns)), "spec.hostingNamespace "+c.ns+" "+reserved)
			}})
	}
	add(hostileRow{name: "hcd/ns-uppercase", input: "spec.hostingNamespace: Clusters",
		expect: "refused: not a valid namespace name",
		check: func(t *testing.T) string {
			return refusedHCD(t, hcd(hostileNS, "ns-uppercase", withNS("Clusters")), "spec.hostingNamespace must be a valid namespace name")
		}})
	add(hostileRow{name: "hcd/ns-64-chars", input: "spec.hostingNamespace: 64 characters",
		expect: "refused: too long",
		check: func(t *testing.T) string {
			return refusedHCD(t, hcd(hostileNS, "ns-long", withNS(strings.Repeat("n", 64))), "spec.hostingNamespace: Too long")
		}})
	add(hostileRow{name: "hcd/name-unicode", input: "metadata.name: évil (unicode)",
		expect: "refused: invalid object name",
		check: func(t *testing.T) string {
			return refusedHCD(t, hcd(hostileNS, "évil"), "metadata.name: Invalid value")
		}})
	add(hostileRow{name: "hcd/name-uppercase", input: "metadata.name: Evil",
		expect: "refused: invalid object name",
		check: func(t *testing.T) string {
			return refusedHCD(t, hcd(hostileNS, "Evil"), "metadata.name: Invalid value")
		}})
	add(hostileRow{name: "hcd/name-dotted", input: "metadata.name: a.b (valid object name, not a label)",
		expect: "refused: metadata.name must be a lowercase RFC 1123 label",
		check: func(t *testing.T) string {
			u := hcd(hostileNS, "a.b", func(spec map[string]any) { nodePool(spec)["name"] = "a-b-workers" })
			return refusedHCD(t, u, "metadata.name must be a lowercase RFC 1123 label")
		}})
	add(hostileRow{name: "hcd/name-too-long", input: "metadata.name: 55 characters (control-plane namespace clusters-<name> > 63)",
		expect: "refused: too long together",
		check: func(t *testing.T) string {
			name := strings.Repeat("l", 55)
			u := hcd(hostileNS, name, func(spec map[string]any) { nodePool(spec)["name"] = "long-workers" })
			return refusedHCD(t, u, "spec.hostingNamespace and metadata.name are too long together")
		}})
	for _, c := range []struct{ name, why string }{
		{"local-cluster", "the name ACM gives the hub's own ManagedCluster"},
		{"hcp-fleet", "the hub's namespace: HostingConfigs and their credentials"},
		{"open-cluster-management-hub", "OCM's hub namespace"},
		{"kube-system", "a hub system namespace"},
	} {
		add(hostileRow{name: "hcd/name-" + c.name, input: "metadata.name: " + c.name + " (" + c.why + "; the imported ManagedCluster would take it as its cluster namespace)",
			expect: "refused: metadata.name " + c.name + " is reserved",
			check: func(t *testing.T) string {
				return refusedHCD(t, hcd(hostileNS, c.name), "metadata.name "+c.name+" is reserved")
			}})
	}
	add(hostileRow{name: "hcd/nodepool-duplicate", input: "two spec.nodePools named the same",
		expect: "refused: duplicate node pool name",
		check: func(t *testing.T) string {
			u := hcd(hostileNS, "dup-pools", func(spec map[string]any) {
				pools := spec["nodePools"].([]any)
				spec["nodePools"] = append(pools, pools[0])
			})
			return refusedHCD(t, u, "Duplicate value")
		}})
	add(hostileRow{name: "hcd/nodepool-31", input: "31 spec.nodePools",
		expect: "refused: at most 30",
		check: func(t *testing.T) string {
			u := hcd(hostileNS, "many-pools", func(spec map[string]any) {
				first := spec["nodePools"].([]any)[0].(map[string]any)
				var pools []any
				for i := range 31 {
					p := deepCopy(first)
					p["name"] = fmt.Sprintf("pool-%d", i)
					pools = append(pools, p)
				}
				spec["nodePools"] = pools
			})
			return refusedHCD(t, u, "must have at most 30 items")
		}})
	add(hostileRow{name: "hcd/nodepool-foreign-cluster", input: "spec.nodePools[].spec.clusterName: victim (another tenant's HostedCluster)",
		expect: "refused: clusterName must equal metadata.name",
		check: func(t *testing.T) string {
			u := hcd(hostileNS, "np-steal", func(spec map[string]any) { nodePool(spec)["spec"].(map[string]any)["clusterName"] = victimName })
			return refusedHCD(t, u, "spec.nodePools[].spec.clusterName must equal metadata.name")
		}})
	add(hostileRow{name: "hcd/deletion-policy", input: "spec.deletionPolicy: Destroy",
		expect: "refused: unsupported value",
		check: func(t *testing.T) string {
			return refusedHCD(t, hcd(hostileNS, "bad-policy", func(spec map[string]any) { spec["deletionPolicy"] = "Destroy" }), "Unsupported value: \"Destroy\"")
		}})
	add(hostileRow{name: "hcd/placement-other-ns", input: "spec.placement: hostile-b/hosts (a Placement in another namespace)",
		expect: "refused: not a Placement name",
		check: func(t *testing.T) string {
			return refusedHCD(t, hcd(hostileNS, "placement-path", func(spec map[string]any) { spec["placement"] = victimNS + "/hosts" }),
				"spec.placement must be the name of a Placement")
		}})
	add(hostileRow{name: "hcd/hosting-cluster-path", input: "spec.hostingCluster: ../" + h1,
		expect: "refused: not a ManagedCluster name",
		check: func(t *testing.T) string {
			return refusedHCD(t, hcd(hostileNS, "cluster-path", pinTo("../"+h1)), "spec.hostingCluster must be the name of a ManagedCluster")
		}})
	add(hostileRow{name: "hcd/huge-spec", input: "spec.hostedCluster.annotations with a 3.5 MiB value",
		expect: "refused: request too large",
		check: func(t *testing.T) string {
			u := hcd(hostileNS, "huge", func(spec map[string]any) {
				spec["hostedCluster"].(map[string]any)["annotations"] = map[string]any{"example.com/big": strings.Repeat("x", 3584*1024)}
			})
			return refusedHCD(t, u, "too large")
		}})
	add(hostileRow{name: "hcd/forged-status", input: "status.hostingCluster and Delivered=True set on create",
		expect: "status ignored; scheduled by the hub",
		check: func(t *testing.T) string {
			u := hcd(hostileNS, "forged", pinTo(h2))
			u.Object["status"] = map[string]any{"hostingCluster": h1, "conditions": []any{map[string]any{"type": "Delivered", "status": "True",
				"reason": "Applied", "message": "forged", "lastTransitionTime": "2020-01-01T00:00:00Z"}}}
			createHCD(t, u)
			h, _ := awaitCondition(t, hostileNS, "forged", v1alpha1.ConditionScheduled, metav1.ConditionTrue, v1alpha1.ReasonScheduled)
			if h.Status.HostingCluster != h2 {
				t.Fatalf("scheduled to %s, want the pinned %s", h.Status.HostingCluster, h2)
			}
			return "Scheduled=True onto " + h2 + " (the forged status was dropped)"
		}})
	add(hostileRow{name: "hcd/move-after-scheduling", input: "spec.hostingCluster changed after scheduling",
		expect: "refused: scheduling is permanent",
		check: func(t *testing.T) string {
			createHCD(t, hcd(hostileNS, "mover", pinTo(h2)))
			awaitCondition(t, hostileNS, "mover", v1alpha1.ConditionScheduled, metav1.ConditionTrue, v1alpha1.ReasonScheduled)
			err := hubc.Patch(context.Background(), hcd(hostileNS, "mover"), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"hostingCluster":"`+h1+`"}}`)))
			return refusal(t, err, "scheduling is permanent")
		}})
	add(hostileRow{name: "hcd/hosting-namespace-change", input: "spec.hostingNamespace changed to kube-system after creation",
		expect: "refused: immutable (and reserved)",
		check: func(t *testing.T) string {
			createHCD(t, hcd(hostileNS, "ns-mover", pinTo(h2)))
			err := hubc.Patch(context.Background(), hcd(hostileNS, "ns-mover"), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"hostingNamespace":"kube-system"}}`)))
			return refusal(t, err, "spec.hostingNamespace is immutable")
		}})

	// Scheduling: reported in Scheduled=False, never bound.
	add(hostileRow{name: "sched/ns-not-allowed", input: "spec.hostingNamespace: team-x (not in the HostingConfig's list)",
		expect: "Scheduled=False HostingNamespaceNotAllowed",
		check: func(t *testing.T) string {
			return unscheduled(t, hcd(hostileNS, "not-allowed", withNS("team-x")), v1alpha1.ReasonHostingNamespaceNotAllowed,
				"hosting namespace team-x is not allowed by HostingConfig hcp-fleet/default (allows clusters)")
		}})
	add(hostileRow{name: "sched/ns-victim-control-plane", input: "spec.hostingNamespace: clusters-victim (the victim's control-plane namespace)",
		expect: "Scheduled=False HostingNamespaceNotAllowed",
		check: func(t *testing.T) string {
			return unscheduled(t, hcd(hostileNS, "cp-ns", withNS("clusters-"+victimName)), v1alpha1.ReasonHostingNamespaceNotAllowed,
				"hosting namespace clusters-victim is not allowed")
		}})
	add(hostileRow{name: "sched/placement-foreign", input: "spec.placement: victim-hosts (exists only in the victim's namespace)",
		expect: "Scheduled=False PlacementNotFound",
		check: func(t *testing.T) string {
			p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "victim-hosts", Namespace: victimNS}, Spec: clusterv1beta1.PlacementSpec{ClusterSets: []string{"global"}}}
			if err := hubc.Create(context.Background(), p); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			return unscheduled(t, hcd(hostileNS, "foreign-placement", func(spec map[string]any) { spec["placement"] = "victim-hosts" }),
				v1alpha1.ReasonPlacementNotFound, "Placement "+hostileNS+"/victim-hosts, which does not exist")
		}})
	add(hostileRow{name: "sched/cluster-missing", input: "spec.hostingCluster: no-such-cluster",
		expect: "Scheduled=False HostingClusterNotFound",
		check: func(t *testing.T) string {
			return unscheduled(t, hcd(hostileNS, "no-cluster", pinTo("no-such-cluster")), v1alpha1.ReasonHostingClusterNotFound,
				"ManagedCluster no-such-cluster, which does not exist")
		}})
	add(hostileRow{name: "sched/cluster-unbound", input: "spec.hostingCluster pinned from a namespace with no ManagedClusterSetBinding",
		expect: "Scheduled=False HostingClusterNotAllowed",
		check: func(t *testing.T) string {
			return unscheduled(t, hcd(unboundNS, "unbound", pinTo(h1)), v1alpha1.ReasonHostingClusterNotAllowed,
				"is in no ManagedClusterSet bound to namespace "+unboundNS)
		}})
	add(hostileRow{name: "sched/same-name-pinned", input: "HCD named victim pinned to the victim's management cluster (HostedCluster clusters/victim there)",
		expect: "Scheduled=False (name taken)",
		check: func(t *testing.T) string {
			return unscheduled(t, hcd(hostileNS2, victimName, pinTo(v.host)), v1alpha1.ReasonNoSuitableHostingCluster,
				"a HostedCluster clusters/victim from another HostedClusterDeployment is bound there")
		}})
	add(hostileRow{name: "sched/nodepool-taken", input: "spec.nodePools[].name: victim-workers, pinned to the victim's management cluster",
		expect: "Scheduled=False (name taken)",
		check: func(t *testing.T) string {
			return unscheduled(t, hcd(hostileNS, "np-thief", pinTo(v.host), func(spec map[string]any) { nodePool(spec)["name"] = victimName + "-workers" }),
				v1alpha1.ReasonNoSuitableHostingCluster, "a NodePool clusters/victim-workers from another HostedClusterDeployment is bound there")
		}})
	add(hostileRow{name: "hub/placement-strategy", input: "own Placement annotated " + scheduling.StrategyAnnotation + ": evil",
		expect: "Scheduled=False naming the bad annotation",
		check: func(t *testing.T) string {
			p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "evil-strategy", Namespace: hostileNS,
				Annotations: map[string]string{scheduling.StrategyAnnotation: "evil"}}, Spec: clusterv1beta1.PlacementSpec{ClusterSets: []string{"global"}}}
			if err := hubc.Create(context.Background(), p); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			return unscheduled(t, hcd(hostileNS, "strategy", func(spec map[string]any) { spec["placement"] = "evil-strategy" }),
				v1alpha1.ReasonNoSuitableHostingCluster, `unknown scheduling strategy "evil"`)
		}})

	// Delivery: references, names, annotations and labels.
	add(hostileRow{name: "deliver/secret-foreign", input: "spec.hostedCluster.spec.pullSecret: victim-secret (exists only in the victim's namespace)",
		expect: "Delivered=False ReferencedObjectNotFound; nothing read from the victim",
		check: func(t *testing.T) string {
			return notFound(t, hcd(hostileNS, "steal-secret", func(spec map[string]any) { hcSpec(spec)["pullSecret"] = map[string]any{"name": victimSecret} }),
				"Secret "+hostileNS+"/"+victimSecret+" (spec.hostedCluster.spec.pullSecret.name) not found")
		}})
	add(hostileRow{name: "deliver/configmap-foreign", input: "spec.nodePools[].spec.config: victim-config (a ConfigMap only in the victim's namespace)",
		expect: "Delivered=False ReferencedObjectNotFound; nothing read from the victim",
		check: func(t *testing.T) string {
			return notFound(t, hcd(hostileNS, "steal-config", func(spec map[string]any) {
				nodePool(spec)["spec"].(map[string]any)["config"] = []any{map[string]any{"name": victimConfig}}
			}), "ConfigMap "+hostileNS+"/"+victimConfig+" (spec.nodePools[0].spec.config[0].name) not found")
		}})
	add(hostileRow{name: "deliver/secret-traversal", input: "spec.hostedCluster.spec.sshKey: ../hostile-b/victim-secret",
		expect: "Delivered=False ReferencedObjectNotFound",
		check: func(t *testing.T) string {
			return notFound(t, hcd(hostileNS, "traversal", func(spec map[string]any) {
				hcSpec(spec)["sshKey"] = map[string]any{"name": "../" + victimNS + "/" + victimSecret}
			}),
				"Secret "+hostileNS+"/../"+victimNS+"/"+victimSecret+" (spec.hostedCluster.spec.sshKey.name) not found")
		}})
	add(hostileRow{name: "deliver/secret-long-name", input: "spec.hostedCluster.spec.secretEncryption.aescbc.activeKey: 300 characters",
		expect: "Delivered=False ReferencedObjectNotFound",
		check: func(t *testing.T) string {
			long := strings.Repeat("k", 300)
			return notFound(t, hcd(hostileNS, "long-key", encryptionKey(long)), "(spec.hostedCluster.spec.secretEncryption.aescbc.activeKey.name) not found")
		}})
	add(hostileRow{name: "deliver/secret-missing", input: "spec.hostedCluster.spec.secretEncryption.aescbc.activeKey: a Secret that does not exist",
		expect: "Delivered=False ReferencedObjectNotFound",
		check: func(t *testing.T) string {
			return notFound(t, hcd(hostileNS, "missing-key", encryptionKey("no-such-key")),
				"Secret "+hostileNS+"/no-such-key (spec.hostedCluster.spec.secretEncryption.aescbc.activeKey.name) not found")
		}})
	add(hostileRow{name: "deliver/copy-name-collision", input: "HCD a (hostile-a) refers to Secret b-c; HCD a-b (hostile-c) refers to Secret c; same host",
		expect: "both Delivered=True, distinct copies with their own data",
		check:  func(t *testing.T) string { return copyCollision(t, h2) }})
	add(hostileRow{name: "deliver/foreign-object", input: "pull secret whose copy name a foreign Secret on the host already has",
		expect: "Delivered=False OwnedByAnother (conflict, never merged)",
		check:  func(t *testing.T) string { return foreignObject(t, h2) }})
	add(hostileRow{name: "deliver/annotation-cpo-image", input: "spec.hostedCluster.annotations: hypershift.openshift.io/control-plane-operator-image",
		expect: "Delivered=True naming the dropped key; not on the host",
		check: func(t *testing.T) string {
			return droppedAnnotations(t, "cpo-image", map[string]any{"hypershift.openshift.io/control-plane-operator-image": "evil.example.com/cpo"}, nil,
				"hypershift.openshift.io/control-plane-operator-image")
		}})
	add(hostileRow{name: "deliver/annotation-owned", input: "spec.hostedCluster.annotations: hcpfleet.io/hcd-name, hypershift.openshift.io/migration-in-progress, …/migration-failed",
		expect: "Delivered=True naming the dropped keys; not on the host",
		check: func(t *testing.T) string {
			return droppedAnnotations(t, "owned-annotations", map[string]any{"hcpfleet.io/hcd-name": victimName,
				"hypershift.openshift.io/migration-in-progress": "true", "hypershift.openshift.io/migration-failed": "true"}, nil,
				"hcpfleet.io/hcd-name", "hypershift.openshift.io/migration-failed", "hypershift.openshift.io/migration-in-progress")
		}})
	add(hostileRow{name: "deliver/annotation-case", input: "spec.hostedCluster.annotations: HyperShift.OpenShift.io/control-plane-operator-image (other case)",
		expect: "Delivered=True naming the dropped key; not on the host",
		check: func(t *testing.T) string {
			return droppedAnnotations(t, "annotation-case", map[string]any{"HyperShift.OpenShift.io/control-plane-operator-image": "evil.example.com/cpo"}, nil,
				"HyperShift.OpenShift.io/control-plane-operator-image")
		}})
	add(hostileRow{name: "deliver/annotation-nodepool", input: "spec.nodePools[].annotations: hypershift.openshift.io/nodepool-… and node.kubernetes.io/…",
		expect: "Delivered=True naming <pool>: <key>; not on the host",
		check: func(t *testing.T) string {
			return droppedAnnotations(t, "np-annotations", nil, map[string]any{"hypershift.openshift.io/skip-release-image-validation": "true", "node.kubernetes.io/evil": "x"},
				"np-annotations-workers: hypershift.openshift.io/skip-release-image-validation", "np-annotations-workers: node.kubernetes.io/evil")
		}})
	add(hostileRow{name: "deliver/annotation-too-big", input: "spec.hostedCluster.annotations with a 300 KiB value (over the host's 256 KiB limit)",
		expect: "Delivered=False ApplyFailed (refused by the host)",
		check: func(t *testing.T) string {
			u := hcd(hostileNS, "big-annotation", pinTo(h2), func(spec map[string]any) {
				spec["hostedCluster"].(map[string]any)["annotations"] = map[string]any{"example.com/big": strings.Repeat("x", 300*1024)}
			})
			createHCD(t, u)
			_, c := awaitCondition(t, hostileNS, "big-annotation", v1alpha1.ConditionDelivered, metav1.ConditionFalse, v1alpha1.ReasonApplyFailed, "Too long")
			return "Delivered=False ApplyFailed: " + excerpt(c.Message, "Too long")
		}})
	add(hostileRow{name: "deliver/max-length-name", input: "metadata.name of 54 characters (the longest with hostingNamespace clusters)",
		expect: "delivered and imported; every generated name within limits",
		check:  func(t *testing.T) string { return maxLengthName(t) }})

	// Import: labels and names of the ManagedCluster.
	add(hostileRow{name: "import/join-clusterset", input: "metadata.labels: cluster.open-cluster-management.io/clusterset=" + hostileMark,
		expect: "Imported=True naming the dropped key; not in that set",
		check: func(t *testing.T) string {
			return importedLabels(t, "join-set", map[string]string{"cluster.open-cluster-management.io/clusterset": hostileMark})
		}})
	add(hostileRow{name: "import/management-cluster", input: "metadata.labels: hcpfleet.io/management-cluster=" + hostileMark + ", feature.open-cluster-management.io/addon-hcp-fleet",
		expect: "Imported=True naming the dropped keys; no hcp-fleet add-on there",
		check: func(t *testing.T) string {
			return importedLabels(t, "mgmt-label", map[string]string{"hcpfleet.io/management-cluster": hostileMark,
				"feature.open-cluster-management.io/addon-hcp-fleet": hostileMark})
		}})
	add(hostileRow{name: "import/ocm-labels", input: "metadata.labels: local-cluster, name, vendor, cloud, clusterID=" + hostileMark,
		expect: "Imported=True naming the dropped keys",
		check: func(t *testing.T) string {
			return importedLabels(t, "ocm-labels", map[string]string{"local-cluster": hostileMark, "name": hostileMark, "vendor": hostileMark,
				"cloud": hostileMark, "clusterID": hostileMark})
		}})
	add(hostileRow{name: "import/same-name", input: "HCD named victim in hostile-a, placed by the Placement",
		expect: "scheduled elsewhere; Imported=False ImportFailed, the victim's ManagedCluster kept",
		check: func(t *testing.T) string {
			createHCD(t, hcd(hostileNS, victimName))
			h, c := awaitCondition(t, hostileNS, victimName, v1alpha1.ConditionImported, metav1.ConditionFalse, v1alpha1.ReasonImportFailed,
				"ManagedCluster victim already exists and does not belong to this HostedClusterDeployment")
			if h.Status.HostingCluster == v.host {
				t.Fatalf("bound to the victim's host %s", v.host)
			}
			_ = c
			return "delivered to " + h.Status.HostingCluster + "; Imported=False ImportFailed (ManagedCluster victim already exists …)"
		}})
	add(hostileRow{name: "import/name-of-management-cluster", input: "HCD named " + h2 + " (a management cluster's ManagedCluster)",
		expect: "Imported=False ImportFailed; the management cluster's ManagedCluster untouched",
		check: func(t *testing.T) string {
			before := &clusterv1.ManagedCluster{}
			if err := hubc.Get(context.Background(), types.NamespacedName{Name: h2}, before); err != nil {
				t.Fatal(err)
			}
			createHCD(t, hcd(hostileNS, h2))
			_, c := awaitCondition(t, hostileNS, h2, v1alpha1.ConditionImported, metav1.ConditionFalse, v1alpha1.ReasonImportFailed,
				"ManagedCluster "+h2+" already exists and does not belong to this HostedClusterDeployment")
			after := &clusterv1.ManagedCluster{}
			if err := hubc.Get(context.Background(), types.NamespacedName{Name: h2}, after); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(after.Labels) != fmt.Sprint(before.Labels) || fmt.Sprint(after.Annotations) != fmt.Sprint(before.Annotations) || after.Spec.HubAcceptsClient != before.Spec.HubAcceptsClient {
				t.Fatalf("ManagedCluster %s changed: labels %v → %v, annotations %v → %v", h2, before.Labels, after.Labels, before.Annotations, after.Annotations)
			}
			return "Imported=False ImportFailed: " + excerpt(c.Message, "ManagedCluster")
		}})
	add(hostileRow{name: "import/name-is-tenant-namespace", input: "HCD named hostile-b (another tenant's hub namespace)",
		expect: "Imported=False ImportFailed: a ManagedCluster hostile-b would make OCM take that namespace as its cluster namespace",
		check:  func(t *testing.T) string { return namespaceKept(t, victimNS) }})
	add(hostileRow{name: "import/name-is-own-namespace", input: "HCD named hostile-a in hostile-a (the tenant's own hub namespace)",
		expect: "Imported=False ImportFailed, as above",
		check:  func(t *testing.T) string { return namespaceKept(t, hostileNS) }})

	// HostingConfig schema.
	hcRefused := func(name, input, want string, spec map[string]any) {
		add(hostileRow{name: "hostingconfig/" + name, input: input, expect: "refused: " + want,
			check: func(t *testing.T) string { return refusedObj(t, hostingConfig(hostileNS, name, spec), want) }})
	}
	hcRefused("reserved-ns", "spec.hostingNamespaces: [clusters, kube-system]", "kube-system is reserved",
		map[string]any{"hostingNamespaces": []any{"clusters", "kube-system"}})
	hcRefused("reserved-prefix", "spec.hostingNamespaces: [hcp] (control plane hcp-<name>)", "hcp is reserved",
		map[string]any{"hostingNamespaces": []any{"hcp"}})
	hcRefused("reserved-ocm", "spec.hostingNamespaces: [open-cluster-management-agent-addon]", "open-cluster-management-agent-addon is reserved",
		map[string]any{"hostingNamespaces": []any{"open-cluster-management-agent-addon"}})
	many := []any{}
	for i := range 65 {
		many = append(many, fmt.Sprintf("ns-%d", i))
	}
	hcRefused("too-many-ns", "spec.hostingNamespaces: 65 entries", "must have at most 64 items", map[string]any{"hostingNamespaces": many})
	hcRefused("capacity-zero", "spec.capacity.maxHostedClusters: 0", "should be greater than or equal to 1",
		map[string]any{"capacity": map[string]any{"maxHostedClusters": int64(0)}})
	hcRefused("capacity-threshold", "spec.capacity: aboveThreshold 90 > maxHostedClusters 10", "aboveThreshold must not be greater than",
		map[string]any{"capacity": map[string]any{"maxHostedClusters": int64(10), "aboveThreshold": int64(90)}})
	hcRefused("capacity-cpu", "spec.capacity.perHostedControlPlane.cpu: -1", "cpu must be greater than zero",
		map[string]any{"capacity": map[string]any{"perHostedControlPlane": map[string]any{"cpu": "-1"}}})
	hcRefused("image-override-key", "spec.operator.imageOverrides: LD_PRELOAD", "keys must be HyperShift operator image variables",
		map[string]any{"operator": map[string]any{"imageOverrides": map[string]any{"LD_PRELOAD": "/tmp/evil.so"}}})
	hcRefused("agent-image-space", "spec.agentImage: \"quay.io/x:1 --privileged\"", "spec.agentImage must be an image pull spec without white space",
		map[string]any{"agentImage": "quay.io/x:1 --privileged"})

	// A ManagedClusterAddOn naming a HostingConfig in a tenant namespace.
	add(hostileRow{name: "addon/hostingconfig-in-tenant-ns", input: "ManagedClusterAddOn " + h3 + "/hcp-fleet spec.configs: HostingConfig hostile-a/evil (OIDC Secret, agentImage, hostingNamespaces [evil-ns])",
		expect: "ignored: agent gets the defaults, problem named; the Secret never leaves the hub; evil-ns not allowed",
		check:  func(t *testing.T) string { return addOnConfigElsewhere(t, h3) }})
	return append(rows, policyRows(v)...)
}

// --- row helpers ---

func withNS(ns string) func(map[string]any) {
	return func(spec map[string]any) { spec["hostingNamespace"] = ns }
}

func pinTo(cluster string) func(map[string]any) {
	return func(spec map[string]any) {
		delete(spec, "placement")
		spec["hostingCluster"] = cluster
	}
}

func hcSpec(spec map[string]any) map[string]any {
	return spec["hostedCluster"].(map[string]any)["spec"].(map[string]any)
}

func nodePool(spec map[string]any) map[string]any {
	return spec["nodePools"].([]any)[0].(map[string]any)
}

func encryptionKey(name string) func(map[string]any) {
	return func(spec map[string]any) {
		hcSpec(spec)["secretEncryption"] = map[string]any{"type": "aescbc", "aescbc": map[string]any{"activeKey": map[string]any{"name": name}}}
	}
}

func deepCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

func hostingConfig(namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("HostingConfig")
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func createHCD(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	if err := hubc.Create(context.Background(), u); err != nil {
		t.Fatalf("creating %s/%s: %v", u.GetNamespace(), u.GetName(), err)
	}
}

// excerpt is the part of msg from want on, cut to a readable length.
func excerpt(msg, want string) string {
	i := strings.Index(msg, want)
	if i < 0 {
		i = 0
	}
	s := []rune(msg[i:])
	if len(s) > 90 {
		return string(s[:90]) + "…"
	}
	return string(s)
}

// refusal checks that err is an admission refusal containing want.
func refusal(t *testing.T, err error, want string) string {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want refused with %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("refused with %v, want %q", err, want)
	}
	return "refused: " + excerpt(err.Error(), want)
}

// refusedObj creates obj, which must be refused with a message containing
// want, and must not exist afterwards.
func refusedObj(t *testing.T, obj *unstructured.Unstructured, want string) string {
	t.Helper()
	ctx := context.Background()
	result := refusal(t, hubc.Create(ctx, obj), want)
	if obj.GetName() != "" && !strings.ContainsFunc(obj.GetName(), func(r rune) bool { return r > 127 || (r >= 'A' && r <= 'Z') }) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(obj), got); !apierrors.IsNotFound(err) {
			t.Fatalf("%s %s exists after the refusal: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	return result
}

func refusedHCD(t *testing.T, u *unstructured.Unstructured, want string) string {
	t.Helper()
	return refusedObj(t, u, want)
}

// awaitCondition waits until the HCD's condition has the status and reason
// for its current generation, its message containing every part.
func awaitCondition(t *testing.T, ns, name, condType string, status metav1.ConditionStatus, reason string, parts ...string) (*v1alpha1.HostedClusterDeployment, *metav1.Condition) {
	t.Helper()
	var h *v1alpha1.HostedClusterDeployment
	var c *metav1.Condition
	env.Eventually(t, 3*time.Minute, fmt.Sprintf("%s/%s %s=%s %s", ns, name, condType, status, reason), func(ctx context.Context) error {
		var err error
		if h, err = getHCD(ctx, ns, name); err != nil {
			return err
		}
		c = meta.FindStatusCondition(h.Status.Conditions, condType)
		if c == nil || c.ObservedGeneration != h.Generation || c.Status != status || c.Reason != reason {
			var all []string
			for _, o := range h.Status.Conditions {
				all = append(all, fmt.Sprintf("%s=%s %s: %s", o.Type, o.Status, o.Reason, o.Message))
			}
			return fmt.Errorf("%s: %+v (generation %d; bound to %q; conditions: %s)", condType, c, h.Generation, h.Status.HostingCluster, strings.Join(all, " | "))
		}
		for _, p := range parts {
			if !strings.Contains(c.Message, p) {
				return fmt.Errorf("%s message %q lacks %q", condType, c.Message, p)
			}
		}
		return nil
	})
	return h, c
}

// unscheduled creates u and waits for Scheduled=False with reason and
// message; it must stay unbound, with no ManifestWork anywhere.
func unscheduled(t *testing.T, u *unstructured.Unstructured, reason, message string) string {
	t.Helper()
	createHCD(t, u)
	h, c := awaitCondition(t, u.GetNamespace(), u.GetName(), v1alpha1.ConditionScheduled, metav1.ConditionFalse, reason, message)
	if h.Status.HostingCluster != "" {
		t.Fatalf("bound to %s", h.Status.HostingCluster)
	}
	var works workv1.ManifestWorkList
	if err := hubc.List(context.Background(), &works, client.MatchingLabels{hosting.LabelHCDNamespace: u.GetNamespace(), hosting.LabelHCDName: u.GetName()}); err != nil {
		t.Fatal(err)
	}
	if len(works.Items) > 0 {
		t.Fatalf("ManifestWork %s/%s exists", works.Items[0].Namespace, works.Items[0].Name)
	}
	return "Scheduled=False " + reason + ": " + excerpt(c.Message, message)
}

// notFound creates u (placed by the Placement) and waits for
// Delivered=False ReferencedObjectNotFound naming the reference; nothing is
// delivered.
func notFound(t *testing.T, u *unstructured.Unstructured, message string) string {
	t.Helper()
	createHCD(t, u)
	h, c := awaitCondition(t, u.GetNamespace(), u.GetName(), v1alpha1.ConditionDelivered, metav1.ConditionFalse, v1alpha1.ReasonReferencedObjectNotFound, message)
	if err := hubc.Get(context.Background(), types.NamespacedName{Namespace: h.Status.HostingCluster, Name: hosting.WorkName(u.GetNamespace(), u.GetName())}, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a ManifestWork was written: %v", err)
	}
	return "Delivered=False ReferencedObjectNotFound: " + excerpt(c.Message, message)
}

// copyCollision: HCD a referring to b-c and HCD a-b referring to c would
// share the copy name a-b-c without the hash.
func copyCollision(t *testing.T, host string) string {
	ctx := context.Background()
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: hostileNS, Name: "b-c"}, StringData: map[string]string{"id_rsa.pub": "key of hostile-a/a"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: hostileNS2, Name: "c"}, StringData: map[string]string{"id_rsa.pub": "key of hostile-c/a-b"}},
	} {
		if err := hubc.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	createHCD(t, hcd(hostileNS, "a", pinTo(host), func(spec map[string]any) { hcSpec(spec)["sshKey"] = map[string]any{"name": "b-c"} }))
	createHCD(t, hcd(hostileNS2, "a-b", pinTo(host), func(spec map[string]any) { hcSpec(spec)["sshKey"] = map[string]any{"name": "c"} }))
	awaitCondition(t, hostileNS, "a", v1alpha1.ConditionDelivered, metav1.ConditionTrue, v1alpha1.ReasonApplied)
	awaitCondition(t, hostileNS2, "a-b", v1alpha1.ConditionDelivered, metav1.ConditionTrue, v1alpha1.ReasonApplied)
	one, two := copyName(t, hostileNS, "a", "b-c"), copyName(t, hostileNS2, "a-b", "c")
	if one == two {
		t.Fatalf("both copies are named %s", one)
	}
	for name, want := range map[string]string{one: "key of hostile-a/a", two: "key of hostile-c/a-b"} {
		s, err := hosts[host].Resource(scGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d, _, _ := unstructured.NestedString(s.Object, "data", "id_rsa.pub"); d != base64.StdEncoding.EncodeToString([]byte(want)) {
			t.Fatalf("copy %s holds %q, want %q", name, d, want)
		}
	}
	return "both Delivered=True: " + one + ", " + two
}

// foreignObject: a Secret someone else created on the host under the name
// of a copy is reported, not taken over. The copy's name is salted with the
// HCD's UID, so the Secret can only be created once the HCD exists: its
// pull secret is missing on the hub until then, which holds its delivery.
func foreignObject(t *testing.T, host string) string {
	ctx := context.Background()
	const pull = "squat-pull"
	createHCD(t, hcd(hostileNS, "squat", pinTo(host), func(spec map[string]any) { hcSpec(spec)["pullSecret"] = map[string]any{"name": pull} }))
	awaitCondition(t, hostileNS, "squat", v1alpha1.ConditionDelivered, metav1.ConditionFalse, v1alpha1.ReasonReferencedObjectNotFound)
	name := copyName(t, hostileNS, "squat", pull)
	secrets := hosts[host].Resource(scGVR).Namespace(v1alpha1.DefaultHostingNamespace)
	data := base64.StdEncoding.EncodeToString([]byte(`{"auths":{"foreign.example.com":{}}}`))
	s := &unstructured.Unstructured{Object: map[string]any{"type": "Opaque", "data": map[string]any{".dockerconfigjson": data}}}
	s.SetAPIVersion("v1")
	s.SetKind("Secret")
	s.SetNamespace(v1alpha1.DefaultHostingNamespace)
	s.SetName(name)
	nsObj := &unstructured.Unstructured{}
	nsObj.SetAPIVersion("v1")
	nsObj.SetKind("Namespace")
	nsObj.SetName(v1alpha1.DefaultHostingNamespace)
	nsObj.SetLabels(map[string]string{hosting.LabelCreatedNamespace: "true"})
	env.Eventually(t, time.Minute, "foreign Secret created", func(ctx context.Context) error {
		if _, err := hosts[host].Resource(nsGVR).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		if _, err := secrets.Create(ctx, s, metav1.CreateOptions{FieldManager: foreignManager}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	})
	t.Cleanup(func() {
		deleteAndWait(t, hostileNS, "squat")
		_ = secrets.Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	if err := hubc.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hostileNS, Name: pull},
		StringData: map[string]string{".dockerconfigjson": `{"auths":{}}`}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	awaitCondition(t, hostileNS, "squat", v1alpha1.ConditionDelivered, metav1.ConditionFalse, v1alpha1.ReasonOwnedByAnother,
		"Secret clusters/"+name+" belongs to another field manager", `conflict with "`+foreignManager+`"`, "never merged")
	got, err := secrets.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d, _, _ := unstructured.NestedString(got.Object, "data", ".dockerconfigjson"); d != data || len(got.GetOwnerReferences()) > 0 || got.GetLabels()[hosting.LabelHCDName] != "" {
		t.Fatalf("the foreign Secret was taken over: data %q owners %v labels %v", d, got.GetOwnerReferences(), got.GetLabels())
	}
	return "Delivered=False OwnedByAnother (conflict with \"" + foreignManager + "\"); the foreign Secret untouched"
}

// droppedAnnotations creates an HCD with the given HostedCluster and
// NodePool annotations and waits until it is delivered, the Delivered
// message naming every dropped key; none reaches the host.
func droppedAnnotations(t *testing.T, name string, hcAnnotations, npAnnotations map[string]any, dropped ...string) string {
	ctx := context.Background()
	createHCD(t, hcd(hostileNS, name, func(spec map[string]any) {
		if hcAnnotations != nil {
			spec["hostedCluster"].(map[string]any)["annotations"] = hcAnnotations
		}
		if npAnnotations != nil {
			nodePool(spec)["annotations"] = npAnnotations
		}
	}))
	h, c := awaitCondition(t, hostileNS, name, v1alpha1.ConditionDelivered, metav1.ConditionTrue, v1alpha1.ReasonApplied, dropped...)
	if strings.Contains(c.Message, "evil.example.com") {
		t.Fatalf("Delivered names an annotation's value: %s", c.Message)
	}
	for _, gvr := range []schema.GroupVersionResource{hcGVR, npGVR} {
		obj := name
		if gvr == npGVR {
			obj = name + "-workers"
		}
		var got *unstructured.Unstructured
		env.Eventually(t, time.Minute, "delivered "+gvr.Resource+" "+obj, func(ctx context.Context) error {
			var err error
			got, err = hosts[h.Status.HostingCluster].Resource(gvr).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, obj, metav1.GetOptions{})
			return err
		})
		for k := range got.GetAnnotations() {
			for _, d := range dropped {
				if strings.HasSuffix(d, k) {
					t.Fatalf("%s %s on %s carries %s", gvr.Resource, obj, h.Status.HostingCluster, k)
				}
			}
		}
	}
	_ = ctx
	return "Delivered=True, dropped: " + strings.Join(dropped, ", ")
}

// maxLengthName: the longest name the API allows with the default hosting
// namespace is delivered and imported, and every name derived from it is a
// valid object name.
func maxLengthName(t *testing.T) string {
	ctx := context.Background()
	name := "max-" + strings.Repeat("x", 50)
	createHCD(t, hcd(hostileNS, name))
	h, _ := awaitCondition(t, hostileNS, name, v1alpha1.ConditionImported, metav1.ConditionTrue, v1alpha1.ReasonImported)
	names := []string{h.Status.ManifestWork, delivery.CopyName(hostileNS, name, h.UID, delivery.KindSecret, "pull-secret"),
		hosting.ExportedKubeconfigName(hostileNS, name), hosting.AdminKubeconfigName(name), v1alpha1.DefaultHostingNamespace + "-" + name}
	for _, n := range names {
		if len(n) > 253 {
			t.Fatalf("generated name %s is %d characters", n, len(n))
		}
	}
	if cp := v1alpha1.DefaultHostingNamespace + "-" + name; len(cp) > 63 {
		t.Fatalf("control-plane namespace %s is %d characters", cp, len(cp))
	}
	if _, err := hosts[h.Status.HostingCluster].Resource(scGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, names[1], metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("Imported=True; longest derived names: work %d, copy %d, control-plane namespace %d characters",
		len(names[0]), len(names[1]), len(names[4]))
}

// importedLabels creates an HCD with the given metadata labels (and team,
// which the default --imported-cluster-labels drops too) and waits until it is imported, the Imported message
// naming every dropped key; the ManagedCluster carries none of them.
func importedLabels(t *testing.T, name string, labels map[string]string) string {
	ctx := context.Background()
	u := hcd(hostileNS, name)
	all := map[string]string{"team": "a"}
	var keys []string
	for k, v := range labels {
		all[k] = v
		keys = append(keys, k)
	}
	u.SetLabels(all)
	createHCD(t, u)
	_, c := awaitCondition(t, hostileNS, name, v1alpha1.ConditionImported, metav1.ConditionTrue, v1alpha1.ReasonImported, keys...)
	mc := &clusterv1.ManagedCluster{}
	if err := hubc.Get(ctx, types.NamespacedName{Name: name}, mc); err != nil {
		t.Fatal(err)
	}
	if _, ok := mc.Labels["team"]; ok {
		t.Fatalf("ManagedCluster %s carries team, which the default --imported-cluster-labels (none) does not allow: %v", name, mc.Labels)
	}
	for k := range labels {
		if mc.Labels[k] == hostileMark {
			t.Fatalf("ManagedCluster %s carries %s=%s", name, k, hostileMark)
		}
	}
	return "Imported=True: " + excerpt(c.Message, "labels not copied")
}

// namespaceKept: an HCD named like an existing hub namespace that is not a
// cluster namespace is not imported: no ManagedCluster of that name, and
// the namespace is not made a cluster namespace.
func namespaceKept(t *testing.T, name string) string {
	ctx := context.Background()
	createHCD(t, hcd(hostileNS, name))
	_, c := awaitCondition(t, hostileNS, name, v1alpha1.ConditionImported, metav1.ConditionFalse, v1alpha1.ReasonImportFailed,
		"namespace "+name+" exists on the hub and is not a cluster namespace")
	if err := hubc.Get(ctx, types.NamespacedName{Name: name}, &clusterv1.ManagedCluster{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ManagedCluster %s: %v", name, err)
	}
	ns := &corev1.Namespace{}
	if err := hubc.Get(ctx, types.NamespacedName{Name: name}, ns); err != nil {
		t.Fatal(err)
	}
	if l, ok := ns.Labels[clusterv1.ClusterNameLabelKey]; ok {
		t.Fatalf("namespace %s labelled %s=%s", name, clusterv1.ClusterNameLabelKey, l)
	}
	return "Imported=False ImportFailed: " + excerpt(c.Message, "namespace") + "; no ManagedCluster " + name
}

// addOnConfigElsewhere points a management cluster's ManagedClusterAddOn at
// a HostingConfig in a tenant namespace that references a tenant Secret:
// the hub ignores it (the agent runs on the defaults and says why), the
// Secret reaches neither the ManifestWorks nor the management cluster, and
// its hostingNamespaces are not honoured.
func addOnConfigElsewhere(t *testing.T, cluster string) string {
	ctx := context.Background()
	marker := "hostile-marker-7c2e91"
	if err := hubc.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hostileNS, Name: "evil-creds"},
		StringData: map[string]string{"credentials": marker}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	evil := hostingConfig(hostileNS, "evil", map[string]any{
		"agentImage":        "evil.example.com/agent:v1",
		"hostingNamespaces": []any{"evil-ns"},
		"install": map[string]any{"oidcStorage": map[string]any{"bucket": "evil-bucket", "region": "us-east-1",
			"credentialsSecret": map[string]any{"name": "evil-creds"}}},
	})
	if err := hubc.Create(ctx, evil); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: addon.Name}}
	patch := fmt.Sprintf(`{"spec":{"configs":[{"group":%q,"resource":"hostingconfigs","namespace":%q,"name":"evil"}]}}`, v1alpha1.GroupVersion.Group, hostileNS)
	if err := hubc.Patch(ctx, mca, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := hubc.Patch(context.Background(), mca, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"configs":null}}`))); err != nil {
			t.Error(err)
		}
		waitAddOnSettled(t, cluster)
	})
	var problem string
	env.Eventually(t, 2*time.Minute, "the agent on "+cluster+" reports the HostingConfig ignored", func(ctx context.Context) error {
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(mca), mca); err != nil {
			return err
		}
		if key, ok := hostmodel.HostingConfigKey(mca); !ok || key.Namespace != hostileNS {
			return fmt.Errorf("configReferences %+v", mca.Status.ConfigReferences)
		}
		for _, c := range mca.Status.Conditions {
			if strings.Contains(c.Message, "HostingConfig "+hostileNS+"/evil is ignored") {
				problem = c.Type + "=" + string(c.Status) + " " + c.Reason
				return nil
			}
		}
		return fmt.Errorf("no condition names the ignored HostingConfig: %+v", mca.Status.Conditions)
	})
	// Neither the ManifestWorks of the cluster nor any Secret or workload
	// on it holds the tenant's Secret or the HostingConfig's image.
	var works workv1.ManifestWorkList
	if err := hubc.List(ctx, &works, client.InNamespace(cluster)); err != nil {
		t.Fatal(err)
	}
	for _, w := range works.Items {
		for _, m := range w.Spec.Workload.Manifests {
			raw := string(m.Raw)
			if strings.Contains(raw, base64.StdEncoding.EncodeToString([]byte(marker))) || strings.Contains(raw, marker) || strings.Contains(raw, "evil.example.com") {
				t.Fatalf("ManifestWork %s/%s carries the tenant HostingConfig's Secret or image", w.Namespace, w.Name)
			}
		}
	}
	list, err := hosts[cluster].Resource(scGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		data, _, _ := unstructured.NestedStringMap(s.Object, "data")
		for _, v := range data {
			if b, _ := base64.StdEncoding.DecodeString(v); strings.Contains(string(b), marker) {
				t.Fatalf("Secret %s/%s on %s holds the tenant's Secret", s.GetNamespace(), s.GetName(), cluster)
			}
		}
	}
	// Its hostingNamespaces are not honoured either.
	res := unscheduled(t, hcd(hostileNS, "evil-ns-probe", pinTo(cluster), withNS("evil-ns")), v1alpha1.ReasonHostingNamespaceNotAllowed,
		"hosting namespace evil-ns is not allowed by the default HostingConfig (allows clusters)")
	return "ignored: MCA " + problem + "; nothing of it on " + cluster + "; probe " + strings.SplitN(res, ":", 2)[0]
}

// waitAddOnSettled waits until the cluster's agent runs with the
// HostingConfig its ManagedClusterAddOn resolves and is Available.
func waitAddOnSettled(t *testing.T, cluster string) {
	env.Eventually(t, 2*time.Minute, cluster+"'s agent back on the default HostingConfig", func(ctx context.Context) error {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: cluster, Name: addon.Name}, mca); err != nil {
			return err
		}
		key, ok := hostmodel.HostingConfigKey(mca)
		if !ok || key.Namespace != "hcp-fleet" {
			return fmt.Errorf("config %v", key)
		}
		if want, ok := desiredHostingConfigApplied(mca); !ok {
			return fmt.Errorf("want hash %s applied, %+v", want, meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionHostingConfigApplied))
		}
		return nil
	})
}

// deleteAllHCDs deletes every HCD in ns and waits until they are gone.
func deleteAllHCDs(t *testing.T, ns string) {
	ctx := context.Background()
	var list v1alpha1.HostedClusterDeploymentList
	if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Error(err)
		return
	}
	for i := range list.Items {
		if err := hubc.Delete(ctx, &list.Items[i]); client.IgnoreNotFound(err) != nil {
			t.Error(err)
		}
	}
	env.Eventually(t, 3*time.Minute, "HostedClusterDeployments in "+ns+" gone", func(ctx context.Context) error {
		if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d left, e.g. %s", len(list.Items), list.Items[0].Name)
		}
		return nil
	})
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// panicsIn returns the lines of the log from offset on that report a
// panic (controller-runtime recovers a reconciler's panic and logs it).
func panicsIn(path string, offset int64) (lines int, panics []string) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		lines++
		if l := sc.Text(); strings.Contains(l, "Observed a panic") || strings.HasPrefix(l, "panic:") {
			panics = append(panics, l)
		}
	}
	return lines, panics
}

var tableOnce sync.Once

// writeHostileTable logs the table and writes it to $HCPFLEET_HOSTILE_TABLE:
// one block per row (status, name; input, expected, result), then the
// invariants checked after all rows.
func writeHostileTable(t *testing.T, rows []hostileRow, results, invariants []string) {
	var b strings.Builder
	failed, gaps := 0, 0
	status := make([]string, len(rows))
	for i, r := range results {
		switch {
		case r == "" || strings.HasPrefix(r, "FAILED"):
			failed++
			status[i] = "FAILED"
		case rows[i].gap != "":
			gaps++
			status[i] = "KNOWN GAP"
		default:
			status[i] = "ok"
		}
	}
	fmt.Fprintf(&b, "Hostile-input catalogue (TestHostileInputs, pkg/hosting/hub; docs/security.md): %d inputs: %d as expected, %d known gap(s), %d failed\n",
		len(rows), len(rows)-failed-gaps, gaps, failed)
	for i, r := range rows {
		res := results[i]
		if res == "" {
			res = "not run"
		}
		fmt.Fprintf(&b, "\n%2d  %-9s  %s\n", i+1, status[i], r.name)
		fmt.Fprintf(&b, "      input:    %s\n      expected: %s\n      result:   %s\n", r.input, r.expect, res)
		if r.gap != "" {
			fmt.Fprintf(&b, "      gap:      %s\n", r.gap)
		}
	}
	fmt.Fprintf(&b, "\nAfter all rows:\n")
	for _, inv := range invariants {
		fmt.Fprintf(&b, "  %s\n", inv)
	}
	t.Log("\n" + b.String())
	if path := os.Getenv(HostileTableEnv); path != "" {
		tableOnce.Do(func() {
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Errorf("writing the table: %v", err)
			}
		})
	}
}
