package fleetview

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// The plugin and the console count a relocation's deployment on its
// destination as the scheduler does, and a reader that may not list
// relocations sees none rather than failing.
func TestMovingLister(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	web := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "uid-web"},
		Status: v1alpha1.HostedClusterDeploymentStatus{HostingCluster: "cluster-1"}}
	done := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "done", UID: "uid-done"}}
	moving := &v1alpha1.HostedClusterRelocation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "move-web"},
		Spec:   v1alpha1.HostedClusterRelocationSpec{HostedClusterDeployment: "web"},
		Status: v1alpha1.HostedClusterRelocationStatus{Phase: "Restoring", Destination: "cluster-2"}}
	ended := &v1alpha1.HostedClusterRelocation{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "move-done"},
		Spec:   v1alpha1.HostedClusterRelocationSpec{HostedClusterDeployment: "done"},
		Status: v1alpha1.HostedClusterRelocationStatus{Phase: "Done", Destination: "cluster-2"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(web, done, moving, ended).Build()

	lister := MovingLister(c)
	got, err := lister(context.Background(), "cluster-2")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got["uid-web"]) == 0 {
		t.Fatalf("moving onto cluster-2: got %v, want web's holdings only (the ended move counts no more)", got)
	}
	if want := scheduling.Occupies(web); len(got["uid-web"]) != len(want) {
		t.Errorf("web occupies %v on cluster-2, the scheduler counts %v", got["uid-web"], want)
	}
	if got, err := lister(context.Background(), "cluster-1"); err != nil || got != nil {
		t.Errorf("nothing moves onto the source cluster-1: got %v, %v", got, err)
	}

	forbidden := fake.NewClientBuilder().WithScheme(scheme).WithObjects(web, moving).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*v1alpha1.HostedClusterRelocationList); ok {
				return apierrors.NewForbidden(schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "hostedclusterrelocations"}, "", nil)
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	if got, err := MovingLister(forbidden)(context.Background(), "cluster-2"); err != nil || got != nil {
		t.Errorf("a reader that may not list relocations sees no moves: got %v, %v", got, err)
	}
}
