//go:build integration

package localfleet

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OCM's ManagedCluster webhook runs here as on a real hub: it stamps a new
// taint's timeAdded, refuses a client-set one, and so a Placement's
// tolerationSeconds counts from when the taint came (a toleration of an
// hour keeps the cluster, one of a second lets it go).
func TestManagedClusterWebhookStampsTaints(t *testing.T) {
	ctx := context.Background()
	const ns, cluster, key = "toleration-test", "cluster-1", "test.hcpfleet.io/flap"
	hubKube, _ := kubernetes.NewForConfig(fleet.Hub.Config())
	clusters, _ := clusterclient.NewForConfig(fleet.Hub.Config())
	if err := ensureNamespace(ctx, hubKube, ns); err != nil {
		t.Fatal(err)
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: "global", Namespace: ns},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"}}
	if _, err := clusters.ClusterV1beta2().ManagedClusterSetBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tolerating := func(name string, seconds int64) {
		p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: clusterv1beta1.PlacementSpec{
			ClusterSets: []string{"global"},
			Tolerations: []clusterv1beta1.Toleration{{Key: key, Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: &seconds}},
		}}
		if _, err := clusters.ClusterV1beta1().Placements(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tolerating("hour", 3600)
	tolerating("second", 1)
	decided := func(ctx context.Context, placement string) ([]string, error) {
		return DecidedClusters(ctx, clusters, ns, placement)
	}
	for _, p := range []string{"hour", "second"} {
		eventually(t, time.Minute, p+" decides both clusters", func(ctx context.Context) (bool, error) {
			names, err := decided(ctx, p)
			return len(names) == 2, err
		})
	}

	// A taint without timeAdded, as OCM's own taint controller writes one.
	before := time.Now().Add(-time.Second)
	taint := func(timeAdded *metav1.Time) error {
		entry := map[string]any{"key": key, "effect": string(clusterv1.TaintEffectNoSelect)}
		if timeAdded != nil {
			entry["timeAdded"] = timeAdded
		}
		mc, err := clusters.ClusterV1().ManagedClusters().Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return err
		}
		taints := []any{}
		for _, t := range mc.Spec.Taints {
			taints = append(taints, t)
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": mc.ResourceVersion},
			"spec": map[string]any{"taints": append(taints, entry)}})
		_, err = clusters.ClusterV1().ManagedClusters().Patch(ctx, cluster, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
	t.Cleanup(func() {
		mc, err := clusters.ClusterV1().ManagedClusters().Get(context.Background(), cluster, metav1.GetOptions{})
		if err != nil {
			return
		}
		mc.Spec.Taints = slices.DeleteFunc(mc.Spec.Taints, func(t clusterv1.Taint) bool { return t.Key == key })
		_, _ = clusters.ClusterV1().ManagedClusters().Update(context.Background(), mc, metav1.UpdateOptions{})
	})
	if err := taint(nil); err != nil {
		t.Fatal(err)
	}
	mc, err := clusters.ClusterV1().ManagedClusters().Get(ctx, cluster, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(mc.Spec.Taints, func(t clusterv1.Taint) bool { return t.Key == key })
	if i < 0 || mc.Spec.Taints[i].TimeAdded.Time.Before(before) {
		t.Fatalf("the taint's timeAdded was not stamped: %+v", mc.Spec.Taints)
	}

	// A second new taint that brings its own timeAdded is refused.
	err = func() error {
		const other = "test.hcpfleet.io/backdated"
		old := metav1.NewTime(time.Now().Add(-time.Hour))
		mc, err := clusters.ClusterV1().ManagedClusters().Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: other, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: old})
		_, err = clusters.ClusterV1().ManagedClusters().Update(ctx, mc, metav1.UpdateOptions{})
		return err
	}()
	if err == nil || !strings.Contains(err.Error(), "not allowed to set TimeAdded") {
		t.Errorf("a backdated new taint: %v, want OCM's refusal", err)
	}

	// The one-second toleration lets the cluster go: the positive signal
	// that the placement controller evaluated the taint. The hour's keeps it.
	eventually(t, time.Minute, "second drops "+cluster, func(ctx context.Context) (bool, error) {
		names, err := decided(ctx, "second")
		if err == nil && slices.Contains(names, cluster) {
			err = fmt.Errorf("decisions %v", names)
		}
		return err == nil, err
	})
	if names, err := decided(ctx, "hour"); err != nil || !slices.Contains(names, cluster) {
		t.Errorf("a toleration of an hour dropped %s: decisions %v (%v)", cluster, names, err)
	}
}
