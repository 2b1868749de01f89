//go:build integration

package hypershiftsim_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
)

// snapshots are the suite's control planes: the default EndpointOnly ones,
// with data in memory, so the stand-in snapshots and restores them.
var snapshots = &memoryControlPlanes{data: map[types.UID][]byte{}}

type memoryControlPlanes struct {
	hypershiftsim.EndpointOnly
	mu   sync.Mutex
	data map[types.UID][]byte // each control plane's etcd data
}

func (m *memoryControlPlanes) Snapshot(_ context.Context, hc *hyperv1.HostedCluster) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.data[hc.UID]; !ok {
		m.data[hc.UID] = []byte("etcd data of " + string(hc.UID))
	}
	return m.data[hc.UID], nil
}

func (m *memoryControlPlanes) Restore(_ context.Context, hc *hyperv1.HostedCluster, data []byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.data[hc.UID]; ok {
		return false, nil
	}
	m.data[hc.UID] = data
	return true, nil
}

func (m *memoryControlPlanes) get(uid types.UID) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.data[uid]
}

// TestPauseSnapshotRestore plays HyperShift's move of a HostedCluster:
// paused, it reconciles nothing (a release change waits) and its etcd
// snapshot's URL is annotated; a HostedCluster created with that URL as
// restoreSnapshotURL starts from the same data; unpaused, the first one
// rolls the waiting change out and forgets the snapshot.
func TestPauseSnapshotRestore(t *testing.T) {
	ctx := context.Background()
	createHostedCluster(t, "moving", release418, nil)
	available(t, "moving")
	// HyperShift defaults spec.clusterID (defaultClusterIDsIfNeeded): the
	// identity a restore elsewhere carries over.
	first, err := getHC(ctx, "moving")
	if err != nil {
		t.Fatal(err)
	}
	clusterID, _, _ := unstructured.NestedString(first.Object, "spec", "clusterID")
	if clusterID == "" {
		t.Fatal("spec.clusterID not defaulted")
	}

	setPausedUntil(t, "moving", "true")
	var snapshotURL string
	eventually(t, "moving paused with a snapshot", func(ctx context.Context) error {
		hc, err := getHC(ctx, "moving")
		if err != nil {
			return err
		}
		if s, r, _ := condition(hc, string(hyperv1.ReconciliationActive)); s != "False" || r != hyperv1.ReconciliationPausedConditionReason {
			return fmt.Errorf("ReconciliationActive=%s (%s)", s, r)
		}
		if snapshotURL = hc.GetAnnotations()[hypershiftsim.AnnotationEtcdSnapshotURL]; snapshotURL == "" {
			return fmt.Errorf("no %s annotation", hypershiftsim.AnnotationEtcdSnapshotURL)
		}
		return nil
	})

	// A release change while paused: once the stand-in has seen it
	// (ReconciliationActive at the new generation), nothing rolled out.
	hc, err := getHC(ctx, "moving")
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(hc.Object, release419, "spec", "release", "image")
	if hc, err = dyn.Resource(hcGVR).Namespace("clusters").Update(ctx, hc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the paused HostedCluster's new generation seen", func(ctx context.Context) error {
		live, err := getHC(ctx, "moving")
		if err != nil {
			return err
		}
		return conditionAtGeneration(live, string(hyperv1.ReconciliationActive), "False", hc.GetGeneration())
	})
	live, err := getHC(ctx, "moving")
	if err != nil {
		t.Fatal(err)
	}
	if desired, _, _ := unstructured.NestedString(live.Object, "status", "version", "desired", "image"); desired != release418 {
		t.Fatalf("paused HostedCluster rolled out %s; want it still at %s", desired, release418)
	}

	data := fetch(t, snapshotURL)
	if want := snapshots.get(live.GetUID()); string(data) != string(want) {
		t.Fatalf("the uploaded snapshot is %q, want the control plane's data %q", data, want)
	}

	// The destination: restored from the snapshot before it runs.
	moved := hostedClusterRestoringFrom("moved", snapshotURL)
	created, err := dyn.Resource(hcGVR).Namespace("clusters").Create(ctx, moved, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	available(t, "moved")
	if got := snapshots.get(created.GetUID()); string(got) != string(data) {
		t.Fatalf("the restored control plane has %q, want the snapshot %q", got, data)
	}

	// Unpaused (a rollback, say): the waiting release rolls out and the
	// snapshot, stale from now on, is no longer advertised.
	setPausedUntil(t, "moving", "")
	eventually(t, "moving reconciled again", func(ctx context.Context) error {
		hc, err := getHC(ctx, "moving")
		if err != nil {
			return err
		}
		if s, _, _ := condition(hc, string(hyperv1.ReconciliationActive)); s != "True" {
			return fmt.Errorf("ReconciliationActive=%s", s)
		}
		if desired, _, _ := unstructured.NestedString(hc.Object, "status", "version", "desired", "image"); desired != release419 {
			return fmt.Errorf("desired release %s, want %s", desired, release419)
		}
		if u, ok := hc.GetAnnotations()[hypershiftsim.AnnotationEtcdSnapshotURL]; ok {
			return fmt.Errorf("still annotated with the snapshot %s", u)
		}
		if id, _, _ := unstructured.NestedString(hc.Object, "spec", "clusterID"); id != clusterID {
			t.Fatalf("spec.clusterID changed from %q to %q", clusterID, id)
		}
		return nil
	})
}

