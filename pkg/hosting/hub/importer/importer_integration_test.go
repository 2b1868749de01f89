//go:build integration

package importer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/operator"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/exportaccess"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hubindex"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/importer"
)

var (
	env   *fleettest.Env
	fleet *localfleet.Fleet
)

// stopHubOnce stops the hub process once the agent runs: its scheduler and
// delivery would otherwise own the HostedClusterDeployments' status that
// these tests play the delivery's part in (the agent keeps running without
// it; the add-on's registration and RBAC are in place by then).
var stopHubOnce sync.Once

func TestMain(m *testing.M) {
	// A short resync so a rotated kubeconfig reaches the hub within the
	// test's patience.
	opts := hcpfleet.Options{AgentArgs: func(string) []string { return []string{"--kubeconfig-export-resync=2s"} }}
	fleettest.MainWith(m, 1, opts, func(e *fleettest.Env) { env, fleet = e, e.Fleet })
}

var (
	hcGVR  = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	hcdGVR = v1alpha1.GroupVersion.WithResource("hostedclusterdeployments")
)

const host = "cluster-1"

// startImporter runs the import controller with its own manager against
// the fleet's hub (the hub process is stopped), with the hub's default
// label policy, and the hub's grant of the agent's exports
// (exportaccess), without which the agent may not export.
func startImporter(t *testing.T) { startImporterWith(t, importer.Options{}) }

// startImporterWith is startImporter with opts (their Labels are the hub's
// default policy's).
func startImporterWith(t *testing.T, opts importer.Options) {
	t.Helper()
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(clusterv1.Install(scheme))
	utilruntime.Must(addonv1alpha1.Install(scheme))
	// hubindex.AddIndexes indexes ManifestWorks too (binding recovery).
	utilruntime.Must(workv1.Install(scheme))
	mgr, err := ctrl.NewManager(fleet.Hub.Config(), ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := importer.ParseLabelPolicy("*")
	if err != nil {
		t.Fatal(err)
	}
	opts.Labels = policy
	if err := importer.Setup(mgr, opts); err != nil {
		t.Fatal(err)
	}
	if err := hubindex.AddIndexes(mgr); err != nil {
		t.Fatal(err)
	}
	if err := exportaccess.Setup(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("import manager: %v", err)
		}
	})
}

type clients struct {
	hub, spoke       dynamic.Interface
	hubKube, spokeKC kubernetes.Interface
	clusters         clusterclient.Interface
}

func newClients() clients {
	return clients{
		hub: dynamic.NewForConfigOrDie(fleet.Hub.Config()), spoke: dynamic.NewForConfigOrDie(fleet.Cluster(host).Config()),
		hubKube: kubernetes.NewForConfigOrDie(fleet.Hub.Config()), spokeKC: kubernetes.NewForConfigOrDie(fleet.Cluster(host).Config()),
		clusters: clusterclient.NewForConfigOrDie(fleet.Hub.Config()),
	}
}

// waitForStandIn enables the add-on and waits until the agent installed the
// operator and the HyperShift stand-in runs in its place.
func waitForStandIn(t *testing.T, c clients) {
	t.Helper()
	if err := hcpfleet.EnableOnAll(context.Background(), fleet); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 4*time.Minute, "HyperShift stand-in running on "+host, func(ctx context.Context) error {
		_, err := c.spokeKC.CoreV1().ConfigMaps(operator.Namespace).Get(ctx, operator.SupportedVersionsConfigMap, metav1.GetOptions{})
		return err
	})
	stopHubOnce.Do(func() { env.Product.StopHub(0) })
}

