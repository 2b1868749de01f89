//go:build integration

package kubectlhcpfleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/kubectlhcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// The fleet: cluster-1 and cluster-2 run the add-on, cluster-2 with a
// HostingConfig override of capacity 2; cluster-3 has no add-on. Placements
// in namespace team select all three (hosted clusters hcp-fleet imported
// left out); team-unbound has no ManagedClusterSetBinding.
const (
	team      = "team"
	unbound   = "team-unbound"
	smallHost = "cluster-2"
	noAddOn   = "cluster-3"
)

var (
	env   *fleettest.Env
	admin client.Client
	// hubSettings are the local fleet hub's (its defaults).
	hubSettings = kubectlhcpfleet.HubSettings{Strategy: scheduling.StrategySpread,
		ConfigNamespaces: hostmodel.ConfigNamespaces{Hub: addon.DefaultHubNamespace}}
)

func TestMain(m *testing.M) {
	fleettest.Main(m, 3, func(e *fleettest.Env) {
		env = e
		var err error
		if admin, err = client.New(e.Fleet.Hub.Config(), client.Options{Scheme: kubectlhcpfleet.Scheme}); err != nil {
			panic(err)
		}
		if err := setUp(context.Background()); err != nil {
			panic(fmt.Sprintf("setting up the fleet: %v", err))
		}
	})
}

func setUp(ctx context.Context) error {
	for _, name := range []string{"cluster-1", smallHost} {
		patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, hcpfleet.HostLabel))
		mc := &unstructured.Unstructured{}
		mc.SetAPIVersion("cluster.open-cluster-management.io/v1")
		mc.SetKind("ManagedCluster")
		mc.SetName(name)
		if err := admin.Patch(ctx, mc, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return err
		}
	}
	small := &v1alpha1.HostingConfig{ObjectMeta: metav1.ObjectMeta{Namespace: addon.DefaultHubNamespace, Name: "small"},
		Spec: v1alpha1.HostingConfigSpec{Capacity: &v1alpha1.CapacityConfig{MaxHostedClusters: 2, AboveThreshold: 2}}}
	objs := []client.Object{small,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unbound}},
		&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: "global", Namespace: team}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: team}, StringData: map[string]string{".dockerconfigjson": `{"auths":{}}`}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: unbound}, StringData: map[string]string{".dockerconfigjson": `{"auths":{}}`}},
		placement(team, "all", ""), placement(team, "packed", scheduling.StrategyBinPack), placement(unbound, "all", ""),
		// The tenant ClusterRole, bound to the group team in namespace team
		// only, as manifests/hub/50-tenant-clusterrole.yaml says.
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "hcp-fleet-tenant"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hcp-fleet:tenant"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: team}}},
	}
	for _, o := range objs {
		if err := admin.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%T %s: %w", o, o.GetName(), err)
		}
	}
	// cluster-2 takes the override once its add-on exists.
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		lastErr = admin.Get(ctx, types.NamespacedName{Namespace: smallHost, Name: addon.Name}, mca)
		if lastErr != nil {
			return false, nil //nolint:nilerr // not there yet: poll again; lastErr says why at the deadline
		}
		mca.Spec.Configs = []addonv1alpha1.AddOnConfig{{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "hostingconfigs"},
			ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: addon.DefaultHubNamespace, Name: "small"}}}
		lastErr = admin.Update(ctx, mca)
		return lastErr == nil, nil
	})
	if err != nil {
		return fmt.Errorf("override on %s: %w", smallHost, lastErr)
	}
	return waitHostsSettled(ctx, 3*time.Minute)
}

func placement(namespace, name string, strategy scheduling.Strategy) *clusterv1beta1.Placement {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: clusterv1beta1.PlacementSpec{
		ClusterSets: []string{"global"},
		Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: hosting.LabelHCDName, Operator: metav1.LabelSelectorOpDoesNotExist}}}}}},
	}}
	if strategy != "" {
		p.Annotations = map[string]string{scheduling.StrategyAnnotation: string(strategy)}
	}
	return p
}

