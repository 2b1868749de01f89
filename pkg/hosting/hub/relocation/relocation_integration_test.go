//go:build integration

package relocation_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/relocation"
)

// The package's one fleet: hub and two management clusters whose
// HyperShift stand-ins run real guests.
var (
	env  *fleettest.Env
	hubc client.Client
)

func TestMain(m *testing.M) {
	fleettest.MainWithGuests(m, 2, hcpfleet.Options{}, func(e *fleettest.Env) {
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

// TestWorksMoveAHostedClusterWithItsData drives the relocation's
// ManifestWorks by hand (the controller is not wired yet) through the real
// work agents and HyperShift stand-ins: a delivered hosted cluster is
// paused through the pause work, which reads back the pause and the
// snapshot URL; the delivery's ManifestWork moved to the other cluster
// (DestinationWork) restores the snapshot there, with the same infraID,
// and a ConfigMap written into the guest before the move is read from the
// restored guest.
func TestWorksMoveAHostedClusterWithItsData(t *testing.T) {
	ctx := context.Background()
	if err := fleettest.Tenant(ctx, hubc, "team-move"); err != nil {
		t.Fatal(err)
	}
	if err := hubc.Create(ctx, fleettest.HCD("team-move", "app")); err != nil {
		t.Fatal(err)
	}
	hcd := &v1alpha1.HostedClusterDeployment{}
	env.Eventually(t, 3*time.Minute, "app delivered and Available", func(ctx context.Context) error {
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: "team-move", Name: "app"}, hcd); err != nil {
			return err
		}
		if c := hcd.Status.HostingCluster; c == "" || !conditionTrue(hcd, v1alpha1.ConditionAvailable) {
			return fmt.Errorf("bound to %q, conditions %v", c, hcd.Status.Conditions)
		}
		return nil
	})
	source := hcd.Status.HostingCluster
	destination := "cluster-1"
	if source == destination {
		destination = "cluster-2"
	}
	guest := guestClient(t, source)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "default"}, Data: map[string]string{"answer": "42"}}
	if _, err := guest.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Pausing, BackingUp.
	pause, err := relocation.PauseWork(source, "team-move", "app", v1alpha1.DefaultHostingNamespace, "app", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := hubc.Create(ctx, pause); err != nil {
		t.Fatal(err)
	}
	var sourceFacts relocation.HostedClusterFacts
	env.Eventually(t, 2*time.Minute, "the source paused, with a snapshot", func(ctx context.Context) error {
		w := &workv1.ManifestWork{}
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(pause), w); err != nil {
			return err
		}
		if sourceFacts = relocation.Observe(w); !sourceFacts.Paused || sourceFacts.SnapshotURL == "" {
			return fmt.Errorf("observed %+v", sourceFacts)
		}
		return nil
	})
	if sourceFacts.Identity.InfraID == "" {
		t.Fatalf("the source reports no infraID: %+v", sourceFacts)
	}

	// Restoring, Verifying.
	delivered := &workv1.ManifestWork{}
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: source, Name: hosting.WorkName("team-move", "app")}, delivered); err != nil {
		t.Fatal(err)
	}
	dest, err := relocation.DestinationWork(delivered, destination, sourceFacts.SnapshotURL, sourceFacts.Identity.ClusterID)
	if err != nil {
		t.Fatal(err)
	}
	if err := hubc.Create(ctx, dest); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hubc.Delete(context.Background(), dest) })
	env.Eventually(t, 3*time.Minute, "the destination Available", func(ctx context.Context) error {
		w := &workv1.ManifestWork{}
		if err := hubc.Get(ctx, client.ObjectKeyFromObject(dest), w); err != nil {
			return err
		}
		if f := relocation.Observe(w); !f.Available || f.Identity != sourceFacts.Identity {
			return fmt.Errorf("observed %+v; the source is %+v", f, sourceFacts.Identity)
		}
		return nil
	})
	got, err := guestClient(t, destination).CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the ConfigMap written before the move, on the destination: %v", err)
	}
	if got.Data["answer"] != "42" {
		t.Fatalf("the ConfigMap written before the move has %v on the destination", got.Data)
	}

	// Deleting the pause work orphans: the source's HostedCluster stays.
	if err := hubc.Delete(ctx, pause); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, time.Minute, "the pause work gone", func(ctx context.Context) error {
		err := hubc.Get(ctx, client.ObjectKeyFromObject(pause), &workv1.ManifestWork{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errors.New("still there")
	})
	if _, err := kubernetes.NewForConfigOrDie(env.Fleet.Cluster(source).Config()).CoreV1().Secrets(v1alpha1.DefaultHostingNamespace).
		Get(ctx, hypershiftsim.KubeconfigSecretName("app"), metav1.GetOptions{}); err != nil {
		t.Fatalf("the source's HostedCluster went with the pause work: %v", err)
	}
}

func conditionTrue(hcd *v1alpha1.HostedClusterDeployment, t string) bool {
	for _, c := range hcd.Status.Conditions {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// guestClient waits for HostedCluster app on cluster to publish its admin
// kubeconfig and returns a client of its guest.
func guestClient(t *testing.T, cluster string) kubernetes.Interface {
	t.Helper()
	host := kubernetes.NewForConfigOrDie(env.Fleet.Cluster(cluster).Config())
	var guest kubernetes.Interface
	env.Eventually(t, 2*time.Minute, "app's guest on "+cluster, func(ctx context.Context) error {
		s, err := host.CoreV1().Secrets(v1alpha1.DefaultHostingNamespace).Get(ctx, hypershiftsim.KubeconfigSecretName("app"), metav1.GetOptions{})
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
