package hub

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestImageSetMinor(t *testing.T) {
	const digest = "quay.io/openshift-release-dev/ocp-release@sha256:0123"
	set := func(name, image, label string) unstructured.Unstructured {
		u := unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"releaseImage": image}}}
		u.SetName(name)
		if label != "" {
			u.SetLabels(map[string]string{LabelClusterImageSetVersion: label})
		}
		return u
	}
	for name, tc := range map[string]struct {
		sets      []unstructured.Unstructured
		want, src string
	}{
		"ACM name":             {[]unstructured.Unstructured{set("img4.19.0-multi-appsub", digest, "")}, "4.19", "img4.19.0-multi-appsub"},
		"label wins over name": {[]unstructured.Unstructured{set("img4.18.0-multi-appsub", digest, "4.19.2")}, "4.19", "img4.18.0-multi-appsub"},
		"label only":           {[]unstructured.Unstructured{set("latest", digest, "4.20.0-rc.1")}, "4.20", "latest"},
		"other image":          {[]unstructured.Unstructured{set("img4.19.0-multi-appsub", digest+"5", "")}, "", ""},
		"no version":           {[]unstructured.Unstructured{set("prod", digest, "")}, "", ""},
		"disagreeing":          {[]unstructured.Unstructured{set("img4.19.0-a", digest, ""), set("img4.20.0-a", digest, "")}, "", ""},
	} {
		if got, src := ImageSetMinor(tc.sets, digest); got != tc.want || src != tc.src {
			t.Errorf("%s: %q from %q, want %q from %q", name, got, src, tc.want, tc.src)
		}
	}
}

func TestImageSetVersion(t *testing.T) {
	const image = "quay.io/openshift-release-dev/ocp-release:4.18.9-multi"
	set := func(name, label string) unstructured.Unstructured {
		u := unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"releaseImage": image}}}
		u.SetName(name)
		if label != "" {
			u.SetLabels(map[string]string{LabelClusterImageSetVersion: label})
		}
		return u
	}
	for name, tc := range map[string]struct {
		sets []unstructured.Unstructured
		want string
	}{
		"ACM name":                {[]unstructured.Unstructured{set("img4.18.9-multi-appsub", "")}, "4.18.9"},
		"pre-release":             {[]unstructured.Unstructured{set("next", "4.19.0-rc.1")}, "4.19.0-rc.1"},
		"same minor, other patch": {[]unstructured.Unstructured{set("img4.18.9-a", ""), set("img4.18.8-a", "")}, ""},
		"none":                    {nil, ""},
	} {
		if got, _ := ImageSetVersion(tc.sets, image); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}
