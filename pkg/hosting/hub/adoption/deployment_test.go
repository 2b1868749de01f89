package adoption

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

func answered() *v1alpha1.HostedClusterAdoption {
	return &v1alpha1.HostedClusterAdoption{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: "clusters-prod", Generation: 1},
		Spec: v1alpha1.HostedClusterAdoptionSpec{HostedCluster: v1alpha1.AdoptionHostedCluster{Namespace: "clusters", Name: "prod"},
			Into: v1alpha1.AdoptionInto{Namespace: "team-a"}},
		Status: v1alpha1.HostedClusterAdoptionStatus{Observed: &v1alpha1.AdoptionObserved{UID: "hc-uid",
			HostedCluster: runtime.RawExtension{Raw: []byte(`{"labels":{"hcpfleet.io/hcd-name":"old","made-by":"hcp"},"annotations":{"x":"y"},"spec":{"infraID":"prod-abc","pullSecret":{"name":"ps"}}}`)},
			NodePools:     []v1alpha1.AdoptionNodePool{{Name: "prod-workers", Object: runtime.RawExtension{Raw: []byte(`{"spec":{"clusterName":"prod","replicas":2}}`)}}}}},
	}
}

// TestDeployment: the deployment is the HostedCluster as it runs, bound by
// annotation where it runs, named after it, Orphan by default, without an
// earlier deployment's labels.
func TestDeployment(t *testing.T) {
	u, err := Deployment(answered())
	if err != nil {
		t.Fatal(err)
	}
	str := func(path ...string) string { s, _, _ := unstructured.NestedString(u.Object, path...); return s }
	if u.GetNamespace() != "team-a" || u.GetName() != "prod" || str("spec", "hostingCluster") != "cluster-1" || str("spec", "hostingNamespace") != "clusters" ||
		str("spec", "deletionPolicy") != "Orphan" || str("spec", "hostedCluster", "spec", "infraID") != "" ||
		u.GetAnnotations()[AnnotationAdoptedFrom] != "cluster-1/clusters/prod" || u.GetAnnotations()[hcdstatus.AnnotationAdoptedIdentity] != "infraID=prod-abc" {
		t.Errorf("deployment %v", u.Object)
	}
	labels, _, _ := unstructured.NestedStringMap(u.Object, "spec", "hostedCluster", "labels")
	if labels["made-by"] != "hcp" || labels["hcpfleet.io/hcd-name"] != "" {
		t.Errorf("labels %v: want the HostedCluster's own, not hcp-fleet's", labels)
	}
	pools, _, _ := unstructured.NestedSlice(u.Object, "spec", "nodePools")
	if len(pools) != 1 || pools[0].(map[string]any)["name"] != "prod-workers" {
		t.Errorf("node pools %v", pools)
	}
	SetKeptReferences(u, []string{"Secret/ps", "ConfigMap/ca"})
	if got := u.GetAnnotations()[hcdstatus.AnnotationAdoptedReferences]; got != "ConfigMap/ca,Secret/ps" {
		t.Errorf("kept references %q", got)
	}
	none := answered()
	none.Status.Observed = nil
	if _, err := Deployment(none); err == nil {
		t.Error("a deployment without the agent's answer")
	}
}

// TestTakeoverCondition: Adopted only once the deployment is bound and
// delivered and the agent reports the adopted HostedCluster labelled as
// its; the reason says what is missing otherwise.
func TestTakeoverCondition(t *testing.T) {
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "prod", UID: "hcd-uid",
		Annotations: map[string]string{AnnotationAdoptedFrom: "cluster-1/clusters/prod"}}}
	cond := func(t, s, r string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionStatus(s), Reason: r}
	}
	labelled := &v1alpha1.HostedClusterInventory{Status: v1alpha1.HostedClusterInventoryStatus{HostedClusters: []v1alpha1.InventoryHostedCluster{
		{Namespace: "clusters", Name: "prod", Deployment: &v1alpha1.InventoryDeployment{Namespace: "team-a", Name: "prod", UID: "hcd-uid"}}}}}
	unlabelled := &v1alpha1.HostedClusterInventory{Status: v1alpha1.HostedClusterInventoryStatus{HostedClusters: []v1alpha1.InventoryHostedCluster{
		{Namespace: "clusters", Name: "prod"}}}}
	for _, tc := range []struct {
		name  string
		edit  func(*v1alpha1.HostedClusterAdoption, *v1alpha1.HostedClusterDeployment)
		inv   *v1alpha1.HostedClusterInventory
		want  string
		adopt bool
	}{
		{"not bound", func(*v1alpha1.HostedClusterAdoption, *v1alpha1.HostedClusterDeployment) {}, labelled, ReasonTakingOver, false},
		{"refused by policy", func(_ *v1alpha1.HostedClusterAdoption, d *v1alpha1.HostedClusterDeployment) {
			d.Status.Conditions = []metav1.Condition{cond(v1alpha1.ConditionScheduled, "False", v1alpha1.ReasonPolicyViolation)}
		}, labelled, ReasonPolicyViolation, false},
		{"delivered, not labelled yet", func(_ *v1alpha1.HostedClusterAdoption, d *v1alpha1.HostedClusterDeployment) {
			d.Status.Conditions = []metav1.Condition{cond(v1alpha1.ConditionScheduled, "True", ReasonAdopted), cond(v1alpha1.ConditionDelivered, "True", "Applied")}
		}, unlabelled, ReasonTakingOver, false},
		{"adopted", func(_ *v1alpha1.HostedClusterAdoption, d *v1alpha1.HostedClusterDeployment) {
			d.Status.Conditions = []metav1.Condition{cond(v1alpha1.ConditionScheduled, "True", ReasonAdopted), cond(v1alpha1.ConditionDelivered, "True", "Applied")}
		}, labelled, ReasonAdopted, true},
		{"replaced", func(a *v1alpha1.HostedClusterAdoption, d *v1alpha1.HostedClusterDeployment) {
			d.Status.Conditions = []metav1.Condition{cond(v1alpha1.ConditionScheduled, "True", ReasonAdopted), cond(v1alpha1.ConditionDelivered, "True", "Applied")}
			a.Status.Observed.UID = "another"
		}, labelled, ReasonHostedClusterChanged, false},
		{"someone else's deployment", func(_ *v1alpha1.HostedClusterAdoption, d *v1alpha1.HostedClusterDeployment) {
			d.Annotations = nil
		}, labelled, ReasonDeploymentGone, false},
	} {
		hca, d := answered(), hcd.DeepCopy()
		hca.Status.AdoptedUID = "hc-uid"
		tc.edit(hca, d)
		c := TakeoverCondition(hca, d, tc.inv)
		if c.Reason != tc.want || (c.Status == metav1.ConditionTrue) != tc.adopt || c.Message == "" {
			t.Errorf("%s: %+v, want reason %s", tc.name, c, tc.want)
		}
	}
}
