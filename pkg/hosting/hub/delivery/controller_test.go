package delivery

import (
	"testing"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"

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
		if got := releaseMinor(hcd, tc.image); got != tc.want {
			t.Errorf("releaseMinor(%s, %+v) = %q, want %q", tc.image, tc.status, got, tc.want)
		}
	}
}
