package relocation

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

func relocationOf(name, hcd, phase string, created time.Time) v1alpha1.HostedClusterRelocation {
	return v1alpha1.HostedClusterRelocation{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", UID: types.UID(name), CreationTimestamp: metav1.NewTime(created)},
		Spec:       v1alpha1.HostedClusterRelocationSpec{HostedClusterDeployment: hcd},
		Status:     v1alpha1.HostedClusterRelocationStatus{Phase: phase},
	}
}

// TestCompeting: one move of an HCD at a time; the one running wins, else
// the oldest; ended ones and other HCDs' do not count.
func TestCompeting(t *testing.T) {
	t0 := time.Unix(1000, 0)
	mine := relocationOf("b", "app", "", t0)
	for _, tt := range []struct {
		name   string
		others []v1alpha1.HostedClusterRelocation
		want   string
	}{
		{"alone", nil, ""},
		{"a running one, younger", []v1alpha1.HostedClusterRelocation{relocationOf("z", "app", "Restoring", t0.Add(time.Hour))}, "z"},
		{"an older one not started", []v1alpha1.HostedClusterRelocation{relocationOf("z", "app", "", t0.Add(-time.Second))}, "z"},
		{"a younger one not started", []v1alpha1.HostedClusterRelocation{relocationOf("z", "app", "", t0.Add(time.Second))}, ""},
		{"same age: by name", []v1alpha1.HostedClusterRelocation{relocationOf("a", "app", "", t0), relocationOf("c", "app", "", t0)}, "a"},
		{"ended ones", []v1alpha1.HostedClusterRelocation{relocationOf("x", "app", "Done", t0.Add(-time.Hour)), relocationOf("y", "app", "Failed", t0.Add(-time.Hour))}, ""},
		{"another HCD's", []v1alpha1.HostedClusterRelocation{relocationOf("x", "other", "Pausing", t0.Add(-time.Hour))}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Competing(&mine, append(tt.others, mine)); got != tt.want {
				t.Fatalf("Competing = %q, want %q", got, tt.want)
			}
		})
	}
	all := []v1alpha1.HostedClusterRelocation{relocationOf("a", "x", "", t0), relocationOf("b", "y", "Pausing", t0),
		relocationOf("c", "z", "RollingBack", t0), relocationOf("d", "w", "RolledBack", t0)}
	if n := Active(all); n != 2 {
		t.Fatalf("Active = %d, want 2 (started, not ended)", n)
	}
}

// TestRelocationTarget: the scheduler moves a binding only for a
// relocation that switched, from the cluster the HCD is bound to.
func TestRelocationTarget(t *testing.T) {
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "team-a"},
		Status: v1alpha1.HostedClusterDeploymentStatus{HostingCluster: "cluster-1"}}
	switched := relocationOf("move", "app", string(PhaseSwitching), time.Unix(0, 0))
	switched.Status.Source, switched.Status.Destination, switched.Status.Switched = "cluster-1", "cluster-2", true
	if dest, name := scheduling.RelocationTarget(hcd, []v1alpha1.HostedClusterRelocation{switched}); dest != "cluster-2" || name != "move" {
		t.Fatalf("RelocationTarget = %q, %q", dest, name)
	}
	for _, mutate := range []func(r *v1alpha1.HostedClusterRelocation){
		func(r *v1alpha1.HostedClusterRelocation) { r.Status.Switched = false },
		func(r *v1alpha1.HostedClusterRelocation) { r.Status.Phase = string(PhaseVerifying) },
		func(r *v1alpha1.HostedClusterRelocation) { r.Status.Source = "cluster-3" },
		func(r *v1alpha1.HostedClusterRelocation) { r.Spec.HostedClusterDeployment = "other" },
		func(r *v1alpha1.HostedClusterRelocation) { r.Status.Destination = "cluster-1" },
	} {
		r := switched.DeepCopy()
		mutate(r)
		if dest, _ := scheduling.RelocationTarget(hcd, []v1alpha1.HostedClusterRelocation{*r}); dest != "" {
			t.Fatalf("moved to %q for %+v", dest, r.Status)
		}
	}
}

func TestMarkKeepCloud(t *testing.T) {
	src := sourceWork(t)
	src.Spec.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}
	marked, changed, err := MarkKeepCloud(src, "clusters")
	if err != nil || !changed {
		t.Fatalf("MarkKeepCloud: changed %v, %v", changed, err)
	}
	if got := manifestOf(t, marked, "HostedCluster").GetAnnotations()[AnnotationCleanupCloudResources]; got != "false" {
		t.Fatalf("cleanup-cloud-resources %q", got)
	}
	d := marked.Spec.DeleteOption
	if d.PropagationPolicy != workv1.DeletePropagationPolicyTypeSelectivelyOrphan || len(d.SelectivelyOrphan.OrphaningRules) != 1 ||
		d.SelectivelyOrphan.OrphaningRules[0].Resource != "namespaces" || d.SelectivelyOrphan.OrphaningRules[0].Name != "clusters" {
		t.Fatalf("delete option %+v: want everything deleted but the hosting namespace", d)
	}
	if src.Spec.DeleteOption.PropagationPolicy != workv1.DeletePropagationPolicyTypeOrphan {
		t.Fatal("MarkKeepCloud changed its input")
	}
	if _, again, _ := MarkKeepCloud(marked, "clusters"); again {
		t.Fatal("marking a marked ManifestWork changed it again")
	}
	if _, found, _ := unstructured.NestedString(manifestOf(t, marked, "HostedCluster").Object, "spec", "infraID"); !found {
		t.Fatal("the HostedCluster lost its spec")
	}
}

