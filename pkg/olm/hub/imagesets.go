package hub

import (
	"regexp"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ClusterImageSetGVK is Hive's ClusterImageSet, which ACM admins publish on
// the hub to name the releases clusters may run (spec.releaseImage). The
// hub reads them to learn the version of a release pinned by digest, whose
// reference says nothing about it.
var ClusterImageSetGVK = schema.GroupVersionKind{Group: "hive.openshift.io", Version: "v1", Kind: "ClusterImageSet"}

// LabelClusterImageSetVersion on a ClusterImageSet names its release's
// OpenShift version ("4.19.0") when its name does not follow ACM's
// img<version>-<arch>-appsub convention.
const LabelClusterImageSetVersion = "hcpfleet.io/openshift-version"

// imageSetName is ACM's naming convention for ClusterImageSets
// (stolostron/acm-hive-openshift-releases): img4.19.0-multi-appsub,
// img4.18.6-x86-64-appsub.
var imageSetName = regexp.MustCompile(`^img(\d+\.\d+\.\d+(?:-(?:ec|rc|fc)\.\d+)?)`)

// ImageSetMinor is the OpenShift minor ("4.19") of image by the
// ClusterImageSets given (their label first, then their name), and the name
// of the one that said so; "" when none whose spec.releaseImage is exactly
// image names a version. Two that disagree name none: the hub does not
// guess which the admin meant.
func ImageSetMinor(sets []unstructured.Unstructured, image string) (minor, from string) {
	for i := range sets {
		s := &sets[i]
		if ri, _, _ := unstructured.NestedString(s.Object, "spec", "releaseImage"); ri != image {
			continue
		}
		version := s.GetLabels()[LabelClusterImageSetVersion]
		if version == "" {
			if m := imageSetName.FindStringSubmatch(s.GetName()); m != nil {
				version = m[1]
			}
		}
		v, err := semver.ParseTolerant(version)
		if err != nil {
			continue
		}
		m := semver.Version{Major: v.Major, Minor: v.Minor}.String()
		m = m[:len(m)-2] // "4.19.0" → "4.19"
		if minor != "" && minor != m {
			return "", ""
		}
		minor, from = m, s.GetName()
	}
	return minor, from
}
