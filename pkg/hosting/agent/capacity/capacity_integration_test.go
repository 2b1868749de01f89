//go:build integration

package capacity_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/kubeletsim"
	addonhub "github.com/hcp-fleet/hcp-fleet/pkg/addon/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/capacity"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

var (
	env   *fleettest.Env
	fleet *localfleet.Fleet
)

func TestMain(m *testing.M) {
	fleettest.Main(m, 1, func(e *fleettest.Env) { env, fleet = e, e.Fleet })
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	env.Eventually(t, timeout, what, cond)
}

var hcGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}

func TestReportFollowsHostedClusters(t *testing.T) {
	ctx := context.Background()
	hubDyn := dynamic.NewForConfigOrDie(fleet.Hub.Config())
	clusters := clusterclient.NewForConfigOrDie(fleet.Hub.Config())
	spoke := kubernetes.NewForConfigOrDie(fleet.Cluster("cluster-1").Config())
	spokeDyn := dynamic.NewForConfigOrDie(fleet.Cluster("cluster-1").Config())

	// Small capacity so the test can fill the cluster.
	patch := []byte(`{"spec":{"capacity":{"maxHostedClusters":3,"aboveThreshold":2}}}`)
	if _, err := hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Patch(ctx, "default", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := hcpfleet.EnableOnAll(ctx, fleet); err != nil {
		t.Fatal(err)
	}

	// A Placement that only takes management clusters with room.
	const ns = "hcp-users"
	if _, err := kubernetes.NewForConfigOrDie(fleet.Hub.Config()).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := clusters.ClusterV1beta2().ManagedClusterSetBindings(ns).Create(ctx, &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "global", Namespace: ns}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := clusters.ClusterV1beta1().Placements(ns).Create(ctx, &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: "with-room", Namespace: ns},
		Spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: capacity.ClaimHostingCluster, Operator: metav1.LabelSelectorOpIn, Values: []string{"true"}},
				{Key: capacity.ClaimFull, Operator: metav1.LabelSelectorOpIn, Values: []string{"false"}},
			}},
		}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	expect := func(what string, hosted int, claims map[string]string, freeCapacity int32, placed bool) {
		t.Helper()
		eventually(t, 2*time.Minute, what, func(ctx context.Context) error {
			mc, err := clusters.ClusterV1().ManagedClusters().Get(ctx, "cluster-1", metav1.GetOptions{})
			if err != nil {
				return err
			}
			got := map[string]string{}
			for _, c := range mc.Status.ClusterClaims {
				got[c.Name] = c.Value
			}
			for k, v := range claims {
				if got[k] != v {
					return fmt.Errorf("ManagedCluster claim %s=%q, want %q (claims %v)", k, got[k], v, got)
				}
			}
			score, err := clusters.ClusterV1alpha1().AddOnPlacementScores("cluster-1").Get(ctx, capacity.ScoreName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			scores := map[string]int32{}
			for _, s := range score.Status.Scores {
				scores[s.Name] = s.Value
			}
			if scores[capacity.ScoreHostedClusters] != int32(hosted) || scores[capacity.ScoreFreeCapacity] != freeCapacity {
				return fmt.Errorf("scores %v, want %d hosted and free capacity %d", scores, hosted, freeCapacity)
			}
			decided, err := localfleet.DecidedClusters(ctx, clusters, ns, "with-room")
			if err != nil {
				return err
			}
			if selected := slices.Contains(decided, "cluster-1"); selected != placed {
				return fmt.Errorf("Placement with-room selects cluster-1: %v, want %v", selected, placed)
			}
			return nil
		})
	}

	expect("empty cluster", 0, map[string]string{
		capacity.ClaimHostingCluster: "true", capacity.ClaimZero: "true", capacity.ClaimUnmanagedHostedClusters: "0", capacity.ClaimFull: "false", capacity.ClaimAboveThreshold: "false",
		capacity.ClaimSupportedVersions: strings.Join(hypershiftsim.SupportedVersions, ","), capacity.ClaimPlatforms: "Agent,KubeVirt,None",
	}, 100, true)

	if _, err := spoke.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// hc-1 and hc-2 as hcp-fleet delivers them (labelled with their
	// HostedClusterDeployment); hc-3 created by someone else, unlabelled: it
	// counts in the total and as unmanaged.
	for i := 1; i <= 2; i++ {
		hc := fleettest.HostedCluster("clusters", fmt.Sprintf("hc-%d", i))
		hc.SetLabels(map[string]string{hosting.LabelHCDNamespace: ns, hosting.LabelHCDName: fmt.Sprintf("hcd-%d", i)})
		if _, err := spokeDyn.Resource(hcGVR).Namespace("clusters").Create(ctx, hc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expect("two managed hosted clusters: above threshold", 2, map[string]string{
		capacity.ClaimZero: "false", capacity.ClaimFull: "false", capacity.ClaimAboveThreshold: "true", capacity.ClaimHostedClusters: "2",
		capacity.ClaimUnmanagedHostedClusters: "0",
	}, -33, true)

	if _, err := spokeDyn.Resource(hcGVR).Namespace("clusters").Create(ctx, fleettest.HostedCluster("clusters", "hc-3"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("three hosted clusters, one unmanaged: full, not placed", 3, map[string]string{
		capacity.ClaimFull: "true", capacity.ClaimHostedClusters: "3", capacity.ClaimUnmanagedHostedClusters: "1",
	}, -100, false)

	if err := spokeDyn.Resource(hcGVR).Namespace("clusters").Delete(ctx, "hc-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("one managed deleted: room again", 2, map[string]string{
		capacity.ClaimFull: "false", capacity.ClaimHostedClusters: "2", capacity.ClaimUnmanagedHostedClusters: "1",
	}, -33, true)

	// The count follows label changes, not only creations and deletions.
	addLabel := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:"hcd-3"}}}`, hosting.LabelHCDName))
	if _, err := spokeDyn.Resource(hcGVR).Namespace("clusters").Patch(ctx, "hc-3", types.MergePatchType, addLabel, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("unmanaged one labelled", 2, map[string]string{capacity.ClaimHostedClusters: "2", capacity.ClaimUnmanagedHostedClusters: "0"}, -33, true)
}

// TestCapacityFromNodes: with a size per hosted control plane in the
// HostingConfig, the agent reports the capacity the kubelet stand-in's
// Nodes (real Node objects with allocatable resources) take, with its
// inputs; the scheduler's inputs and the fleet view read that capacity on
// the hub, and it follows Nodes joining and being cordoned.
func TestCapacityFromNodes(t *testing.T) {
	ctx := context.Background()
	hubDyn := dynamic.NewForConfigOrDie(fleet.Hub.Config())
	hubc, err := client.New(fleet.Hub.Config(), client.Options{Scheme: hub.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := hcpfleet.EnableOnAll(ctx, fleet); err != nil {
		t.Fatal(err)
	}
	// 3 default workers: cpu 48 / 5 = 9, memory 192Gi / 18Gi = 10.
	patch := []byte(`{"spec":{"capacity":{"maxHostedClusters":80,"aboveThreshold":60,"perHostedControlPlane":{"cpu":"5","memory":"18Gi"}}}}`)
	if _, err := hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Patch(ctx, "default", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		undo := []byte(`{"spec":{"capacity":{"perHostedControlPlane":null}}}`)
		if _, err := hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Patch(ctx, "default", types.MergePatchType, undo, metav1.PatchOptions{}); err != nil {
			t.Error(err)
		}
	})
	expect := func(what string, capacity int32, basis string) {
		t.Helper()
		eventually(t, 2*time.Minute, what, func(ctx context.Context) error {
			snapshot, err := fleetview.Collect(ctx, hubc, "")
			if err != nil {
				return err
			}
			var host *fleetview.Host
			for i := range snapshot.Hosts {
				if snapshot.Hosts[i].Name == "cluster-1" {
					host = &snapshot.Hosts[i]
				}
			}
			switch {
			case host == nil:
				return fmt.Errorf("fleet view shows no cluster-1: %+v", snapshot.Hosts)
			case host.Capacity != capacity || host.CapacityBasis != basis:
				return fmt.Errorf("fleet view: capacity %d (%q), want %d (%q)", host.Capacity, host.CapacityBasis, capacity, basis)
			}
			c, err := (scheduling.Inputs{Client: hubc, Bound: func(context.Context, string) ([]v1alpha1.HostedClusterDeployment, error) { return nil, nil }}).Candidate(ctx, "cluster-1")
			if err != nil {
				return err
			}
			if c.Capacity != capacity {
				return fmt.Errorf("scheduler's candidate capacity %d, want %d", c.Capacity, capacity)
			}
			return nil
		})
	}
	expect("capacity from 3 workers at 5 CPU / 18Gi", 9,
		"min(maxHostedClusters 80, 3 nodes: cpu 48, memory 192Gi; per hosted control plane cpu 5, memory 18Gi (HostingConfig) = 9) = 9")

	worker := kubeletsim.Node{Name: "worker-3", CPU: resource.MustParse("16"), Memory: resource.MustParse("64Gi")}
	if err := env.Product.RegisterNodes(ctx, "cluster-1", worker); err != nil {
		t.Fatal(err)
	}
	expect("a fourth worker joins", 12,
		"min(maxHostedClusters 80, 4 nodes: cpu 64, memory 256Gi; per hosted control plane cpu 5, memory 18Gi (HostingConfig) = 12) = 12")

	worker.Unschedulable = true
	if err := env.Product.RegisterNodes(ctx, "cluster-1", worker); err != nil {
		t.Fatal(err)
	}
	expect("it is cordoned", 9,
		"min(maxHostedClusters 80, 3 nodes: cpu 48, memory 192Gi; per hosted control plane cpu 5, memory 18Gi (HostingConfig) = 9) = 9")
}
