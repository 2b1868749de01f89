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
	return imageSetVersion(sets, image, func(v semver.Version) string {
		m := semver.Version{Major: v.Major, Minor: v.Minor}.String()
		return m[:len(m)-2] // "4.19.0" → "4.19"
	})
}

// ImageSetVersion is the OpenShift version ("4.19.2") of image by the
// ClusterImageSets given, as ImageSetMinor finds it, for the release
// rollout, which must know the patch level (downgrades) too.
func ImageSetVersion(sets []unstructured.Unstructured, image string) (version, from string) {
	return imageSetVersion(sets, image, func(v semver.Version) string {
		return semver.Version{Major: v.Major, Minor: v.Minor, Patch: v.Patch, Pre: v.Pre}.String()
	})
}

func imageSetVersion(sets []unstructured.Unstructured, image string, format func(semver.Version) string) (out, from string) {
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
		f := format(v)
		if out != "" && out != f {
			return "", ""
		}
		out, from = f, s.GetName()
	}
	return out, from
}
