//go:build integration

package operator_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	addonhub "github.com/hcp-fleet/hcp-fleet/pkg/addon/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/operator"
)

var (
	env     *fleettest.Env
	fleet   *localfleet.Fleet
	product *hcpfleet.Product
)

func TestMain(m *testing.M) {
	fleettest.Main(m, 2, func(e *fleettest.Env) { env, fleet, product = e, e.Fleet, e.Product })
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	env.Eventually(t, timeout, what, cond)
}

var (
	hubDyn   dynamic.Interface
	addons   addonclient.Interface
	clusters clusterclient.Interface
)

func setClients() {
	hubDyn = dynamic.NewForConfigOrDie(fleet.Hub.Config())
	addons = addonclient.NewForConfigOrDie(fleet.Hub.Config())
	clusters = clusterclient.NewForConfigOrDie(fleet.Hub.Config())
}

func setHostLabel(t *testing.T, cluster string, on bool) {
	t.Helper()
	v := "null"
	if on {
		v = `"true"`
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, hcpfleet.HostLabel, v))
	if _, err := clusters.ClusterV1().ManagedClusters().Patch(context.Background(), cluster, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// condition waits for a condition on the cluster's ManagedClusterAddOn.
func condition(t *testing.T, cluster, condType string, status metav1.ConditionStatus, reason, msgPart string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	eventually(t, 2*time.Minute, fmt.Sprintf("%s: %s=%s (%s)", cluster, condType, status, reason), func(ctx context.Context) error {
		mca, err := addons.AddonV1alpha1().ManagedClusterAddOns(cluster).Get(ctx, addon.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got = meta.FindStatusCondition(mca.Status.Conditions, condType)
		if got == nil || got.Status != status || (reason != "" && got.Reason != reason) || !strings.Contains(got.Message, msgPart) {
			return fmt.Errorf("condition %+v", got)
		}
		return nil
	})
	return got
}

// managedObjects lists every object the agent installed on a cluster (by its
// managed-by label) as "Kind name" → resourceVersion.
func managedObjects(t *testing.T, cluster string) map[string]string {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(fleet.Cluster(cluster).Config())
	out := map[string]string{}
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
		{Version: "v1", Resource: "namespaces"},
		{Version: "v1", Resource: "serviceaccounts"},
		{Version: "v1", Resource: "services"},
		{Group: "apps", Version: "v1", Resource: "deployments"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
		{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"},
		{Group: "cluster.open-cluster-management.io", Version: "v1alpha1", Resource: "clusterclaims"},
	} {
		list, err := dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{LabelSelector: operator.ManagedByLabel + "=" + operator.ManagedByValue})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list.Items {
			out[gvr.Resource+" "+o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
		}
	}
	return out
}

func TestOperatorLifecycle(t *testing.T) {
	setClients()
	ctx := context.Background()
	spoke1 := kubernetes.NewForConfigOrDie(fleet.Cluster("cluster-1").Config())
	spoke2 := kubernetes.NewForConfigOrDie(fleet.Cluster("cluster-2").Config())

	// cluster-2 already runs a HyperShift operator someone else installed.
	foreign := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: operator.DeploymentName, Namespace: operator.Namespace},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": "operator"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"name": "operator"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "operator", Image: "example.com/someone-elses/hypershift-operator:4.16"}}},
			},
		},
	}
	if _, err := spoke2.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operator.Namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	foreign, err := spoke2.AppsV1().Deployments(operator.Namespace).Create(ctx, foreign, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	setHostLabel(t, "cluster-1", true)
	setHostLabel(t, "cluster-2", true)

	t.Run("installs the operator from the HostingConfig", func(t *testing.T) {
		c := condition(t, "cluster-1", operator.ConditionInstalled, metav1.ConditionTrue, "Installed", operator.DefaultImage)
		t.Logf("cluster-1: %s", c.Message)
		d, err := spoke1.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != operator.DefaultImage {
			t.Errorf("operator image %s", img)
		}
		for _, crd := range []string{"hostedclusters.hypershift.openshift.io", "nodepools.hypershift.openshift.io", "hostedcontrolplanes.hypershift.openshift.io"} {
			if _, ok := managedObjects(t, "cluster-1")["customresourcedefinitions /"+crd]; !ok {
				t.Errorf("CRD %s not installed", crd)
			}
		}
		if n := countPrefix(managedObjects(t, "cluster-1"), "clusterclaims "); n == 0 {
			t.Error("no hosting ClusterClaims on cluster-1")
		}
		// The operator stand-in runs as the operator's own ServiceAccount
		// and publishes what the real operator publishes.
		eventually(t, time.Minute, "supported-versions published", func(ctx context.Context) error {
			_, err := spoke1.CoreV1().ConfigMaps(operator.Namespace).Get(ctx, operator.SupportedVersionsConfigMap, metav1.GetOptions{})
			return err
		})
	})

	t.Run("a foreign install is left alone and reported", func(t *testing.T) {
		c := condition(t, "cluster-2", operator.ConditionInstalled, metav1.ConditionFalse, "ForeignInstall", "adoptExisting")
		t.Logf("cluster-2: %s", c.Message)
		d, err := spoke2.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.ResourceVersion != foreign.ResourceVersion {
			t.Errorf("the agent modified the foreign operator Deployment")
		}
		// Only the hosting report's ClusterClaims may be there: the cluster
		// still hosts, through someone else's operator.
		objs := managedObjects(t, "cluster-2")
		if n := len(objs) - countPrefix(objs, "clusterclaims "); n != 0 {
			t.Errorf("the agent installed %d objects next to a foreign operator: %v", n, keys(objs))
		}
	})

	t.Run("a second reconcile and an agent restart write nothing", func(t *testing.T) {
		// The agents run in this process, so their metrics are ours to read:
		// the apply-writes counter counts every object the agent writes.
		writes0, reconciles0 := metric(t, "hcpfleet_agent_hypershift_operator_apply_writes_total", ""), metric(t, "controller_runtime_reconcile_total", "hypershift-operator")
		before := managedObjects(t, "cluster-1")
		holder, err := fleettest.AgentLeaseHolder(ctx, spoke1)
		if err != nil {
			t.Fatal(err)
		}
		product.RestartAgent("cluster-1")
		// Wait for the restarted agent's first reconcile before nudging it:
		// a nudge that arrives while that reconcile is still queued would be
		// folded into it (one request), and the wait below would never see
		// a second one. The agents share the process's metrics registry; the
		// lease, taken under a new identity, is this agent's own signal that
		// it is back, and nothing else changes on the other cluster now.
		eventually(t, time.Minute, "the restarted agent leads and reconciled once", func(ctx context.Context) error {
			if h, err := fleettest.AgentLeaseHolder(ctx, spoke1); err != nil || h == "" || h == holder {
				return fmt.Errorf("agent lease held by %q (%v), before the restart by %q", h, err, holder)
			}
			if r := metric(t, "controller_runtime_reconcile_total", "hypershift-operator"); r < reconciles0+1 {
				return fmt.Errorf("%v reconciles since", r-reconciles0)
			}
			return nil
		})
		// Nudge the reconciler too: an unrelated change to the operator
		// Deployment's metadata triggers a full reconcile.
		patch := []byte(`{"metadata":{"annotations":{"example.com/nudge":"1"}}}`)
		d0, err := spoke1.AppsV1().Deployments(operator.Namespace).Patch(ctx, operator.DeploymentName, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the restarted agent reconciled", func(context.Context) error {
			if r := metric(t, "controller_runtime_reconcile_total", "hypershift-operator"); r < reconciles0+2 {
				return fmt.Errorf("%v reconciles since", r-reconciles0)
			}
			return nil
		})
		condition(t, "cluster-1", operator.ConditionInstalled, metav1.ConditionTrue, "Installed", "")
		if w := metric(t, "hcpfleet_agent_hypershift_operator_apply_writes_total", ""); w != writes0 {
			t.Errorf("the agent wrote %v objects without a config change", w-writes0)
		}
		// Every object but the operator Deployment (whose status the kubelet
		// stand-in writes) is byte-for-byte untouched; the Deployment's spec
		// did not change either.
		after := managedObjects(t, "cluster-1")
		var changed []string
		for k, v := range after {
			// The hosting report's ClusterClaims change with what they
			// report; they are not part of the install.
			if before[k] != v && k != "deployments "+operator.Namespace+"/"+operator.DeploymentName && !strings.HasPrefix(k, "clusterclaims ") {
				changed = append(changed, k)
			}
		}
		sort.Strings(changed)
		if len(changed) > 0 || len(after) != len(before) {
			t.Errorf("objects written without a config change: %v (before %d objects, after %d)", changed, len(before), len(after))
		}
		if d1, _ := spoke1.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{}); d1.Generation != d0.Generation {
			t.Errorf("the operator Deployment was rolled out again: generation %d -> %d", d0.Generation, d1.Generation)
		}
	})

	t.Run("drift is corrected", func(t *testing.T) {
		// Someone edits the operator Deployment (another field manager, as
		// kubectl edit would), deletes its ClusterRoleBinding and one of the
		// install's CRDs: the agent, watching what it owns, restores each.
		ext := apiextensionsclient.NewForConfigOrDie(fleet.Cluster("cluster-1").Config())
		const crd = "awsendpointservices.hypershift.openshift.io"
		writes0 := metric(t, "hcpfleet_agent_hypershift_operator_apply_writes_total", "")
		d, err := spoke1.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := d.Spec.Template.Spec.Containers[0].Image
		d.Spec.Template.Spec.Containers[0].Image = "example.com/hand-edited:1"
		if _, err := spoke1.AppsV1().Deployments(operator.Namespace).Update(ctx, d, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		if err := spoke1.RbacV1().ClusterRoleBindings().Delete(ctx, "hypershift-operator", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, crd, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the operator's image restored", func(ctx context.Context) error {
			d, err := spoke1.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if img := d.Spec.Template.Spec.Containers[0].Image; img != want {
				return fmt.Errorf("image %s", img)
			}
			return nil
		})
		eventually(t, time.Minute, "the ClusterRoleBinding restored", func(ctx context.Context) error {
			_, err := spoke1.RbacV1().ClusterRoleBindings().Get(ctx, "hypershift-operator", metav1.GetOptions{})
			return err
		})
		eventually(t, time.Minute, "the CRD restored", func(ctx context.Context) error {
			c, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if c.DeletionTimestamp != nil {
				return fmt.Errorf("still terminating")
			}
			return nil
		})
		// Each restored object is one write, counted as it is written.
		var written float64
		eventually(t, 30*time.Second, "3 writes counted", func(context.Context) error {
			if written = metric(t, "hcpfleet_agent_hypershift_operator_apply_writes_total", "") - writes0; written < 3 {
				return fmt.Errorf("%v writes", written)
			}
			return nil
		})
		t.Logf("drift of 3 objects corrected with %v writes", written)
	})

	t.Run("a config change rolls out once", func(t *testing.T) {
		d0, _ := spoke1.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
		patch := []byte(`{"spec":{"operator":{"image":"quay.io/hypershift/hypershift-operator:4.20","imageOverrides":{"IMAGE_KONNECTIVITY":"quay.io/example/konnectivity:1"}}}}`)
		if _, err := hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Patch(ctx, "default", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		condition(t, "cluster-1", operator.ConditionInstalled, metav1.ConditionTrue, "Installed", "hypershift-operator:4.20")
		d1, _ := spoke1.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
		if d1.Generation != d0.Generation+1 {
			t.Errorf("operator Deployment generation %d -> %d: want exactly one rollout", d0.Generation, d1.Generation)
		}
		c := d1.Spec.Template.Spec.Containers[0]
		if c.Image != "quay.io/hypershift/hypershift-operator:4.20" || !hasEnv(c.Env, "IMAGE_KONNECTIVITY", "quay.io/example/konnectivity:1") {
			t.Errorf("operator container after the change: %s %v", c.Image, c.Env)
		}
	})

	t.Run("private CAPI types reach the operator", func(t *testing.T) {
		// capiMode Private: the agent's CAPI feature installs the private
		// CRDs, and the operator follows them with --private-capi-types.
		patch := []byte(`{"spec":{"capiMode":"Private"}}`)
		if _, err := hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Patch(ctx, "default", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		c := condition(t, "cluster-1", operator.ConditionInstalled, metav1.ConditionTrue, "Installed", operator.PrivateCAPITypesFlag)
		t.Logf("cluster-1: %s", c.Message)
		d, _ := spoke1.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
		if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, operator.PrivateCAPITypesFlag) {
			t.Errorf("operator args %v lack %s", args, operator.PrivateCAPITypesFlag)
		}
	})

	t.Run("adoptExisting takes over a foreign install", func(t *testing.T) {
		// A private Cluster CRD that hcp-fleet did not install does not
		// switch the operator it adopts.
		spoke2ext := apiextensionsclient.NewForConfigOrDie(fleet.Cluster("cluster-2").Config())
		foreignCRD := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "clusters.cluster.hypershift.openshift.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "cluster.hypershift.openshift.io", Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "clusters", Singular: "cluster", Kind: "Cluster", ListKind: "ClusterList"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta2", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
			},
		}
		if _, err := spoke2ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, foreignCRD, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = spoke2ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), foreignCRD.Name, metav1.DeleteOptions{})
		})
		adopt := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hcpfleet.io/v1alpha1", "kind": "HostingConfig",
			"metadata": map[string]any{"name": "adopt", "namespace": "hcp-fleet"},
			"spec":     map[string]any{"operator": map[string]any{"adoptExisting": true}},
		}}
		if _, err := hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Create(ctx, adopt, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		patch := []byte(`{"spec":{"configs":[{"group":"hcpfleet.io","resource":"hostingconfigs","name":"adopt","namespace":"hcp-fleet"}]}}`)
		if _, err := addons.AddonV1alpha1().ManagedClusterAddOns("cluster-2").Patch(ctx, addon.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		condition(t, "cluster-2", operator.ConditionInstalled, metav1.ConditionTrue, "Installed", operator.DefaultImage)
		d, _ := spoke2.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
		if d.Labels[operator.ManagedByLabel] != operator.ManagedByValue || d.Spec.Template.Spec.Containers[0].Image != operator.DefaultImage {
			t.Errorf("after adoption: labels %v image %s", d.Labels, d.Spec.Template.Spec.Containers[0].Image)
		}
		if args := d.Spec.Template.Spec.Containers[0].Args; slices.Contains(args, operator.PrivateCAPITypesFlag) {
			t.Errorf("cluster-2 has only a private CAPI CRD someone else installed, yet its operator runs with %v", args)
		}
	})

	t.Run("uninstall waits for hosted clusters, then leaves nothing", func(t *testing.T) {
		hcGVR := schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
		spokeDyn := dynamic.NewForConfigOrDie(fleet.Cluster("cluster-1").Config())
		if _, err := spoke1.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		hc := fleettest.HostedCluster("clusters", "still-running")
		if _, err := spokeDyn.Resource(hcGVR).Namespace("clusters").Create(ctx, hc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		setHostLabel(t, "cluster-1", false)
		c := condition(t, "cluster-1", addon.ConditionCleanup, metav1.ConditionFalse, "HostedClustersExist", "clusters/still-running")
		t.Logf("cleanup refused: %s", c.Message)
		if _, err := spoke1.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{}); err != nil {
			t.Fatalf("the operator must stay while a HostedCluster exists: %v", err)
		}
		if err := spokeDyn.Resource(hcGVR).Namespace("clusters").Delete(ctx, "still-running", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 3*time.Minute, "add-on and operator gone from cluster-1", func(ctx context.Context) error {
			if mca, err := addons.AddonV1alpha1().ManagedClusterAddOns("cluster-1").Get(ctx, addon.Name, metav1.GetOptions{}); err == nil {
				var conds []string
				for _, c := range mca.Status.Conditions {
					conds = append(conds, fmt.Sprintf("%s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message))
				}
				return fmt.Errorf("ManagedClusterAddOn still there (deleting: %v, finalizers %v), conditions %v", mca.DeletionTimestamp != nil, mca.Finalizers, conds)
			} else if !apierrors.IsNotFound(err) {
				return err
			}
			if left := managedObjects(t, "cluster-1"); len(left) > 0 {
				return fmt.Errorf("left behind: %v", keys(left))
			}
			return nil
		})
		if _, err := spoke1.CoreV1().Namespaces().Get(ctx, operator.Namespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s left behind: %v", operator.Namespace, err)
		}
		if _, err := clusters.ClusterV1alpha1().AddOnPlacementScores("cluster-1").Get(ctx, "hcp-fleet", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("AddOnPlacementScore left behind on the hub: %v", err)
		}
		// cluster-2 is untouched.
		condition(t, "cluster-2", operator.ConditionInstalled, metav1.ConditionTrue, "Installed", "")
	})
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

func countPrefix(m map[string]string, prefix string) int {
	n := 0
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func hasEnv(env []corev1.EnvVar, name, value string) bool {
	for _, e := range env {
		if e.Name == name && e.Value == value {
			return true
		}
	}
	return false
}