// TestObserved: what the controller reads becomes Next's facts: the
// record wins over feedback, and during a rollback the pause work's
// presence is the source's pause.
func TestObserved(t *testing.T) {
	hcd := &v1alpha1.HostedClusterDeployment{Status: v1alpha1.HostedClusterDeploymentStatus{HostingCluster: "cluster-1"}}
	hcr := &v1alpha1.HostedClusterRelocation{Status: v1alpha1.HostedClusterRelocationStatus{Phase: string(PhaseBackingUp),
		Source: "cluster-1", Destination: "cluster-2"}}
	pause := &workv1.ManifestWork{}
	s := sides{pause: pause, source: &workv1.ManifestWork{},
		pauseFacts: HostedClusterFacts{Paused: true, SnapshotURL: "u", Identity: Identity{InfraID: "i", ClusterID: "c"}}}
	o := s.observed(hcr, hcd, "")
	if !o.SourcePaused || o.SnapshotURL != "u" || o.Source.InfraID != "i" || !o.DestinationGone || o.SourceGone || o.BoundTo != "cluster-1" {
		t.Fatalf("observed %+v", o)
	}
	hcr.Status.SnapshotURL, hcr.Status.InfraID, hcr.Status.ClusterID = "recorded", "ri", "rc"
	if o = s.observed(hcr, hcd, ""); o.SnapshotURL != "recorded" || o.Source.InfraID != "ri" {
		t.Fatalf("the record lost to feedback: %+v", o)
	}
	hcr.Status.Phase = string(PhaseRollingBack)
	s.pauseFacts = HostedClusterFacts{Running: true}
	if o = s.observed(hcr, hcd, ""); !o.SourcePaused {
		t.Fatal("a rollback ended while the pause work was still there")
	}
	dest := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	dest.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 1}}
	s.destination = dest
	if o = s.observed(hcr, hcd, ""); o.DestinationApplied || o.DestinationGone {
		t.Fatalf("an older generation's Applied counted: %+v", o)
	}
	// A lost destination's copy counts as gone once its deletion is asked
	// for (its agent removes it only when it reports again), not before.
	s.destinationLost = true
	if o = s.observed(hcr, hcd, ""); o.DestinationGone || !o.DestinationLost {
		t.Fatalf("a lost destination's ManifestWork counted as gone before its deletion: %+v", o)
	}
	dest.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	if o = s.observed(hcr, hcd, ""); !o.DestinationGone {
		t.Fatalf("a rollback waits for a lost destination's agent: %+v", o)
	}
	s.destinationLost = false
	if o = s.observed(hcr, hcd, ""); o.DestinationGone {
		t.Fatalf("a reachable destination's copy counted as gone while its agent removes it: %+v", o)
	}
}

// TestAdmit: the hub's bound is fleet-wide and first come, first served:
// two drains' relocations share it in the order they were created,
// whichever drain they belong to.
func TestAdmit(t *testing.T) {
	t0 := time.Unix(1000, 0)
	drain := func(name, cluster, phase string, at int) v1alpha1.HostedClusterRelocation {
		r := relocationOf(name, name+"-hcd", phase, t0.Add(time.Duration(at)*time.Second))
		r.Labels = map[string]string{"hcpfleet.io/drain": cluster}
		return r
	}
	a1, b1 := drain("a1", "cluster-1", "Restoring", 0), drain("b1", "cluster-2", "Pausing", 1)
	a2, b2 := drain("a2", "cluster-1", "", 2), drain("b2", "cluster-2", "", 3)
	all := []v1alpha1.HostedClusterRelocation{a1, b1, a2, b2}
	for _, r := range []v1alpha1.HostedClusterRelocation{a2, b2} {
		if ok, why := Admit(&r, all, 2); ok || why == "" {
			t.Fatalf("%s started with two running and a bound of 2 (%q)", r.Name, why)
		}
	}
	// One ends: the older waiting one goes first, the other still waits.
	all[0].Status.Phase = string(PhaseDone)
	if ok, _ := Admit(&b2, all, 2); ok {
		t.Fatal("b2 started before a2, which asked first")
	}
	if ok, why := Admit(&a2, all, 2); !ok {
		t.Fatalf("a2 waits with one running and a bound of 2: %s", why)
	}
	all[2].Status.Phase = string(PhasePausing)
	if ok, _ := Admit(&b2, all, 2); ok {
		t.Fatal("b2 started while a2 and b1 run")
	}
	// A waiting relocation being deleted is not ahead of anyone.
	all[2].Status.Phase = ""
	all[2].DeletionTimestamp = &metav1.Time{Time: t0}
	if ok, why := Admit(&b2, all, 2); !ok {
		t.Fatalf("b2 waits behind a deleted request: %s", why)
	}
}
