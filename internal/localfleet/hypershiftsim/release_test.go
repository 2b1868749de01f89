package hypershiftsim

import (
	"strings"
	"testing"
)

func TestReleaseVersion(t *testing.T) {
	for _, tc := range []struct{ image, version, errPart string }{
		{"quay.io/openshift-release-dev/ocp-release:4.18.5-multi", "4.18.5", ""},
		{"quay.io/openshift-release-dev/ocp-release:4.19.0-rc.2-x86_64", "4.19.0-rc.2", ""},
		{"registry.local:5000/ocp/release:4.14.1", "4.14.1", ""},
		{"quay.io/openshift-release-dev/ocp-release:4.12.3-x86_64", "", "does not support"},
		{"quay.io/openshift-release-dev/ocp-release@sha256:0123", "", "cannot determine"},
		{"registry.local:5000/ocp/release", "", "cannot determine"},
	} {
		got, err := releaseVersion(tc.image)
		if tc.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errPart) {
				t.Errorf("%s: err %v, want one containing %q", tc.image, err, tc.errPart)
			}
			continue
		}
		if err != nil || got != tc.version {
			t.Errorf("%s: %q, %v; want %q", tc.image, got, err, tc.version)
		}
	}
}
