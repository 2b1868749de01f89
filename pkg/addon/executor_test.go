package addon

import (
	"context"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/manifests"
)

// TestInstallNamespaceOf: a work's executor lives where the addon-manager
// says the cluster's agent runs, the default namespace when it says
// nothing or the cluster has no add-on.
func TestInstallNamespaceOf(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := addonv1alpha1.Install(scheme); err != nil {
		t.Fatal(err)
	}
	mca := func(cluster, ns string) *addonv1alpha1.ManagedClusterAddOn {
		return &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: Name},
			Status: addonv1alpha1.ManagedClusterAddOnStatus{Namespace: ns}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(mca("elsewhere", "agents"), mca("unset", "")).Build()
	for cluster, want := range map[string]string{"elsewhere": "agents", "unset": DefaultInstallNamespace, "no-addon": DefaultInstallNamespace} {
		got, err := InstallNamespaceOf(context.Background(), c, cluster)
		if err != nil || got != want {
			t.Errorf("cluster %s: %q, %v; want %q", cluster, got, err, want)
		}
	}
}

func TestWorkExecutor(t *testing.T) {
	e := WorkExecutor("", ExecutorDelivery)
	if e.Subject.Type != workv1.ExecutorSubjectTypeServiceAccount || e.Subject.ServiceAccount == nil ||
		*e.Subject.ServiceAccount != (workv1.ManifestWorkSubjectServiceAccount{Namespace: DefaultInstallNamespace, Name: ExecutorDelivery}) {
		t.Fatalf("executor %+v", e)
	}
	// The name OCM's webhook asks execute-as for, and the hub's ClusterRole
	// grants (manifests/hub/61-hub-clusterrole.yaml).
	if got := ExecutorUser("hcp-fleet-agent", ExecutorDelivery); got != "system:serviceaccount:hcp-fleet-agent:hcp-fleet-work-delivery" {
		t.Fatalf("executor user %q", got)
	}
}

// TestHubMayExecuteAsTheExecutors: the hub's ClusterRole grants execute-as
// on exactly the executors of the default agent namespace and the work
// agent's own identity (the add-on's ManifestWork names no executor).
func TestHubMayExecuteAsTheExecutors(t *testing.T) {
	data, err := manifests.Hub.ReadFile("hub/61-hub-clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &role); err != nil {
		t.Fatal(err)
	}
	want := []string{"system:serviceaccount::klusterlet-work-sa"}
	for _, name := range Executors {
		want = append(want, ExecutorUser(DefaultInstallNamespace, name))
	}
	var got []string
	for _, r := range role.Rules {
		if slices.Contains(r.Verbs, "execute-as") {
			if len(r.Verbs) != 1 || !slices.Equal(r.Resources, []string{"manifestworks"}) {
				t.Errorf("execute-as rule %+v: want execute-as alone, on manifestworks", r)
			}
			got = append(got, r.ResourceNames...)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the hub may execute as %v, want %v", got, want)
	}
}
