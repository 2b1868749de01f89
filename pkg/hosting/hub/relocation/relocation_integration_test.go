//go:build integration

package relocation_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/importer"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/relocation"
)

// The package's one fleet: hub and two management clusters whose
// HyperShift stand-ins run real guests.
var (
	env  *fleettest.Env
	hubc client.Client
	// pauseTimeout, when set, is the --relocation-pause-timeout of the hubs
	// started from then on (TestRelocationWithoutSnapshotRollsBack).
	pauseTimeout atomic.Int64
)

func TestMain(m *testing.M) {
	// The hub's writes are counted for BenchmarkDrain.
	opts := hcpfleet.Options{HubTransport: countHubWrites, Hub: func(o *hub.Options) {
		if d := pauseTimeout.Load(); d > 0 {
			o.RelocationPauseTimeout = time.Duration(d)
		}
	}}
	fleettest.MainWithGuests(m, 2, opts, func(e *fleettest.Env) {
		env = e
		var err error
		if hubc, err = client.New(e.Fleet.Hub.Config(), client.Options{Scheme: hub.Scheme}); err != nil {
			panic(err)
		}
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

// TestRelocationMovesAHostedClusterWithItsData is a move as an admin asks
// for it: a HostedClusterRelocation for a delivered, imported HCD, driven by
// the hub alone through the real work agents and HyperShift stand-ins, with
// the hub stopped mid-move and a new one started (it resumes from the
// relocation's recorded phase, destination and snapshot). A
// ConfigMap written into the guest before the move is read from the
// restored guest after it; the HCD ends bound to the destination (the
// scheduler's rebind, reason Relocated), Available, with the same infraID
// and clusterID; the source's HostedCluster is gone; the kubeconfig mirror
// and the hub ManagedCluster follow the destination; no ManifestWork is left
// on the source.
func TestRelocationMovesAHostedClusterWithItsData(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	if err := fleettest.Tenant(ctx, hubc, "team-move"); err != nil {
		t.Fatal(err)
	}
	// Its TenantPolicy lets it publish the API server under example.com
	// (a fixed hostname, which a relocation requires).
	if err := fleettest.SetTenantPolicy(ctx, hubc, "team-move", func(p *v1alpha1.TenantPolicySpec) { p.Hostnames = []string{"example.com"} }); err != nil {
		t.Fatal(err)
	}
	if err := hubc.Create(ctx, fleettest.HCD("team-move", "app", fixedAPIHostname("api.app.example.com"))); err != nil {
		t.Fatal(err)
	}
	hcd := &v1alpha1.HostedClusterDeployment{}
	key := types.NamespacedName{Namespace: "team-move", Name: "app"}
	env.Eventually(t, 3*time.Minute, "app delivered, Available and imported", func(ctx context.Context) error {
		if err := hubc.Get(ctx, key, hcd); err != nil {
			return err
		}
		if c := hcd.Status.HostingCluster; c == "" || !conditionTrue(hcd, v1alpha1.ConditionAvailable) || !conditionTrue(hcd, v1alpha1.ConditionImported) {
			return fmt.Errorf("bound to %q, conditions %v", c, hcd.Status.Conditions)
		}
		return nil
	})
	source := hcd.Status.HostingCluster
	destination := "cluster-1"
	if source == destination {
		destination = "cluster-2"
	}
	sourceHC := hostedCluster(t, source)
	// HyperShift (and its stand-in) defaults spec.clusterID: the identity
	// the destination must carry over.
	if sourceHC.infraID == "" || sourceHC.clusterID == "" {
		t.Fatalf("the source's HostedCluster reports infraID %q, clusterID %q", sourceHC.infraID, sourceHC.clusterID)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "default"}, Data: map[string]string{"answer": "42"}}
	if _, err := guestClient(t, source, "app").CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	hcr := &v1alpha1.HostedClusterRelocation{ObjectMeta: metav1.ObjectMeta{Name: "app-away", Namespace: "team-move"},
		Spec: v1alpha1.HostedClusterRelocationSpec{HostedClusterDeployment: "app", Destination: destination}}
	if err := hubc.Create(ctx, hcr); err != nil {
		t.Fatal(err)
	}
	// The hub is stopped mid-move, once the destination is decided, and a
	// new one started: it goes on from the relocation's recorded phase,
	// destination and snapshot, never from the start.
	env.Eventually(t, 3*time.Minute, "the relocation past its decision", func(ctx context.Context) error {
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(hcr), hcr); err != nil {
			return err
		}
		if p := relocation.Phase(hcr.Status.Phase); p.Final() {
			t.Fatalf("the relocation ended %s before the hub was stopped: %v", p, hcr.Status.Conditions)
		}
		if order(relocation.Phase(hcr.Status.Phase)) <= order(relocation.PhasePausing) {
			return fmt.Errorf("phase %q", hcr.Status.Phase)
		}
		return nil
	})
	env.Product.StopHub(0)
	stopped := hcr.Status.DeepCopy()
	t.Logf("hub stopped in phase %s; a new hub starts", stopped.Phase)
	env.Product.StartHub()
	env.Eventually(t, 5*time.Minute, "the relocation Done", func(ctx context.Context) error {
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(hcr), hcr); err != nil {
			return err
		}
		if p := relocation.Phase(hcr.Status.Phase); p.Final() && p != relocation.PhaseDone {
			t.Fatalf("the relocation ended %s: %v", p, hcr.Status.Conditions)
		}
		if order(relocation.Phase(hcr.Status.Phase)) < order(relocation.Phase(stopped.Phase)) {
			t.Fatalf("the new hub went back from %s to %s", stopped.Phase, hcr.Status.Phase)
		}
		if hcr.Status.Phase != string(relocation.PhaseDone) {
			return fmt.Errorf("phase %q, conditions %v", hcr.Status.Phase, hcr.Status.Conditions)
		}
		return nil
	})
	if hcr.Status.Source != source || hcr.Status.Destination != destination || !hcr.Status.Switched {
		t.Fatalf("relocation record %+v", hcr.Status)
	}
	if stopped.SnapshotURL != "" && hcr.Status.SnapshotURL != stopped.SnapshotURL {
		t.Errorf("the new hub took another snapshot: %q, before the restart %q", hcr.Status.SnapshotURL, stopped.SnapshotURL)
	}

	env.Eventually(t, 2*time.Minute, "app bound to "+destination+" and Available there", func(ctx context.Context) error {
		if err := hubc.Get(ctx, key, hcd); err != nil {
			return err
		}
		if hcd.Status.HostingCluster != destination || !conditionTrue(hcd, v1alpha1.ConditionAvailable) || hcd.Annotations[hcdstatus.AnnotationBoundTo] != destination {
			return fmt.Errorf("bound to %q (annotation %q), conditions %v", hcd.Status.HostingCluster, hcd.Annotations[hcdstatus.AnnotationBoundTo], hcd.Status.Conditions)
		}
		if c := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionRelocating); c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(relocation.PhaseDone) {
			return fmt.Errorf("Relocating %+v, want False, Done", c)
		}
		return nil
	})
	if c := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionScheduled); c == nil || c.Reason != v1alpha1.ReasonRelocated {
		t.Errorf("Scheduled %+v, want reason %s", c, v1alpha1.ReasonRelocated)
	}

	if got := hostedCluster(t, destination); got.infraID != sourceHC.infraID || got.clusterID != sourceHC.clusterID {
		t.Errorf("the destination reports infraID %q, clusterID %q; the source had %q, %q", got.infraID, got.clusterID, sourceHC.infraID, sourceHC.clusterID)
	}
	got, err := guestClient(t, destination, "app").CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
	if err != nil || got.Data["answer"] != "42" {
		t.Fatalf("the ConfigMap written before the move, on the destination: %v, %v", got, err)
	}
	hcs := &unstructured.Unstructured{}
	hcs.SetGroupVersionKind(hostedClusterGVK)
	env.Eventually(t, time.Minute, "the source's HostedCluster gone", func(ctx context.Context) error {
		err := managementClient(t, source).Get(ctx, types.NamespacedName{Namespace: v1alpha1.DefaultHostingNamespace, Name: "app"}, hcs)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
	// The hub's view follows: the mirrored kubeconfig reaches the restored
	// guest, the hub ManagedCluster names the destination as its host.
	env.Eventually(t, 2*time.Minute, "the kubeconfig mirror and the import re-pointed", func(ctx context.Context) error {
		if err := hubc.Get(ctx, key, hcd); err != nil {
			return err
		}
		if hcd.Status.KubeconfigSecret == nil || hcd.Status.ManagedCluster == "" {
			return fmt.Errorf("kubeconfig %v, managed cluster %q", hcd.Status.KubeconfigSecret, hcd.Status.ManagedCluster)
		}
		mc := &clusterv1.ManagedCluster{}
		if err := hubc.Get(ctx, types.NamespacedName{Name: hcd.Status.ManagedCluster}, mc); err != nil {
			return err
		}
		if h := mc.Annotations[importer.AnnotationHostingClusterName]; h != destination {
			return fmt.Errorf("ManagedCluster %s hosted by %q", mc.Name, h)
		}
		s := &corev1.Secret{}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: "team-move", Name: hcd.Status.KubeconfigSecret.Name}, s); err != nil {
			return err
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[hcd.Status.KubeconfigSecret.Key])
		if err != nil {
			return err
		}
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		_, err = c.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
		return err
	})
	if n, problems, err := fleettest.OneManifestWorkEach(ctx, hubc, "team-move"); err != nil || n != 1 || len(problems) > 0 {
		t.Fatalf("ManifestWorks of team-move: %d, %v, %v (want one, on %s)", n, problems, err, destination)
	}
	t.Logf("moved in %s (from creation)", time.Since(start).Round(time.Second))
}

