//go:build integration

package localfleet

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestGuestSnapshotRestore moves a guest's data to another guest: a
// ConfigMap written into the first is read from the second, started only
// after the restore; a restore into a guest with data writes nothing.
func TestGuestSnapshotRestore(t *testing.T) {
	ctx := context.Background()
	source, err := fleet.StartGuest(ctx, "guest-snap-source")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.StopGuest("guest-snap-source") })
	kube := kubernetes.NewForConfigOrDie(source.Config())
	if err := ensureNamespace(ctx, kube, "tenant-data"); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: "tenant-data"}, Data: map[string]string{"answer": "42"}}
	if _, err := kube.CoreV1().ConfigMaps("tenant-data").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	snap, err := fleet.SnapshotGuest(ctx, "guest-snap-source")
	if err != nil {
		t.Fatal(err)
	}
	if _, running := fleet.Guest("guest-snap-source"); running {
		t.Fatal("the source guest still runs after its snapshot: its writers must be stopped first")
	}
	restored, err := fleet.RestoreGuest(ctx, "guest-snap-dest", snap)
	if err != nil {
		t.Fatal(err)
	}
	if !restored {
		t.Fatal("the restore into an empty guest wrote nothing")
	}
	dest, err := fleet.StartGuest(ctx, "guest-snap-dest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.StopGuest("guest-snap-dest") })
	got, err := kubernetes.NewForConfigOrDie(dest.Config()).CoreV1().ConfigMaps("tenant-data").Get(ctx, "kept", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the ConfigMap written into the source is not in the restored guest: %v", err)
	}
	if got.Data["answer"] != "42" {
		t.Fatalf("restored ConfigMap data = %v, want answer=42", got.Data)
	}

	// Only into an empty etcd, as HyperShift restores: the stopped
	// destination keeps its own data.
	fleet.StopGuest("guest-snap-dest")
	again, err := fleet.RestoreGuest(ctx, "guest-snap-dest", &GuestSnapshot{Keys: []GuestKey{{Key: []byte("overwritten"), Value: []byte("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	if again {
		t.Fatal("a restore into a guest with data wrote it")
	}
}
