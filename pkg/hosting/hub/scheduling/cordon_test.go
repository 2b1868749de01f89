package scheduling

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hubindex"
)

func TestCordonFilter(t *testing.T) {
	cordoned := ready("a", 0, 10)
	cordoned.Cordoned = true
	cands := []Candidate{cordoned, ready("b", 5, 10)}
	if d := Schedule(req, cands, StrategySpread); d.Cluster != "b" {
		t.Errorf("chose %q, want b (a is cordoned)", d.Cluster)
	}
	// Only the cordoned one: the reason says so.
	d := Schedule(req, []Candidate{cordoned}, StrategySpread)
	if d.Cluster != "" || d.Reason() != v1alpha1.ReasonHostingClusterCordoned || !strings.Contains(d.Message(), hosting.TaintUnschedulable) {
		t.Errorf("decision %q %s: %s", d.Cluster, d.Reason(), d.Message())
	}
	// Tolerated (the Placement tolerates it and the policy allows it).
	tolerant := req
	tolerant.ToleratesCordon = true
	if d := Schedule(tolerant, []Candidate{cordoned}, StrategySpread); d.Cluster != "a" {
		t.Errorf("a tolerating request chose %q, want a", d.Cluster)
	}
	// explain shows the filter first, failing.
	x := Explain(req, []Candidate{cordoned}, StrategySpread)
	if f := x.Candidates[0].Filters[0]; f.Filter != RejectCordoned || f.Passed {
		t.Errorf("first filter %+v, want %s failing", f, RejectCordoned)
	}
}

func TestTolerationOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		tol  clusterv1beta1.Toleration
		want bool
	}{
		{"exists on the key", clusterv1beta1.Toleration{Key: hosting.TaintUnschedulable, Operator: clusterv1beta1.TolerationOpExists}, true},
		{"equal, empty value", clusterv1beta1.Toleration{Key: hosting.TaintUnschedulable, Operator: clusterv1beta1.TolerationOpEqual}, true},
		{"every taint", clusterv1beta1.Toleration{Operator: clusterv1beta1.TolerationOpExists}, true},
		{"NoSelect only", clusterv1beta1.Toleration{Key: hosting.TaintUnschedulable, Operator: clusterv1beta1.TolerationOpExists, Effect: clusterv1.TaintEffectNoSelect}, true},
		{"another effect", clusterv1beta1.Toleration{Key: hosting.TaintUnschedulable, Operator: clusterv1beta1.TolerationOpExists, Effect: clusterv1.TaintEffectPreferNoSelect}, false},
		{"another key", clusterv1beta1.Toleration{Key: "cluster.open-cluster-management.io/unreachable", Operator: clusterv1beta1.TolerationOpExists}, false},
		{"equal, another value", clusterv1beta1.Toleration{Key: hosting.TaintUnschedulable, Operator: clusterv1beta1.TolerationOpEqual, Value: "x"}, false},
	} {
		if got := TolerationOf([]clusterv1beta1.Toleration{tc.tol}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestUntoleratedAvailabilityTaints(t *testing.T) {
	seconds := int64(300)
	for _, tc := range []struct {
		name string
		tols []clusterv1beta1.Toleration
		want []string
	}{
		{"none", nil, AvailabilityTaints},
		{"both, for the grace", []clusterv1beta1.Toleration{
			{Key: clusterv1.ManagedClusterTaintUnavailable, Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: &seconds},
			{Key: clusterv1.ManagedClusterTaintUnreachable, Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: &seconds},
		}, nil},
		{"unreachable only", []clusterv1beta1.Toleration{
			{Key: clusterv1.ManagedClusterTaintUnreachable, Operator: clusterv1beta1.TolerationOpExists},
		}, []string{clusterv1.ManagedClusterTaintUnavailable}},
		{"every taint", []clusterv1beta1.Toleration{{Operator: clusterv1beta1.TolerationOpExists}}, nil},
		{"the cordon only", []clusterv1beta1.Toleration{{Key: hosting.TaintUnschedulable, Operator: clusterv1beta1.TolerationOpExists}}, AvailabilityTaints},
	} {
		if got := UntoleratedAvailabilityTaints(tc.tols); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestManagedClusterFactsSeeTheCordon(t *testing.T) {
	mc := &clusterv1.ManagedCluster{}
	before := managedClusterFacts(mc)
	mc.Spec.Taints = []clusterv1.Taint{{Key: hosting.TaintUnschedulable, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.Now()}}
	if managedClusterFacts(mc) == before {
		t.Error("a cordon does not change the facts: uncordon would not retry what waits")
	}
}

func TestRecoverBinding(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1alpha1.AddToScheme, workv1.Install} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "hc"}}
	wasBound := hcd.DeepCopy()
	wasBound.Annotations = map[string]string{hcdstatus.AnnotationBoundTo: "cluster-2"}
	work := func(cluster, name string) client.Object {
		return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name,
			Labels: map[string]string{hosting.LabelHCDNamespace: "team", hosting.LabelHCDName: "hc"}}}
	}
	// What cluster's agent reports: a HostedCluster labelled for team/hc,
	// and an unmanaged one.
	reported := func(cluster string) client.Object {
		return &v1alpha1.HostedClusterInventory{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: v1alpha1.InventoryName},
			Status: v1alpha1.HostedClusterInventoryStatus{HostedClusters: []v1alpha1.InventoryHostedCluster{
				{Namespace: "clusters", Name: "hc", Deployment: &v1alpha1.InventoryDeployment{Namespace: "team", Name: "hc", UID: "old"}},
				{Namespace: "clusters", Name: "other", Available: metav1.ConditionTrue},
			}}}
	}
	unrelated := &v1alpha1.HostedClusterInventory{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: v1alpha1.InventoryName},
		Status: v1alpha1.HostedClusterInventoryStatus{HostedClusters: []v1alpha1.InventoryHostedCluster{
			{Namespace: "clusters", Name: "hc", Deployment: &v1alpha1.InventoryDeployment{Namespace: "other-team", Name: "hc"}},
			{Namespace: "clusters", Name: "hc2"}}}}
	deleting := work("cluster-3", hosting.WorkName("team", "hc")).(*workv1.ManifestWork)
	deleting.Finalizers = []string{"x"}
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	for _, tc := range []struct {
		name          string
		hcd           *v1alpha1.HostedClusterDeployment
		works         []client.Object
		cluster, want string
	}{
		{"new", hcd, nil, "", ""},
		{"an extension's work only", hcd, []client.Object{work("cluster-1", "ext-hc")}, "", ""},
		{"its work in one cluster", hcd, []client.Object{work("cluster-1", hosting.WorkName("team", "hc"))}, "cluster-1", ""},
		{"its work restored, UID changed", wasBound, []client.Object{work("cluster-2", hosting.WorkName("team", "hc"))}, "cluster-2", ""},
		{"was bound, no work yet", wasBound, nil, "", v1alpha1.ReasonBindingUnknown},
		{"works in two clusters", hcd, []client.Object{work("cluster-1", hosting.WorkName("team", "hc")), work("cluster-2", hosting.WorkName("team", "hc"))}, "", v1alpha1.ReasonBindingAmbiguous},
		{"its work being deleted", hcd, []client.Object{deleting}, "", v1alpha1.ReasonBindingUnknown},
		{"was bound, no work, reported running", wasBound, []client.Object{reported("cluster-2"), unrelated}, "cluster-2", ""},
		{"was bound, no work, another's reported", wasBound, []client.Object{unrelated}, "", v1alpha1.ReasonBindingUnknown},
		{"was bound, no work, reported elsewhere only", wasBound, []client.Object{reported("cluster-3")}, "", v1alpha1.ReasonBindingUnknown},
		{"was bound, no work, reported on two", wasBound, []client.Object{reported("cluster-2"), reported("cluster-3")}, "", v1alpha1.ReasonBindingAmbiguous},
		// Never from a report alone: a new deployment named like an
		// orphaned HostedCluster is decided as new.
		{"new, reported running", hcd, []client.Object{reported("cluster-2")}, "", ""},
		{"the work wins over a report", wasBound, []client.Object{work("cluster-1", hosting.WorkName("team", "hc")), reported("cluster-2")}, "cluster-1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.works...)
			for _, ix := range hubindex.Indexes() {
				b = b.WithIndex(ix.Object, ix.Field, ix.Extract)
			}
			c := b.Build()
			// As explain reads (labels) and as the scheduler does (index).
			for _, indexed := range []bool{false, true} {
				rc, err := recoverBinding(ctx, c, tc.hcd, indexed)
				if err != nil {
					t.Fatal(err)
				}
				if rc.cluster != tc.cluster || rc.reason != tc.want {
					t.Errorf("indexed %v: got %q %q (%s), want %q %q", indexed, rc.cluster, rc.reason, rc.message, tc.cluster, tc.want)
				}
				if rc.reason != "" && rc.message == "" {
					t.Error("a reason without a message")
				}
			}
		})
	}
}