// TestPausedUntilTimeAndInvalid: a pause until a time in the past is no
// pause, and a value that is neither a time nor a boolean is reported, as
// upstream's GenerateReconciliationActiveCondition does.
func TestPausedUntilTimeAndInvalid(t *testing.T) {
	createHostedCluster(t, "pause-past", release418, nil)
	available(t, "pause-past")
	setPausedUntil(t, "pause-past", "2001-01-01T00:00:00Z")
	eventually(t, "a past pausedUntil is not a pause", func(ctx context.Context) error {
		hc, err := getHC(ctx, "pause-past")
		if err != nil {
			return err
		}
		return conditionAtGeneration(hc, string(hyperv1.ReconciliationActive), "True", hc.GetGeneration())
	})
	hc, err := getHC(context.Background(), "pause-past")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := hc.GetAnnotations()[hypershiftsim.AnnotationEtcdSnapshotURL]; ok {
		t.Fatal("a HostedCluster that is not paused was snapshotted")
	}
}

func available(t *testing.T, name string) {
	t.Helper()
	eventually(t, name+" Available", func(ctx context.Context) error {
		hc, err := getHC(ctx, name)
		if err != nil {
			return err
		}
		if s, r, _ := condition(hc, "Available"); s != "True" {
			return fmt.Errorf("Available=%s (%s)", s, r)
		}
		return nil
	})
}

func setPausedUntil(t *testing.T, name, value string) {
	t.Helper()
	patch := `{"spec":{"pausedUntil":null}}`
	if value != "" {
		patch = fmt.Sprintf(`{"spec":{"pausedUntil":%q}}`, value)
	}
	if _, err := dyn.Resource(hcGVR).Namespace("clusters").Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func conditionAtGeneration(hc *unstructured.Unstructured, condType, status string, generation int64) error {
	conds, _, _ := unstructured.NestedSlice(hc.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] != condType {
			continue
		}
		if g, _ := m["observedGeneration"].(int64); g != generation || m["status"] != status {
			return fmt.Errorf("%s=%v at generation %v, want %s at %d", condType, m["status"], m["observedGeneration"], status, generation)
		}
		return nil
	}
	return fmt.Errorf("no %s condition", condType)
}

func hostedClusterRestoringFrom(name, snapshotURL string) *unstructured.Unstructured {
	hc := fleettest.HostedCluster("clusters", name)
	_ = unstructured.SetNestedStringSlice(hc.Object, []string{snapshotURL}, "spec", "etcd", "managed", "storage", "restoreSnapshotURL")
	return hc
}

func fetch(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u) //nolint:gosec,noctx // the stand-in's loopback snapshot store
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", u, resp.Status, err)
	}
	return data
}
