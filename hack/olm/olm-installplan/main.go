// Command olm-installplan prints the steps of the InstallPlan that OLM's
// catalog-operator would resolve for one bundle directory, computed by OLM's
// own code: the bundle is parsed as operator-registry parses it for a catalog
// (registry.NewImageInput, registry.ObjectsAndPropertiesFromBundle), served
// as a catalog serves it (api.ConvertModelBundleToAPIBundle) and the steps
// come from the catalog-operator's resolver (NewStepResourceFromBundle):
// the CSV with its properties annotation, every other bundle object (CRDs,
// ClusterRoles, Services, ...) and the ServiceAccounts, Roles, RoleBindings,
// ClusterRoles and ClusterRoleBindings that OLM derives from the CSV's
// install strategy (permissions and clusterPermissions).
//
// The local fleet runs no catalog-operator (it needs catalog pods); the OLM
// install test (test/olm) executes these steps in order as the
// catalog-operator's ExecutePlan does and leaves the rest to a real
// olm-operator.
//
// Usage: olm-installplan --bundle DIR --namespace NS > steps.json
// Output: a JSON array of operators.coreos.com/v1alpha1 StepResources.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/operator-framework/operator-lifecycle-manager/pkg/controller/registry/resolver"
	"github.com/operator-framework/operator-registry/alpha/model"
	"github.com/operator-framework/operator-registry/pkg/api"
	"github.com/operator-framework/operator-registry/pkg/image"
	"github.com/operator-framework/operator-registry/pkg/registry"
)

func main() {
	bundleDir := flag.String("bundle", "", "bundle directory (manifests/ and metadata/)")
	namespace := flag.String("namespace", "", "namespace the operator is installed into")
	catalog := flag.String("catalog", "local", "catalog source name recorded on the steps")
	flag.Parse()
	if *bundleDir == "" || *namespace == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*bundleDir, *namespace, *catalog); err != nil {
		fmt.Fprintln(os.Stderr, "olm-installplan:", err)
		os.Exit(1)
	}
}

func run(bundleDir, namespace, catalog string) error {
	input, err := registry.NewImageInput(image.SimpleReference(""), bundleDir)
	if err != nil {
		return fmt.Errorf("parsing bundle %s: %w", bundleDir, err)
	}
	b := input.Bundle
	objects, properties, err := registry.ObjectsAndPropertiesFromBundle(b)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", b.Name, err)
	}
	var csvJSON []byte
	for _, obj := range b.Objects {
		if obj.GetKind() == "ClusterServiceVersion" {
			if csvJSON, err = json.Marshal(obj); err != nil {
				return err
			}
		}
	}
	if csvJSON == nil {
		return fmt.Errorf("bundle %s has no ClusterServiceVersion", bundleDir)
	}
	if len(b.Channels) == 0 {
		return fmt.Errorf("bundle %s: metadata/annotations.yaml names no channel", bundleDir)
	}
	// What a catalog serves to the catalog-operator for this bundle
	// (operator-registry's model-to-API conversion, which also keeps the
	// bundle's objects out of the properties OLM projects onto the CSV).
	pkg := &model.Package{Name: b.Package}
	channel := &model.Channel{Package: pkg, Name: b.Channels[0]}
	apiBundle, err := api.ConvertModelBundleToAPIBundle(model.Bundle{
		Package: pkg, Channel: channel, Name: b.Name, Image: b.BundleImage,
		Properties: properties, Objects: objects, CsvJSON: string(csvJSON),
	})
	if err != nil {
		return fmt.Errorf("bundle %s as a catalog serves it: %w", b.Name, err)
	}
	steps, err := resolver.NewStepResourceFromBundle(apiBundle, namespace, "", catalog, namespace)
	if err != nil {
		return fmt.Errorf("resolving steps for %s: %w", b.Name, err)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(steps)
}
