//go:build integration

package feature_test

// These tests run the real agent program (through the local fleet's kubelet
// stand-in, with the agent's own ServiceAccount token and RBAC) on two
// management clusters: cluster-1 starts empty, cluster-2 already has a
// standard CAPI CRD that the platform (here: clusterctl) installed.

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	addonhub "github.com/hcp-fleet/hcp-fleet/pkg/addon/hub"
	bootstrapv1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/bootstrap/v1alpha1"
	controlplanev1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/controlplane/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/feature"
)

var (
	env   *fleettest.Env
	fleet *localfleet.Fleet
)

func TestMain(m *testing.M) {
	fleettest.Main(m, 2, func(e *fleettest.Env) { env, fleet = e, e.Fleet })
}

type clients struct {
	addons   addonclient.Interface
	clusters clusterclient.Interface
	hubDyn   dynamic.Interface
}

func newClients() *clients {
	return &clients{
		addons:   addonclient.NewForConfigOrDie(fleet.Hub.Config()),
		clusters: clusterclient.NewForConfigOrDie(fleet.Hub.Config()),
		hubDyn:   dynamic.NewForConfigOrDie(fleet.Hub.Config()),
	}
}

// spoke is an admin client of a management cluster.
func spoke(t *testing.T, cluster string) client.Client {
	t.Helper()
	c, err := client.New(fleet.Cluster(cluster).Config(), client.Options{Scheme: agent.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *clients) setHost(t *testing.T, cluster string, on bool) {
	t.Helper()
	v := "null"
	if on {
		v = `"true"`
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, hcpfleet.HostLabel, v))
	if _, err := c.clusters.ClusterV1().ManagedClusters().Patch(context.Background(), cluster, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// condition waits for a condition on the cluster's ManagedClusterAddOn.
func (c *clients) condition(t *testing.T, cluster, condType string, status metav1.ConditionStatus, reason, msgPart string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	env.Eventually(t, 2*time.Minute, fmt.Sprintf("%s: %s=%s (%s)", cluster, condType, status, reason), func(ctx context.Context) error {
		mca, err := c.addons.AddonV1alpha1().ManagedClusterAddOns(cluster).Get(ctx, addon.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got = meta.FindStatusCondition(mca.Status.Conditions, condType)
		if got == nil || got.Status != status || got.Reason != reason || !strings.Contains(got.Message, msgPart) {
			return fmt.Errorf("condition %+v", got)
		}
		return nil
	})
	return got
}

func crd(t *testing.T, c client.Client, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	out := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(context.Background(), types.NamespacedName{Name: name}, out); err != nil {
		t.Fatalf("CRD %s: %v", name, err)
	}
	return out
}

func absent(t *testing.T, c client.Client, name string) {
	t.Helper()
	err := c.Get(context.Background(), types.NamespacedName{Name: name}, &apiextensionsv1.CustomResourceDefinition{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("CRD %s should not exist: %v", name, err)
	}
}

// ourCRDVersions are the resourceVersions of the CAPI CRDs the agent
// installed on a cluster.
func ourCRDVersions(t *testing.T, c client.Client) map[string]string {
	t.Helper()
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(context.Background(), list, client.MatchingLabels{crds.ManagedByLabel: crds.ManagedByValue}); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, crd := range list.Items {
		if _, ok := crd.Labels[crds.ModeLabel]; ok {
			out[crd.Name] = crd.ResourceVersion
		}
	}
	return out
}

// installForeignCAPI installs clusters.cluster.x-k8s.io as clusterctl would:
// v1beta1 only, clusterctl's labels, its own field manager.
func installForeignCAPI(t *testing.T, c client.Client) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	set, err := crds.Standard(crds.Options{CoreVersion: "v1beta1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range set {
		if crd.Name != "clusters.cluster.x-k8s.io" {
			continue
		}
		crd.Labels = map[string]string{"clusterctl.cluster.x-k8s.io": "", "cluster.x-k8s.io/provider": "cluster-api"}
		crd.Annotations = nil
		crd.ResourceVersion = ""
		if err := c.Create(context.Background(), crd, client.FieldOwner("clusterctl")); err != nil {
			t.Fatal(err)
		}
		if err := crds.WaitEstablished(context.Background(), c, []string{crd.Name}, time.Minute); err != nil {
			t.Fatal(err)
		}
		return crd
	}
	t.Fatal("no clusters.cluster.x-k8s.io in the embedded CRDs")
	return nil
}

// installAssistedService installs the assisted-service and hive CRDs, as
// multicluster engine would, from the pinned types.
func installAssistedService(t *testing.T, cluster string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file)))) // the repository
	testdata := filepath.Join(root, "internal", "assistedtest", "testdata", "crds")
	if _, err := envtest.InstallCRDs(fleet.Cluster(cluster).Config(), envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(testdata, "assisted"), filepath.Join(testdata, "hive")}, ErrorIfPathMissing: true,
	}); err != nil {
		t.Fatal(err)
	}
}

