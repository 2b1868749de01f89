package hcpfleet

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// openShiftCRDs are OpenShift's ClusterVersion and ClusterOperator
// (config.openshift.io/v1), which every OpenShift hosted cluster serves and
// whose Upgradeable conditions the stand-in's olm-operator and
// cluster-version operator write and hcp-fleet's agent reads. Their schemas
// are left open (openshift/api's generated manifests are not importable as
// Go): the fleet reads conditions, which the typed clients shape.
func openShiftCRDs() []*apiextensionsv1.CustomResourceDefinition {
	crd := func(kind, plural string) *apiextensionsv1.CustomResourceDefinition {
		open := true
		return &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".config.openshift.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "config.openshift.io",
				Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
				Scope: apiextensionsv1.ClusterScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1", Served: true, Storage: true,
					Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"spec":   {Type: "object", XPreserveUnknownFields: &open},
							"status": {Type: "object", XPreserveUnknownFields: &open},
						},
					}},
				}},
			},
		}
	}
	return []*apiextensionsv1.CustomResourceDefinition{crd("ClusterVersion", "clusterversions"), crd("ClusterOperator", "clusteroperators")}
}
