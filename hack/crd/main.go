// Command crd post-processes the CRDs controller-gen generates and documents them;
// `make manifests` runs it after controller-gen.
//
//	go run ./hack/crd preserve-unknown-fields -file manifests/crds/x.yaml -path spec.hostedCluster.spec
//	go run ./hack/crd api-doc -out docs/api.md manifests/crds/a.yaml manifests/crds/b.yaml
//
// preserve-unknown-fields marks whole schema subtrees with
// x-kubernetes-preserve-unknown-fields: true on every object node, while keeping all the
// properties and validations controller-gen generated for them.
//
// Why: a HostedClusterDeployment embeds HyperShift's HostedClusterSpec and NodePoolSpec
// as of the HyperShift API version we pin. A newer HyperShift operator on a management
// cluster knows fields we do not, and users must be able to set them; the apiserver
// would silently prune them. The controller-gen marker
// +kubebuilder:pruning:PreserveUnknownFields sets the flag on one node only: pruning
// still applies inside every nested object that has its own properties (in a structural
// schema each object node decides for itself), so a new field at
// spec.platform.kubevirt.foo would still be dropped. Turning the subtree into a
// schemaless blob (+kubebuilder:validation:Schemaless) would keep everything but give up
// all validation, defaulting and `kubectl explain`. Setting the flag on every object
// node keeps unknown fields at any depth and still validates every known one.
//
// Nodes with additionalProperties (maps) keep every key already and are only descended
// into; additionalProperties and x-kubernetes-preserve-unknown-fields are not combined.
//
// api-doc writes the Markdown API reference (docs/api.md) from the generated CRDs, so
// it shows exactly what the apiserver enforces: types, defaults, enums, required
// fields and the CEL rules with their messages.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crd preserve-unknown-fields|api-doc [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "preserve-unknown-fields":
		err = preserveUnknownFieldsCmd(os.Args[2:])
	case "api-doc":
		err = apiDocCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "crd %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
