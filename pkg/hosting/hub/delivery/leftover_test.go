package delivery

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/record"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

func TestLeftover(t *testing.T) {
	inv := &v1alpha1.HostedClusterInventory{Status: v1alpha1.HostedClusterInventoryStatus{HostedClusters: []v1alpha1.InventoryHostedCluster{
		{Namespace: "clusters", Name: "unmanaged"},
		{Namespace: "clusters", Name: "other", Deployment: &v1alpha1.InventoryDeployment{Namespace: "ns", Name: "other", UID: "u1"}},
		{Namespace: "clusters", Name: "x", Deployment: &v1alpha1.InventoryDeployment{Namespace: "ns", Name: "x", UID: "earlier"}},
		{Namespace: "clusters", Name: "nouid", Deployment: &v1alpha1.InventoryDeployment{Namespace: "ns", Name: "nouid"}},
		{Namespace: "clusters", Name: "y", Deployment: &v1alpha1.InventoryDeployment{Namespace: "ns", Name: "y", UID: "u2"}, Deleting: true},
	}}}
	for _, tc := range []struct {
		name string
		uid  types.UID
		want string
	}{
		{"x", "u3", ""},         // another identity's: not ours to delete
		{"x", "earlier", "x"},   // ours
		{"nouid", "", ""},       // no UID on either side proves nothing
		{"y", "u2", "y"},        // ours, being deleted
		{"missing", "u4", ""},   // none
		{"unmanaged", "u5", ""}, // no deployment
	} {
		got := leftover(inv, "ns", tc.name, tc.uid)
		if (got == nil) != (tc.want == "") || (got != nil && got.Name != tc.want) {
			t.Errorf("leftover(%s, %s) = %+v, want %q", tc.name, tc.uid, got, tc.want)
		}
	}
}

