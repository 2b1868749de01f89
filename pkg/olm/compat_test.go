package olm

import (
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func csv(ns, name, properties string, mutate ...func(*operatorsv1alpha1.ClusterServiceVersion)) operatorsv1alpha1.ClusterServiceVersion {
	c := operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if properties != "" {
		c.Annotations = map[string]string{PropertiesAnnotation: properties}
	}
	for _, m := range mutate {
		m(&c)
	}
	return c
}

func maxProp(value string) string {
	return `{"properties":[{"type":"olm.package","value":{"packageName":"x","version":"1.0.0"}},{"type":"olm.maxOpenShiftVersion","value":` + value + `}]}`
}

func TestMaxOpenShiftVersion(t *testing.T) {
	for _, tc := range []struct {
		annotation, want string
		invalid          bool
	}{
		{"", "", false},
		{`{"properties":[{"type":"olm.package","value":{"packageName":"x"}}]}`, "", false},
		{maxProp(`"4.18"`), "4.18", false},
		{maxProp(`4.18`), "4.18", false}, // a JSON number
		{maxProp(`"4.18.0"`), "4.18", false},
		{maxProp(`"v4.18"`), "4.18", false},
		{maxProp(`"4"`), "4.0", false},
		{maxProp(`"4.18.1"`), "", true},
		{maxProp(`""`), "", true},
		{maxProp(`"four"`), "", true},
		{`{"properties":[{"type":"olm.maxOpenShiftVersion","value":"4.18"},{"type":"olm.maxOpenShiftVersion","value":"4.19"}]}`, "", true},
		{`not json`, "", true},
	} {
		got, err := MaxOpenShiftVersion(tc.annotation)
		if got != tc.want || (err != nil) != tc.invalid {
			t.Errorf("MaxOpenShiftVersion(%s) = %q, %v; want %q, invalid %v", tc.annotation, got, err, tc.want, tc.invalid)
		}
	}
}

func TestLimits(t *testing.T) {
	copiedByLabel := func(c *operatorsv1alpha1.ClusterServiceVersion) {
		c.Labels = map[string]string{operatorsv1alpha1.CopiedLabelKey: "operators"}
	}
	copiedByStatus := func(c *operatorsv1alpha1.ClusterServiceVersion) { c.Status.Reason = operatorsv1alpha1.CSVReasonCopied }
	limits := Limits([]operatorsv1alpha1.ClusterServiceVersion{
		csv("operators", "old-db.v1", maxProp(`"4.18"`)),
		csv("team-a", "old-db.v1", maxProp(`"4.18"`), copiedByLabel),
		csv("team-b", "old-db.v1", maxProp(`"4.18"`), copiedByStatus),
		csv("operators", "fine.v2", ""),
		csv("a-first", "broken.v1", maxProp(`"4.18.3"`)),
		csv("operators", "newer.v1", maxProp(`"4.20"`)),
	})
	want := []Limit{
		{Namespace: "a-first", Name: "broken.v1", Invalid: "not a <major>.<minor> version"},
		{Namespace: "operators", Name: "newer.v1", MaxOpenShiftVersion: "4.20"},
		{Namespace: "operators", Name: "old-db.v1", MaxOpenShiftVersion: "4.18"},
	}
	if len(limits) != len(want) {
		t.Fatalf("limits %+v, want %+v", limits, want)
	}
	for i := range want {
		if limits[i] != want[i] {
			t.Errorf("limit %d: %+v, want %+v", i, limits[i], want[i])
		}
	}
}

func TestLimitBlocks(t *testing.T) {
	l418 := Limit{Namespace: "ns", Name: "a", MaxOpenShiftVersion: "4.18"}
	invalid := Limit{Namespace: "ns", Name: "b", Invalid: "empty"}
	for _, tc := range []struct {
		limit  Limit
		target string
		want   bool
	}{
		{l418, "4.18", false}, // z-streams and the same minor run
		{l418, "4.19", true},
		{l418, "4.20", true},
		{l418, "4.17", false},
		{l418, "5.0", true},
		{invalid, "4.19", true},
		{l418, "garbage", true},
	} {
		if got := tc.limit.Blocks(tc.target); got != tc.want {
			t.Errorf("%s blocks %s: %v, want %v", tc.limit, tc.target, got, tc.want)
		}
	}
}
