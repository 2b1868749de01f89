package agent

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"
)

// TestAddonDeletingSurvivesAnAbsentHub: the answer comes from the hub when
// it answers, and is the last one read when it does not — so a hub that is
// away (or a restarting one that serves 404 for custom resources) neither
// stops the agent's local reconciling nor cancels a deletion it has seen.
func TestAddonDeletingSurvivesAnAbsentHub(t *testing.T) {
	ctx := context.Background()
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: "mc1", Name: "hcp-fleet"}}
	hub := addonfake.NewSimpleClientset(mca)
	var hubErr error
	hub.PrependReactor("get", "managedclusteraddons", func(clienttesting.Action) (bool, runtime.Object, error) {
		return hubErr != nil, nil, hubErr
	})
	env := &Env{Options: &Options{ClusterName: "mc1", AddonName: "hcp-fleet"}, HubAddonClient: hub}
	gone := apierrors.NewNotFound(schema.GroupResource{Group: "addon.open-cluster-management.io", Resource: "managedclusteraddons"}, "hcp-fleet")

	steps := []struct {
		name     string
		hubErr   error
		deleting *metav1.Time // set on the hub's object before the step
		want     bool
	}{
		{name: "hub away before anything was read", hubErr: errors.New("connection refused"), want: false},
		{name: "restarting hub serves 404 before anything was read", hubErr: gone, want: false},
		{name: "hub answers: present", want: false},
		{name: "hub away after present", hubErr: errors.New("connection refused"), want: false},
		{name: "hub answers: deleting", deleting: &metav1.Time{}, want: true},
		{name: "hub away after deleting", hubErr: errors.New("i/o timeout"), want: true},
		{name: "add-on gone after deleting", hubErr: gone, want: true},
	}
	for _, s := range steps {
		if s.deleting != nil {
			obj, err := hub.Tracker().Get(addonv1alpha1.SchemeGroupVersion.WithResource("managedclusteraddons"), "mc1", "hcp-fleet")
			if err != nil {
				t.Fatal(err)
			}
			m := obj.(*addonv1alpha1.ManagedClusterAddOn).DeepCopy()
			m.DeletionTimestamp = s.deleting
			if err := hub.Tracker().Update(addonv1alpha1.SchemeGroupVersion.WithResource("managedclusteraddons"), m, "mc1"); err != nil {
				t.Fatal(err)
			}
		}
		hubErr = s.hubErr
		if got := env.AddonDeleting(ctx); got != s.want {
			t.Errorf("%s: AddonDeleting = %v, want %v", s.name, got, s.want)
		}
	}
}