// TestFinalizeLeftover: with its ManifestWork gone but its HostedCluster
// still reported by the host's inventory, a deleting HCD keeps its
// finalizer and gets a cleanup ManifestWork, deleted only once the work
// agent holds it; one being deleted is waited for without writes; once
// none is reported, the finalizer goes. Orphan does not look.
func TestFinalizeLeftover(t *testing.T) {
	scheme := testScheme()
	ctx := context.Background()
	deleted := metav1.NewTime(time.Now().Add(-time.Minute)) // past leftoverSettle
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x", UID: "live", Finalizers: []string{Finalizer}, DeletionTimestamp: &deleted,
		Annotations: map[string]string{hcdstatus.AnnotationIdentityUID: "first"}},
		Spec:   v1alpha1.HostedClusterDeploymentSpec{HostingNamespace: "hosted", DeletionPolicy: v1alpha1.DeletionPolicyDelete},
		Status: v1alpha1.HostedClusterDeploymentStatus{HostingCluster: "cluster-1"}}
	entry := v1alpha1.InventoryHostedCluster{Namespace: "hosted", Name: "x", Deployment: &v1alpha1.InventoryDeployment{Namespace: "ns", Name: "x", UID: "first"}}
	inv := &v1alpha1.HostedClusterInventory{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: v1alpha1.InventoryName},
		Status: v1alpha1.HostedClusterInventoryStatus{HostedClusters: []v1alpha1.InventoryHostedCluster{entry}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(hcd, inv).WithStatusSubresource(inv).Build()
	var statuses []Status
	r := &Reconciler{client: statusCapture{Client: c, capture: func(s Status) { statuses = append(statuses, s) }}, reader: c, recorder: record.NewFakeRecorder(10)}
	host := Host{Cluster: "cluster-1", Exists: true, Available: true, AddOnAvailable: true}
	key := types.NamespacedName{Namespace: "cluster-1", Name: hosting.WorkName("ns", "x")}
	current := func() *v1alpha1.HostedClusterDeployment {
		t.Helper()
		got := &v1alpha1.HostedClusterDeployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(hcd), got); err != nil {
			t.Fatalf("the HCD is gone: %v", err)
		}
		return got
	}

	// Left behind: a cleanup ManifestWork, the finalizer stays.
	if _, err := r.finalize(ctx, current(), host, nil); err != nil {
		t.Fatal(err)
	}
	work := &workv1.ManifestWork{}
	if err := c.Get(ctx, key, work); err != nil {
		t.Fatalf("no cleanup ManifestWork: %v", err)
	}
	if work.Annotations[AnnotationLeftoverCleanup] != "true" || work.Labels[hosting.LabelHCDName] != "x" || len(work.Spec.Workload.Manifests) != 1 {
		t.Fatalf("cleanup ManifestWork: annotations %v, labels %v, %d manifests", work.Annotations, work.Labels, len(work.Spec.Workload.Manifests))
	}
	ns := &corev1.Namespace{}
	if err := json.Unmarshal(work.Spec.Workload.Manifests[0].Raw, ns); err != nil || ns.Kind != "Namespace" || ns.Name != "hosted" {
		t.Fatalf("its manifest: %s (%v)", work.Spec.Workload.Manifests[0].Raw, err)
	}
	if work.Spec.DeleteOption == nil || work.Spec.DeleteOption.PropagationPolicy != workv1.DeletePropagationPolicyTypeSelectivelyOrphan {
		t.Errorf("delete option %+v: the hosting namespace must be orphaned", work.Spec.DeleteOption)
	}
	if !slices.Contains(current().Finalizers, Finalizer) {
		t.Fatal("the finalizer went while the HostedCluster is left on the host")
	}
	if n := len(statuses); n != 1 || statuses[0].Conditions == nil {
		t.Fatalf("%d status writes, want 1", n)
	}

	// Not deleted before the work agent holds it.
	if _, err := r.finalize(ctx, current(), host, work); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, key, work); err != nil || work.DeletionTimestamp != nil {
		t.Fatalf("the cleanup ManifestWork was deleted before the work agent held it (%v)", err)
	}
	work.Finalizers = []string{workv1.ManifestWorkFinalizer}
	if err := c.Update(ctx, work); err != nil {
		t.Fatal(err)
	}
	if _, err := r.finalize(ctx, current(), host, work); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, key, work); err != nil || work.DeletionTimestamp == nil {
		t.Fatalf("the cleanup ManifestWork held by the work agent is not being deleted (%v)", err)
	}

	// The work agent deleted it; the HostedCluster is on its way out.
	work.Finalizers = nil
	if err := c.Update(ctx, work); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	inv.Status.HostedClusters[0].Deleting = true
	if err := c.Status().Update(ctx, inv); err != nil {
		t.Fatal(err)
	}
	writes := len(statuses)
	res, err := r.finalize(ctx, current(), host, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter == 0 || len(statuses) != writes {
		t.Errorf("waiting for a HostedCluster being deleted: requeue %s, %d status writes", res.RequeueAfter, len(statuses)-writes)
	}
	if err := c.Get(ctx, key, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a ManifestWork was written for a HostedCluster being deleted (%v)", err)
	}

	// Gone: the finalizer goes.
	inv.Status.HostedClusters = nil
	if err := c.Status().Update(ctx, inv); err != nil {
		t.Fatal(err)
	}
	if _, err := r.finalize(ctx, current(), host, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(hcd), &v1alpha1.HostedClusterDeployment{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the HCD stays once nothing of it is left (%v)", err)
	}

	// Orphan: the HostedCluster stays on purpose.
	orphan := hcd.DeepCopy()
	orphan.ResourceVersion = ""
	orphan.Name = "o"
	orphan.Spec.DeletionPolicy = v1alpha1.DeletionPolicyOrphan
	inv.Status.HostedClusters = []v1alpha1.InventoryHostedCluster{{Namespace: "hosted", Name: "o", Deployment: &v1alpha1.InventoryDeployment{Namespace: "ns", Name: "o", UID: "first"}}}
	c = fake.NewClientBuilder().WithScheme(scheme).WithObjects(orphan, inv.DeepCopy()).WithStatusSubresource(inv).Build()
	r = &Reconciler{client: statusCapture{Client: c, capture: func(Status) {}}, reader: c, recorder: record.NewFakeRecorder(10)}
	if _, err := r.finalize(ctx, orphan, host, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(orphan), &v1alpha1.HostedClusterDeployment{}); !apierrors.IsNotFound(err) {
		t.Fatalf("an Orphan HCD waits for its HostedCluster (%v)", err)
	}
}

// TestFinalizeSettles: a ManifestWork that went without the work agent
// ever saying it deletes (its Deleting condition) is not trusted at once
// when the deletion is recent: the inventory may not list a HostedCluster
// applied moments before. One the agent deleted as usual is.
func TestFinalizeSettles(t *testing.T) {
	scheme := testScheme()
	ctx := context.Background()
	host := Host{Cluster: "cluster-1", Exists: true, Available: true, AddOnAvailable: true}
	for _, tc := range []struct {
		name          string
		age           time.Duration
		agentDeleting bool
		wantWait      bool
	}{
		{"recent, let go without deleting", time.Second, false, true},
		{"recent, deleted by the agent", time.Second, true, false},
		{"past the settle time", 2 * leftoverSettle, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deleted := metav1.NewTime(time.Now().Add(-tc.age))
			hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x", UID: "u", Finalizers: []string{Finalizer}, DeletionTimestamp: &deleted},
				Status: v1alpha1.HostedClusterDeploymentStatus{HostingCluster: "cluster-1"}}
			work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: hosting.WorkName("ns", "x"), Finalizers: []string{workv1.ManifestWorkFinalizer}}}
			if tc.agentDeleting {
				work.Status.Conditions = []metav1.Condition{{Type: workv1.WorkDeleting, Status: metav1.ConditionTrue, Reason: "WorkDeleting"}}
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(hcd, work).Build()
			r := &Reconciler{client: statusCapture{Client: c, capture: func(Status) {}}, reader: c, recorder: record.NewFakeRecorder(10)}
			if _, err := r.finalize(ctx, hcd, host, work); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(work), work); err != nil || work.DeletionTimestamp == nil {
				t.Fatalf("the ManifestWork is not being deleted (%v)", err)
			}
			work.Finalizers = nil // the work agent lets it go
			if err := c.Update(ctx, work); client.IgnoreNotFound(err) != nil {
				t.Fatal(err)
			}
			got := &v1alpha1.HostedClusterDeployment{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(hcd), got); err != nil {
				t.Fatal(err)
			}
			res, err := r.finalize(ctx, got, host, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Get(ctx, client.ObjectKeyFromObject(hcd), got)
			if tc.wantWait && (err != nil || res.RequeueAfter <= 0 || res.RequeueAfter > leftoverSettle) {
				t.Errorf("did not wait: requeue %s, HCD %v", res.RequeueAfter, err)
			}
			if !tc.wantWait && !apierrors.IsNotFound(err) {
				t.Errorf("waited: requeue %s, HCD %v", res.RequeueAfter, err)
			}
		})
	}
}

// testScheme holds the kinds the delivery's fake-client tests use.
func testScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(workv1.Install(scheme))
	utilruntime.Must(clusterv1.Install(scheme))
	utilruntime.Must(addonv1alpha1.Install(scheme))
	return scheme
}
