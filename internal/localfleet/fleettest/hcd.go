package fleettest

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
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
			Tolerations: AvailabilityTolerations(),
		}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: name}, StringData: map[string]string{".dockerconfigjson": `{"auths":{}}`}},
	} {
		if err := hub.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// AvailabilityTolerations tolerate OCM's availability taints for the hub's
// default --host-unavailable-grace, as examples/20-placement.yaml does: a
// management cluster that flaps stays in the Placement's decisions as long
// as the hub still takes it as available (docs/hosting.md).
func AvailabilityTolerations() []clusterv1beta1.Toleration {
	return AvailabilityTolerationsFor(hostmodel.DefaultUnavailableGrace)
}

// AvailabilityTolerationsFor tolerates OCM's availability taints
// (scheduling.AvailabilityTaints) for grace.
func AvailabilityTolerationsFor(grace time.Duration) []clusterv1beta1.Toleration {
	seconds := int64(grace / time.Second)
	tols := make([]clusterv1beta1.Toleration, 0, len(scheduling.AvailabilityTaints))
	for _, key := range scheduling.AvailabilityTaints {
		tols = append(tols, clusterv1beta1.Toleration{Key: key, Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: &seconds})
	}
	return tols
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

// OneManifestWorkEach checks the ManifestWorks hcp-fleet keeps on the hub for
// a namespace's HostedClusterDeployments: none has two, each is in the
// namespace of the cluster its HostedClusterDeployment is bound to, and none
// is left without its HostedClusterDeployment. It returns how many there
// are and every problem found.
func OneManifestWorkEach(ctx context.Context, hub client.Reader, namespace string) (works int, problems []string, err error) {
	var list workv1.ManifestWorkList
	if err := hub.List(ctx, &list, client.MatchingLabels{hosting.LabelHCDNamespace: namespace}); err != nil {
		return 0, nil, err
	}
	seen := map[string]string{}
	for _, w := range list.Items {
		name := w.Labels[hosting.LabelHCDName]
		if other, dup := seen[name]; dup {
			problems = append(problems, fmt.Sprintf("%s/%s has ManifestWorks on %s and %s", namespace, name, other, w.Namespace))
		}
		seen[name] = w.Namespace
		h := &v1alpha1.HostedClusterDeployment{}
		err := hub.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, h)
		switch {
		case apierrors.IsNotFound(err):
			problems = append(problems, fmt.Sprintf("orphaned ManifestWork %s/%s: no HostedClusterDeployment %s/%s", w.Namespace, w.Name, namespace, name))
		case err != nil:
			return 0, nil, err
		case h.Status.HostingCluster != w.Namespace:
			problems = append(problems, fmt.Sprintf("%s/%s bound to %q but delivered to %s", namespace, name, h.Status.HostingCluster, w.Namespace))
		}
	}
	return len(seen), problems, nil
}

// SetTenantPolicy is what a fleet admin does to govern one namespace: the
// TenantPolicy "tenant-<namespace>", selecting the namespace by its
// kubernetes.io/metadata.name label, created or updated by mutate (which
// sees what it holds already).
func SetTenantPolicy(ctx context.Context, hub client.Client, namespace string, mutate func(*v1alpha1.TenantPolicySpec)) error {
	tp := &v1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "tenant-" + namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, hub, tp, func() error {
		tp.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}}
		mutate(&tp.Spec)
		return nil
	})
	return err
}

// AllowUpgrade lets a HostedClusterDeployment go to release past the hub's
// hold, as a fleet admin does: spec.upgradeOverrides of its namespace's
// TenantPolicy (SetTenantPolicy).
func AllowUpgrade(ctx context.Context, hub client.Client, namespace, name, release string) error {
	return SetTenantPolicy(ctx, hub, namespace, func(s *v1alpha1.TenantPolicySpec) {
		s.UpgradeOverrides = []v1alpha1.UpgradeOverride{{Namespace: namespace, Name: name, ReleaseImage: release}}
	})
}
