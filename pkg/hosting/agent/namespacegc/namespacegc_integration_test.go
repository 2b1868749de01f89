//go:build integration

package namespacegc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	workclient "open-cluster-management.io/api/client/work/clientset/versioned"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

var (
	env   *fleettest.Env
	fleet *localfleet.Fleet
)

// grace is the janitor's grace period in these tests (the agent's
// --namespace-gc-grace).
const grace = 2 * time.Second

func TestMain(m *testing.M) {
	opts := hcpfleet.Options{AgentArgs: func(string) []string { return []string{"--namespace-gc-grace=" + grace.String()} }}
	fleettest.MainWith(m, 1, opts, func(e *fleettest.Env) { env, fleet = e, e.Fleet })
}

var (
	hcGVR            = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	hostingConfigGVR = schema.GroupVersionResource{Group: "hcpfleet.io", Version: "v1alpha1", Resource: "hostingconfigs"}
)

const cluster = "cluster-1"

func TestJanitor(t *testing.T) {
	ctx := context.Background()
	spoke := kubernetes.NewForConfigOrDie(fleet.Cluster(cluster).Config())
	spokeDyn := dynamic.NewForConfigOrDie(fleet.Cluster(cluster).Config())
	spokeWork := workclient.NewForConfigOrDie(fleet.Cluster(cluster).Config())
	hubWork := workclient.NewForConfigOrDie(fleet.Hub.Config())

	if err := hcpfleet.EnableOnAll(ctx, fleet); err != nil {
		t.Fatal(err)
	}
	// The hosting namespaces the agent may delete: the HostingConfig's (the
	// hub renders them into the agent's RBAC). gc-not-allowed is not one.
	hostingNamespaces := []byte(`{"spec":{"hostingNamespaces":["gc-empty","gc-unlabelled","gc-not-true","gc-hosted","gc-applied","gc-delivered"]}}`)
	if _, err := dynamic.NewForConfigOrDie(fleet.Hub.Config()).Resource(hostingConfigGVR).Namespace("hcp-fleet").
		Patch(ctx, "default", types.MergePatchType, hostingNamespaces, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	crds := apiextensionsclient.NewForConfigOrDie(fleet.Cluster(cluster).Config())
	env.Eventually(t, 3*time.Minute, "the agent installs the HyperShift CRDs", func(ctx context.Context) error {
		crd, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "hostedclusters.hypershift.openshift.io", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("CRD %s not established", crd.Name)
	})

	created := map[string]string{hosting.LabelCreatedNamespace: "true"}
	for name, labels := range map[string]map[string]string{
		"gc-empty":      created,
		"gc-unlabelled": nil,
		"gc-not-true":   {hosting.LabelCreatedNamespace: "false"},
		"gc-hosted":     created,
		"gc-applied":    created,
		// Labelled and empty, but not a hosting namespace of the
		// HostingConfig: the agent may not delete it, and does not try.
		"gc-not-allowed": created,
	} {
		if _, err := spoke.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Until the ManifestWork below has delivered into gc-applied, a ConfigMap
	// of the test's own holds it (in real deliveries the namespace comes in
	// the same ManifestWork).
	hold := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hold", Namespace: "gc-applied"}}
	if _, err := spoke.CoreV1().ConfigMaps("gc-applied").Create(ctx, hold, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hc := fleettest.HostedCluster("gc-hosted", "hc-1")
	hc.SetLabels(map[string]string{hosting.LabelHCDNamespace: "team-a", hosting.LabelHCDName: "hc-1"})
	if _, err := spokeDyn.Resource(hcGVR).Namespace("gc-hosted").Create(ctx, hc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Two ManifestWorks, delivered by the real work agent: one delivers only
	// a namespace, the way the hub delivers a hosting namespace (CreateOnly,
	// labelled, orphaned when the work goes), so only its
	// AppliedManifestWork keeps it; the other a ConfigMap into gc-applied.
	nsOnly := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "gc-namespace-only", Namespace: cluster},
		Spec: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{manifest(t, &corev1.Namespace{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
				ObjectMeta: metav1.ObjectMeta{Name: "gc-delivered", Labels: created},
			})}},
			ManifestConfigs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Resource: "namespaces", Name: "gc-delivered"},
				UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeCreateOnly},
			}},
			DeleteOption: &workv1.DeleteOption{
				PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
				SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{{Resource: "namespaces", Name: "gc-delivered"}}},
			},
		},
	}
	withConfigMap := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "gc-configmap", Namespace: cluster},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{manifest(t, &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "delivered", Namespace: "gc-applied"},
			Data:       map[string]string{"k": "v"},
		})}}},
	}
	for _, w := range []*workv1.ManifestWork{nsOnly, withConfigMap} {
		if _, err := hubWork.WorkV1().ManifestWorks(cluster).Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	appliedLists := func(work string, want workv1.ResourceIdentifier) func(context.Context) error {
		return func(ctx context.Context) error {
			list, err := spokeWork.WorkV1().AppliedManifestWorks().List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, w := range list.Items {
				if w.Spec.ManifestWorkName != work {
					continue
				}
				for _, r := range w.Status.AppliedResources {
					if r.ResourceIdentifier == want {
						return nil
					}
				}
				return fmt.Errorf("AppliedManifestWork %s lists %v, not %v", w.Name, w.Status.AppliedResources, want)
			}
			return fmt.Errorf("no AppliedManifestWork for ManifestWork %s", work)
		}
	}
	env.Eventually(t, time.Minute, "the work agent applied the namespace", appliedLists(nsOnly.Name,
		workv1.ResourceIdentifier{Resource: "namespaces", Name: "gc-delivered"}))
	env.Eventually(t, time.Minute, "the work agent applied the ConfigMap", appliedLists(withConfigMap.Name,
		workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "gc-applied", Name: "delivered"}))
	if err := spoke.CoreV1().ConfigMaps("gc-applied").Delete(ctx, hold.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	gone := func(name string) func(context.Context) error {
		return func(ctx context.Context) error {
			ns, err := spoke.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				return nil
			case err != nil:
				return err
			case ns.DeletionTimestamp != nil:
				return nil // terminating: deleted, the namespace controller finishes it
			}
			return fmt.Errorf("namespace %s still there", name)
		}
	}
	present := func(names ...string) func(context.Context) error {
		return func(ctx context.Context) error {
			for _, name := range names {
				ns, err := spoke.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return fmt.Errorf("namespace %s: %w", name, err)
				}
				if ns.DeletionTimestamp != nil {
					return fmt.Errorf("namespace %s is being deleted", name)
				}
			}
			return nil
		}
	}

	env.Eventually(t, 3*time.Minute, "the labelled empty namespace is deleted", gone("gc-empty"))
	// gc-empty went after the grace period; the others had the same time
	// and three more grace periods.
	consistently(t, 3*grace, "namespaces that are not empty or not labelled stay",
		present("gc-unlabelled", "gc-not-true", "gc-hosted", "gc-applied", "gc-delivered", "gc-not-allowed"))

	if err := spokeDyn.Resource(hcGVR).Namespace("gc-hosted").Delete(ctx, "hc-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, time.Minute, "the namespace whose HostedCluster went is deleted", gone("gc-hosted"))

	for _, w := range []*workv1.ManifestWork{nsOnly, withConfigMap} {
		if err := hubWork.WorkV1().ManifestWorks(cluster).Delete(ctx, w.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	env.Eventually(t, time.Minute, "the orphaned delivered namespace is deleted once its ManifestWork went", gone("gc-delivered"))
	env.Eventually(t, time.Minute, "the namespace whose delivered ConfigMap went is deleted", gone("gc-applied"))
	if err := present("gc-unlabelled", "gc-not-true")(ctx); err != nil {
		t.Errorf("unlabelled namespaces must stay: %v", err)
	}
	if err := present("gc-not-allowed")(ctx); err != nil {
		t.Errorf("a namespace the HostingConfig does not list must stay: %v", err)
	}
}

// consistently fails the test if cond fails at any poll during d.
func consistently(t *testing.T, d time.Duration, what string, cond func(context.Context) error) {
	t.Helper()
	ctx := context.Background()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if err := cond(ctx); err != nil {
			t.Fatalf("%s: %v\n  fleet logs: %s", what, err, fleet.LogDir)
		}
	}
}

func manifest(t *testing.T, obj runtime.Object) workv1.Manifest {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}