// setConfig makes the cluster's add-on use HostingConfig name (empty: the
// default again).
func (c *clients) setConfig(t *testing.T, cluster, name string) {
	t.Helper()
	patch := []byte(`{"spec":{"configs":null}}`)
	if name != "" {
		patch = []byte(fmt.Sprintf(`{"spec":{"configs":[{"group":"hcpfleet.io","resource":"hostingconfigs","name":%q,"namespace":"hcp-fleet"}]}}`, name))
	}
	if _, err := c.addons.AddonV1alpha1().ManagedClusterAddOns(cluster).Patch(context.Background(), addon.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestCAPIFeature(t *testing.T) {
	ctx := context.Background()
	hub := newClients()
	spoke1, spoke2 := spoke(t, "cluster-1"), spoke(t, "cluster-2")

	// Before the add-on runs there: the platform owns a standard CAPI CRD
	// on cluster-2.
	foreign := installForeignCAPI(t, spoke2)
	foreign = crd(t, spoke2, foreign.Name)
	hub.setHost(t, "cluster-1", true)
	hub.setHost(t, "cluster-2", true)

	t.Run("default HostingConfig on an empty cluster: standard CRDs", func(t *testing.T) {
		c := hub.condition(t, "cluster-1", feature.ConditionTypes, metav1.ConditionTrue, "Standard", "no cluster.x-k8s.io CRDs on the cluster")
		t.Logf("cluster-1: %s", c.Message)
		m := crd(t, spoke1, "machines.cluster.x-k8s.io")
		if m.Labels[crds.ModeLabel] != "standard" || !crds.IsOurs(m) {
			t.Errorf("machines.cluster.x-k8s.io labels %v", m.Labels)
		}
		absent(t, spoke1, "machines.cluster.hypershift.openshift.io")
		// The infrastructure CRDs of the platforms the cluster advertises:
		// Agent and KubeVirt; AWS only with OIDC storage, which the default
		// HostingConfig has not.
		for _, name := range []string{"agentmachines.capi-provider.agent-install.openshift.io", "kubevirtmachinetemplates.infrastructure.cluster.x-k8s.io"} {
			if c := crd(t, spoke1, name); !crds.IsOurs(c) || c.Labels["cluster.x-k8s.io/v1beta1"] == "" {
				t.Errorf("%s labels %v", name, c.Labels)
			}
		}
		absent(t, spoke1, "awsmachinetemplates.infrastructure.cluster.x-k8s.io")
		// No agent provider is enabled by default: its CRDs are not installed.
		hub.condition(t, "cluster-1", feature.ConditionProviders, metav1.ConditionTrue, "Disabled", "spec.agentProviders")
		absent(t, spoke1, "openshiftassistedconfigs.bootstrap.cluster.x-k8s.io")
	})

	t.Run("Auto beside the platform's standard CRDs: private CRDs, theirs untouched", func(t *testing.T) {
		c := hub.condition(t, "cluster-2", feature.ConditionTypes, metav1.ConditionTrue, "Private", "")
		t.Logf("cluster-2: %s", c.Message)
		// The first decision names the platform's CRDs; any later reconcile
		// (a CRD event, say HyperShift's) keeps the private install and says
		// so instead.
		if !strings.Contains(c.Message, "owned by clusterctl (cluster-api) at v1beta1") && !strings.Contains(c.Message, "a private install stays private") {
			t.Errorf("cluster-2 CAPITypes message %q", c.Message)
		}
		m := crd(t, spoke2, "machines.cluster.hypershift.openshift.io")
		if m.Labels[crds.ModeLabel] != "private" || !crds.IsOurs(m) {
			t.Errorf("machines.cluster.hypershift.openshift.io labels %v", m.Labels)
		}
		absent(t, spoke2, "machines.cluster.x-k8s.io")
		// Infrastructure providers in the CAPI family go private too.
		crd(t, spoke2, "kubevirtmachines.infrastructure.cluster.hypershift.openshift.io")
		absent(t, spoke2, "kubevirtmachines.infrastructure.cluster.x-k8s.io")
		if now := crd(t, spoke2, foreign.Name); now.ResourceVersion != foreign.ResourceVersion {
			t.Errorf("the platform's CRD %s was written: resourceVersion %s -> %s", foreign.Name, foreign.ResourceVersion, now.ResourceVersion)
		}
	})

	t.Run("an agent restart writes no CRD", func(t *testing.T) {
		// The agents run in this process, so their metrics are ours to read.
		before := ourCRDVersions(t, spoke1)
		writes0, reconciles0 := metric(t, "hcpfleet_agent_capi_crd_writes_total", ""), metric(t, "controller_runtime_reconcile_total", "capi")
		env.Product.RestartAgent("cluster-1")
		env.Eventually(t, time.Minute, "the restarted agent reconciles CAPI", func(context.Context) error {
			if n := metric(t, "controller_runtime_reconcile_total", "capi"); n <= reconciles0 {
				return fmt.Errorf("%v reconciles", n)
			}
			return nil
		})
		hub.condition(t, "cluster-1", feature.ConditionTypes, metav1.ConditionTrue, "Standard", "")
		if w := metric(t, "hcpfleet_agent_capi_crd_writes_total", ""); w != writes0 {
			t.Errorf("%v CRD writes after a restart", w-writes0)
		}
		if after := ourCRDVersions(t, spoke1); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("CRDs rewritten after a restart:\n%v\n%v", before, after)
		}
	})

	t.Run("OIDC storage adds the AWS infrastructure CRDs; dropping it leaves them", func(t *testing.T) {
		// cluster-2 runs Private: the AWS CRDs go private like the rest.
		hc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hcpfleet.io/v1alpha1", "kind": "HostingConfig",
			"metadata": map[string]any{"name": "hosts-aws", "namespace": "hcp-fleet"},
			"spec": map[string]any{"install": map[string]any{"oidcStorage": map[string]any{
				"bucket": "hcp-oidc", "region": "us-east-1", "credentialsSecret": map[string]any{"name": "oidc-s3"}}}},
		}}
		if _, err := hub.hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Create(ctx, hc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		hub.setConfig(t, "cluster-2", "hosts-aws")
		names := []string{"awsclusters", "awsmachines", "awsmachinetemplates"}
		env.Eventually(t, time.Minute, "the private AWS infrastructure CRDs on cluster-2", func(ctx context.Context) error {
			for _, n := range names {
				if err := spoke2.Get(ctx, types.NamespacedName{Name: n + ".infrastructure.cluster.hypershift.openshift.io"}, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
					return err
				}
			}
			return nil
		})
		for _, n := range names {
			c := crd(t, spoke2, n+".infrastructure.cluster.hypershift.openshift.io")
			// Only v1beta2, which the contract label names; v1beta1 stays
			// listed, unserved.
			if !crds.IsOurs(c) || c.Labels["cluster.x-k8s.io/v1beta1"] != "v1beta2" || len(c.Spec.Versions) != 2 ||
				!slices.Equal(crds.ServedVersions(c), []string{"v1beta2"}) || !slices.Equal(c.Status.StoredVersions, []string{"v1beta2"}) {
				t.Errorf("%s: labels %v served %v stored %v", c.Name, c.Labels, crds.ServedVersions(c), c.Status.StoredVersions)
			}
		}
		absent(t, spoke2, "awsclusters.infrastructure.cluster.x-k8s.io")
		absent(t, spoke1, "awsclusters.infrastructure.cluster.x-k8s.io")

		// Back to the default (no OIDC storage): the CRDs stay, since
		// deleting a CRD deletes every object of its kind.
		// The positive signal: cluster-2's agent runs with the default
		// config, and its CAPI controller has taken the change and gone idle.
		reconciles := fleettest.Reconciles(t, "capi")
		hub.setConfig(t, "cluster-2", "")
		hub.condition(t, "cluster-2", addon.ConditionHostingConfigApplied, metav1.ConditionTrue, "HostingConfigApplied", "hcp-fleet/default")
		env.Settled(t, "capi", reconciles)
		for _, n := range names {
			if c := crd(t, spoke2, n+".infrastructure.cluster.hypershift.openshift.io"); c.DeletionTimestamp != nil {
				t.Errorf("%s is being deleted", c.Name)
			}
		}
	})

	t.Run("agent providers start when enabled for one cluster and stop when disabled", func(t *testing.T) {
		hc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hcpfleet.io/v1alpha1", "kind": "HostingConfig",
			"metadata": map[string]any{"name": "agent-providers", "namespace": "hcp-fleet"},
			"spec":     map[string]any{"agentProviders": map[string]any{"bootstrap": true, "controlPlane": true}},
		}}
		if _, err := hub.hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Create(ctx, hc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		hub.setConfig(t, "cluster-1", "agent-providers")

		c := hub.condition(t, "cluster-1", feature.ConditionProviders, metav1.ConditionFalse, "PrerequisitesMissing", "infraenvs.agent-install.openshift.io")
		t.Logf("before assisted-service: %s", c.Message)
		start := time.Now()
		installAssistedService(t, "cluster-1")
		c = hub.condition(t, "cluster-1", feature.ConditionProviders, metav1.ConditionTrue, "Running", "bootstrap and control-plane")
		t.Logf("providers running %s after assisted-service appeared: %s", time.Since(start).Round(time.Millisecond), c.Message)
		if n := gauge(t, "hcpfleet_agent_capi_providers_running"); n != 1 {
			t.Errorf("hcpfleet_agent_capi_providers_running = %v while cluster-1's providers run, want 1", n)
		}
		for _, n := range []string{"agentmachines.capi-provider.agent-install.openshift.io", "openshiftassistedconfigs.bootstrap.cluster.x-k8s.io",
			"openshiftassistedcontrolplanes.controlplane.cluster.x-k8s.io"} {
			crd(t, spoke1, n)
		}
		// cluster-2 keeps the default: no providers.
		hub.condition(t, "cluster-2", feature.ConditionProviders, metav1.ConditionTrue, "Disabled", "")

		// A control plane on AgentMachines: the control-plane provider makes
		// the ClusterDeployment and the control-plane Machines with their
		// configs; the bootstrap provider makes each config's InfraEnv. All
		// of it with the agent's own RBAC.
		ns := "bm-1"
		objs := []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pull-secret"}, Type: corev1.SecretTypeDockerConfigJson,
				Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}},
			agentMachineTemplate(ns, "c1-cp"),
			&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
				Spec: clusterv1.ClusterSpec{ControlPlaneRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: controlplanev1.GroupVersion.Group, Kind: "OpenshiftAssistedControlPlane", Name: "c1"}}},
		}
		for _, o := range objs {
			if err := spoke1.Create(ctx, o); err != nil {
				t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
			}
		}
		cluster := &clusterv1.Cluster{}
		if err := spoke1.Get(ctx, types.NamespacedName{Namespace: ns, Name: "c1"}, cluster); err != nil {
			t.Fatal(err)
		}
		acp := &controlplanev1.OpenshiftAssistedControlPlane{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c1", UID: cluster.UID}}},
			Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
				Replicas: ptr.To[int32](3), Version: "v1.29.5", DistributionVersion: "4.16.3",
				MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "capi-provider.agent-install.openshift.io", Kind: "AgentMachineTemplate", Name: "c1-cp"}}},
				Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
					BaseDomain: "example.com", PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"},
					APIVIPs: []string{"192.168.111.5"}, IngressVIPs: []string{"192.168.111.4"},
				},
			},
		}
		if err := spoke1.Create(ctx, acp); err != nil {
			t.Fatal(err)
		}
		env.Eventually(t, time.Minute, "ClusterDeployment, three control-plane Machines and their InfraEnvs", func(ctx context.Context) error {
			if err := spoke1.Get(ctx, types.NamespacedName{Namespace: ns, Name: "c1"}, &hivev1.ClusterDeployment{}); err != nil {
				return fmt.Errorf("ClusterDeployment: %w", err)
			}
			machines := &clusterv1.MachineList{}
			if err := spoke1.List(ctx, machines, client.InNamespace(ns)); err != nil {
				return err
			}
			if len(machines.Items) != 3 {
				return fmt.Errorf("%d Machines", len(machines.Items))
			}
			for _, m := range machines.Items {
				ie := &aiv1beta1.InfraEnv{}
				if err := spoke1.Get(ctx, types.NamespacedName{Namespace: ns, Name: m.Spec.Bootstrap.ConfigRef.Name}, ie); err != nil {
					return fmt.Errorf("InfraEnv of Machine %s: %w", m.Name, err)
				}
			}
			return nil
		})

		// An agent restart with the providers on rewrites no CRD, and the
		// providers come back.
		writes0, reconciles0 := metric(t, "hcpfleet_agent_capi_crd_writes_total", ""), metric(t, "controller_runtime_reconcile_total", "capi")
		env.Product.RestartAgent("cluster-1")
		env.Eventually(t, time.Minute, "the restarted agent reconciles CAPI", func(context.Context) error {
			if n := metric(t, "controller_runtime_reconcile_total", "capi"); n <= reconciles0 {
				return fmt.Errorf("%v reconciles", n)
			}
			return nil
		})
		hub.condition(t, "cluster-1", feature.ConditionProviders, metav1.ConditionTrue, "Running", "")
		if w := metric(t, "hcpfleet_agent_capi_crd_writes_total", ""); w != writes0 {
			t.Errorf("%v CRD writes after a restart with the providers on", w-writes0)
		}

		// Off again: the providers stop, and a new config is left alone.
		hub.setConfig(t, "cluster-1", "")
		hub.condition(t, "cluster-1", feature.ConditionProviders, metav1.ConditionTrue, "Disabled", "")
		// Only cluster-1 ran them: the providers' manager has ended (it is
		// stopped and waited for before Disabled is reported).
		if n := gauge(t, "hcpfleet_agent_capi_providers_running"); n != 0 {
			t.Fatalf("%v provider managers still run after Disabled", n)
		}
		late := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"},
			Spec: bootstrapv1.OpenshiftAssistedConfigSpec{PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"}}}
		if err := spoke1.Create(ctx, late); err != nil {
			t.Fatal(err)
		}
		if err := spoke1.Get(ctx, client.ObjectKeyFromObject(late), late); err != nil {
			t.Fatal(err)
		}
		if len(late.Status.Conditions) != 0 {
			t.Errorf("a stopped bootstrap provider reconciled a new config: %+v", late.Status.Conditions)
		}
		// The CRDs and the objects stay: turning a provider off deletes nothing.
		crd(t, spoke1, "openshiftassistedconfigs.bootstrap.cluster.x-k8s.io")
	})

	t.Run("Private mode migrates legacy hosted clusters and reports CAPIMigration", func(t *testing.T) {
		testPrivateModeMigration(t, hub, "cluster-1")
	})

	t.Run("cleanup refuses while CAPI objects exist, then removes only our CRDs", func(t *testing.T) {
		// cluster-2 runs Private: its cleanup goes through the proxy.
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.hypershift.openshift.io/v1beta2", "kind": "Cluster",
			"metadata": map[string]any{"name": "c1", "namespace": "default"},
			"spec":     map[string]any{"paused": true},
		}}
		if err := spoke2.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		hub.setHost(t, "cluster-2", false)
		c := hub.condition(t, "cluster-2", addon.ConditionCleanup, metav1.ConditionFalse, "CAPIObjectsExist", "Cluster default/c1")
		t.Logf("cleanup refused: %s", c.Message)
		crd(t, spoke2, "clusters.cluster.hypershift.openshift.io")
		if err := spoke2.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
		env.Eventually(t, 3*time.Minute, "our CAPI CRDs gone from cluster-2", func(ctx context.Context) error {
			if left := ourCRDVersions(t, spoke2); len(left) > 0 {
				return fmt.Errorf("%d left, e.g. %v", len(left), left)
			}
			return nil
		})
		if now := crd(t, spoke2, foreign.Name); now.ResourceVersion != foreign.ResourceVersion {
			t.Errorf("cleanup wrote the platform's CRD %s", foreign.Name)
		}
	})
}

func agentMachineTemplate(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{}}}}}
	u.SetAPIVersion("capi-provider.agent-install.openshift.io/v1beta1")
	u.SetKind("AgentMachineTemplate")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// metric sums a counter from the process's controller-runtime registry
// (optionally only the series with controller=<controller>).
func metric(t *testing.T, name, controller string) float64 {
	t.Helper()
	if controller == "" {
		return fleettest.Metric(t, name, nil)
	}
	return fleettest.Metric(t, name, map[string]string{"controller": controller})
}

// gauge reads a gauge of the agents in this process, summed.
func gauge(t *testing.T, name string) float64 {
	t.Helper()
	return fleettest.Metric(t, name, nil)
}
