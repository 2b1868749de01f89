//go:build integration

package localfleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	workclient "open-cluster-management.io/api/client/work/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/internal/poll"
)

// fleet is shared by the tests of this package: starting it is the slow part.
var fleet *Fleet

func TestMain(m *testing.M) {
	ctx := context.Background()
	var err error
	fleet, err = Start(ctx, Options{ManagementClusters: 2, StatusSyncInterval: time.Second, Progress: os.Stdout})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("local fleet start-up took %s (hub + %d management clusters)\n", fleet.StartupDur.Round(time.Millisecond), len(fleet.Managed))
	code := m.Run()
	dir := fleet.Dir
	fleet.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		fmt.Fprintf(os.Stderr, "Stop left the fleet directory %s behind\n", dir)
		code = 1
	}
	os.Exit(code)
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	poll.Until(t, timeout, what, func(ctx context.Context) error {
		ok, err := cond(ctx)
		switch {
		case ok:
			return nil // done, whatever err says (NotFound, say)
		case err == nil:
			return errors.New("not yet")
		}
		return err
	})
}

func TestClustersJoinAndAreAvailable(t *testing.T) {
	clusters, err := clusterclient.NewForConfig(fleet.Hub.Config())
	if err != nil {
		t.Fatal(err)
	}
	list, err := clusters.ClusterV1().ManagedClusters().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("want 2 ManagedClusters, got %d", len(list.Items))
	}
	for _, mc := range list.Items {
		if !mc.Spec.HubAcceptsClient {
			t.Errorf("%s: hubAcceptsClient is false", mc.Name)
		}
		for _, cond := range []string{clusterv1.ManagedClusterConditionJoined, clusterv1.ManagedClusterConditionAvailable, clusterv1.ManagedClusterConditionHubAccepted} {
			if !conditionTrue(mc.Status.Conditions, cond) {
				t.Errorf("%s: condition %s is not True: %+v", mc.Name, cond, mc.Status.Conditions)
			}
		}
		if m := fleet.Cluster(mc.Name); m == nil || len(mc.Spec.ManagedClusterClientConfigs) == 0 || mc.Spec.ManagedClusterClientConfigs[0].URL != m.Host {
			t.Errorf("%s: client config does not point at the cluster's apiserver: %+v", mc.Name, mc.Spec.ManagedClusterClientConfigs)
		}
	}
	// The klusterlet identity was issued through the CSR API and signed by
	// the hub's kube-controller-manager, not by us.
	hubKube, _ := kubernetes.NewForConfig(fleet.Hub.Config())
	csrs, err := hubKube.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{
		LabelSelector: clusterv1.ClusterNameLabelKey + "=cluster-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	signed := false
	for _, csr := range csrs.Items {
		signed = signed || len(csr.Status.Certificate) > 0
	}
	if !signed {
		t.Fatalf("no signed registration CSR for cluster-1 on the hub (%d CSRs)", len(csrs.Items))
	}
}

