package scheduling

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// infraIDPattern is HyperShift's spec.infraID rule (hostedcluster_types.go).
var infraIDPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func TestDeriveInfraID(t *testing.T) {
	a := DeriveInfraID("prod", "0b7c2a3e-1111-4e5f-9a0b-123456789abc")
	if !regexp.MustCompile(`^prod-[a-z2-7]{5}$`).MatchString(a) {
		t.Errorf("derived infraID %q, want prod-<5 lowercase base32>", a)
	}
	if a != DeriveInfraID("prod", "0b7c2a3e-1111-4e5f-9a0b-123456789abc") {
		t.Error("not stable")
	}
	if a == DeriveInfraID("prod", "0b7c2a3e-2222-4e5f-9a0b-123456789abc") {
		t.Error("two UIDs, one infraID")
	}
	for _, name := range []string{"x", strings.Repeat("a", 63), strings.Repeat("a-", 200) + "b", "a.b", "-", ""} {
		id := DeriveInfraID(name, "uid")
		if len(id) > maxInfraIDLength || !infraIDPattern.MatchString(id) {
			t.Errorf("DeriveInfraID(%q) = %q: not a valid infraID", name, id)
		}
	}
}

// TestEffectiveInfraIDRestored: a deployment restored with a new UID and
// its hcdstatus.AnnotationIdentityUID keeps the infraID it was delivered
// with.
func TestEffectiveInfraIDRestored(t *testing.T) {
	first := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: "prod", UID: "first"}}
	restored := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: "prod", UID: "restored",
		Annotations: map[string]string{hcdstatus.AnnotationIdentityUID: "first"}}}
	if got, want := EffectiveInfraID(restored), EffectiveInfraID(first); got != want {
		t.Errorf("restored infraID %s, want %s as before the restore", got, want)
	}
	restored.Annotations = nil
	if EffectiveInfraID(restored) == EffectiveInfraID(first) {
		t.Error("without the annotation, the restored deployment derives the same infraID")
	}
}

func TestControlPlaneNamespace(t *testing.T) {
	if got := ControlPlaneNamespace("clusters", "prod"); got != "clusters-prod" {
		t.Errorf("got %q", got)
	}
	if got := ControlPlaneNamespace("a", "b.c"); got != "a-b-c" {
		t.Errorf("dots: got %q", got)
	}
	if strings.Contains(ControlPlaneKey("a-b"), "/") || ControlPlaneKey("a-b") == HostedClusterKey("controlplane", "a-b") {
		t.Error("a control-plane key may equal a HostedCluster key")
	}
}

