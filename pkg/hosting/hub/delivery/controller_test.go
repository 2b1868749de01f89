package delivery

import (
	"testing"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

func TestReleaseMinor(t *testing.T) {
	const byDigest = "quay.io/openshift-release-dev/ocp-release@sha256:0123"
	for _, tc := range []struct {
		image  string
		status *v1alpha1.HostedClusterVersionStatus
		want   string
	}{
		{"quay.io/openshift-release-dev/ocp-release:4.18.5-multi", nil, "4.18"},
		{byDigest, nil, ""},
		{byDigest, &v1alpha1.HostedClusterVersionStatus{Desired: v1alpha1.ReleaseStatus{Image: byDigest, Version: "4.19.2"}}, "4.19"},
		// The reported version is of another image (the spec moved on).
		{byDigest, &v1alpha1.HostedClusterVersionStatus{Desired: v1alpha1.ReleaseStatus{Image: "other@sha256:1", Version: "4.19.2"}}, ""},
		{byDigest, &v1alpha1.HostedClusterVersionStatus{Desired: v1alpha1.ReleaseStatus{Image: byDigest, Version: "garbage"}}, ""},
	} {
		hcd := &v1alpha1.HostedClusterDeployment{}
		hcd.Spec.HostedCluster.Spec.Release = hyperv1.Release{Image: tc.image}
		hcd.Status.Version = tc.status
		if got, _ := releaseMinor(hcd, nil, tc.image); got != tc.want {
			t.Errorf("releaseMinor(%s, %+v) = %q, want %q", tc.image, tc.status, got, tc.want)
		}
	}
}

// TestReleaseMinorFromClusterImageSet: a digest an admin's ClusterImageSet
// names has that version, over what the hosted cluster reports.
func TestReleaseMinorFromClusterImageSet(t *testing.T) {
	const byDigest = "quay.io/openshift-release-dev/ocp-release@sha256:0123"
	set := unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "img4.19.0-multi-appsub"},
		"spec": map[string]any{"releaseImage": byDigest}}}
	hcd := &v1alpha1.HostedClusterDeployment{}
	if got, from := releaseMinor(hcd, []unstructured.Unstructured{set}, byDigest); got != "4.19" || from != "ClusterImageSet img4.19.0-multi-appsub" {
		t.Errorf("releaseMinor = %q from %q", got, from)
	}
}
