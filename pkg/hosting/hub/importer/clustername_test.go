package importer

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

func TestClusterName(t *testing.T) {
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "prod"}}
	if got := ClusterName(hcd, ""); got != "prod" {
		t.Errorf("no prefix: %s", got)
	}
	if got := ClusterName(hcd, "hcp-"); got != "hcp-prod" {
		t.Errorf("prefix hcp-: %s", got)
	}
	// Imported before the admin set (or changed) the prefix: never renamed.
	hcd.Status.ManagedCluster = "prod"
	if got := ClusterName(hcd, "hcp-"); got != "prod" {
		t.Errorf("imported as prod, prefix hcp-: %s", got)
	}
}
