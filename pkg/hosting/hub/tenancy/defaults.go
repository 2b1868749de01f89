package tenancy

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/manifests"
)

// schemaDefaults are the values the API server fills in from the
// HostedClusterDeployment CRD's schema (HyperShift's own defaults, such as
// issuerURL https://kubernetes.default.svc or controllerAvailabilityPolicy):
// a tenant did not choose them, so a field the policy does not let tenants
// set may still hold its default. Keyed by the leaf's steps joined by ".".
type schemaDefaults struct {
	hostedCluster map[string]any
	nodePool      map[string]any
}

var (
	defaultsOnce sync.Once
	defaults     schemaDefaults
	defaultsErr  error
)

// hcdCRD is the file of the HostedClusterDeployment CRD in manifests.CRDs.
const hcdCRD = "crds/hcpfleet.io_hostedclusterdeployments.yaml"

// loadDefaults reads the defaults once from the CRD the hub ships.
func loadDefaults() (schemaDefaults, error) {
	defaultsOnce.Do(func() {
		raw, err := manifests.CRDs.ReadFile(hcdCRD)
		if err != nil {
			defaultsErr = err
			return
		}
		defaults, defaultsErr = defaultsOf(raw)
	})
	return defaults, defaultsErr
}

// defaultsOf collects the schema defaults under spec.hostedCluster.spec and
// spec.nodePools[].spec of a HostedClusterDeployment CRD.
func defaultsOf(raw []byte) (schemaDefaults, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return schemaDefaults{}, err
	}
	if len(crd.Spec.Versions) == 0 || crd.Spec.Versions[0].Schema == nil || crd.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		return schemaDefaults{}, fmt.Errorf("%s: no schema", crd.Name)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	hc := spec.Properties["hostedCluster"].Properties["spec"]
	var np apiextensionsv1.JSONSchemaProps
	if items := spec.Properties["nodePools"].Items; items != nil && items.Schema != nil {
		np = items.Schema.Properties["spec"]
	}
	d := schemaDefaults{hostedCluster: map[string]any{}, nodePool: map[string]any{}}
	if err := collect(&hc, nil, d.hostedCluster); err != nil {
		return d, err
	}
	return d, collect(&np, nil, d.nodePool)
}

// collect walks a schema, recording each default as the leaves it holds.
func collect(s *apiextensionsv1.JSONSchemaProps, steps []string, into map[string]any) error {
	if s.Default != nil {
		var v any
		if err := json.Unmarshal(s.Default.Raw, &v); err != nil {
			return fmt.Errorf("default at %s: %w", strings.Join(steps, "."), err)
		}
		for _, l := range leavesUnder(v, steps) {
			into[strings.Join(l.steps, ".")] = l.value
		}
	}
	for name, child := range s.Properties {
		if err := collect(&child, append(append([]string(nil), steps...), name), into); err != nil {
			return err
		}
	}
	if s.Items != nil && s.Items.Schema != nil && len(steps) > 0 {
		item := append([]string(nil), steps...)
		item[len(item)-1] += "[]"
		return collect(s.Items.Schema, item, into)
	}
	return nil
}

// leavesUnder is leaves of v, a value found at steps.
func leavesUnder(v any, steps []string) []leaf {
	var out []leaf
	if len(steps) == 0 {
		return leaves(v)
	}
	last := steps[len(steps)-1]
	wrapped := map[string]any{last: v}
	for _, l := range leaves(wrapped) {
		l.steps = append(append([]string(nil), steps[:len(steps)-1]...), l.steps...)
		out = append(out, l)
	}
	return out
}

// isDefault reports whether a leaf holds the schema's default for its path.
func isDefault(table map[string]any, l leaf) bool {
	v, ok := table[strings.Join(l.steps, ".")]
	if !ok {
		return false
	}
	a, errA := json.Marshal(v)
	b, errB := json.Marshal(l.value)
	return errA == nil && errB == nil && string(a) == string(b)
}
