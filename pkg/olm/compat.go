package olm

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
)

// OLM's upgrade compatibility rule, as olm-operator applies it to write the
// guest ClusterOperator operator-lifecycle-manager's Upgradeable condition
// (operator-lifecycle-manager pkg/controller/operators/openshift): a CSV
// that is not a copy and carries the property olm.maxOpenShiftVersion in its
// operatorframework.io/properties annotation is incompatible with every
// OpenShift minor above that version; a property that is not a valid
// <major>.<minor> (empty, not a version, a patch version, given twice) makes
// the CSV block any minor upgrade.
const (
	// PropertiesAnnotation carries a CSV's properties:
	// {"properties":[{"type":"olm.maxOpenShiftVersion","value":"4.18"}]}.
	PropertiesAnnotation = "operatorframework.io/properties"
	// MaxOpenShiftVersionProperty is the property's type.
	MaxOpenShiftVersionProperty = "olm.maxOpenShiftVersion"
)

// Limit is one installed operator's limit on OpenShift minor upgrades.
type Limit struct {
	// Namespace and Name are the CSV's.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// MaxOpenShiftVersion is "<major>.<minor>"; empty when Invalid.
	MaxOpenShiftVersion string `json:"max,omitempty"`
	// Invalid says why the property is unusable; such a CSV blocks every
	// minor upgrade, as OLM's rule does.
	Invalid string `json:"invalid,omitempty"`
}

// Blocks reports whether the limit forbids running OpenShift minor target
// ("4.19"). An unparsable target is blocked by every limit.
func (l Limit) Blocks(target string) bool {
	if l.Invalid != "" {
		return true
	}
	max, err := parseMinor(l.MaxOpenShiftVersion)
	if err != nil {
		return true
	}
	t, err := parseMinor(target)
	if err != nil {
		return true
	}
	return max.LT(t)
}

// String names the operator and its limit (for conditions and events).
func (l Limit) String() string {
	if l.Invalid != "" {
		return fmt.Sprintf("%s/%s (invalid %s: %s)", l.Namespace, l.Name, MaxOpenShiftVersionProperty, l.Invalid)
	}
	return fmt.Sprintf("%s/%s (%s %s)", l.Namespace, l.Name, MaxOpenShiftVersionProperty, l.MaxOpenShiftVersion)
}

// Limits are the upgrade limits of the CSVs of a hosted cluster, sorted by
// namespace and name: every CSV that is not a copy and has an
// olm.maxOpenShiftVersion property (valid or not).
func Limits(csvs []operatorsv1alpha1.ClusterServiceVersion) []Limit {
	var out []Limit
	for i := range csvs {
		csv := &csvs[i]
		if csv.IsCopied() {
			continue
		}
		max, err := MaxOpenShiftVersion(csv.GetAnnotations()[PropertiesAnnotation])
		switch {
		case err != nil:
			out = append(out, Limit{Namespace: csv.Namespace, Name: csv.Name, Invalid: err.Error()})
		case max != "":
			out = append(out, Limit{Namespace: csv.Namespace, Name: csv.Name, MaxOpenShiftVersion: max})
		}
	}
	slices.SortFunc(out, func(a, b Limit) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out
}

// MaxOpenShiftVersion reads olm.maxOpenShiftVersion ("<major>.<minor>")
// from a properties annotation; "" when there is none.
func MaxOpenShiftVersion(annotation string) (string, error) {
	if annotation == "" {
		return "", nil
	}
	var props struct {
		Properties []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(annotation), &props); err != nil {
		return "", fmt.Errorf("%s is not a property list", PropertiesAnnotation)
	}
	var max *string
	for _, p := range props.Properties {
		if p.Type != MaxOpenShiftVersionProperty {
			continue
		}
		if max != nil {
			return "", errors.New("defined more than once")
		}
		v := strings.Trim(string(p.Value), `"`)
		max = &v
	}
	if max == nil {
		return "", nil
	}
	if *max == "" {
		return "", errors.New("empty")
	}
	v, err := semver.ParseTolerant(*max)
	if err != nil {
		return "", errors.New("not a version")
	}
	if v.Patch != 0 || len(v.Pre) > 0 || len(v.Build) > 0 {
		return "", errors.New("not a <major>.<minor> version")
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor), nil
}

func parseMinor(s string) (semver.Version, error) {
	v, err := semver.ParseTolerant(s)
	if err != nil {
		return v, err
	}
	return semver.Version{Major: v.Major, Minor: v.Minor}, nil
}