// waitHostsSettled waits until the add-on on cluster-1 and cluster-2 is
// available with the operator installed and supported versions reported,
// and cluster-2 runs with the override: the inputs the tests expect.
func waitHostsSettled(ctx context.Context, timeout time.Duration) error {
	var lastErr error
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		lastErr = hostsSettled(ctx)
		return lastErr == nil, nil
	}); err != nil {
		return lastErr
	}
	return nil
}

func hostsSettled(ctx context.Context) error {
	in := scheduling.Inputs{Client: admin, ConfigNamespaces: hubSettings.ConfigNamespaces,
		Bound: func(context.Context, string) ([]v1alpha1.HostedClusterDeployment, error) { return nil, nil }}
	for _, name := range []string{"cluster-1", smallHost} {
		c, err := in.Candidate(ctx, name)
		if err != nil {
			return err
		}
		if !c.ClusterAvailable || !c.AddOnAvailable || !c.OperatorInstalled || c.SupportedVersions == nil {
			return fmt.Errorf("%s not ready: %+v", name, c)
		}
		if want := map[bool]int32{true: 2, false: v1alpha1.DefaultMaxHostedClusters}[name == smallHost]; c.Capacity != want {
			return fmt.Errorf("%s capacity %d, want %d", name, c.Capacity, want)
		}
	}
	return nil
}

// newHCD is a HostedClusterDeployment with one node pool.
func newHCD(namespace, name string, mutate func(spec map[string]any)) *unstructured.Unstructured {
	hc := fleettest.HostedCluster(v1alpha1.DefaultHostingNamespace, name).Object["spec"].(map[string]any)
	spec := map[string]any{
		"hostedCluster": map[string]any{"spec": hc},
		"nodePools": []any{map[string]any{"name": name + "-workers", "spec": map[string]any{
			"clusterName": name, "replicas": int64(1), "release": hc["release"],
			"management": map[string]any{"upgradeType": "Replace"}, "platform": map[string]any{"type": "None"},
		}}},
	}
	mutate(spec)
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("HostedClusterDeployment")
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func placed(p string) func(map[string]any) { return func(s map[string]any) { s["placement"] = p } }
func pinned(c string) func(map[string]any) { return func(s map[string]any) { s["hostingCluster"] = c } }

// hostedClusterSpec edits spec.hostedCluster.spec.
func hostedClusterSpec(edit func(hc map[string]any)) func(map[string]any) {
	return func(s map[string]any) {
		s["placement"] = "all"
		edit(s["hostedCluster"].(map[string]any)["spec"].(map[string]any))
	}
}

func scheduled(ctx context.Context, namespace, name string) (*v1alpha1.HostedClusterDeployment, *metav1.Condition, error) {
	h := &v1alpha1.HostedClusterDeployment{}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, h); err != nil {
		return nil, nil, err
	}
	c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionScheduled)
	if c == nil {
		return h, nil, errors.New("no Scheduled condition yet")
	}
	return h, c, nil
}

// hostedBefore reads "it hosted N of M before" from a Scheduled message.
var hostedBefore = regexp.MustCompile(`\(strategy (\w+); it hosted (\d+) of (\d+) before\)`)

