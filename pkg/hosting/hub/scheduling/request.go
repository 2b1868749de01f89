package scheduling

import (
	"regexp"
	"strings"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// releaseTag matches the version at the start of an OpenShift release image
// tag: quay.io/openshift-release-dev/ocp-release:4.18.5-multi → 4, 18.
var releaseTag = regexp.MustCompile(`^(\d+)\.(\d+)(\.\d+)?([-+].*)?$`)

// ReleaseMinor returns the OpenShift minor version ("4.18") a release image
// names in its tag, or "" when it cannot tell (pinned by digest, custom tag).
func ReleaseMinor(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		return ""
	}
	slash := strings.LastIndex(image, "/")
	colon := strings.LastIndex(image, ":")
	if colon <= slash {
		return ""
	}
	m := releaseTag.FindStringSubmatch(image[colon+1:])
	if m == nil {
		return ""
	}
	return m[1] + "." + m[2]
}

// RequestFor is what the HostedClusterDeployment asks of its management
// cluster.
func RequestFor(hcd *v1alpha1.HostedClusterDeployment) Request {
	ns := hcd.Spec.HostingNamespace
	if ns == "" {
		ns = v1alpha1.DefaultHostingNamespace
	}
	req := Request{
		Name:             hcd.Name,
		HostingNamespace: ns,
		ReleaseMinor:     ReleaseMinor(hcd.Spec.HostedCluster.Spec.Release.Image),
		Platform:         string(hcd.Spec.HostedCluster.Spec.Platform.Type),
	}
	for _, np := range hcd.Spec.NodePools {
		req.NodePools = append(req.NodePools, np.Name)
	}
	return req
}

// Occupies returns the Candidate.Occupied keys a bound
// HostedClusterDeployment holds on its management cluster.
func Occupies(hcd *v1alpha1.HostedClusterDeployment) []string {
	req := RequestFor(hcd)
	keys := []string{HostedClusterKey(req.HostingNamespace, req.Name)}
	for _, np := range req.NodePools {
		keys = append(keys, NodePoolKey(req.HostingNamespace, np))
	}
	return append(keys, namespaceHoldings(req.HostingNamespace, req.Name)...)
}