func TestManifestWorkAppliedWithStatusFeedback(t *testing.T) {
	ctx := context.Background()
	works, err := workclient.NewForConfig(fleet.Hub.Config())
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "feedback-probe", Namespace: "default"},
		Data:       map[string]string{"answer": "42"},
	}
	work := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "feedback-probe", Namespace: "cluster-1"},
		Spec: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Object: cm}}}},
			ManifestConfigs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Name: "feedback-probe", Namespace: "default"},
				FeedbackRules: []workv1.FeedbackRule{{
					Type:      workv1.JSONPathsType,
					JsonPaths: []workv1.JsonPath{{Name: "answer", Path: ".data.answer"}},
				}},
			}},
		},
	}
	if _, err := works.WorkV1().ManifestWorks("cluster-1").Create(ctx, work, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spoke, _ := kubernetes.NewForConfig(fleet.Cluster("cluster-1").Config())
	eventually(t, time.Minute, "ConfigMap applied on cluster-1", func(ctx context.Context) (bool, error) {
		got, err := spoke.CoreV1().ConfigMaps("default").Get(ctx, "feedback-probe", metav1.GetOptions{})
		return err == nil && got.Data["answer"] == "42", err
	})
	other, _ := kubernetes.NewForConfig(fleet.Cluster("cluster-2").Config())
	if _, err := other.CoreV1().ConfigMaps("default").Get(ctx, "feedback-probe", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the work for cluster-1 must not reach cluster-2: %v", err)
	}
	eventually(t, time.Minute, "status feedback on the hub", func(ctx context.Context) (bool, error) {
		got, err := works.WorkV1().ManifestWorks("cluster-1").Get(ctx, "feedback-probe", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, m := range got.Status.ResourceStatus.Manifests {
			for _, v := range m.StatusFeedbacks.Values {
				if v.Name == "answer" && v.Value.String != nil && *v.Value.String == "42" {
					return conditionTrue(got.Status.Conditions, workv1.WorkApplied), nil
				}
			}
		}
		return false, fmt.Errorf("no feedback yet: %+v", got.Status.ResourceStatus)
	})

	// Deleting the work removes what it applied, once the work agent has
	// recorded it in the AppliedManifestWork: the agent deletes what that
	// status lists (upstream's AppliedManifestWork finalizer), and it
	// records a resource only on the sync after the one that applied it
	// (appliedmanifestwork_reconciler.go waits for WorkApplied). A work
	// deleted in between leaves the ConfigMap to the garbage collector,
	// through its owner reference, which on a loaded machine took longer
	// than this test waits.
	spokeWorks, err := workclient.NewForConfig(fleet.Cluster("cluster-1").Config())
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the ConfigMap recorded in cluster-1's AppliedManifestWork", func(ctx context.Context) (bool, error) {
		applied, err := spokeWorks.WorkV1().AppliedManifestWorks().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, a := range applied.Items {
			if a.Spec.ManifestWorkName != "feedback-probe" {
				continue
			}
			for _, r := range a.Status.AppliedResources {
				if r.Resource == "configmaps" && r.Namespace == "default" && r.Name == "feedback-probe" {
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err := works.WorkV1().ManifestWorks("cluster-1").Delete(ctx, "feedback-probe", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "ConfigMap removed from cluster-1", func(ctx context.Context) (bool, error) {
		_, err := spoke.CoreV1().ConfigMaps("default").Get(ctx, "feedback-probe", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func TestPlacementSelectsClusterByLabel(t *testing.T) {
	ctx := context.Background()
	const ns = "placement-test"
	hubKube, _ := kubernetes.NewForConfig(fleet.Hub.Config())
	clusters, _ := clusterclient.NewForConfig(fleet.Hub.Config())
	if err := ensureNamespace(ctx, hubKube, ns); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"metadata":{"labels":{"tier":"gold"}}}`)
	if _, err := clusters.ClusterV1().ManagedClusters().Patch(ctx, "cluster-2", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// Placements only see clusters of sets bound to their namespace; the
	// registration hub maintains the "global" set of every cluster.
	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "global", Namespace: ns},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"},
	}
	if _, err := clusters.ClusterV1beta2().ManagedClusterSetBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	placement := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: "gold", Namespace: ns},
		Spec: clusterv1beta1.PlacementSpec{
			Predicates: []clusterv1beta1.ClusterPredicate{{
				RequiredClusterSelector: clusterv1beta1.ClusterSelector{
					LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}},
				},
			}},
		},
	}
	if _, err := clusters.ClusterV1beta1().Placements(ns).Create(ctx, placement, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "PlacementDecision selects only cluster-2", func(ctx context.Context) (bool, error) {
		picked, err := DecidedClusters(ctx, clusters, ns, "gold")
		if err != nil {
			return false, err
		}
		if len(picked) != 1 || picked[0] != "cluster-2" {
			return false, fmt.Errorf("decisions: %v", picked)
		}
		return true, nil
	})
}

func TestAgentIdentityIsConfinedToItsClusterNamespace(t *testing.T) {
	ctx := context.Background()
	cfg, err := fleet.Cluster("cluster-1").HubConfig()
	if err != nil {
		t.Fatal(err)
	}
	works, err := workclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := works.WorkV1().ManifestWorks("cluster-1").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("cluster-1's agent must read ManifestWorks in its own namespace: %v", err)
	}
	if _, err := works.WorkV1().ManifestWorks("cluster-2").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("cluster-1's agent listing ManifestWorks of cluster-2: want Forbidden, got %v", err)
	}
	if _, err := kube.CoreV1().Secrets("cluster-2").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("cluster-1's agent listing Secrets of cluster-2: want Forbidden, got %v", err)
	}
	if _, err := kube.CoreV1().Secrets(HubNamespace).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("cluster-1's agent listing Secrets of %s: want Forbidden, got %v", HubNamespace, err)
	}
}

func TestNamespaceDeletionCompletesOnManagementCluster(t *testing.T) {
	ctx := context.Background()
	kube, _ := kubernetes.NewForConfig(fleet.Cluster("cluster-2").Config())
	if err := ensureNamespace(ctx, kube, "doomed"); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "content", Namespace: "doomed"}}
	if _, err := kube.CoreV1().ConfigMaps("doomed").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "namespace doomed deleted", func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

func TestMissingBinaryIsAClearError(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("KUBEBUILDER_ASSETS", empty)
	_, err := Start(context.Background(), Options{ManagementClusters: 1})
	if err == nil {
		t.Fatal("Start with no binaries succeeded")
	}
	for _, want := range []string{"kube-apiserver", empty, "make k8s-bins"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestFailingComponentNamesItselfAndItsLog(t *testing.T) {
	real, err := binaryDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(filepath.Join(real, "etcd"), filepath.Join(bin, "etcd")); err != nil {
		t.Fatal(err)
	}
	broken := "#!/bin/sh\necho 'E1122 cannot bind: simulated start-up failure' >&2\nexit 3\n"
	for _, b := range []string{"kube-apiserver", "kube-controller-manager"} {
		if err := os.WriteFile(filepath.Join(bin, b), []byte(broken), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("KUBEBUILDER_ASSETS", bin)
	dir := t.TempDir()
	done := make(chan error, 1)
	go func() {
		_, err := Start(context.Background(), Options{ManagementClusters: 1, Dir: dir})
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("Start hung on a failing kube-apiserver")
	}
	if err == nil {
		t.Fatal("Start with a failing kube-apiserver succeeded")
	}
	for _, want := range []string{"kube-apiserver (hub) exited during start-up", filepath.Join(dir, "logs", "hub-kube-apiserver.log"), "simulated start-up failure"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

func TestPortInUseIsAClearError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = Start(context.Background(), Options{ManagementClusters: 1, HubAPIServerPort: port})
	if err == nil {
		t.Fatal("Start on a busy port succeeded")
	}
	if want := fmt.Sprintf("kube-apiserver (hub): port %d is in use", port); !strings.Contains(err.Error(), want) {
		t.Fatalf("error does not say %q:\n%v", want, err)
	}
}
