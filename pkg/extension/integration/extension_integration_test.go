//go:build integration

package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	extensionagent "github.com/hcp-fleet/hcp-fleet/pkg/extension/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// The tests share one fleet with one management cluster. Hosted clusters
// whose name starts with "guest-" get a real kube-apiserver (the extension's
// hosted-cluster phases reach it); the others only an endpoint, so that six
// hosted clusters for the rolling rollout cost no API servers.
// guestTeardownTimeout is the agent's --extension-guest-teardown-timeout
// here: short, so that a test can wait past it (2 minutes by default).
const guestTeardownTimeout = 10 * time.Second

var (
	env  *fleettest.Env
	hubc client.Client
	mgmt client.Client
)

type someGuests struct{ real hcpfleet.GuestControlPlanes }

func (g someGuests) Ensure(ctx context.Context, hc *hyperv1.HostedCluster) (hypershiftsim.ControlPlane, error) {
	if strings.HasPrefix(hc.Name, "guest-") {
		return g.real.Ensure(ctx, hc)
	}
	return hypershiftsim.EndpointOnly{}.Ensure(ctx, hc)
}

func (g someGuests) Remove(ctx context.Context, hc *hyperv1.HostedCluster) error {
	return g.real.Remove(ctx, hc)
}

func TestMain(m *testing.M) {
	fleettest.MainWithFleet(m, 1, func(f *localfleet.Fleet) hcpfleet.Options {
		return hcpfleet.Options{HyperShift: hypershiftsim.Options{ControlPlanes: someGuests{hcpfleet.GuestControlPlanes{Fleet: f}}},
			// TestTeardownWaitsForReachableGuest waits past this bound.
			AgentArgs: func(string) []string {
				return []string{"--extension-guest-teardown-timeout=" + guestTeardownTimeout.String()}
			}}
	}, func(e *fleettest.Env) {
		env = e
		var err error
		cfg := rest.CopyConfig(e.Fleet.Hub.Config())
		cfg.QPS, cfg.Burst = 50, 100 // the rolling test watches the works closely
		if hubc, err = client.New(cfg, client.Options{Scheme: hub.Scheme}); err != nil {
			panic(err)
		}
		if mgmt, err = client.New(e.Fleet.Managed[0].Config(), client.Options{}); err != nil {
			panic(err)
		}
		ctx := context.Background()
		if err := hcpfleet.EnableOnAll(ctx, e.Fleet); err != nil {
			panic(err)
		}
		// The agent available, the HyperShift operator installed, capacity
		// reported: the management cluster can take hosted clusters.
		if err := hcpfleet.WaitHostsReady(ctx, e.Fleet, hubc, os.Stdout, 3*time.Minute); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
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

// createHCD creates a HostedClusterDeployment labelled for the extensions.
func createHCD(t *testing.T, namespace, name string) {
	t.Helper()
	hc := fleettest.HostedCluster(v1alpha1.DefaultHostingNamespace, name).Object["spec"].(map[string]any)
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"placement": "hosts", "hostedCluster": map[string]any{"spec": hc}}}}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind(v1alpha1.HostedClusterDeploymentKind)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(map[string]string{"extensions": "yes"})
	if err := hubc.Create(context.Background(), u); err != nil {
		t.Fatal(err)
	}
}

func waitAvailable(t *testing.T, namespace, name string) *v1alpha1.HostedClusterDeployment {
	t.Helper()
	h := &v1alpha1.HostedClusterDeployment{}
	env.Eventually(t, 3*time.Minute, "HCD "+name+" available", func(ctx context.Context) error {
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, h); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(h.Status.Conditions, v1alpha1.ConditionAvailable) {
			return fmt.Errorf("not available: %v", h.Status.Conditions)
		}
		return nil
	})
	return h
}

func obj(doc string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		panic(doc + ": " + err.Error())
	}
	return map[string]any{"object": m}
}

func phase(name, class string, objects ...map[string]any) map[string]any {
	p := map[string]any{"name": name, "objects": toAny(objects)}
	if class != "" {
		p["class"] = class
	}
	return p
}

func toAny(ms []map[string]any) []any {
	out := make([]any, 0, len(ms))
	for _, m := range ms {
		out = append(out, m)
	}
	return out
}