// TestScheduleControlPlaneNamespace: a candidate whose allowed hosting
// namespaces include the control-plane namespace, or where another bound
// hosted cluster has it, is rejected, each with its explanation.
func TestScheduleControlPlaneNamespace(t *testing.T) {
	r := Request{Name: "prod", HostingNamespace: "clusters", ReleaseMinor: "4.18", Platform: "Agent"}
	overlapping := ready("overlapping", 0, 10)
	overlapping.HostingConfig = "hcp-fleet/wide"
	overlapping.HostingNamespaces = []v1alpha1.HostingNamespaceName{"clusters", "clusters-prod"}
	taken := ready("taken", 0, 10)
	taken.Occupied = map[string]bool{ControlPlaneKey("clusters-prod"): true}
	d := Schedule(r, []Candidate{overlapping, taken}, StrategySpread)
	if d.Cluster != "" || d.Reason() != v1alpha1.ReasonControlPlaneNamespaceConflict {
		t.Fatalf("decision %+v reason %s", d, d.Reason())
	}
	msg := d.Message()
	for _, want := range []string{
		"2 control-plane namespace taken",
		"overlapping: the control-plane namespace clusters-prod (HyperShift's <hostingNamespace>-<name>) is a hosting namespace HostingConfig hcp-fleet/wide allows",
		"taken: the control-plane namespace clusters-prod (HyperShift's <hostingNamespace>-<name>) is the control-plane namespace of a hosted cluster from another HostedClusterDeployment bound there",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	// A free cluster is chosen.
	if d := Schedule(r, []Candidate{overlapping, taken, ready("free", 5, 10)}, StrategySpread); d.Cluster != "free" {
		t.Errorf("chose %q", d.Cluster)
	}
	// Namespaces in use by a hosted cluster bound there (a HostingConfig
	// that allowed others before).
	for _, tc := range []struct {
		bound       *v1alpha1.HostedClusterDeployment
		name, ns    string
		allowed     v1alpha1.HostingNamespaceName
		want        string
		wantAllowed bool
	}{
		// b-c in a and c in a-b share a-b-c.
		{bound: hcdNamed("t", "b-c", "a"), name: "c", ns: "a-b", allowed: "a-b",
			want: "the control-plane namespace a-b-c (HyperShift's <hostingNamespace>-<name>) is the control-plane namespace of a hosted cluster from another"},
		// prod in clusters runs its control plane in clusters-prod.
		{bound: hcdNamed("t", "prod", "clusters"), name: "x", ns: "clusters-prod", allowed: "clusters-prod",
			want: "the hosting namespace clusters-prod is the control-plane namespace of a hosted cluster from another"},
		// y in a-b: b in a would run its control plane there.
		{bound: hcdNamed("t", "y", "a-b"), name: "b", ns: "a", allowed: "a",
			want: "the control-plane namespace a-b (HyperShift's <hostingNamespace>-<name>) is the hosting namespace of a hosted cluster from another"},
		// Neighbours in one hosting namespace do not clash.
		{bound: hcdNamed("t", "y", "clusters"), name: "z", ns: "clusters", allowed: "clusters", wantAllowed: true},
	} {
		mine := Request{Name: tc.name, HostingNamespace: tc.ns, ReleaseMinor: "4.18", Platform: "Agent"}
		c := ready("one", 0, 10)
		c.HostingNamespaces = []v1alpha1.HostingNamespaceName{tc.allowed}
		c.Occupied = map[string]bool{}
		for _, k := range Occupies(tc.bound) {
			c.Occupied[k] = true
		}
		d := Schedule(mine, []Candidate{c}, StrategySpread)
		if tc.wantAllowed {
			if d.Cluster != "one" {
				t.Errorf("%s in %s beside %s in %s: %s", tc.name, tc.ns, tc.bound.Name, tc.bound.Spec.HostingNamespace, d.Message())
			}
			continue
		}
		if d.Cluster != "" || d.Rejected[0].Category != RejectControlPlaneNamespace || !strings.Contains(d.Rejected[0].Detail, tc.want) {
			t.Errorf("%s in %s beside %s in %s: %+v", tc.name, tc.ns, tc.bound.Name, tc.bound.Spec.HostingNamespace, d)
		}
		// The snapshot's path: Gather asks for requestKeys only.
		s := NewBoundSnapshot(nil)
		b := tc.bound.DeepCopy()
		b.Status.HostingCluster = "one"
		s.Observe(b)
		found := false
		for _, k := range requestKeys(mine) {
			found = found || s.Occupied("one", k)
		}
		if !found {
			t.Errorf("%s in %s: no request key finds %s in %s in the snapshot", tc.name, tc.ns, tc.bound.Name, tc.bound.Spec.HostingNamespace)
		}
	}
	// Explain shows the filter's verdict on every candidate.
	x := Explain(r, []Candidate{overlapping, ready("free", 5, 10)}, StrategySpread)
	for _, e := range x.Candidates {
		var v FilterResult
		for _, f := range e.Filters {
			if f.Filter == RejectControlPlaneNamespace {
				v = f
			}
		}
		if v.Passed != (e.Candidate.Name == "free") {
			t.Errorf("%s: %+v", e.Candidate.Name, v)
		}
	}
}

// TestOccupiesControlPlaneNamespace: a bound or assumed HCD holds its
// control-plane namespace in the snapshot.
func TestOccupiesControlPlaneNamespace(t *testing.T) {
	h := hcdNamed("ns", "b-c", "a")
	h.Status.HostingCluster = "one"
	s := NewBoundSnapshot(nil)
	s.Observe(h)
	if !s.Occupied("one", ControlPlaneKey("a-b-c")) {
		t.Error("the snapshot does not hold the control-plane namespace")
	}
}

func hcdNamed(namespace, name, hostingNamespace string) *v1alpha1.HostedClusterDeployment {
	h := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(namespace + "/" + name)}}
	h.Spec.HostingNamespace = hostingNamespace
	return h
}

func indexedClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...)
	for name, f := range indexFuncs {
		b = b.WithIndex(&v1alpha1.HostedClusterDeployment{}, name, f)
	}
	return b.Build()
}

