package namespacegc

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

func TestDecide(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	const grace = 30 * time.Second
	created := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters", Labels: map[string]string{hosting.LabelCreatedNamespace: "true"}}}
	object := func(name string, labels, annotations map[string]string) metav1.PartialObjectMetadata {
		return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "clusters", Labels: labels, Annotations: annotations}}
	}
	hcdLabels := map[string]string{hosting.LabelHCDNamespace: "team-a", hosting.LabelHCDName: "hc-1"}
	applied := func(name string, age time.Duration, resources ...workv1.AppliedManifestResourceMeta) workv1.AppliedManifestWork {
		return workv1.AppliedManifestWork{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-age))},
			Status:     workv1.AppliedManifestWorkStatus{AppliedResources: resources},
		}
	}
	resource := func(group, res, ns, name string) workv1.AppliedManifestResourceMeta {
		return workv1.AppliedManifestResourceMeta{ResourceIdentifier: workv1.ResourceIdentifier{Group: group, Resource: res, Namespace: ns, Name: name}, Version: "v1"}
	}
	defaults := Contents{
		ConfigMaps: []metav1.PartialObjectMetadata{object("kube-root-ca.crt", nil, nil), object("openshift-service-ca.crt", nil, nil)},
		Secrets: []metav1.PartialObjectMetadata{
			object("default-token-abcde", nil, map[string]string{corev1.ServiceAccountNameKey: "default"}),
			object("builder-dockercfg-xyz12", nil, map[string]string{"openshift.io/internal-registry-auth-token.service-account": "builder"}),
		},
		// Elsewhere, or old and empty: none of these concern "clusters".
		AppliedManifestWorks: []workv1.AppliedManifestWork{
			applied("addon", time.Hour, resource("", "configmaps", "hcp-fleet-agent", "x"), resource("", "namespaces", "", "hcp-fleet-agent")),
			applied("other-hcd", time.Hour, resource("hypershift.openshift.io", "hostedclusters", "team-b", "hc-2")),
			applied("failing-for-long", time.Hour),
		},
	}
	with := func(edit func(*Contents)) Contents {
		c := defaults
		c.ConfigMaps = slices.Clone(defaults.ConfigMaps)
		c.Secrets = slices.Clone(defaults.Secrets)
		c.AppliedManifestWorks = slices.Clone(defaults.AppliedManifestWorks)
		edit(&c)
		return c
	}
	terminating := created.DeepCopy()
	terminating.DeletionTimestamp = &metav1.Time{Time: now}

	for _, tc := range []struct {
		name     string
		ns       *corev1.Namespace
		contents Contents
		// keepFor is a substring of the reason; "" means delete.
		keepFor string
	}{
		{name: "truly empty", ns: created, contents: Contents{}},
		{name: "only what the platform puts into every namespace", ns: created, contents: defaults},
		{name: "unlabelled", ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters"}}, keepFor: "not labelled"},
		{name: "label not true", ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters", Labels: map[string]string{hosting.LabelCreatedNamespace: "false"}}}, keepFor: "not labelled"},
		{name: "terminating", ns: terminating, keepFor: "terminating"},
		{name: "HostedCluster", ns: created, contents: with(func(c *Contents) { c.HostedClusters = []string{"clusters/hc-1"} }), keepFor: "HostedCluster clusters/hc-1"},
		{name: "NodePool", ns: created, contents: with(func(c *Contents) { c.NodePools = []string{"clusters/np-1"} }), keepFor: "NodePool clusters/np-1"},
		{name: "user ConfigMap", ns: created, contents: with(func(c *Contents) {
			c.ConfigMaps = append(c.ConfigMaps, object("settings", nil, nil))
		}), keepFor: "ConfigMap settings"},
		{name: "delivered ConfigMap", ns: created, contents: with(func(c *Contents) {
			c.ConfigMaps = append(c.ConfigMaps, object("hc-1-trust", hcdLabels, nil))
		}), keepFor: "ConfigMap hc-1-trust"},
		{name: "default-named ConfigMap with hcd labels", ns: created, contents: with(func(c *Contents) {
			c.ConfigMaps = []metav1.PartialObjectMetadata{object("kube-root-ca.crt", map[string]string{hosting.LabelHCDName: "hc-1"}, nil)}
		}), keepFor: "ConfigMap kube-root-ca.crt"},
		{name: "delivered pull secret", ns: created, contents: with(func(c *Contents) {
			c.Secrets = append(c.Secrets, object("hc-1-pull-secret", hcdLabels, nil))
		}), keepFor: "Secret hc-1-pull-secret"},
		{name: "user Secret", ns: created, contents: with(func(c *Contents) {
			c.Secrets = append(c.Secrets, object("hc-1-admin-kubeconfig", nil, nil))
		}), keepFor: "Secret hc-1-admin-kubeconfig"},
		{name: "service-account Secret with hcd labels", ns: created, contents: with(func(c *Contents) {
			c.Secrets = []metav1.PartialObjectMetadata{object("x-token", map[string]string{hosting.LabelHCDNamespace: "team-a"}, map[string]string{corev1.ServiceAccountNameKey: "x"})}
		}), keepFor: "Secret x-token"},
		{name: "more Secrets than a page", ns: created, contents: with(func(c *Contents) { c.Truncated = []string{"Secrets"} }), keepFor: "more Secrets than one list page"},
		{name: "AppliedManifestWork lists a ConfigMap in it", ns: created, contents: with(func(c *Contents) {
			c.AppliedManifestWorks = append(c.AppliedManifestWorks, applied("hcd-team-a.hc-1", time.Hour, resource("", "configmaps", "clusters", "cm")))
		}), keepFor: "AppliedManifestWork hcd-team-a.hc-1 applied configmaps clusters/cm"},
		{name: "AppliedManifestWork lists a HostedCluster in it", ns: created, contents: with(func(c *Contents) {
			c.AppliedManifestWorks = append(c.AppliedManifestWorks, applied("w", time.Hour, resource("hypershift.openshift.io", "hostedclusters", "clusters", "hc-1")))
		}), keepFor: "applied hostedclusters.hypershift.openshift.io clusters/hc-1"},
		{name: "AppliedManifestWork still delivers the namespace itself", ns: created, contents: with(func(c *Contents) {
			c.AppliedManifestWorks = append(c.AppliedManifestWorks, applied("w", time.Hour, resource("", "namespaces", "", "clusters")))
		}), keepFor: "applied the namespace itself"},
		{name: "deleting AppliedManifestWork still finalizing a resource in it", ns: created, contents: with(func(c *Contents) {
			w := applied("w", time.Hour, resource("", "secrets", "clusters", "s"))
			w.DeletionTimestamp = &metav1.Time{Time: now}
			c.AppliedManifestWorks = append(c.AppliedManifestWorks, w)
		}), keepFor: "AppliedManifestWork w applied secrets clusters/s"},
		{name: "new AppliedManifestWork that has not reported yet", ns: created, contents: with(func(c *Contents) {
			c.AppliedManifestWorks = append(c.AppliedManifestWorks, applied("new", time.Second))
		}), keepFor: "AppliedManifestWork new has not reported"},
		{name: "new AppliedManifestWork being deleted", ns: created, contents: with(func(c *Contents) {
			w := applied("new", time.Second)
			w.DeletionTimestamp = &metav1.Time{Time: now}
			c.AppliedManifestWorks = append(c.AppliedManifestWorks, w)
		})},
		{name: "namespace name is a prefix of another", ns: created, contents: with(func(c *Contents) {
			c.AppliedManifestWorks = append(c.AppliedManifestWorks, applied("w", time.Hour,
				resource("", "configmaps", "clusters-hc-1", "cm"), resource("", "namespaces", "", "clusters-hc-1")))
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.ns, tc.contents, now, grace)
			switch {
			case tc.keepFor == "" && !d.Delete:
				t.Errorf("kept (%s), want deleted", d)
			case tc.keepFor != "" && d.Delete:
				t.Errorf("deleted, want kept for %q", tc.keepFor)
			case tc.keepFor != "" && !strings.Contains(d.String(), tc.keepFor):
				t.Errorf("kept for %q, want a reason containing %q", d, tc.keepFor)
			}
		})
	}
}

func TestDecideBoundsReasons(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters", Labels: map[string]string{hosting.LabelCreatedNamespace: "true"}}}
	c := Contents{}
	for range 50 {
		c.HostedClusters = append(c.HostedClusters, "clusters/hc")
	}
	if d := Decide(ns, c, time.Now(), time.Second); d.Delete || len(d.Reasons) != maxReasons {
		t.Errorf("Decide with 50 HostedClusters: delete %v, %d reasons; want kept with %d", d.Delete, len(d.Reasons), maxReasons)
	}
}

func TestNamespacesOf(t *testing.T) {
	w := &workv1.AppliedManifestWork{Status: workv1.AppliedManifestWorkStatus{AppliedResources: []workv1.AppliedManifestResourceMeta{
		{ResourceIdentifier: workv1.ResourceIdentifier{Resource: "namespaces", Name: "clusters"}},
		{ResourceIdentifier: workv1.ResourceIdentifier{Resource: "secrets", Namespace: "clusters", Name: "s"}},
		{ResourceIdentifier: workv1.ResourceIdentifier{Group: "hypershift.openshift.io", Resource: "hostedclusters", Namespace: "team-b", Name: "hc"}},
		{ResourceIdentifier: workv1.ResourceIdentifier{Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "r"}},
	}}}
	if got, want := namespacesOf(w), []string{"clusters", "team-b"}; !slices.Equal(got, want) {
		t.Errorf("namespacesOf = %v, want %v", got, want)
	}
}
