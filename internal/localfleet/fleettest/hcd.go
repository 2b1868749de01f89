package fleettest

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
)

// Release is the release image test HostedClusterDeployments run.
const Release = "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"

// Tenant creates (or keeps) a hub namespace as a fleet admin sets one up
// for a team: bound to the global cluster set, with a Placement "hosts" of
// the management clusters hcp-fleet runs on, and a pull secret.
func Tenant(ctx context.Context, hub client.Client, name string) error {
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: "global", Namespace: name}, Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"}},
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "hosts", Namespace: name}, Spec: clusterv1beta1.PlacementSpec{
			ClusterSets: []string{"global"},
			Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{hcpfleet.HostLabel: "true"}}}}},
		}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: name}, StringData: map[string]string{".dockerconfigjson": `{"auths":{}}`}},
	} {
		if err := hub.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// HCD is a HostedClusterDeployment of a Tenant's namespace with one node
// pool, placed by the tenant's "hosts" Placement, as unstructured (the way
// a user's YAML arrives, unknown fields included); mutate edits its spec.
func HCD(namespace, name string, mutate ...func(spec map[string]any)) *unstructured.Unstructured {
	hc := HostedCluster(v1alpha1.DefaultHostingNamespace, name).Object["spec"].(map[string]any)
	spec := map[string]any{
		"placement":     "hosts",
		"hostedCluster": map[string]any{"labels": map[string]any{"team": "a"}, "spec": hc},
		"nodePools": []any{map[string]any{"name": name + "-workers", "spec": map[string]any{
			"clusterName": name, "replicas": int64(2), "release": map[string]any{"image": Release},
			"management": map[string]any{"upgradeType": "Replace"},
			"platform":   map[string]any{"type": "None"},
		}}},
	}
	for _, m := range mutate {
		m(spec)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("HostedClusterDeployment")
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}
