package scheduling

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// TestMovingInto: a relocation counts on its destination from the decision
// until it ends.
func TestMovingInto(t *testing.T) {
	hcr := func(name, phase, destination string) v1alpha1.HostedClusterRelocation {
		return v1alpha1.HostedClusterRelocation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
			Spec:   v1alpha1.HostedClusterRelocationSpec{HostedClusterDeployment: name},
			Status: v1alpha1.HostedClusterRelocationStatus{Phase: phase, Destination: destination}}
	}
	all := []v1alpha1.HostedClusterRelocation{
		hcr("queued", "", ""), hcr("pausing", "Pausing", "c2"), hcr("verifying", "Verifying", "c2"), hcr("switching", "Switching", "c2"),
		hcr("elsewhere", "Restoring", "c3"), hcr("done", "Done", "c2"), hcr("failed", "Failed", "c2"), hcr("rolledback", "RolledBack", "c2"),
	}
	var got []string
	for _, k := range MovingInto(all, "c2") {
		got = append(got, k.Name)
	}
	if want := []string{"pausing", "verifying", "switching"}; !slices.Equal(got, want) {
		t.Fatalf("MovingInto(c2) = %v, want %v", got, want)
	}
}

// TestEndedRelocation: the unscheduled are retried when a move ends or is
// deleted unended, not on its other updates.
func TestEndedRelocation(t *testing.T) {
	at := func(phase string) *v1alpha1.HostedClusterRelocation {
		return &v1alpha1.HostedClusterRelocation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "m"},
			Status: v1alpha1.HostedClusterRelocationStatus{Phase: phase, Destination: "c2"}}
	}
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"Verifying", "Done", true}, {"BackingUp", "RolledBack", true}, {"", "Failed", true},
		{"Pausing", "BackingUp", false}, {"Done", "Done", false}, {"", "Pausing", false},
	} {
		if got := endedRelocation.Update(event.UpdateEvent{ObjectOld: at(tc.from), ObjectNew: at(tc.to)}); got != tc.want {
			t.Errorf("%q → %q: retry %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
	if !endedRelocation.Delete(event.DeleteEvent{Object: at("Restoring")}) || endedRelocation.Delete(event.DeleteEvent{Object: at("Done")}) {
		t.Error("deleting a move retries only when it had not ended")
	}
	if endedRelocation.Create(event.CreateEvent{Object: at("Done")}) {
		t.Error("a relocation seen at start-up retries nothing (the scheduler's own start does)")
	}
}

// TestCandidateCountsMoves: the moves onto a cluster load it as assumed
// bindings do, each HostedClusterDeployment once, and what they occupy is
// occupied there.
func TestCandidateCountsMoves(t *testing.T) {
	s := runtime.NewScheme()
	for _, install := range []func(*runtime.Scheme) error{clusterv1.Install, addonv1alpha1.Install} {
		if err := install(s); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c2"}}).Build()
	in := Inputs{Client: c,
		Bound:   func(context.Context, string) ([]v1alpha1.HostedClusterDeployment, error) { return nil, nil },
		Assumed: func(string) map[types.UID][]string { return map[types.UID][]string{"a": {"ns/a"}} },
	}
	before, err := in.Candidate(context.Background(), "c2")
	if err != nil {
		t.Fatal(err)
	}
	in.Moving = func(context.Context, string) (map[types.UID][]string, error) {
		// "a" is both assumed and moving: counted once.
		return map[types.UID][]string{"a": {"ns/a"}, "m": {"ns/m"}}, nil
	}
	after, err := in.Candidate(context.Background(), "c2")
	if err != nil {
		t.Fatal(err)
	}
	if before.Load != 1 || after.Load != 2 {
		t.Fatalf("load %d without the moves, %d with them; want 1, 2", before.Load, after.Load)
	}
	if !after.Occupied["ns/m"] || before.Occupied["ns/m"] {
		t.Fatalf("occupied %v with the moves, %v without", after.Occupied, before.Occupied)
	}
}