func ensureNamespace(t *testing.T, kc kubernetes.Interface, name string) {
	t.Helper()
	_, err := kc.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// deliverHostedCluster plays the delivery's part on the management cluster:
// a HostedCluster carrying the hcd labels.
func deliverHostedCluster(t *testing.T, c clients, hcdNamespace, hcdName string) {
	t.Helper()
	ensureNamespace(t, c.spokeKC, "clusters")
	hc := fleettest.HostedCluster("clusters", hcdName)
	hc.SetLabels(map[string]string{hosting.LabelHCDNamespace: hcdNamespace, hosting.LabelHCDName: hcdName})
	if _, err := c.spoke.Resource(hcGVR).Namespace("clusters").Create(context.Background(), hc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

const hcdTemplate = `
apiVersion: hcpfleet.io/v1alpha1
kind: HostedClusterDeployment
metadata:
  name: NAME
  namespace: NAMESPACE
  labels:
    env: dev
    team: a
spec:
  hostingCluster: cluster-1
  hostedCluster:
    spec:
      release:
        image: quay.io/openshift-release-dev/ocp-release:4.18.5-multi
      pullSecret:
        name: pull-secret
      dns:
        baseDomain: example.com
      networking:
        networkType: OVNKubernetes
        clusterNetwork:
        - cidr: 10.132.0.0/14
        serviceNetwork:
        - cidr: 172.31.0.0/16
      platform:
        type: None
      etcd:
        managementType: Managed
        managed:
          storage:
            type: PersistentVolume
      services:
      - service: APIServer
        servicePublishingStrategy: {type: LoadBalancer}
      - service: OAuthServer
        servicePublishingStrategy: {type: Route}
      - service: Konnectivity
        servicePublishingStrategy: {type: Route}
      - service: Ignition
        servicePublishingStrategy: {type: Route}
`

// createHCD creates a HostedClusterDeployment from the template, with
// labels instead of the template's when not nil.
func createHCD(t *testing.T, c clients, namespace, name string, labels map[string]string) {
	t.Helper()
	ensureNamespace(t, c.hubKube, namespace)
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(strings.NewReplacer("NAMESPACE", namespace, "NAME", name).Replace(hcdTemplate)), &obj.Object); err != nil {
		t.Fatal(err)
	}
	if labels != nil {
		obj.SetLabels(labels)
	}
	if _, err := c.hub.Resource(hcdGVR).Namespace(namespace).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// markBound plays the scheduler's part: status.hostingCluster, applied
// under its field manager, with what the binding carries of the import's
// (delivery.BindingStatus): Imported=False WaitingForAvailable.
func markBound(t *testing.T, c clients, namespace, name string) {
	t.Helper()
	hcd, err := getHCD(context.Background(), c, namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	waiting := hcdstatus.WaitingForAvailable(host)
	applyStatus(t, c, namespace, name, hcdstatus.FieldManager, map[string]any{
		"hostingCluster": host,
		"conditions": []any{map[string]any{"type": waiting.Type, "status": string(waiting.Status), "reason": waiting.Reason,
			"message": waiting.Message, "observedGeneration": hcd.Generation, "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}},
	})
}

// markAvailable plays the delivery controller's part: status.hostingCluster
// and Available=True, applied under its own field manager.
func markAvailable(t *testing.T, c clients, namespace, name string) {
	t.Helper()
	applyStatus(t, c, namespace, name, "test-delivery", map[string]any{
		"hostingCluster": host,
		"conditions": []any{map[string]any{"type": v1alpha1.ConditionAvailable, "status": "True", "reason": v1alpha1.ReasonAsExpected,
			"message": "The hosted control plane is available", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}},
	})
}

// applyStatus server-side applies status fields of a
// HostedClusterDeployment as fieldManager.
func applyStatus(t *testing.T, c clients, namespace, name, fieldManager string, status map[string]any) {
	t.Helper()
	data, _ := json.Marshal(map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "HostedClusterDeployment",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"status":   status,
	})
	_, err := c.hub.Resource(hcdGVR).Namespace(namespace).Patch(context.Background(), name, types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: fieldManager, Force: ptr.To(true)}, "status")
	if err != nil {
		t.Fatal(err)
	}
}

func getHCD(ctx context.Context, c clients, namespace, name string) (*v1alpha1.HostedClusterDeployment, error) {
	u, err := c.hub.Resource(hcdGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	hcd := &v1alpha1.HostedClusterDeployment{}
	return hcd, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, hcd)
}

func TestExportAndImport(t *testing.T) {
	ctx := context.Background()
	c := newClients()
	startImporter(t)
	waitForStandIn(t, c)
	const ns, name = "team-a", "import-1"

	// The agent exports the kubeconfig of a delivered, available
	// HostedCluster whose HostedClusterDeployment is bound to its cluster.
	// A tenant's HostedClusterDeployment asks for a cluster set and to be
	// a management cluster (see the import below).
	const (
		clusterSetLabel = "cluster.open-cluster-management.io/clusterset"
		mgmtLabel       = "hcpfleet.io/management-cluster"
		prefixedLabel   = "example.com/cost-center"
	)
	createHCD(t, c, ns, name, map[string]string{
		"env": "dev", "team": "blue",
		clusterSetLabel: "admins", mgmtLabel: "true", prefixedLabel: "cc-4711",
	})
	importReconciles := fleettest.Reconciles(t, "hcd-import")
	markBound(t, c, ns, name)
	deliverHostedCluster(t, c, ns, name)
	var source []byte
	env.Eventually(t, time.Minute, "HostedCluster available with a kubeconfig", func(ctx context.Context) error {
		s, err := c.spokeKC.CoreV1().Secrets("clusters").Get(ctx, name+"-admin-kubeconfig", metav1.GetOptions{})
		if err != nil {
			return err
		}
		source = s.Data["kubeconfig"]
		return nil
	})
	exportedName := hosting.ExportedKubeconfigName(ns, name)
	var exported *corev1.Secret
	env.Eventually(t, time.Minute, "kubeconfig exported to the hub", func(ctx context.Context) error {
		var err error
		if exported, err = c.hubKube.CoreV1().Secrets(host).Get(ctx, exportedName, metav1.GetOptions{}); err != nil {
			return err
		}
		if string(exported.Data["kubeconfig"]) != string(source) {
			return fmt.Errorf("exported kubeconfig differs from the source")
		}
		return nil
	})
	wantLabels := map[string]string{hosting.LabelHCDNamespace: ns, hosting.LabelHCDName: name, hosting.LabelAdminKubeconfig: "true"}
	for k, v := range wantLabels {
		if exported.Labels[k] != v {
			t.Errorf("exported Secret label %s=%q, want %q", k, exported.Labels[k], v)
		}
	}
	// HostedCluster changes that leave the kubeconfig alone write nothing.
	rv := exported.ResourceVersion
	reconciles := fleettest.Reconciles(t, "kubeconfig-export")
	if _, err := c.spoke.Resource(hcGVR).Namespace("clusters").Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"touch":"1"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Settled(t, "kubeconfig-export", reconciles)
	if s, err := c.hubKube.CoreV1().Secrets(host).Get(ctx, exportedName, metav1.GetOptions{}); err != nil || s.ResourceVersion != rv {
		t.Errorf("exported Secret rewritten without a change (resourceVersion %s → %v, err %v)", rv, s.ResourceVersion, err)
	}

	// Before the hosted cluster is Available, the import waits. The
	// ManagedCluster will get neither the cluster set nor the management
	// role (reserved), nor a prefixed key the default policy does not
	// allow, only the unprefixed labels.
	env.Eventually(t, 30*time.Second, "Imported=False WaitingForAvailable", func(ctx context.Context) error {
		hcd, err := getHCD(ctx, c, ns, name)
		if err != nil {
			return err
		}
		if cond := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionImported); cond == nil || cond.Reason != v1alpha1.ReasonWaitingForAvailable {
			return fmt.Errorf("Imported = %+v", cond)
		}
		return nil
	})
	if _, err := c.clusters.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ManagedCluster before Available: %v, want NotFound", err)
	}
	// The binding wrote it; the import, having seen the binding, the
	// HostedCluster's export and the exported Secret, wrote nothing of its
	// own (no write per hosted cluster while it waits).
	env.Settled(t, "hcd-import", importReconciles)
	assertImportWroteNoStatus(t, c, ns, name)

	markAvailable(t, c, ns, name)
	var hcd *v1alpha1.HostedClusterDeployment
	var imported *metav1.Condition
	env.Eventually(t, time.Minute, "Imported=True", func(ctx context.Context) error {
		var err error
		if hcd, err = getHCD(ctx, c, ns, name); err != nil {
			return err
		}
		if imported = meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionImported); imported == nil || imported.Status != metav1.ConditionTrue || imported.Reason != v1alpha1.ReasonImported {
			return fmt.Errorf("Imported = %+v", imported)
		}
		return nil
	})
	// The tenant is told which keys were left out, never their values.
	for _, want := range []string{"reserved: " + clusterSetLabel + ", " + mgmtLabel, "--imported-cluster-labels: " + prefixedLabel} {
		if !strings.Contains(imported.Message, want) {
			t.Errorf("Imported message %q does not name %q", imported.Message, want)
		}
	}
	for _, value := range []string{"admins", "cc-4711", "blue"} {
		if strings.Contains(imported.Message, value) {
			t.Errorf("Imported message %q names the label value %q", imported.Message, value)
		}
	}
	if hcd.Status.ManagedCluster != name {
		t.Errorf("status.managedCluster = %q, want %q", hcd.Status.ManagedCluster, name)
	}
	if ks := hcd.Status.KubeconfigSecret; ks == nil || ks.Name != name+"-admin-kubeconfig" || ks.Key != "kubeconfig" {
		t.Errorf("status.kubeconfigSecret = %+v", ks)
	}
	if !meta.IsStatusConditionTrue(hcd.Status.Conditions, v1alpha1.ConditionAvailable) || hcd.Status.HostingCluster != host {
		t.Errorf("the delivery's status fields were disturbed: hostingCluster=%q conditions=%+v", hcd.Status.HostingCluster, hcd.Status.Conditions)
	}
	if !hasFinalizer(hcd.Finalizers, importer.Finalizer) {
		t.Errorf("finalizers %v, want %s", hcd.Finalizers, importer.Finalizer)
	}
	assertImportOwnsOnlyItsFields(t, c, ns, name)

	mc, err := c.clusters.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"import.open-cluster-management.io/klusterlet-deploy-mode": "Hosted",
		"import.open-cluster-management.io/hosting-cluster-name":   host,
		"open-cluster-management/created-via":                      "hypershift",
	} {
		if mc.Annotations[k] != v {
			t.Errorf("ManagedCluster annotation %s=%q, want %q", k, mc.Annotations[k], v)
		}
	}
	for k, v := range map[string]string{"env": "dev", "team": "blue", hosting.LabelHCDNamespace: ns, hosting.LabelHCDName: name} {
		if mc.Labels[k] != v {
			t.Errorf("ManagedCluster label %s=%q, want %q", k, mc.Labels[k], v)
		}
	}
	// (OCM may put a cluster without a set into its default set; the
	// tenant's value must not be there.)
	for k, tenant := range map[string]string{clusterSetLabel: "admins", mgmtLabel: "true", prefixedLabel: "cc-4711"} {
		if v, ok := mc.Labels[k]; ok && v == tenant {
			t.Errorf("ManagedCluster carries the tenant's label %s=%q", k, v)
		}
	}
	if !mc.Spec.HubAcceptsClient {
		t.Error("ManagedCluster hubAcceptsClient is false")
	}

	mirror, err := c.hubKube.CoreV1().Secrets(ns).Get(ctx, hosting.AdminKubeconfigName(name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(mirror.Data["kubeconfig"]) != string(source) {
		t.Error("mirrored kubeconfig differs from the hosted cluster's")
	}
	if len(mirror.OwnerReferences) != 1 || mirror.OwnerReferences[0].Kind != "HostedClusterDeployment" || mirror.OwnerReferences[0].UID != hcd.UID {
		t.Errorf("mirror ownerReferences = %+v, want the HostedClusterDeployment", mirror.OwnerReferences)
	}

	// A rotated kubeconfig travels: management cluster → hub cluster
	// namespace → HCD namespace.
	rotated := []byte(strings.Replace(string(source), "admin", "admin-rotated", 1))
	patch, _ := json.Marshal(map[string]any{"data": map[string][]byte{"kubeconfig": rotated}})
	if _, err := c.spokeKC.CoreV1().Secrets("clusters").Patch(ctx, name+"-admin-kubeconfig", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 30*time.Second, "rotated kubeconfig mirrored", func(ctx context.Context) error {
		m, err := c.hubKube.CoreV1().Secrets(ns).Get(ctx, hosting.AdminKubeconfigName(name), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if string(m.Data["kubeconfig"]) != string(rotated) {
			return fmt.Errorf("mirror still has the old kubeconfig")
		}
		return nil
	})

	// The HostedCluster going takes its exported kubeconfig with it (the
	// agent deletes what it exported while the grant lasts).
	if err := c.spoke.Resource(hcGVR).Namespace("clusters").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, time.Minute, "exported kubeconfig deleted with the HostedCluster", func(ctx context.Context) error {
		if _, err := c.hubKube.CoreV1().Secrets(host).Get(ctx, exportedName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("exported Secret: %v", err)
		}
		return nil
	})

	// Deleting the HostedClusterDeployment removes the ManagedCluster, the
	// mirror, and the agent's grant.
	if err := c.hub.Resource(hcdGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 2*time.Minute, "ManagedCluster, mirror, grant and HCD gone", func(ctx context.Context) error {
		if _, err := c.clusters.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ManagedCluster: %v", err)
		}
		if _, err := c.hubKube.CoreV1().Secrets(ns).Get(ctx, hosting.AdminKubeconfigName(name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("mirrored Secret: %v", err)
		}
		if _, err := c.hub.Resource(hcdGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("HostedClusterDeployment: %v", err)
		}
		if _, err := c.hubKube.RbacV1().Roles(host).Get(ctx, exportaccess.RoleName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the agent's export grant: %v", err)
		}
		return nil
	})
}

// assertImportOwnsOnlyItsFields checks the managed fields: the import's
// field manager owns managedCluster, kubeconfigSecret and the Imported
// condition, and nothing of the delivery's.
func assertImportOwnsOnlyItsFields(t *testing.T, c clients, ns, name string) {
	t.Helper()
	u, err := c.hub.Resource(hcdGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range u.GetManagedFields() {
		if mf.Manager != importer.FieldManager || mf.Subresource != "status" {
			continue
		}
		owned := string(mf.FieldsV1.Raw)
		for _, want := range []string{`"f:managedCluster"`, `"f:kubeconfigSecret"`, `k:{\"type\":\"Imported\"}`} {
			if !strings.Contains(owned, want) {
				t.Errorf("%s does not own %s: %s", importer.FieldManager, want, owned)
			}
		}
		for _, notWant := range []string{`"f:hostingCluster"`, `k:{\"type\":\"Available\"}`} {
			if strings.Contains(owned, notWant) {
				t.Errorf("%s owns %s: %s", importer.FieldManager, notWant, owned)
			}
		}
		return
	}
	t.Errorf("no status fields managed by %s", importer.FieldManager)
}

// assertImportWroteNoStatus checks the managed fields: the import's field
// manager holds nothing of the status (so it has not written the Imported
// condition either).
func assertImportWroteNoStatus(t *testing.T, c clients, ns, name string) {
	t.Helper()
	u, err := c.hub.Resource(hcdGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range u.GetManagedFields() {
		if mf.Subresource != "status" {
			continue
		}
		owned := string(mf.FieldsV1.Raw)
		if mf.Manager == importer.FieldManager {
			t.Errorf("%s wrote status while the import waits: %s", importer.FieldManager, owned)
		}
		found = found || (mf.Manager == hcdstatus.FieldManager && strings.Contains(owned, `k:{\"type\":\"Imported\"}`))
	}
	if !found {
		t.Errorf("%s does not hold the Imported condition the binding wrote: %+v", hcdstatus.FieldManager, u.GetManagedFields())
	}
}

func hasFinalizer(finalizers []string, f string) bool {
	for _, x := range finalizers {
		if x == f {
			return true
		}
	}
	return false
}

func TestNameConflictIsReported(t *testing.T) {
	ctx := context.Background()
	c := newClients()
	startImporter(t)
	waitForStandIn(t, c)
	const ns, name = "team-b", "taken"
	// Someone else's ManagedCluster of the same name.
	other := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"owner": "someone-else"}},
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: false}}
	if _, err := c.clusters.ClusterV1().ManagedClusters().Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.clusters.ClusterV1().ManagedClusters().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	createHCD(t, c, ns, name, nil)
	markAvailable(t, c, ns, name)
	env.Eventually(t, time.Minute, "Imported=False ImportFailed", func(ctx context.Context) error {
		hcd, err := getHCD(ctx, c, ns, name)
		if err != nil {
			return err
		}
		cond := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionImported)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != v1alpha1.ReasonImportFailed ||
			!strings.Contains(cond.Message, "ManagedCluster "+name+" already exists") {
			return fmt.Errorf("Imported = %+v", cond)
		}
		if hcd.Status.ManagedCluster != "" {
			return fmt.Errorf("status.managedCluster = %q for a cluster that is not ours", hcd.Status.ManagedCluster)
		}
		return nil
	})
	mc, err := c.clusters.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mc.Spec.HubAcceptsClient || mc.Annotations[importer.AnnotationKlusterletDeployMode] != "" || mc.Labels[hosting.LabelHCDName] != "" || mc.Labels["owner"] != "someone-else" {
		t.Errorf("the other ManagedCluster was touched: labels %v annotations %v hubAcceptsClient %v", mc.Labels, mc.Annotations, mc.Spec.HubAcceptsClient)
	}
	// Deleting the HCD leaves the other ManagedCluster alone.
	if err := c.hub.Resource(hcdGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, time.Minute, "HCD gone", func(ctx context.Context) error {
		if _, err := c.hub.Resource(hcdGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("HostedClusterDeployment: %v", err)
		}
		return nil
	})
	if _, err := c.clusters.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Errorf("the other ManagedCluster after the HCD went: %v", err)
	}
}