// order is a phase's place on the way to Done.
func order(p relocation.Phase) int {
	return slices.Index([]relocation.Phase{"", relocation.PhasePausing, relocation.PhaseBackingUp, relocation.PhaseRestoring,
		relocation.PhaseVerifying, relocation.PhaseSwitching, relocation.PhaseCleaningSource, relocation.PhaseDone}, p)
}

// availableHCD creates HostedClusterDeployment ns/name, relocatable (its
// API server published under api.<name>.example.com, which its namespace's
// TenantPolicy allows), with the further mutations, in a tenant namespace
// of its own, and waits until it is bound, delivered and Available.
func availableHCD(t *testing.T, ns, name string, mutate ...func(spec map[string]any)) *v1alpha1.HostedClusterDeployment {
	t.Helper()
	ctx := context.Background()
	if err := fleettest.Tenant(ctx, hubc, ns); err != nil {
		t.Fatal(err)
	}
	if err := fleettest.SetTenantPolicy(ctx, hubc, ns, func(p *v1alpha1.TenantPolicySpec) { p.Hostnames = []string{"example.com"} }); err != nil {
		t.Fatal(err)
	}
	mutations := append([]func(spec map[string]any){fixedAPIHostname("api." + name + ".example.com")}, mutate...)
	if err := hubc.Create(ctx, fleettest.HCD(ns, name, mutations...)); err != nil {
		t.Fatal(err)
	}
	hcd := &v1alpha1.HostedClusterDeployment{}
	key := types.NamespacedName{Namespace: ns, Name: name}
	env.Eventually(t, 3*time.Minute, name+" delivered and Available", func(ctx context.Context) error {
		if err := hubc.Get(ctx, key, hcd); err != nil {
			return err
		}
		if hcd.Status.HostingCluster == "" || !conditionTrue(hcd, v1alpha1.ConditionAvailable) {
			return fmt.Errorf("bound to %q, conditions %v", hcd.Status.HostingCluster, hcd.Status.Conditions)
		}
		return nil
	})
	return hcd
}

