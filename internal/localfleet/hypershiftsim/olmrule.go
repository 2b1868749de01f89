package hypershiftsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
)

// The stand-in's olm-operator: OLM's rule for the ClusterOperator
// operator-lifecycle-manager's Upgradeable condition, written here from
// operator-lifecycle-manager's pkg/controller/operators/openshift/helpers.go
// (incompatibleOperators, maxOpenShiftVersion) and NOT from hcp-fleet's
// pkg/olm: the stand-in grades hcp-fleet, so it must not share its rule.
//
// Upstream: for the next minor after the cluster's current version, every
// CSV that is not a copy (olm.copiedFrom) whose properties annotation
// carries olm.maxOpenShiftVersion below that minor is incompatible; a
// property that cannot be read (not a property list, given twice, empty,
// not a version, more than <major>.<minor>) is an error, and OLM reports
// the operator as not upgradeable on error too.

// olmPropertiesAnnotation is OLM's projection.PropertiesAnnotationKey.
const olmPropertiesAnnotation = "operatorframework.io/properties"

// olmMaxOpenShiftVersion is OLM's MaxOpenShiftVersionProperty.
const olmMaxOpenShiftVersion = "olm.maxOpenShiftVersion"

// skew is one incompatible CSV, as upstream names it.
type skew struct {
	namespace, name string
	max             string // <major>.<minor>, or "" with err
	err             error
}

func (s skew) String() string {
	if s.err != nil {
		return fmt.Sprintf("%s/%s has invalid %s properties: %v", s.namespace, s.name, olmMaxOpenShiftVersion, s.err)
	}
	return fmt.Sprintf("%s/%s is incompatible with OpenShift minor versions greater than %s", s.namespace, s.name, s.max)
}

// incompatibleOperators are the CSVs that forbid the minor after current.
func incompatibleOperators(csvs []operatorsv1alpha1.ClusterServiceVersion, current string) ([]skew, error) {
	cur, err := semver.ParseTolerant(current)
	if err != nil {
		return nil, fmt.Errorf("current version %q: %w", current, err)
	}
	next := semver.Version{Major: cur.Major, Minor: cur.Minor + 1}
	var out []skew
	for i := range csvs {
		csv := &csvs[i]
		if _, copied := csv.GetLabels()["olm.copiedFrom"]; copied {
			continue
		}
		max, err := csvMaxOpenShiftVersion(csv.GetAnnotations())
		switch {
		case err != nil:
			out = append(out, skew{namespace: csv.Namespace, name: csv.Name, err: err})
		case max != nil && max.LT(next):
			out = append(out, skew{namespace: csv.Namespace, name: csv.Name, max: fmt.Sprintf("%d.%d", max.Major, max.Minor)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].namespace+"/"+out[i].name < out[j].namespace+"/"+out[j].name })
	return out, nil
}

// csvMaxOpenShiftVersion reads the property as upstream's
// maxOpenShiftVersion does: nil when absent.
func csvMaxOpenShiftVersion(annotations map[string]string) (*semver.Version, error) {
	raw, ok := annotations[olmPropertiesAnnotation]
	if !ok {
		return nil, nil
	}
	var list struct {
		Properties []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return nil, fmt.Errorf("failed to unmarshal properties annotation: %w", err)
	}
	var max *string
	for _, p := range list.Properties {
		if p.Type != olmMaxOpenShiftVersion {
			continue
		}
		if max != nil {
			return nil, fmt.Errorf(`defining more than one %q property is not allowed`, olmMaxOpenShiftVersion)
		}
		v := string(p.Value)
		max = &v
	}
	if max == nil {
		return nil, nil
	}
	value := strings.Trim(*max, `"`) // any additional quoting
	if value == "" {
		return nil, errors.New(`value cannot be "" (an empty string)`)
	}
	v, err := semver.ParseTolerant(value)
	if err != nil {
		return nil, fmt.Errorf("failed to parse %q as semver: %w", value, err)
	}
	truncated := semver.Version{Major: v.Major, Minor: v.Minor}
	if !v.EQ(truncated) {
		return nil, fmt.Errorf("property %q must specify only <major>.<minor> version, got invalid value %s", olmMaxOpenShiftVersion, v)
	}
	return &truncated, nil
}

// olmUpgradeable is the ClusterOperator operator-lifecycle-manager's
// Upgradeable condition for skews: status, reason and message.
func olmUpgradeable(skews []skew, current string) (status, reason, message string) {
	if len(skews) == 0 {
		return "True", "", ""
	}
	parts := make([]string, len(skews))
	for i, s := range skews {
		parts[i] = s.String()
	}
	cur, _ := semver.ParseTolerant(current)
	return "False", ReasonIncompatibleOperatorsInstalled, fmt.Sprintf(
		"ClusterServiceVersions blocking minor version upgrades to %d.%d.0 or higher:\n- %s", cur.Major, cur.Minor+1, strings.Join(parts, "\n- "))
}