// TestNamespaceOfTheNameIsNotTaken: an HCD named like a hub namespace that
// is not a cluster namespace (here another team's) is not imported, since
// OCM would take that namespace as the ManagedCluster's; once the namespace
// is a cluster namespace of that name (OCM keeps them after a cluster goes),
// the import goes ahead.
func TestNamespaceOfTheNameIsNotTaken(t *testing.T) {
	ctx := context.Background()
	c := newClients()
	startImporter(t)
	waitForStandIn(t, c)
	const ns, name = "team-c", "team-d"
	ensureNamespace(t, c.hubKube, name)
	createHCD(t, c, ns, name, nil)
	markAvailable(t, c, ns, name)
	env.Eventually(t, time.Minute, "Imported=False ImportFailed", func(ctx context.Context) error {
		hcd, err := getHCD(ctx, c, ns, name)
		if err != nil {
			return err
		}
		cond := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionImported)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != v1alpha1.ReasonImportFailed ||
			!strings.Contains(cond.Message, "namespace "+name+" exists on the hub and is not a cluster namespace") {
			return fmt.Errorf("Imported = %+v", cond)
		}
		return nil
	})
	if _, err := c.clusters.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ManagedCluster %s: %v", name, err)
	}
	// A cluster namespace of that name left by an earlier ManagedCluster
	// does not hold the import back.
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, clusterv1.ClusterNameLabelKey, name)
	if _, err := c.hubKube.CoreV1().Namespaces().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// Namespaces are not watched (the import rechecks every minute): touch
	// the HCD.
	if _, err := c.hub.Resource(hcdGVR).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"touch":"1"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 2*time.Minute, "ManagedCluster "+name+" created", func(ctx context.Context) error {
		_, err := c.clusters.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{})
		return err
	})
	if err := c.hub.Resource(hcdGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 2*time.Minute, "HCD and ManagedCluster gone", func(ctx context.Context) error {
		if _, err := c.hub.Resource(hcdGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("HostedClusterDeployment: %v", err)
		}
		if _, err := c.clusters.ClusterV1().ManagedClusters().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ManagedCluster: %v", err)
		}
		return nil
	})
}
