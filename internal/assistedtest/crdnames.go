package assistedtest

import (
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/manifests"
	agentcrds "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/crds"
	capicrds "github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
)

// InstallableCRDNames are the names, sorted, of every CRD the agent can
// install: HyperShift's, CAPI's in both forms with every provider, and the
// OpenShift Agent providers'. The agent's ClusterRole must name exactly
// these (pkg/capi/feature's and pkg/addon's RBAC tests).
func InstallableCRDNames() ([]string, error) {
	var out []string
	for _, mode := range []capicrds.Mode{capicrds.ModeStandard, capicrds.ModePrivate} {
		built, err := capicrds.Build(mode, capicrds.Options{Providers: []capicrds.Provider{capicrds.ProviderAgent, capicrds.ProviderKubeVirt, capicrds.ProviderAWS}})
		if err != nil {
			return nil, err
		}
		for _, crd := range built {
			out = append(out, crd.Name)
		}
	}
	providers, err := agentcrds.All()
	if err != nil {
		return nil, err
	}
	for name := range providers {
		out = append(out, name)
	}
	entries, err := manifests.HyperShiftCRDs.ReadDir("hypershift")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		data, err := manifests.HyperShiftCRDs.ReadFile("hypershift/" + e.Name())
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, crd.Name)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
