package scheduling

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// TestAdoptedTarget: an adopted deployment is bound where the annotation
// says only when the annotation agrees with its spec.
func TestAdoptedTarget(t *testing.T) {
	hcd := func(annotation, pin, hostingNamespace string) *v1alpha1.HostedClusterDeployment {
		h := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "prod"}}
		if annotation != "" {
			h.Annotations = map[string]string{hcdstatus.AnnotationAdoptedFrom: annotation}
		}
		h.Spec.HostingCluster, h.Spec.HostingNamespace = pin, hostingNamespace
		return h
	}
	for _, tc := range []struct {
		name              string
		hcd               *v1alpha1.HostedClusterDeployment
		cluster           string
		mismatch, adopted bool
	}{
		{"not adopted", hcd("", "cluster-1", "clusters"), "", false, false},
		{"adopted", hcd("cluster-1/clusters/prod", "cluster-1", "clusters"), "cluster-1", false, true},
		{"default hosting namespace", hcd("cluster-1/clusters/prod", "cluster-1", ""), "cluster-1", false, true},
		{"another pin", hcd("cluster-1/clusters/prod", "cluster-2", "clusters"), "", true, true},
		{"another namespace", hcd("cluster-1/other/prod", "cluster-1", "clusters"), "", true, true},
		{"another name", hcd("cluster-1/clusters/dev", "cluster-1", "clusters"), "", true, true},
		{"malformed", hcd("cluster-1/prod", "cluster-1", "clusters"), "", true, true},
	} {
		cluster, mismatch, adopted := AdoptedTarget(tc.hcd)
		if cluster != tc.cluster || (mismatch != "") != tc.mismatch || adopted != tc.adopted {
			t.Errorf("%s: %q, %q, %v", tc.name, cluster, mismatch, adopted)
		}
	}
}
