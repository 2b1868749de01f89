//go:build integration

package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hcpv1 "github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// TestAdoptionValidation: a HostedClusterAdoption names valid objects, its
// deletionPolicy defaults to Orphan, and its spec cannot change.
func TestAdoptionValidation(t *testing.T) {
	ctx := context.Background()
	ensureNamespace(t, validationNamespace)
	valid := func(name string) *hcpv1.HostedClusterAdoption {
		return &hcpv1.HostedClusterAdoption{ObjectMeta: metav1.ObjectMeta{Namespace: validationNamespace, Name: name},
			Spec: hcpv1.HostedClusterAdoptionSpec{HostedCluster: hcpv1.AdoptionHostedCluster{Namespace: "clusters", Name: "prod"},
				Into: hcpv1.AdoptionInto{Namespace: "team-a"}}}
	}
	for _, tc := range []struct {
		name, want string
		edit       func(*hcpv1.HostedClusterAdoption)
	}{
		{"bad-namespace", "spec.hostedCluster.namespace must be a namespace name", func(a *hcpv1.HostedClusterAdoption) { a.Spec.HostedCluster.Namespace = "Clusters" }},
		{"bad-name", "spec.hostedCluster.name must be a lowercase RFC 1123 label", func(a *hcpv1.HostedClusterAdoption) { a.Spec.HostedCluster.Name = "prod.x" }},
		{"no-into", "spec.into.namespace", func(a *hcpv1.HostedClusterAdoption) { a.Spec.Into.Namespace = "" }},
		{"bad-into", "spec.into.name must be a lowercase RFC 1123 label", func(a *hcpv1.HostedClusterAdoption) { a.Spec.Into.Name = "-x" }},
		{"bad-policy", "spec.deletionPolicy", func(a *hcpv1.HostedClusterAdoption) { a.Spec.DeletionPolicy = "Keep" }},
	} {
		a := valid(tc.name)
		tc.edit(a)
		if err := k8s.Create(ctx, a); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error about %q", tc.name, err, tc.want)
		}
	}
	a := valid("ok")
	if err := k8s.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), a) })
	if a.Spec.DeletionPolicy != hcpv1.DeletionPolicyOrphan {
		t.Errorf("deletionPolicy %q, want the default Orphan", a.Spec.DeletionPolicy)
	}
	a.Spec.Into.Namespace = "team-b"
	if err := k8s.Update(ctx, a); err == nil || !strings.Contains(err.Error(), "spec is immutable") {
		t.Errorf("changing spec.into: %v, want refused as immutable", err)
	}
}
