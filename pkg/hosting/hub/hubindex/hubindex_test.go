package hubindex

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

func indexedClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := workv1.Install(s); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...)
	for _, ix := range Indexes() {
		b = b.WithIndex(ix.Object, ix.Field, ix.Extract)
	}
	return b.Build()
}

// keys are the namespace/name of the objects listed, sorted.
func keys(list client.ObjectList) []string {
	var out []string
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		out = append(out, client.ObjectKeyFromObject(o.(client.Object)).String())
		return nil
	})
	slices.Sort(out)
	return out
}

func TestHostingCluster(t *testing.T) {
	hcd := func(ns, name, cluster string) client.Object {
		h := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		h.Status.HostingCluster = cluster
		return h
	}
	c := indexedClient(t, hcd("a", "one", "cluster-1"), hcd("b", "two", "cluster-1"), hcd("a", "three", "cluster-2"), hcd("a", "new", ""))
	for cluster, want := range map[string][]string{
		"cluster-1": {"a/one", "b/two"},
		"cluster-2": {"a/three"},
		"":          {"a/new"}, // the unscheduled ones, as the scheduler lists them
		"cluster-3": nil,
	} {
		var list v1alpha1.HostedClusterDeploymentList
		if err := c.List(context.Background(), &list, client.MatchingFields{HostingCluster: cluster}); err != nil {
			t.Fatal(err)
		}
		if got := keys(&list); !slices.Equal(got, want) {
			t.Errorf("bound to %q: %v, want %v", cluster, got, want)
		}
	}
}

func TestWorkHCD(t *testing.T) {
	work := func(ns, name string, labels map[string]string) client.Object {
		return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	}
	labels := func(ns, name string) map[string]string {
		return map[string]string{hosting.LabelHCDNamespace: ns, hosting.LabelHCDName: name}
	}
	c := indexedClient(t,
		work("cluster-1", hosting.WorkName("team", "hc"), labels("team", "hc")),
		work("cluster-2", "ext-hc", labels("team", "hc")), // an extension's names the HCD too
		work("cluster-1", "other", labels("team", "other")),
		// Half a name is no name: not indexed under "team/" or "/hc".
		work("cluster-3", "half", map[string]string{hosting.LabelHCDNamespace: "team"}),
		work("cluster-3", "half2", map[string]string{hosting.LabelHCDName: "hc"}),
	)
	for key, want := range map[string][]string{
		WorkHCDKey("team", "hc"):    {"cluster-1/" + hosting.WorkName("team", "hc"), "cluster-2/ext-hc"},
		WorkHCDKey("team", "other"): {"cluster-1/other"},
		WorkHCDKey("team", ""):      nil,
		WorkHCDKey("", "hc"):        nil,
	} {
		var list workv1.ManifestWorkList
		if err := c.List(context.Background(), &list, client.MatchingFields{WorkHCD: key}); err != nil {
			t.Fatal(err)
		}
		if got := keys(&list); !slices.Equal(got, want) {
			t.Errorf("works of %q: %v, want %v", key, got, want)
		}
	}
}
