//go:build integration

package kubectlhcpfleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// TestCordonCommand: cordon and uncordon as an operator holding only
// hcp-fleet:cordon, refused to a tenant; a second cordon writes nothing;
// status and explain show the cordon; uncordon lets a pinned deployment in.
func TestCordonCommand(t *testing.T) {
	ctx := context.Background()
	const cluster = "cluster-1"
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-fleet-operators-cordon"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hcp-fleet:cordon"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "fleet-operators"}}}
	if err := admin.Create(ctx, crb); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	operator := []string{"--as", "olga", "--as-group", "fleet-operators"}
	t.Cleanup(func() { _, _ = run(context.Background(), "uncordon", cluster) })

	if out, err := run(ctx, "cordon", cluster, "--as", "alice", "--as-group", team); err == nil || !apierrors.IsForbidden(errors.Unwrap(err)) && !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("a tenant cordoned %s: %v\n%s", cluster, err, out)
	}
	out, err := run(ctx, append([]string{"cordon", cluster}, operator...)...)
	if err != nil || !strings.Contains(out, "cordoned") {
		t.Fatalf("cordon: %v\n%s", err, out)
	}
	mc := &clusterv1.ManagedCluster{}
	if err := admin.Get(ctx, types.NamespacedName{Name: cluster}, mc); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(mc.Spec.Taints, func(t clusterv1.Taint) bool { return t.Key == hosting.TaintUnschedulable })
	if i < 0 || mc.Spec.Taints[i].Effect != clusterv1.TaintEffectNoSelect {
		t.Fatalf("taints after cordon: %+v", mc.Spec.Taints)
	}
	// Again: nothing to do, nothing written.
	out, err = run(ctx, append([]string{"cordon", cluster}, operator...)...)
	if err != nil || !strings.Contains(out, "already cordoned") {
		t.Errorf("second cordon: %v\n%s", err, out)
	}
	again := &clusterv1.ManagedCluster{}
	if err := admin.Get(ctx, types.NamespacedName{Name: cluster}, again); err != nil {
		t.Fatal(err)
	}
	if again.Generation != mc.Generation {
		t.Errorf("a second cordon changed the spec: generation %d → %d", mc.Generation, again.Generation)
	}

	out, err = run(ctx, "status", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var s fleetview.Snapshot
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if i := slices.IndexFunc(s.Hosts, func(h fleetview.Host) bool { return h.Name == cluster }); i < 0 || !s.Hosts[i].Cordoned {
		t.Errorf("status does not show %s cordoned:\n%s", cluster, out)
	}
	if out, err := run(ctx, "status"); err != nil || !strings.Contains(out, "True,Cordoned") {
		t.Errorf("status text does not show the cordon: %v\n%s", err, out)
	}

	// A deployment pinned there waits, and explain says why.
	if err := admin.Create(ctx, newHCD(team, "cordon-pinned", pinned(cluster))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), newHCD(team, "cordon-pinned", func(map[string]any) {})) })
	env.Eventually(t, time.Minute, "cordon-pinned Scheduled=False HostingClusterCordoned", func(ctx context.Context) error {
		_, c, err := scheduled(ctx, team, "cordon-pinned")
		if err == nil && c.Reason != v1alpha1.ReasonHostingClusterCordoned {
			err = fmt.Errorf("Scheduled %s: %s", c.Reason, c.Message)
		}
		return err
	})
	out, err = run(ctx, "explain", "hcd", "cordon-pinned", "-n", team)
	if err != nil || !strings.Contains(out, "CORDON") || !strings.Contains(out, "cordoned") {
		t.Errorf("explain does not show the cordon: %v\n%s", err, out)
	}

	out, err = run(ctx, append([]string{"uncordon", cluster}, operator...)...)
	if err != nil || !strings.Contains(out, "uncordoned") {
		t.Fatalf("uncordon: %v\n%s", err, out)
	}
	env.Eventually(t, time.Minute, "cordon-pinned bound after uncordon", func(ctx context.Context) error {
		h, _, err := scheduled(ctx, team, "cordon-pinned")
		if err == nil && h.Status.HostingCluster != cluster {
			err = fmt.Errorf("bound to %q", h.Status.HostingCluster)
		}
		return err
	})
}
