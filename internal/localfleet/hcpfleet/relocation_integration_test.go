//go:build integration

package hcpfleet_test

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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
)

// env is the package's one fleet: two management clusters whose HyperShift
// stand-ins run real guest API servers.
var env *fleettest.Env

func TestMain(m *testing.M) {
	fleettest.MainWithGuests(m, 2, hcpfleet.Options{}, func(e *fleettest.Env) {
		env = e
		hubc, err := client.New(e.Fleet.Hub.Config(), client.Options{Scheme: hub.Scheme})
		if err != nil {
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

var hcGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}

// TestMoveKeepsGuestData plays HyperShift's documented move of a
// HostedCluster between two management clusters, by hand, on the
// stand-ins and their real guests: a ConfigMap written into the guest on
// cluster-1 is read from the guest restored on cluster-2, which keeps
// serving it after the source HostedCluster is deleted.
func TestMoveKeepsGuestData(t *testing.T) {
	ctx := context.Background()
	source, dest := env.Fleet.Managed[0], env.Fleet.Managed[1]
	src, dst := dynamic.NewForConfigOrDie(source.Config()), dynamic.NewForConfigOrDie(dest.Config())
	for _, c := range []*kubernetes.Clientset{kubernetes.NewForConfigOrDie(source.Config()), kubernetes.NewForConfigOrDie(dest.Config())} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters"}}
		if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}

	hc := fleettest.HostedCluster("clusters", "moving")
	_ = unstructured.SetNestedField(hc.Object, "moving-x7k2p", "spec", "infraID")
	_ = unstructured.SetNestedField(hc.Object, "0d6e6f3c-6a5e-4c4b-9b8a-2f1d3e4c5b6a", "spec", "clusterID")
	if _, err := src.Resource(hcGVR).Namespace("clusters").Create(ctx, hc.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	guest := guestClient(t, source.Name, "moving")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "default"}, Data: map[string]string{"answer": "42"}}
	if _, err := guest.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Pause; the snapshot is taken and uploaded with the writers stopped.
	pause := []byte(`{"spec":{"pausedUntil":"true"}}`)
	if _, err := src.Resource(hcGVR).Namespace("clusters").Patch(ctx, "moving", types.MergePatchType, pause, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var snapshotURL string
	env.Eventually(t, time.Minute, "the paused source's etcd snapshot", func(ctx context.Context) error {
		live, err := src.Resource(hcGVR).Namespace("clusters").Get(ctx, "moving", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if snapshotURL = live.GetAnnotations()[hypershiftsim.AnnotationEtcdSnapshotURL]; snapshotURL == "" {
			return errors.New("no snapshot URL yet")
		}
		return nil
	})

	// The destination: the same HostedCluster, restoring the snapshot.
	moved := hc.DeepCopy()
	_ = unstructured.SetNestedStringSlice(moved.Object, []string{snapshotURL}, "spec", "etcd", "managed", "storage", "restoreSnapshotURL")
	if _, err := dst.Resource(hcGVR).Namespace("clusters").Create(ctx, moved, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	restored := guestClient(t, dest.Name, "moving")
	readKept(t, restored)

	// The source goes; the destination keeps the data.
	if err := src.Resource(hcGVR).Namespace("clusters").Delete(ctx, "moving", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, time.Minute, "the source HostedCluster gone", func(ctx context.Context) error {
		_, err := src.Resource(hcGVR).Namespace("clusters").Get(ctx, "moving", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
	readKept(t, restored)
}

// guestClient waits for the HostedCluster name on cluster to publish its
// admin kubeconfig and returns a client of its guest.
func guestClient(t *testing.T, cluster, name string) kubernetes.Interface {
	t.Helper()
	host := kubernetes.NewForConfigOrDie(env.Fleet.Cluster(cluster).Config())
	var guest kubernetes.Interface
	env.Eventually(t, 2*time.Minute, name+"'s guest on "+cluster, func(ctx context.Context) error {
		s, err := host.CoreV1().Secrets("clusters").Get(ctx, hypershiftsim.KubeconfigSecretName(name), metav1.GetOptions{})
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

func readKept(t *testing.T, guest kubernetes.Interface) {
	t.Helper()
	got, err := guest.CoreV1().ConfigMaps("default").Get(context.Background(), "kept", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the ConfigMap written before the move: %v", err)
	}
	if got.Data["answer"] != "42" {
		t.Fatalf("the ConfigMap written before the move has %v, want answer=42", got.Data)
	}
}
