//go:build integration

package kubectlhcpfleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/kubectlhcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/relocation"
)

// relocTeam is TestRelocateDryRun's tenant namespace.
const relocTeam = "team-reloc"

// TestRelocateDryRun: relocate --dry-run refuses a hosted cluster without a
// fixed API hostname, and for a relocation-ready one refuses its own
// cluster, a cluster without the add-on and a cordoned cluster, each with
// its reason, and names the other management cluster otherwise. It writes
// nothing; without --dry-run, relocate creates a HostedClusterRelocation,
// which the hub refuses for the cordoned cluster with the same reason.
func TestRelocateDryRun(t *testing.T) {
	ctx := context.Background()
	// A namespace of its own, whose TenantPolicy lets tenants publish
	// hostnames under example.com (a fixed API hostname is one).
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: relocTeam}},
		&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: "global", Namespace: relocTeam}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: relocTeam}, StringData: map[string]string{".dockerconfigjson": `{"auths":{}}`}},
		placement(relocTeam, "all", ""),
	} {
		if err := admin.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	if err := fleettest.SetTenantPolicy(ctx, admin, relocTeam, func(p *v1alpha1.TenantPolicySpec) { p.Hostnames = []string{"example.com"} }); err != nil {
		t.Fatal(err)
	}
	fixedHostname := hostedClusterSpec(func(hc map[string]any) {
		hc["services"].([]any)[0] = map[string]any{"service": "APIServer", "servicePublishingStrategy": map[string]any{
			"type": "LoadBalancer", "loadBalancer": map[string]any{"hostname": "api.reloc-ready.example.com"}}}
	})
	for name, mutate := range map[string]func(map[string]any){"reloc-ready": fixedHostname, "reloc-nodeport": placed("all")} {
		if err := admin.Create(ctx, newHCD(relocTeam, name, mutate)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = admin.Delete(context.Background(), newHCD(relocTeam, name, func(map[string]any) {})) })
	}
	var source string
	for _, name := range []string{"reloc-ready", "reloc-nodeport"} {
		env.Eventually(t, 2*time.Minute, name+" bound", func(ctx context.Context) error {
			h, c, err := scheduled(ctx, relocTeam, name)
			if err == nil && h.Status.HostingCluster == "" {
				err = fmt.Errorf("not bound: Scheduled %s: %s", c.Reason, c.Message)
			}
			if err == nil && name == "reloc-ready" {
				source = h.Status.HostingCluster
			}
			return err
		})
	}
	before := &v1alpha1.HostedClusterDeployment{}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: relocTeam, Name: "reloc-ready"}, before); err != nil {
		t.Fatal(err)
	}
	other := "cluster-1"
	if source == other {
		other = smallHost
	}

	check := func(name, to string) *kubectlhcpfleet.RelocationCheck {
		t.Helper()
		args := []string{"relocate", "hcd", name, "-n", relocTeam, "--dry-run", "-o", "json"}
		if to != "" {
			args = append(args, "--to", to)
		}
		out, err := run(ctx, args...)
		if err != nil {
			t.Fatalf("relocate %s --to %q: %v\n%s", name, to, err, out)
		}
		x := &kubectlhcpfleet.RelocationCheck{}
		if err := json.Unmarshal([]byte(out), x); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		return x
	}
	if x := check("reloc-nodeport", other); x.Reason != relocation.ReasonNoFixedAPIHostname {
		t.Errorf("a NodePort API server: %+v, want %s", x, relocation.ReasonNoFixedAPIHostname)
	}
	if x := check("reloc-ready", source); x.Reason != relocation.ReasonDestinationIsSource {
		t.Errorf("to its own cluster: %+v, want %s", x, relocation.ReasonDestinationIsSource)
	}
	if x := check("reloc-ready", noAddOn); x.Reason != relocation.ReasonDestinationNotAvailable || !strings.Contains(x.Message, noAddOn) {
		t.Errorf("to a cluster without the add-on: %+v, want %s naming it", x, relocation.ReasonDestinationNotAvailable)
	}
	// The other cluster, unless it is the small one and full (the other
	// tests' hosted clusters): the answer is computed independently.
	want := ""
	if other == smallHost {
		var all v1alpha1.HostedClusterDeploymentList
		if err := admin.List(ctx, &all); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, h := range all.Items {
			if h.Status.HostingCluster == smallHost {
				n++
			}
		}
		if n >= 2 {
			want = relocation.ReasonDestinationFull
		}
	}
	if x := check("reloc-ready", other); x.Reason != want || (want == "" && (x.Destination != other || x.Source != source)) {
		t.Errorf("to %s: %+v, want reason %q and %s → %s", other, x, want, source, other)
	}

	// drain --dry-run: every HostedClusterDeployment bound to the source,
	// each with relocate's answer.
	out, err := run(ctx, "drain", source, "--dry-run", "-o", "json")
	if err != nil {
		t.Fatalf("drain --dry-run: %v\n%s", err, out)
	}
	d := &kubectlhcpfleet.DrainCheck{}
	if err := json.Unmarshal([]byte(out), d); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	// The other tests' cleanups delete their HostedClusterDeployments
	// before this test starts, and those deletions end at any moment, also
	// between drain's list and this one: compare those not being deleted
	// (drain lists one being deleted with that reason, or not at all).
	var all v1alpha1.HostedClusterDeploymentList
	if err := admin.List(ctx, &all); err != nil {
		t.Fatal(err)
	}
	boundThere, listed := 0, 0
	for _, h := range all.Items {
		if h.Status.HostingCluster == source && h.DeletionTimestamp == nil {
			boundThere++
		}
	}
	for _, x := range d.HostedClusters {
		if x.Reason != relocation.ReasonBeingDeleted {
			listed++
		}
	}
	if listed != boundThere {
		t.Errorf("drain --dry-run lists %d hosted clusters of %s not being deleted, %d are bound there:\n%s", listed, source, boundThere, out)
	}
	for _, x := range d.HostedClusters {
		if x.Source != source || (x.Reason == "") == (x.Destination == "") || x.Destination == source {
			t.Errorf("drain --dry-run entry %+v: want a destination other than %s, or a reason", x, source)
		}
		// Without a named destination, a full other cluster is one refusal
		// among several: only that there is one is certain.
		if x.Namespace == relocTeam && x.Name == "reloc-ready" && (want == "" && (x.Reason != "" || x.Destination != other) || want != "" && x.Reason == "") {
			t.Errorf("drain --dry-run for reloc-ready: %+v, want it to go to %s (or be refused when that is full: %v)", x, other, want != "")
		}
	}

	// Cordoned: refused with that reason.
	mc := &clusterv1.ManagedCluster{}
	if err := admin.Get(ctx, types.NamespacedName{Name: other}, mc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(mc.DeepCopy())
	mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: hosting.TaintUnschedulable, Effect: clusterv1.TaintEffectNoSelect})
	if err := admin.Patch(ctx, mc, patch); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = run(context.Background(), "uncordon", other) })
	if x := check("reloc-ready", other); x.Reason != relocation.ReasonDestinationCordoned {
		t.Errorf("to a cordoned cluster: %+v, want %s", x, relocation.ReasonDestinationCordoned)
	}

	// Without --dry-run: a HostedClusterRelocation, which the hub refuses
	// with the same reason, on it and on the HCD, and moves nothing.
	out, err = run(ctx, "relocate", "hcd", "reloc-ready", "-n", relocTeam, "--to", other, "-o", "json")
	if err != nil {
		t.Fatalf("relocate: %v\n%s", err, out)
	}
	hcr := &v1alpha1.HostedClusterRelocation{}
	if err := json.Unmarshal([]byte(out), hcr); err != nil || hcr.Name == "" || hcr.Spec.HostedClusterDeployment != "reloc-ready" || hcr.Spec.Destination != other {
		t.Fatalf("relocate printed %s (%v)", out, err)
	}
	env.Eventually(t, time.Minute, "the relocation refused", func(ctx context.Context) error {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(hcr), hcr); err != nil {
			return err
		}
		if hcr.Status.Phase != string(relocation.PhaseFailed) {
			return fmt.Errorf("phase %q", hcr.Status.Phase)
		}
		return nil
	})
	if c := meta.FindStatusCondition(hcr.Status.Conditions, v1alpha1.ConditionRelocationProgressing); c == nil || c.Reason != relocation.ReasonDestinationCordoned {
		t.Errorf("the relocation to a cordoned cluster ended %+v, want reason %s", c, relocation.ReasonDestinationCordoned)
	}
	after := &v1alpha1.HostedClusterDeployment{}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: relocTeam, Name: "reloc-ready"}, after); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(after.Status.Conditions, v1alpha1.ConditionRelocating); c == nil || c.Status != metav1.ConditionFalse || c.Reason != relocation.ReasonDestinationCordoned {
		t.Errorf("the HCD's Relocating condition %+v, want False, %s", c, relocation.ReasonDestinationCordoned)
	}
	if after.Status.HostingCluster != source || after.Generation != before.Generation {
		t.Errorf("the checks changed the HostedClusterDeployment: bound to %s (was %s), generation %d (was %d)",
			after.Status.HostingCluster, source, after.Generation, before.Generation)
	}
}