// fixedAPIHostname publishes the APIServer service under a route hostname
// of its own, which a relocation requires.
func fixedAPIHostname(host string) func(spec map[string]any) {
	return func(spec map[string]any) {
		hc := spec["hostedCluster"].(map[string]any)["spec"].(map[string]any)
		services, _ := hc["services"].([]any)
		for _, s := range services {
			m := s.(map[string]any)
			if m["service"] == "APIServer" {
				m["servicePublishingStrategy"] = map[string]any{"type": "Route", "route": map[string]any{"hostname": host}}
			}
		}
	}
}

var hostedClusterGVK = schema.GroupVersionKind{Group: "hypershift.openshift.io", Version: "v1beta1", Kind: "HostedCluster"}

type identity struct{ infraID, clusterID string }

// hostedCluster reads app's HostedCluster on cluster.
func hostedCluster(t *testing.T, cluster string) identity {
	t.Helper()
	hc := &unstructured.Unstructured{}
	hc.SetGroupVersionKind(hostedClusterGVK)
	if err := managementClient(t, cluster).Get(context.Background(), types.NamespacedName{Namespace: v1alpha1.DefaultHostingNamespace, Name: "app"}, hc); err != nil {
		t.Fatal(err)
	}
	infraID, _, _ := unstructured.NestedString(hc.Object, "spec", "infraID")
	clusterID, _, _ := unstructured.NestedString(hc.Object, "spec", "clusterID")
	return identity{infraID, clusterID}
}

func managementClient(t *testing.T, cluster string) client.Client {
	t.Helper()
	c, err := client.New(env.Fleet.Cluster(cluster).Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func conditionTrue(hcd *v1alpha1.HostedClusterDeployment, t string) bool {
	for _, c := range hcd.Status.Conditions {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// guestClient waits for HostedCluster name on cluster to publish its admin
// kubeconfig and returns a client of its guest.
func guestClient(t *testing.T, cluster, name string) kubernetes.Interface {
	t.Helper()
	host := kubernetes.NewForConfigOrDie(env.Fleet.Cluster(cluster).Config())
	var guest kubernetes.Interface
	env.Eventually(t, 2*time.Minute, name+"'s guest on "+cluster, func(ctx context.Context) error {
		s, err := host.CoreV1().Secrets(v1alpha1.DefaultHostingNamespace).Get(ctx, hypershiftsim.KubeconfigSecretName(name), metav1.GetOptions{})
		if err != nil {
			return err
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[hypershiftsim.KubeconfigKey])
		if err != nil {
			return err
		}
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		if _, err := c.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return err
		}
		guest = c
		return nil
	})
	return guest
}