// TestExplainAgreesWithTheScheduler creates HostedClusterDeployments one at a
// time, each after the fleet settled, and checks that explain, run on the
// hub's API as an admin, decides what the hub decided: the same cluster
// (with the load, capacity and strategy the hub's Scheduled message names)
// or the same Scheduled=False reason and message.
func TestExplainAgreesWithTheScheduler(t *testing.T) {
	ctx := context.Background()
	c, err := kubectlhcpfleet.NewReader(env.Fleet.Hub.Config())
	if err != nil {
		t.Fatal(err)
	}
	release := func(image string) func(map[string]any) {
		return hostedClusterSpec(func(hc map[string]any) { hc["release"] = map[string]any{"image": image} })
	}
	// The team may use AWS (no cluster here offers it, which explain must
	// say), and the whole release repository (no cluster runs 4.10).
	if err := fleettest.SetTenantPolicy(ctx, admin, team, func(s *v1alpha1.TenantPolicySpec) {
		s.Platforms = []v1alpha1.PlatformPolicy{{Type: "None"}, {Type: "AWS"}}
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		namespace, name string
		spec            func(map[string]any)
		// host is the cluster it must be bound to; reason the
		// Scheduled=False reason otherwise.
		host, reason string
	}{
		// Spread: the least utilized after placement, 1/80 over 1/2.
		{team, "spread-1", placed("all"), "cluster-1", ""},
		// BinPack: the most utilized after placement, 1/2 then 2/2.
		{team, "pack-1", placed("packed"), smallHost, ""},
		{team, "pack-2", placed("packed"), smallHost, ""},
		// cluster-2 is full now.
		{team, "pack-3", placed("packed"), "cluster-1", ""},
		{team, "spread-2", placed("all"), "cluster-1", ""},
		{team, "pinned-full", pinned(smallHost), "", v1alpha1.ReasonCapacityExhausted},
		{team, "pinned-no-add-on", pinned(noAddOn), "", v1alpha1.ReasonAddOnNotAvailable},
		{team, "old-release", release("quay.io/openshift-release-dev/ocp-release:4.10.3-x86_64"), "", v1alpha1.ReasonNoSuitableHostingCluster},
		{team, "aws", hostedClusterSpec(func(hc map[string]any) { hc["platform"] = map[string]any{"type": "AWS"} }), "", v1alpha1.ReasonNoSuitableHostingCluster},
		{team, "elsewhere", func(s map[string]any) { s["placement"] = "all"; s["hostingNamespace"] = "elsewhere" }, "", v1alpha1.ReasonHostingNamespaceNotAllowed},
		{unbound, "pinned-unbound", pinned("cluster-1"), "", v1alpha1.ReasonHostingClusterNotAllowed},
		{unbound, "placed-unbound", placed("all"), "", v1alpha1.ReasonNoPlacementDecisions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := waitHostsSettled(ctx, time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := admin.Create(ctx, newHCD(tc.namespace, tc.name, tc.spec)); err != nil {
				t.Fatal(err)
			}
			var last string
			env.Eventually(t, time.Minute, tc.name+": explain agrees with the hub", func(ctx context.Context) error {
				h, cond, err := scheduled(ctx, tc.namespace, tc.name)
				if err != nil {
					return err
				}
				x, err := kubectlhcpfleet.ExplainHCD(ctx, c, hubSettings, tc.namespace, tc.name)
				if err != nil {
					return err
				}
				var b strings.Builder
				if err := kubectlhcpfleet.RenderExplanation(&b, x); err != nil {
					return err
				}
				last = b.String()
				if tc.host != "" {
					return agreesOnBinding(h, cond, x, tc.host)
				}
				return agreesOnNoBinding(h, cond, x, tc.reason)
			})
			t.Logf("kubectl hcpfleet explain hcd %s -n %s:\n%s", tc.name, tc.namespace, last)
		})
	}
}

func agreesOnBinding(h *v1alpha1.HostedClusterDeployment, cond *metav1.Condition, x *kubectlhcpfleet.Explanation, want string) error {
	if h.Status.HostingCluster == "" {
		return fmt.Errorf("not bound yet: %s %s", cond.Reason, cond.Message)
	}
	if h.Status.HostingCluster != want {
		return fmt.Errorf("the hub bound it to %s, the test expects %s (%s)", h.Status.HostingCluster, want, cond.Message)
	}
	if x.Scheduling == nil {
		return fmt.Errorf("explain found no candidates: %s: %s", x.Reason, x.Message)
	}
	d := x.Scheduling.Decision
	if d.Cluster != h.Status.HostingCluster {
		return fmt.Errorf("explain chooses %q, the hub bound it to %s", d.Cluster, h.Status.HostingCluster)
	}
	m := hostedBefore.FindStringSubmatch(cond.Message)
	if m == nil {
		return fmt.Errorf("Scheduled message %q names no load", cond.Message)
	}
	for _, e := range x.Scheduling.Candidates {
		if e.Candidate.Name != d.Cluster {
			continue
		}
		got := fmt.Sprintf("strategy %s, %d of %d", x.Scheduling.Strategy, e.Candidate.Load, e.Candidate.Capacity)
		if hub := fmt.Sprintf("strategy %s, %s of %s", m[1], m[2], m[3]); got != hub {
			return fmt.Errorf("explain: %s; the hub: %s", got, hub)
		}
		if e.Rank != 1 {
			return fmt.Errorf("chosen %s ranked %d", d.Cluster, e.Rank)
		}
	}
	return nil
}

func agreesOnNoBinding(h *v1alpha1.HostedClusterDeployment, cond *metav1.Condition, x *kubectlhcpfleet.Explanation, want string) error {
	if h.Status.HostingCluster != "" {
		return fmt.Errorf("bound to %s, want unschedulable (%s)", h.Status.HostingCluster, want)
	}
	if cond.Status != metav1.ConditionFalse || cond.Reason != want {
		return fmt.Errorf("Scheduled=%s %s, want False %s", cond.Status, cond.Reason, want)
	}
	reason, message := x.Reason, x.Message
	if x.Scheduling != nil {
		if c := x.Scheduling.Decision.Cluster; c != "" {
			return fmt.Errorf("explain chooses %s; the hub found none (%s)", c, cond.Message)
		}
		reason, message = x.Scheduling.Decision.Reason(), x.Scheduling.Decision.Message()
	}
	if reason != cond.Reason || message != cond.Message {
		return fmt.Errorf("explain: %s: %s\nthe hub: %s: %s", reason, message, cond.Reason, cond.Message)
	}
	return nil
}

// run runs kubectl hcpfleet with args against the hub's admin kubeconfig.
func run(ctx context.Context, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := kubectlhcpfleet.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	cmd.SetArgs(append([]string{"--kubeconfig", env.Fleet.Hub.KubeconfigPath}, args...))
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

// TestCommands runs the commands as a fleet admin and as a tenant (the
// ClusterRole hcp-fleet:tenant bound in namespace team, by impersonation).
func TestCommands(t *testing.T) {
	ctx := context.Background()
	// A bound deployment in team, one in team-unbound the tenant must not see.
	for _, u := range []*unstructured.Unstructured{newHCD(team, "cmd-bound", placed("all")), newHCD(unbound, "cmd-hidden", pinned("cluster-1"))} {
		if err := admin.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	env.Eventually(t, time.Minute, "cmd-bound bound", func(ctx context.Context) error {
		h, _, err := scheduled(ctx, team, "cmd-bound")
		if err == nil && h.Status.HostingCluster == "" {
			err = errors.New("not bound")
		}
		return err
	})
	impersonate := []string{"--as", "alice", "--as-group", team}
	tenant := append(slices.Clone(impersonate), "--namespace", team)

	t.Run("admin status", func(t *testing.T) {
		out, err := run(ctx, "status", "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		var s fleetview.Snapshot
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		hosts := map[string]fleetview.Host{}
		for _, h := range s.Hosts {
			hosts[h.Name] = h
		}
		if len(hosts) != 3 || hosts[smallHost].Capacity != 2 || hosts["cluster-1"].AddOn != "Available" || hosts[noAddOn].AddOn != "-" {
			t.Errorf("management clusters %+v", s.Hosts)
		}
		if !hasDeployment(s, unbound, "cmd-hidden") || !hasDeployment(s, team, "cmd-bound") || s.Namespace != "" {
			t.Errorf("an admin sees all namespaces' deployments: %+v", s.Deployments)
		}
		text, err := run(ctx, "status")
		if err != nil || !strings.Contains(text, "MANAGEMENT CLUSTERS (3)") || !strings.Contains(text, "team-unbound/cmd-hidden") {
			t.Errorf("status: %v\n%s", err, text)
		}
	})

	t.Run("admin hosts", func(t *testing.T) {
		out, err := run(ctx, "hosts", smallHost)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Management cluster " + smallHost, "HostingConfig: hcp-fleet/small (this cluster's override",
			" of 2 (load = max(reported ", hosting.ClaimSupportedVersions, "HyperShiftOperatorInstalled"} {
			if !strings.Contains(out, want) {
				t.Errorf("hosts %s lacks %q:\n%s", smallHost, want, out)
			}
		}
		out, err = run(ctx, "hosts", "cluster-1")
		if err != nil || !strings.Contains(out, "HostingConfig: hcp-fleet/default (the ClusterManagementAddOn's default)") || !strings.Contains(out, "team/cmd-bound") {
			t.Errorf("hosts cluster-1: %v\n%s", err, out)
		}
		if _, err := run(ctx, "hosts", "no-such-cluster"); err == nil || !strings.Contains(err.Error(), "ManagedCluster no-such-cluster not found") {
			t.Errorf("unknown cluster: %v", err)
		}
	})

	t.Run("admin explain", func(t *testing.T) {
		out, err := run(ctx, "explain", "hcd", "cmd-bound", "-n", team)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"HostedClusterDeployment team/cmd-bound", "CANDIDATES (3; strategy Spread", "DECISION: cluster-1, where it is bound",
			noAddOn + ": add-on unavailable: the hcp-fleet add-on is not available"} {
			if !strings.Contains(out, want) {
				t.Errorf("explain lacks %q:\n%s", want, out)
			}
		}
		if _, err := run(ctx, "explain", "hcd", "no-such", "-n", team); err == nil || !strings.Contains(err.Error(), "HostedClusterDeployment team/no-such not found") {
			t.Errorf("unknown HCD: %v", err)
		}
	})

	t.Run("tenant status shows its namespace only", func(t *testing.T) {
		// Without -n, all namespaces are forbidden and the kubeconfig's
		// namespace (none: default) is the fallback, forbidden too.
		if out, err := run(ctx, append(slices.Clone(impersonate), "status")...); err == nil ||
			!strings.Contains(err.Error(), "missing permission: you may not list hostedclusterdeployments.hcpfleet.io in namespace default") {
			t.Errorf("tenant status without -n: %v\n%s", err, out)
		}
		out, err := run(ctx, append(slices.Clone(tenant), "status", "-o", "json")...)
		if err != nil {
			t.Fatal(err)
		}
		var s fleetview.Snapshot
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		if len(s.Hosts) != 0 || !strings.Contains(s.HostsHidden, "you may not list managedclusters.cluster.open-cluster-management.io at the cluster scope") {
			t.Errorf("tenant sees management clusters %+v (hidden: %q)", s.Hosts, s.HostsHidden)
		}
		if s.Namespace != team || !hasDeployment(s, team, "cmd-bound") || hasDeployment(s, unbound, "cmd-hidden") {
			t.Errorf("tenant sees namespace %q deployments %+v", s.Namespace, s.Deployments)
		}
		for _, d := range s.Deployments {
			if d.Namespace != team {
				t.Errorf("tenant sees %s/%s", d.Namespace, d.Name)
			}
		}
	})

	t.Run("tenant gets the missing permission named", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"status", "-n", unbound}, "missing permission: you may not list hostedclusterdeployments.hcpfleet.io in namespace team-unbound"},
			{[]string{"explain", "hcd", "cmd-bound"}, "missing permission: you may not get managedclusters.cluster.open-cluster-management.io at the cluster scope"},
			{[]string{"hosts", "cluster-1"}, "missing permission: you may not get managedclusters.cluster.open-cluster-management.io at the cluster scope"},
		} {
			_, err := run(ctx, append(slices.Clone(tenant), tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("tenant %v: error %v, want %q", tc.args, err, tc.want)
			}
		}
		// What the tenant may see of explain: the hub's own summary.
		_, err := run(ctx, append(slices.Clone(tenant), "explain", "hcd", "cmd-bound")...)
		if err == nil || !strings.Contains(err.Error(), "the hub's Scheduled condition: True Scheduled: scheduled onto management cluster") {
			t.Errorf("tenant explain does not show the hub's condition: %v", err)
		}
	})

	t.Run("a cluster without hcp-fleet", func(t *testing.T) {
		var out bytes.Buffer
		cmd := kubectlhcpfleet.NewCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &out})
		cmd.SetArgs([]string{"--kubeconfig", env.Fleet.Managed[0].KubeconfigPath, "status"})
		err := cmd.ExecuteContext(ctx)
		if err == nil || !strings.Contains(err.Error(), "the hub does not serve hostedclusterdeployments.hcpfleet.io: is hcp-fleet") {
			t.Errorf("status on a management cluster's API server: %v", err)
		}
	})
}

func hasDeployment(s fleetview.Snapshot, namespace, name string) bool {
	for _, d := range s.Deployments {
		if d.Namespace == namespace && d.Name == name {
			return true
		}
	}
	return false
}