// applyExtension server-side applies a HostedClusterExtension as the admin.
func applyExtension(t *testing.T, namespace, name string, spec map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind(v1alpha1.HostedClusterExtensionKind)
	u.SetNamespace(namespace)
	u.SetName(name)
	if err := hubc.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("test"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
}

func getExtension(ctx context.Context, namespace, name string) (*v1alpha1.HostedClusterExtension, error) {
	e := &v1alpha1.HostedClusterExtension{}
	return e, hubc.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, e)
}

// waitHostedCluster waits until the extension's status for hcd, at the
// extension's current generation and revision, satisfies check.
func waitHostedCluster(t *testing.T, namespace, name, hcd string, timeout time.Duration, what string,
	check func(s v1alpha1.ExtensionHostedClusterStatus) error) v1alpha1.ExtensionHostedClusterStatus {
	t.Helper()
	var got v1alpha1.ExtensionHostedClusterStatus
	env.Eventually(t, timeout, what, func(ctx context.Context) error {
		e, err := getExtension(ctx, namespace, name)
		if err != nil {
			return err
		}
		if e.Status.ObservedGeneration != e.Generation {
			return fmt.Errorf("status of generation %d, want %d", e.Status.ObservedGeneration, e.Generation)
		}
		for _, s := range e.Status.HostedClusters {
			if s.Name == hcd {
				if s.Revision != e.Status.Revision || s.ObservedRevision != e.Status.Revision {
					return fmt.Errorf("%s at revision %d/%d, want %d", hcd, s.Revision, s.ObservedRevision, e.Status.Revision)
				}
				got = s
				return check(s)
			}
		}
		return fmt.Errorf("no status for %s yet: %+v", hcd, e.Status)
	})
	return got
}

func stateIs(state v1alpha1.ExtensionState) func(s v1alpha1.ExtensionHostedClusterStatus) error {
	return func(s v1alpha1.ExtensionHostedClusterStatus) error {
		if s.State != state {
			return fmt.Errorf("state %s (phase %s, failure %+v), want %s", s.State, s.CurrentPhase, s.Failure, state)
		}
		return nil
	}
}

// guestClient reaches the hosted cluster's API server from outside, as its
// admin would: through the HostedCluster's admin kubeconfig (the external
// address). service-network-admin-kubeconfig points at the kube-apiserver
// Service, which only the control-plane namespace's pods (the connector)
// resolve.
func guestClient(t *testing.T, hostedCluster string) client.Client {
	t.Helper()
	s := &corev1.Secret{}
	if err := mgmt.Get(context.Background(), types.NamespacedName{Namespace: v1alpha1.DefaultHostingNamespace, Name: hostedCluster + "-admin-kubeconfig"}, s); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[hosting.KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func exists(ctx context.Context, c client.Client, apiVersion, kind, namespace, name string) (bool, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, u)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

const (
	guestNamespace = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"audit"}}`
	guestRole      = `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"audit-reader"},"rules":[{"apiGroups":[""],"resources":["events"],"verbs":["get"]}]}`
	guestConfig    = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"audit-config","namespace":"audit"},"data":{"endpoint":"https://audit.example.com","want":"x","have":"x"}}`
	guestConfig2   = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"audit-config-2","namespace":"audit"},"data":{"endpoint":"https://audit.example.com","want":"x","have":"x"}}`
	cpConfig       = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"audit-operator","labels":{"app":"audit"}},"data":{"level":"info"}}`
)

