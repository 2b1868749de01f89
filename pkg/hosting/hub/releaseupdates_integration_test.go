//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/releaserollout"
)

// TestReleaseUpdates serves an update graph for one channel to the
// HyperShift stand-in: from 4.18.5, 4.18.6 (published by a ClusterImageSet)
// and 4.18.7 (not published) are available, 4.18.8 (published) is a
// conditional update whose risk EtcdSlow applies. The HCD's status shows
// them as the agent carries them, the plugin's view says where it may go,
// a ReleaseRollout to 4.18.8 skips it as Blocked naming the risk (and so
// completes), and a new rollout that accepts the risk moves it.
func TestReleaseUpdates(t *testing.T) {
	ctx := context.Background()
	const ns, channel = "updates", "stable-4.18-updates-test"
	rel := func(v string) string { return "quay.io/openshift-release-dev/ocp-release:" + v + "-multi" }
	hypershiftsim.ServeUpdateGraph(channel, &hypershiftsim.UpdateGraph{
		Nodes: []hypershiftsim.GraphNode{{Version: "4.18.5", Payload: release}, {Version: "4.18.6", Payload: rel("4.18.6")},
			{Version: "4.18.7", Payload: rel("4.18.7")}, {Version: "4.18.8", Payload: rel("4.18.8")}},
		Edges: [][2]int{{0, 1}, {0, 2}},
		ConditionalEdges: []hypershiftsim.ConditionalEdges{{Edges: []hypershiftsim.GraphEdge{{From: "4.18.5", To: "4.18.8"}},
			Risks: []configv1.ConditionalUpdateRisk{{Name: "EtcdSlow", Message: "etcd may be slow after the update", URL: "https://example.com/etcd-slow",
				MatchingRules: []configv1.ClusterCondition{{Type: "Always"}}}}}},
	})
	t.Cleanup(func() { hypershiftsim.ServeUpdateGraph(channel, nil) })
	tenant(t, ns)
	env.ServeClusterImageSets(t)
	for _, v := range []string{"4.18.6", "4.18.8"} {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "hive.openshift.io/v1", "kind": "ClusterImageSet",
			"metadata": map[string]any{"name": "img" + v + "-multi-appsub"}, "spec": map[string]any{"releaseImage": rel(v)}}}
		if err := hubc.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	u := hcd(ns, "cu-a", func(spec map[string]any) {
		spec["hostedCluster"].(map[string]any)["spec"].(map[string]any)["channel"] = channel
	})
	u.SetLabels(map[string]string{"fleet": "updates"})
	if err := hubc.Create(ctx, u); err != nil {
		t.Fatal(err)
	}

	// The updates reach the HCD's status.
	env.Eventually(t, 3*time.Minute, "updates on the HCD", func(ctx context.Context) error {
		h, err := getHCD(ctx, ns, "cu-a")
		if err != nil {
			return err
		}
		v := h.Status.Version
		if v == nil || len(v.AvailableUpdates) != 2 || len(v.ConditionalUpdates) != 1 {
			// What the stand-in and the agent wrote on the host, to tell
			// which hop is missing.
			var onHost any
			if c := hosts[h.Status.HostingCluster]; c != nil {
				list, err := c.Resource(hosting.HostedClusterGVR).List(ctx, metav1.ListOptions{LabelSelector: hosting.LabelHCDName + "=cu-a"})
				if err == nil && len(list.Items) == 1 {
					hc := list.Items[0]
					channel, _, _ := unstructured.NestedString(hc.Object, "spec", "channel")
					version, _, _ := unstructured.NestedFieldNoCopy(hc.Object, "status", "version")
					onHost = []any{hc.GetAnnotations()[hosting.AnnotationReleaseUpdates], channel, version}
				} else {
					onHost = err
				}
			}
			return fmt.Errorf("status.version %+v; on the host: %v", v, onHost)
		}
		if v.AvailableUpdates[0].Version != "4.18.7" || v.AvailableUpdates[1].Image != rel("4.18.6") {
			return fmt.Errorf("available %+v, want 4.18.7 then 4.18.6", v.AvailableUpdates)
		}
		cu := v.ConditionalUpdates[0]
		if cu.Release.Version != "4.18.8" || cu.Recommended != metav1.ConditionFalse || cu.Reason != "EtcdSlow" ||
			len(cu.Risks) != 1 || cu.Risks[0].URL != "https://example.com/etcd-slow" || !slices.Equal(cu.Risks[0].MatchingRules, []string{"Always"}) {
			return fmt.Errorf("conditional %+v", cu)
		}
		return nil
	})

	// The plugin's view: where it may go, and the risk that holds 4.18.8.
	s, err := fleetview.Collect(ctx, hubc, ns)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Deployments) != 1 || s.Deployments[0].Updates == nil {
		t.Fatalf("deployments %+v", s.Deployments)
	}
	got := s.Deployments[0].Updates
	if !slices.Equal(got.MayGoTo, []string{"4.18.6"}) || !slices.Equal(got.Unpublished, []string{"4.18.7"}) ||
		!slices.Equal(got.Conditional, []string{"4.18.8 (EtcdSlow)"}) {
		t.Errorf("updates %+v, want may go to 4.18.6, 4.18.7 unpublished, 4.18.8 conditional on EtcdSlow", got)
	}

	// A rollout to 4.18.8 skips it, naming the risk, and moves nothing.
	rr := rollout(ns, "to-4-18-8", rel("4.18.8"))
	rr.Spec.HostedClusterSelector.MatchLabels = map[string]string{"fleet": "updates"}
	createRollout(t, rr)
	final := waitRollout(t, ns, rr.Name, v1alpha1.ReasonRolloutCompleted, nil)
	if h := final.Status.HostedClusters; len(h) != 1 || h[0].State != v1alpha1.RolloutStateBlocked ||
		h[0].Reason != releaserollout.ReasonRisksNotAccepted || !strings.Contains(h[0].Message, "EtcdSlow") {
		t.Errorf("hosted clusters %+v, want cu-a Blocked %s naming EtcdSlow", h, releaserollout.ReasonRisksNotAccepted)
	}
	wantReleases(t, ns, map[string]string{"cu-a": release})
	// The gauge of the fleet's metrics says the same (the hub runs in this
	// process, so its registry is read directly).
	env.Eventually(t, time.Minute, "hcpfleet_hub_release_rollout_hcds Blocked", func(context.Context) error {
		got, err := crmetrics.Registry.Gather()
		if err != nil {
			return err
		}
		families := map[string]*dto.MetricFamily{}
		for _, f := range got {
			families[f.GetName()] = f
		}
		labels := map[string]string{"rollout": ns + "/" + rr.Name, "state": "Blocked"}
		if v, ok := sample(families, "hcpfleet_hub_release_rollout_hcds", labels); !ok || v != 1 {
			return fmt.Errorf("%v: %g (found %v), want 1", labels, v, ok)
		}
		return nil
	})

	// That rollout completed: accepting the risk there is refused (CEL),
	// since a completed rollout is done for good. A new rollout that
	// accepts it moves it, and completes at 4.18.8.
	if err := rawPatchRollout(ns, rr.Name, `{"spec":{"acceptRisks":["EtcdSlow"]}}`); err == nil || !strings.Contains(err.Error(), "completed ReleaseRollout cannot change") {
		t.Errorf("accepting risks on the completed rollout: %v, want refused", err)
	}
	accepted := rollout(ns, "to-4-18-8-accepted", rel("4.18.8"))
	accepted.Spec.HostedClusterSelector.MatchLabels = map[string]string{"fleet": "updates"}
	accepted.Spec.AcceptRisks = []string{"EtcdSlow"}
	createRollout(t, accepted)
	waitRollout(t, ns, accepted.Name, v1alpha1.ReasonRolloutCompleted, func(rr *v1alpha1.ReleaseRollout) bool {
		return rr.Status.Done == 1
	})
	wantReleases(t, ns, map[string]string{"cu-a": rel("4.18.8")})

	// A maintenance window that is not open now (the day after tomorrow,
	// UTC) holds the rollout: it says so, and moves nothing.
	for _, v := range []string{"4.18.9"} {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "hive.openshift.io/v1", "kind": "ClusterImageSet",
			"metadata": map[string]any{"name": "img" + v + "-multi-appsub"}, "spec": map[string]any{"releaseImage": rel(v)}}}
		if err := hubc.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	windowed := rollout(ns, "windowed", rel("4.18.9"))
	windowed.Spec.HostedClusterSelector.MatchLabels = map[string]string{"fleet": "updates"}
	day := v1alpha1.Weekday(time.Now().UTC().AddDate(0, 0, 2).Weekday().String())
	windowed.Spec.MaintenanceWindow = &v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{day}, Start: "00:00", DurationMinutes: 60, TimeZone: "UTC"}
	createRollout(t, windowed)
	waitRollout(t, ns, windowed.Name, v1alpha1.ReasonRolloutInProgress, func(rr *v1alpha1.ReleaseRollout) bool {
		return strings.Contains(meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRolloutProgressing).Message, "waits for the maintenance window")
	})
	wantReleases(t, ns, map[string]string{"cu-a": rel("4.18.8")})
	if err := hubc.Delete(ctx, windowed); err != nil {
		t.Fatal(err)
	}

	// A fleet admin's rollout goes before a tenant's, although younger; the
	// tenant's names it. Both paused: the precedence, not a move, is tested.
	tc := tenantClient(t, ns)
	own := rollout(ns, "tenant-own", rel("4.18.9"))
	own.Spec.HostedClusterSelector.MatchLabels = map[string]string{"fleet": "updates"}
	own.Spec.Paused = true
	if err := tc.Create(ctx, own); err != nil {
		t.Fatal(err)
	}
	forged := rollout(ns, "tenant-forged", rel("4.18.9"))
	forged.Labels = map[string]string{v1alpha1.LabelFleetAdminRollout: "true"}
	if err := tc.Create(ctx, forged); err == nil || !strings.Contains(err.Error(), "only fleet admins") {
		t.Errorf("a tenant's rollout marked as the fleet admin's: %v, want refused", err)
	}
	admin := rollout(ns, "admin-wins", rel("4.18.9"))
	admin.Spec.HostedClusterSelector.MatchLabels = map[string]string{"fleet": "updates"}
	admin.Spec.Paused = true
	admin.Labels = map[string]string{v1alpha1.LabelFleetAdminRollout: "true"}
	createRollout(t, admin)
	waitRollout(t, ns, own.Name, v1alpha1.ReasonRolloutPaused, func(rr *v1alpha1.ReleaseRollout) bool {
		h := rr.Status.HostedClusters
		return len(h) == 1 && h[0].Reason == releaserollout.ReasonClaimed && strings.Contains(h[0].Message, "admin-wins, a fleet admin's rollout")
	})
	waitRollout(t, ns, admin.Name, v1alpha1.ReasonRolloutPaused, func(rr *v1alpha1.ReleaseRollout) bool {
		h := rr.Status.HostedClusters
		return len(h) == 1 && h[0].Reason != releaserollout.ReasonClaimed
	})
	for _, rr := range []*v1alpha1.ReleaseRollout{own, admin} {
		if err := hubc.Delete(ctx, rr); err != nil {
			t.Fatal(err)
		}
	}

	// A release is one image or the latest z-stream, never both (CEL).
	both := rollout(ns, "both", rel("4.18.8"))
	both.Spec.Release.LatestZStream = true
	if err := hubc.Create(ctx, both); err == nil || !strings.Contains(err.Error(), "either an image or latestZStream") {
		t.Errorf("a rollout with an image and latestZStream: %v, want refused", err)
	}
	// One window for the rollout or windows per label, not both (CEL).
	window := v1alpha1.MaintenanceWindow{Days: []v1alpha1.Weekday{"Saturday"}, Start: "02:00", DurationMinutes: 60}
	twoKinds := rollout(ns, "two-kinds-of-window", rel("4.18.8"))
	twoKinds.Spec.MaintenanceWindow = &window
	twoKinds.Spec.MaintenanceWindows = []v1alpha1.SelectedMaintenanceWindow{{MaintenanceWindow: window}}
	if err := hubc.Create(ctx, twoKinds); err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("a rollout with maintenanceWindow and maintenanceWindows: %v, want refused", err)
	}
}
