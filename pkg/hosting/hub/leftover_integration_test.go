//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/delivery"
)

var amwGVR = schema.GroupVersionResource{Group: "work.open-cluster-management.io", Version: "v1", Resource: "appliedmanifestworks"}

// TestLeftoverAfterWorkGone: the work agent lets a deleted ManifestWork go
// with its HostedCluster still on the host (open-cluster-management v1.2
// does when its informer does not show the AppliedManifestWork yet, as for
// a deployment deleted seconds after its first apply on a loaded agent).
// The test makes that outcome happen for sure: the host's work agent is
// stopped, and the test takes its finalizer off the ManifestWork being
// deleted. The HostedClusterDeployment must not go: its hub writes a
// cleanup ManifestWork of the same name, and once the work agent is back
// the HostedCluster, its copies and the AppliedManifestWork are gone from
// the host, and only then the deployment from the hub.
func TestLeftoverAfterWorkGone(t *testing.T) {
	ctx := context.Background()
	ns, name, cluster := "leftover", "left", "cluster-2"
	tenant(t, ns)
	if err := hubc.Create(ctx, hcd(ns, name, func(spec map[string]any) { spec["hostingCluster"] = cluster })); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ns, name, v1alpha1.ConditionDelivered, metav1.ConditionTrue, 2*time.Minute)
	env.Eventually(t, time.Minute, "the inventory of "+cluster+" lists the HostedCluster", func(ctx context.Context) error {
		inv := &v1alpha1.HostedClusterInventory{}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: cluster, Name: v1alpha1.InventoryName}, inv); err != nil {
			return err
		}
		for _, e := range inv.Status.HostedClusters {
			if e.Deployment != nil && e.Deployment.Namespace == ns && e.Deployment.Name == name {
				return nil
			}
		}
		return fmt.Errorf("not listed")
	})
	workKey := types.NamespacedName{Namespace: cluster, Name: hosting.WorkName(ns, name)}
	first := &workv1.ManifestWork{}
	if err := hubc.Get(ctx, workKey, first); err != nil {
		t.Fatal(err)
	}

	if err := env.Fleet.Disconnect(cluster); err != nil {
		t.Fatal(err)
	}
	connected := false
	t.Cleanup(func() {
		if !connected {
			_ = env.Fleet.Reconnect(context.Background(), cluster)
		}
	})
	if err := hubc.Delete(ctx, hcd(ns, name)); err != nil {
		t.Fatal(err)
	}
	// The hub deletes the ManifestWork; the stopped work agent keeps it.
	// Its finalizer goes as in the upstream race: nothing deleted.
	env.Eventually(t, time.Minute, "the ManifestWork let go with nothing deleted", func(ctx context.Context) error {
		w := &workv1.ManifestWork{}
		if err := hubc.Get(ctx, workKey, w); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		if w.UID != first.UID {
			return nil // gone, and the cleanup one there already
		}
		if w.DeletionTimestamp == nil {
			return fmt.Errorf("not deleted yet")
		}
		w.Finalizers = nil
		if err := hubc.Update(ctx, w); client.IgnoreNotFound(err) != nil {
			return err
		}
		return fmt.Errorf("finalizers removed; checking it is gone")
	})

	// The positive signal: the hub saw the HostedCluster left and wrote
	// the cleanup ManifestWork. Until the work agent acts, the deployment
	// stays, and says why.
	env.Eventually(t, time.Minute, "the cleanup ManifestWork", func(ctx context.Context) error {
		w := &workv1.ManifestWork{}
		if err := hubc.Get(ctx, workKey, w); err != nil {
			return err
		}
		if w.UID == first.UID || w.Annotations[delivery.AnnotationLeftoverCleanup] != "true" {
			return fmt.Errorf("ManifestWork %s, annotations %v", w.UID, w.Annotations)
		}
		if len(w.Spec.Workload.Manifests) != 1 {
			return fmt.Errorf("%d manifests, want only the hosting Namespace", len(w.Spec.Workload.Manifests))
		}
		return nil
	})
	// The status follows the cleanup ManifestWork's create.
	env.Eventually(t, time.Minute, "the deployment says why it stays", func(ctx context.Context) error {
		h, err := getHCD(ctx, ns, name)
		if err != nil {
			return fmt.Errorf("the deployment went with its HostedCluster still on %s: %w", cluster, err)
		}
		if c := findCondition(h, v1alpha1.ConditionDelivered); c == nil || c.Reason != v1alpha1.ReasonDeleting || !strings.Contains(c.Message, "after its ManifestWork was gone") {
			return fmt.Errorf("Delivered %+v", c)
		}
		return nil
	})
	if got := hostObjects(t, cluster, hcGVR, ns, name); len(got) != 1 {
		t.Fatalf("HostedClusters on %s before the work agent is back: %v", cluster, got)
	}

	if err := env.Fleet.Reconnect(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	connected = true
	env.Eventually(t, 3*time.Minute, "the deployment gone", func(ctx context.Context) error {
		if _, err := getHCD(ctx, ns, name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	for _, gvr := range []schema.GroupVersionResource{hcGVR, npGVR, scGVR} {
		if got := hostObjects(t, cluster, gvr, ns, name); len(got) != 0 {
			t.Errorf("%s left on %s after the deployment went: %v", gvr.Resource, cluster, got)
		}
	}
	if err := hubc.Get(ctx, workKey, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
		t.Errorf("ManifestWork %s after the deployment went: %v", workKey, err)
	}
	amws, err := hosts[cluster].Resource(amwGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range amws.Items {
		if strings.HasSuffix(a.GetName(), "-"+workKey.Name) {
			t.Errorf("AppliedManifestWork %s left on %s", a.GetName(), cluster)
		}
	}
	if nsObj, err := hosts[cluster].Resource(nsGVR).Get(ctx, "clusters", metav1.GetOptions{}); err != nil || nsObj.GetDeletionTimestamp() != nil {
		t.Errorf("the shared hosting namespace went with the cleanup (%v)", err)
	}
}