func TestInfraIDTaken(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first := hcdNamed("tenant-a", "prod", "clusters")
	first.CreationTimestamp = metav1.NewTime(t0)
	first.Spec.HostedCluster.Spec.InfraID = "shared"
	second := hcdNamed("tenant-b", "other", "clusters")
	second.CreationTimestamp = metav1.NewTime(t0.Add(time.Second))
	second.Spec.HostedCluster.Spec.InfraID = "shared"
	// A tenant copying another's derived infraID.
	derived := hcdNamed("tenant-c", "web", "clusters")
	derived.CreationTimestamp = metav1.NewTime(t0)
	copycat := hcdNamed("tenant-d", "web2", "clusters")
	copycat.CreationTimestamp = metav1.NewTime(t0.Add(time.Minute))
	copycat.Spec.HostedCluster.Spec.InfraID = DeriveInfraID("web", derived.UID)
	free := hcdNamed("tenant-e", "alone", "clusters")
	free.CreationTimestamp = metav1.NewTime(t0.Add(time.Hour))
	free.Spec.HostedCluster.Spec.InfraID = "alone"
	c := indexedClient(t, first, second, derived, copycat, free)
	for _, tc := range []struct {
		hcd   *v1alpha1.HostedClusterDeployment
		taken bool
	}{{first, false}, {second, true}, {derived, false}, {copycat, true}, {free, false}} {
		msg, err := InfraIDTaken(ctx, c, tc.hcd)
		if err != nil {
			t.Fatal(err)
		}
		if (msg != "") != tc.taken {
			t.Errorf("%s/%s: taken %q, want %v", tc.hcd.Namespace, tc.hcd.Name, msg, tc.taken)
		}
		if msg != "" && (strings.Contains(msg, "tenant-a") || strings.Contains(msg, "tenant-c") || !strings.Contains(msg, "another HostedClusterDeployment") ||
			!strings.Contains(msg, "spec.hostedCluster.spec.infraID")) {
			t.Errorf("message %q: must name the field, not the other tenant", msg)
		}
	}
}

func TestControlPlaneConflict(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	older := hcdNamed("tenant-a", "b-c", "a")
	older.CreationTimestamp = metav1.NewTime(t0)
	older.Status.HostingCluster = "one"
	newer := hcdNamed("tenant-b", "c", "a-b")
	newer.CreationTimestamp = metav1.NewTime(t0.Add(time.Second))
	newer.Status.HostingCluster = "one"
	elsewhere := hcdNamed("tenant-c", "c", "a-b")
	elsewhere.Status.HostingCluster = "two"
	prod := hcdNamed("tenant-d", "prod", "clusters")
	prod.CreationTimestamp = metav1.NewTime(t0)
	prod.Status.HostingCluster = "two"
	inProdsNamespace := hcdNamed("tenant-e", "x", "clusters-prod")
	inProdsNamespace.CreationTimestamp = metav1.NewTime(t0.Add(time.Second))
	inProdsNamespace.Status.HostingCluster = "two"
	c := indexedClient(t, older, newer, elsewhere, prod, inProdsNamespace)
	for _, tc := range []struct {
		hcd     *v1alpha1.HostedClusterDeployment
		allowed []string
		want    string
	}{
		{older, []string{"a", "a-b"}, ""},
		{newer, []string{"a", "a-b"}, "is the control-plane namespace of another HostedClusterDeployment bound to management cluster one"},
		{elsewhere, []string{"a", "a-b"}, ""},
		{prod, []string{"clusters"}, ""},
		{inProdsNamespace, []string{"clusters-prod"}, "the hosting namespace clusters-prod is the control-plane namespace of another HostedClusterDeployment bound to management cluster two"},
		{prod, []string{"clusters", "clusters-prod"}, "the control-plane namespace clusters-prod (HyperShift's <hostingNamespace>-<name>) is a hosting namespace HostingConfig x/y allows"},
	} {
		why, err := ControlPlaneConflict(ctx, c, tc.hcd, tc.hcd.Status.HostingCluster, tc.allowed, "HostingConfig x/y")
		if err != nil {
			t.Fatal(err)
		}
		if (tc.want == "") != (why == "") || !strings.Contains(why, tc.want) {
			t.Errorf("%s/%s with %v: %q, want %q", tc.hcd.Namespace, tc.hcd.Name, tc.allowed, why, tc.want)
		}
		if strings.Contains(why, "tenant-") {
			t.Errorf("%q names another tenant", why)
		}
	}
}