func cpDeployment(replicas int) string {
	return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"audit-operator","labels":{"app":"audit"}},
		"spec":{"replicas":%d,"selector":{"matchLabels":{"app":"audit"}},"template":{"metadata":{"labels":{"app":"audit"}},
		"spec":{"containers":[{"name":"operator","image":"example.com/audit-operator:v1"}]}}}}`, replicas)
}

// markAvailable reports a Deployment available as the Deployment controller
// and the kubelets would, which the local fleet does not run for it.
func markAvailable(t *testing.T, namespace, name string) {
	t.Helper()
	ctx := context.Background()
	d := &unstructured.Unstructured{}
	d.SetAPIVersion("apps/v1")
	d.SetKind("Deployment")
	if err := mgmt.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, d); err != nil {
		t.Fatal(err)
	}
	status := map[string]any{"observedGeneration": d.GetGeneration(), "replicas": int64(1), "updatedReplicas": int64(1),
		"readyReplicas": int64(1), "availableReplicas": int64(1), "conditions": []any{map[string]any{
			"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability.",
			"lastUpdateTime": time.Now().UTC().Format(time.RFC3339), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	patch, _ := json.Marshal(map[string]any{"status": status})
	if err := mgmt.Status().Patch(ctx, d, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// probes: the Deployment by condition and CEL (the API server's optional
// syntax), the guest ConfigMaps by fieldsEqual and CEL.
var probes = []any{
	map[string]any{"selector": map[string]any{"kind": map[string]any{"group": "apps", "kind": "Deployment"}}, "probes": []any{
		map[string]any{"condition": map[string]any{"type": "Available", "status": "True"}},
		map[string]any{"cel": map[string]any{"rule": "self.status.?availableReplicas.orValue(0) >= self.spec.replicas", "message": "the audit operator has too few available replicas"}},
	}},
	map[string]any{"selector": map[string]any{"kind": map[string]any{"group": "", "kind": "ConfigMap"}, "selector": map[string]any{"matchExpressions": []any{
		map[string]any{"key": "app", "operator": "DoesNotExist"}}}}, "probes": []any{
		map[string]any{"fieldsEqual": map[string]any{"fieldA": ".data.want", "fieldB": ".data.have"}},
		map[string]any{"cel": map[string]any{"rule": "self.data.endpoint.startsWith('https://')", "message": "the endpoint is not https"}},
	}},
}

// TestExtensionOnRealGuest: three phases (guest RBAC, a Deployment next to
// the control plane, guest configuration) on a hosted cluster with a real
// API server. The middle phase first fails its probes: the hub shows the
// probe's message and the third phase is not in the guest while the first
// is (the order); fixing it completes the rollout. A new revision's dropped
// object is deleted; hostile objects and a foreign object are refused;
// deleting the extension removes everything on both sides.
func TestExtensionOnRealGuest(t *testing.T) {
	ctx := context.Background()
	started := time.Now()
	ns := "ext-guest"
	tenant(t, ns)
	createHCD(t, ns, "guest-a")
	h := waitAvailable(t, ns, "guest-a")
	cpNS := extension.ControlPlaneNamespace(v1alpha1.DefaultHostingNamespace, "guest-a")
	guest := guestClient(t, "guest-a")
	// A ConfigMap HyperShift (or anyone else) owns in the control-plane
	// namespace, which an extension must not take over.
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "foreign", Namespace: cpNS}, Data: map[string]string{"owner": "hypershift"}}
	if err := mgmt.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	spec := func(config string) map[string]any {
		return map[string]any{
			"hostedClusterSelector": map[string]any{"matchLabels": map[string]any{"extensions": "yes"}},
			"availabilityProbes":    probes,
			"phases": []any{
				phase("guest-rbac", "hosted-cluster", obj(guestNamespace), obj(guestRole)),
				phase("operator", "", obj(cpDeployment(1)), obj(cpConfig)),
				phase("guest-config", "hosted-cluster", obj(config)),
			},
		}
	}
	applyExtension(t, ns, "audit", spec(guestConfig))

	// The operator never becomes available: the rollout stops there.
	failed := waitHostedCluster(t, ns, "audit", "guest-a", 2*time.Minute, "the rollout stops at the operator phase", stateIs(v1alpha1.ExtensionStateFailed))
	if failed.CurrentPhase != "operator" || failed.Failure == nil || failed.Failure.Reason != extension.ReasonProbeFailure ||
		!strings.Contains(failed.Failure.Message, "condition Available=True") || !strings.Contains(failed.Failure.Object, "Deployment.apps") {
		t.Fatalf("failure %+v at phase %s", failed.Failure, failed.CurrentPhase)
	}
	e, _ := getExtension(ctx, ns, "audit")
	if c := meta.FindStatusCondition(e.Status.Conditions, "Degraded"); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "phase operator") {
		t.Fatalf("Degraded %+v", c)
	}
	for _, o := range [][4]string{{"v1", "Namespace", "", "audit"}, {"rbac.authorization.k8s.io/v1", "ClusterRole", "", "audit-reader"}} {
		if ok, err := exists(ctx, guest, o[0], o[1], o[2], o[3]); !ok {
			t.Fatalf("phase guest-rbac's %s %s not in the hosted cluster: %v", o[1], o[3], err)
		}
	}
	if ok, err := exists(ctx, guest, "v1", "ConfigMap", "audit", "audit-config"); ok || err != nil {
		t.Fatalf("phase guest-config applied before phase operator is available (%v)", err)
	}
	if ok, _ := exists(ctx, mgmt, "apps/v1", "Deployment", cpNS, "audit-operator"); !ok {
		t.Fatal("the operator Deployment is not in the control-plane namespace")
	}
	fmt.Printf("failing middle phase reported after %s\n", time.Since(started).Round(100*time.Millisecond))

	// Fixed: the operator becomes available. The local fleet runs neither
	// the Deployment controller nor pods of this image, so the test reports
	// what they would (the stand-in for the missing kubelet).
	markAvailable(t, cpNS, "audit-operator")
	waitHostedCluster(t, ns, "audit", "guest-a", 2*time.Minute, "the fixed rollout completes", stateIs(v1alpha1.ExtensionStateAvailable))
	if ok, err := exists(ctx, guest, "v1", "ConfigMap", "audit", "audit-config"); !ok {
		t.Fatalf("phase guest-config not applied after the fix: %v", err)
	}
	fmt.Printf("three phases available after %s\n", time.Since(started).Round(100*time.Millisecond))
	// The hosted-cluster phases ran in the connector, which reached the guest
	// through service-network-admin-kubeconfig as written: the in-cluster
	// Service address.
	checkConnector(t, cpNS, true)

	// A new revision replaces the guest ConfigMap: the old one goes.
	applyExtension(t, ns, "audit", spec(guestConfig2))
	waitHostedCluster(t, ns, "audit", "guest-a", 2*time.Minute, "the new revision is available", stateIs(v1alpha1.ExtensionStateAvailable))
	if ok, err := exists(ctx, guest, "v1", "ConfigMap", "audit", "audit-config"); ok || err != nil {
		t.Fatalf("the dropped ConfigMap is still in the hosted cluster (%v)", err)
	}
	if ok, _ := exists(ctx, guest, "v1", "ConfigMap", "audit", "audit-config-2"); !ok {
		t.Fatal("the new ConfigMap is not in the hosted cluster")
	}

	// Hostile: a Secret next to the control plane is never delivered (the
	// hub refuses the spec); a foreign object is never taken over.
	hostile := spec(guestConfig2)
	hostile["phases"] = append(hostile["phases"].([]any), phase("steal", "", obj(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"service-network-admin-kubeconfig"}}`)))
	applyExtension(t, ns, "audit", hostile)
	env.Eventually(t, time.Minute, "the hub refuses the hostile spec", func(ctx context.Context) error {
		e, err := getExtension(ctx, ns, "audit")
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(e.Status.Conditions, "Available")
		if c == nil || c.ObservedGeneration != e.Generation || c.Reason != "InvalidSpec" || !strings.Contains(c.Message, "Secret service-network-admin-kubeconfig: may not be written on the management cluster") {
			return fmt.Errorf("Available %+v", c)
		}
		for _, s := range e.Status.HostedClusters {
			if s.Revision == e.Generation {
				return fmt.Errorf("revision %d delivered", e.Generation)
			}
		}
		return nil
	})
	collide := spec(guestConfig2)
	collide["phases"] = append(collide["phases"].([]any), phase("collide", "", obj(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"foreign"},"data":{"owner":"extension"}}`)))
	applyExtension(t, ns, "audit", collide)
	refused := waitHostedCluster(t, ns, "audit", "guest-a", 2*time.Minute, "the foreign object is refused", stateIs(v1alpha1.ExtensionStateFailed))
	if refused.Failure == nil || refused.Failure.Reason != extension.ReasonObjectRefused || !strings.Contains(refused.Failure.Message, "collision protection") {
		t.Fatalf("failure %+v", refused.Failure)
	}
	if err := mgmt.Get(ctx, client.ObjectKeyFromObject(foreign), foreign); err != nil || foreign.Data["owner"] != "hypershift" {
		t.Fatalf("the foreign ConfigMap was touched: %v %v", foreign.Data, err)
	}

	// Removal: both sides cleaned, the work and the extension gone.
	e, _ = getExtension(ctx, ns, "audit")
	if err := hubc.Delete(ctx, e); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 2*time.Minute, "the extension is removed", func(ctx context.Context) error {
		if _, err := getExtension(ctx, ns, "audit"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("extension still there: %v", err)
		}
		return nil
	})
	for _, o := range [][4]string{{"v1", "Namespace", "", "audit"}, {"rbac.authorization.k8s.io/v1", "ClusterRole", "", "audit-reader"},
		{"v1", "ConfigMap", "audit", "audit-config-2"}} {
		env.Eventually(t, time.Minute, o[1]+" "+o[3]+" gone from the hosted cluster", func(ctx context.Context) error {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion(o[0])
			u.SetKind(o[1])
			err := guest.Get(ctx, types.NamespacedName{Namespace: o[2], Name: o[3]}, u)
			if apierrors.IsNotFound(err) || err == nil && u.GetDeletionTimestamp() != nil {
				return nil // a Namespace takes its time to finalize
			}
			return fmt.Errorf("still there (%v)", err)
		})
	}
	for _, kind := range []string{"Deployment", "ConfigMap"} {
		apiVersion := map[string]string{"Deployment": "apps/v1", "ConfigMap": "v1"}[kind]
		if ok, err := exists(ctx, mgmt, apiVersion, kind, cpNS, "audit-operator"); ok || err != nil {
			t.Fatalf("%s audit-operator left in the control-plane namespace (%v)", kind, err)
		}
	}
	// The namespace's last release is gone: so is the connector.
	checkConnector(t, cpNS, false)
	var works workv1.ManifestWorkList
	if err := hubc.List(ctx, &works, client.InNamespace(h.Status.HostingCluster), client.MatchingLabels{extension.LabelExtension: "audit"}); err != nil || len(works.Items) != 0 {
		t.Fatalf("works left: %d (%v)", len(works.Items), err)
	}
	fmt.Printf("TestExtensionOnRealGuest took %s\n", time.Since(started).Round(100*time.Millisecond))
}

// TestRollingRollout: six hosted clusters, maxUnavailable 2. A revision
// whose Deployment never becomes available stops after the first two; the
// fixed revision rolls over all six with never more than two not
// available; a hosted cluster created later gets the extension once it is
// available.
func TestRollingRollout(t *testing.T) {
	ctx := context.Background()
	started := time.Now()
	ns := "ext-rolling"
	tenant(t, ns)
	var names []string
	for i := range 6 {
		names = append(names, fmt.Sprintf("roll-%d", i))
		createHCD(t, ns, names[i])
	}
	for _, n := range names {
		waitAvailable(t, ns, n)
	}
	fmt.Printf("six hosted clusters available after %s\n", time.Since(started).Round(100*time.Millisecond))
	// The first revision's Deployment never becomes available (the local
	// fleet runs no pods); the fixed revision drops it.
	spec := func(withDeployment bool) map[string]any {
		objects := []map[string]any{obj(cpConfig)}
		if withDeployment {
			objects = append(objects, obj(cpDeployment(1)))
		}
		return map[string]any{
			"hostedClusterSelector": map[string]any{"matchLabels": map[string]any{"extensions": "yes"}},
			"strategy":              map[string]any{"type": "RollingUpgrade", "rollingUpgrade": map[string]any{"maxUnavailable": int64(2)}},
			"availabilityProbes":    probes,
			"phases":                []any{phase("operator", "", objects...)},
		}
	}
	// Watch the works all along: never more than two at the current
	// revision without an available report.
	var mu sync.Mutex
	var worst int
	var worstAt string
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			e, err := getExtension(ctx, ns, "roll")
			if err != nil {
				continue
			}
			var works workv1.ManifestWorkList
			if err := hubc.List(ctx, &works, client.MatchingLabels{extension.LabelExtension: "roll", hosting.LabelHCDNamespace: ns}); err != nil {
				continue
			}
			unavailable := 0
			for i := range works.Items {
				w := &works.Items[i]
				if w.Annotations["hcpfleet.io/extension-revision"] != fmt.Sprint(e.Status.Revision) {
					continue
				}
				values := map[string]string{}
				for _, m := range w.Status.ResourceStatus.Manifests {
					for _, v := range m.StatusFeedbacks.Values {
						if v.Value.String != nil {
							values[v.Name] = *v.Value.String
						}
					}
				}
				if values[extension.KeyObservedRevision] != fmt.Sprint(e.Status.Revision) || values[extension.KeyState] != "Available" {
					unavailable++
				}
			}
			mu.Lock()
			if unavailable > worst {
				worst, worstAt = unavailable, fmt.Sprintf("revision %d", e.Status.Revision)
			}
			mu.Unlock()
		}
	}()
	applyExtension(t, ns, "roll", spec(true))
	env.Eventually(t, 2*time.Minute, "two hosted clusters fail the rollout", func(ctx context.Context) error {
		e, err := getExtension(ctx, ns, "roll")
		if err != nil {
			return err
		}
		if e.Status.ObservedGeneration != e.Generation || e.Status.Failed != 2 {
			return fmt.Errorf("failed %d, updated %d", e.Status.Failed, e.Status.Updated)
		}
		return nil
	})
	// The hub has seen both failures at this generation (the positive
	// signal); it must not have gone further.
	e, _ := getExtension(ctx, ns, "roll")
	if e.Status.Updated != 2 || e.Status.Selected != 6 {
		t.Fatalf("after the failures: selected %d updated %d", e.Status.Selected, e.Status.Updated)
	}
	applyExtension(t, ns, "roll", spec(false))
	env.Eventually(t, 3*time.Minute, "the fixed revision is available everywhere", func(ctx context.Context) error {
		e, err := getExtension(ctx, ns, "roll")
		if err != nil {
			return err
		}
		if e.Status.ObservedGeneration != e.Generation || e.Status.Available != 6 {
			return fmt.Errorf("available %d of %d (updated %d)", e.Status.Available, e.Status.Selected, e.Status.Updated)
		}
		return nil
	})
	fmt.Printf("rolled over six hosted clusters after %s\n", time.Since(started).Round(100*time.Millisecond))
	// The Deployment the fixed revision dropped is gone where it was.
	if ok, err := exists(ctx, mgmt, "apps/v1", "Deployment", extension.ControlPlaneNamespace(v1alpha1.DefaultHostingNamespace, "roll-0"), "audit-operator"); ok || err != nil {
		t.Fatalf("the dropped Deployment is still in roll-0's control-plane namespace (%v)", err)
	}

	// A hosted cluster created later gets it once available.
	createHCD(t, ns, "roll-late")
	late := waitAvailable(t, ns, "roll-late")
	waitHostedCluster(t, ns, "roll", "roll-late", 2*time.Minute, "the late hosted cluster gets the extension", stateIs(v1alpha1.ExtensionStateAvailable))
	var w workv1.ManifestWork
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: late.Status.HostingCluster, Name: extension.WorkName(ns, "roll", "roll-late")}, &w); err != nil {
		t.Fatal(err)
	}
	if avail := meta.FindStatusCondition(late.Status.Conditions, v1alpha1.ConditionAvailable); w.CreationTimestamp.Before(&avail.LastTransitionTime) {
		t.Fatalf("delivered at %s, before the hosted cluster was available at %s", w.CreationTimestamp, avail.LastTransitionTime)
	}
	close(stop)
	<-done
	mu.Lock()
	defer mu.Unlock()
	if worst > 2 {
		t.Fatalf("%d hosted clusters without an available revision at once (%s), maxUnavailable 2", worst, worstAt)
	}
	if worst < 2 {
		t.Fatalf("never more than %d in progress: the rollout was not observed", worst)
	}
	fmt.Printf("TestRollingRollout took %s (at most %d in progress)\n", time.Since(started).Round(100*time.Millisecond), worst)

	checkRevisions(t, ns, checkPaused(t, ns, spec(false)))
}

// TestDisableAddOnWithActiveExtension disables the add-on on the management
// cluster while a hosted cluster there runs an extension: the agent's
// cleanup refuses with ExtensionsActive, naming the release, and keeps the
// engine's grants; once the extension is deleted, the teardown finishes,
// the extension's ManifestWork goes from the hub and the engine's
// RoleBindings from the management cluster. It removes the other tests'
// extensions and disables the add-on, so it is the package's last test.
func TestDisableAddOnWithActiveExtension(t *testing.T) {
	ctx := context.Background()
	// The other tests' extensions go first, so that this one's is the
	// only active one.
	var others v1alpha1.HostedClusterExtensionList
	if err := hubc.List(ctx, &others); err != nil {
		t.Fatal(err)
	}
	for i := range others.Items {
		if err := hubc.Delete(ctx, &others.Items[i]); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	env.Eventually(t, 3*time.Minute, "the other extensions removed", func(ctx context.Context) error {
		var left v1alpha1.HostedClusterExtensionList
		if err := hubc.List(ctx, &left); err != nil {
			return err
		}
		if len(left.Items) > 0 {
			return fmt.Errorf("%d extensions left, e.g. %s/%s", len(left.Items), left.Items[0].Namespace, left.Items[0].Name)
		}
		return nil
	})
	ns := "ext-disable"
	tenant(t, ns)
	createHCD(t, ns, "keep")
	hcd := waitAvailable(t, ns, "keep")
	host := hcd.Status.HostingCluster
	cpNS := extension.ControlPlaneNamespace(v1alpha1.DefaultHostingNamespace, "keep")
	applyExtension(t, ns, "pinned", map[string]any{
		"hostedClusterSelector": map[string]any{"matchLabels": map[string]any{"extensions": "yes"}},
		"phases":                []any{phase("config", "", obj(cpConfig))},
	})
	waitHostedCluster(t, ns, "pinned", "keep", 2*time.Minute, "the extension available", stateIs(v1alpha1.ExtensionStateAvailable))

	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, hcpfleet.HostLabel)
	if err := hubc.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: host}}, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	cleanup := func(ctx context.Context) (*metav1.Condition, error) {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: host, Name: addon.Name}, mca); err != nil {
			return nil, err
		}
		return meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionCleanup), nil
	}
	env.Eventually(t, 2*time.Minute, "the cleanup refuses while the extension is active", func(ctx context.Context) error {
		c, err := cleanup(ctx)
		if err != nil {
			return err
		}
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != extensionagent.ReasonExtensionsActive ||
			!strings.Contains(c.Message, cpNS+"/"+extension.ReleaseName("pinned")) {
			return fmt.Errorf("%s: %+v", addon.ConditionCleanup, c)
		}
		return nil
	})
	// The refusal is the positive signal that the cleanup ran: the engine's
	// grant and the release are still there.
	rb := &rbacv1.RoleBinding{}
	if err := mgmt.Get(ctx, types.NamespacedName{Namespace: cpNS, Name: addon.AgentExtensionNamespaceRole}, rb); err != nil {
		t.Fatalf("the engine's RoleBinding in %s went while the extension was active: %v", cpNS, err)
	}

	// The admin removes the extension: the cleanup goes on.
	if err := hubc.Delete(ctx, &v1alpha1.HostedClusterExtension{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pinned"}}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 3*time.Minute, "the teardown finished and the engine's grants are gone", func(ctx context.Context) error {
		var works workv1.ManifestWorkList
		if err := hubc.List(ctx, &works, client.InNamespace(host), client.HasLabels{extension.LabelExtension}); err != nil {
			return err
		}
		if len(works.Items) > 0 {
			return fmt.Errorf("extension ManifestWork %s still on the hub", works.Items[0].Name)
		}
		if ok, err := exists(ctx, mgmt, "v1", "ConfigMap", cpNS, "audit-operator"); ok || err != nil {
			return fmt.Errorf("the extension's ConfigMap is still in %s (%v)", cpNS, err)
		}
		var bindings rbacv1.RoleBindingList
		if err := mgmt.List(ctx, &bindings, client.MatchingLabels{kubeutil.BindLabel: kubeutil.BindLabelValue}); err != nil {
			return err
		}
		for _, b := range bindings.Items {
			if b.Name == addon.AgentExtensionNamespaceRole {
				return fmt.Errorf("RoleBinding %s/%s of the engine still there", b.Namespace, b.Name)
			}
		}
		// The agent's cleanup moved on to the operator, which waits for the
		// hosted cluster still running there.
		c, err := cleanup(ctx)
		if err != nil {
			return err
		}
		if c == nil || c.Reason == extensionagent.ReasonExtensionsActive {
			return fmt.Errorf("%s: %+v", addon.ConditionCleanup, c)
		}
		return nil
	})
}
