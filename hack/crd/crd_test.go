package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const (
	crdDir  = "../../manifests/crds"
	hcdCRD  = crdDir + "/hcpfleet.io_hostedclusterdeployments.yaml"
	hcCRD   = crdDir + "/hcpfleet.io_hostingconfigs.yaml"
	hceCRD  = crdDir + "/hcpfleet.io_hostedclusterextensions.yaml"
	tpCRD   = crdDir + "/hcpfleet.io_tenantpolicies.yaml"
	rrCRD   = crdDir + "/hcpfleet.io_releaserollouts.yaml"
	hciCRD  = crdDir + "/hcpfleet.io_hostedclusterinventories.yaml"
	hcrCRD  = crdDir + "/hcpfleet.io_hostedclusterrelocations.yaml"
	hcaCRD  = crdDir + "/hcpfleet.io_hostedclusteradoptions.yaml"
	apiDocs = "../../docs/api.md"
)

// The subtrees `make manifests` marks; keep in sync with the Makefile.
var preservedSubtrees = []string{"spec.hostedCluster.spec", "spec.nodePools[].spec"}

// TestAPIDocUpToDate fails when docs/api.md does not match the CRDs: run
// `make manifests` after changing api/v1alpha1.
func TestAPIDocUpToDate(t *testing.T) {
	want, err := apiDoc([]string{hcdCRD, hcCRD, hceCRD, tpCRD, rrCRD, hciCRD, hcrCRD, hcaCRD})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(apiDocs)
	if err != nil {
		t.Fatalf("%v (run `make manifests`)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("docs/api.md is stale: run `make manifests`")
	}
	for _, s := range []string{"## HostedClusterDeployment", "## HostingConfig", "## HostedClusterExtension", "## TenantPolicy", "## ReleaseRollout", "## HostedClusterInventory", "## HostedClusterAdoption", "`maxHostedClusters`", "spec.placement or spec.hostingCluster is required"} {
		if !bytes.Contains(got, []byte(s)) {
			t.Errorf("docs/api.md lacks %q", s)
		}
	}
}

// TestCommittedCRDPreservesUnknownFields checks that the HostedClusterDeployment CRD
// in manifests/crds went through the post-processing (every object node of the
// HyperShift subtrees keeps unknown fields) and that running it again changes nothing.
func TestCommittedCRDPreservesUnknownFields(t *testing.T) {
	in, err := os.ReadFile(hcdCRD)
	if err != nil {
		t.Fatal(err)
	}
	again, err := preserveUnknownFields(in, preservedSubtrees)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, in) {
		t.Fatalf("%s is not post-processed (or the step is not idempotent): run `make manifests`", filepath.Base(hcdCRD))
	}
	crd, err := readCRD(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range dig(crd, "spec", "versions").([]any) {
		schema := dig(v.(map[string]any), "schema", "openAPIV3Schema").(map[string]any)
		for _, p := range preservedSubtrees {
			node, err := lookup(schema, p)
			if err != nil {
				t.Fatal(err)
			}
			objects := 0
			walkObjects(node, p, func(path string, n map[string]any) {
				objects++
				if n["x-kubernetes-preserve-unknown-fields"] != true {
					t.Errorf("%s does not preserve unknown fields", path)
				}
			})
			if objects < 20 {
				t.Errorf("%s: only %d object nodes; is the HyperShift schema still embedded?", p, objects)
			}
		}
		// Outside the HyperShift specs our own schema stays strict.
		if _, ok := dig(schema, "properties", "spec").(map[string]any)["x-kubernetes-preserve-unknown-fields"]; ok {
			t.Error("spec itself preserves unknown fields; only the HyperShift subtrees should")
		}
	}
}

func walkObjects(node map[string]any, path string, visit func(string, map[string]any)) {
	if node["type"] == "object" && node["additionalProperties"] == nil {
		visit(path, node)
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for name, p := range props {
			walkObjects(p.(map[string]any), path+"."+name, visit)
		}
	}
	if items, ok := node["items"].(map[string]any); ok {
		walkObjects(items, path+"[]", visit)
	}
	if ap, ok := node["additionalProperties"].(map[string]any); ok {
		walkObjects(ap, path+"{}", visit)
	}
}

func TestPreserveUnknownFieldsMarksEveryObject(t *testing.T) {
	const in = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              strict:
                type: object
                properties:
                  a: {type: string}
              pools:
                type: array
                items:
                  type: object
                  properties:
                    spec:
                      type: object
                      properties:
                        nested:
                          type: object
                          properties:
                            b: {type: string}
                        byName:
                          type: object
                          additionalProperties:
                            type: object
                            properties:
                              c: {type: string}
                        tags:
                          type: array
                          items: {type: string}
`
	out, err := preserveUnknownFields([]byte(in), []string{"spec.pools[].spec"})
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(bytes.TrimPrefix(out, []byte("---\n")), &crd); err != nil {
		t.Fatal(err)
	}
	schema := dig(crd, "spec", "versions").([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
	want := map[string]bool{
		"spec.pools[].spec":          true,
		"spec.pools[].spec.nested":   true,
		"spec.pools[].spec.byName{}": true, // the objects in a map, not the map
		"spec.pools[].spec.byName":   false,
		"spec.strict":                false,
		"spec":                       false,
	}
	got := map[string]bool{}
	walkObjects(schema, "", func(path string, n map[string]any) {
		got[strings.TrimPrefix(path, ".")] = n["x-kubernetes-preserve-unknown-fields"] == true
	})
	if byName, _ := lookup(schema, "spec.pools[].spec.byName"); byName["x-kubernetes-preserve-unknown-fields"] != nil {
		got["spec.pools[].spec.byName"] = true
	}
	for path, w := range want {
		if got[path] != w {
			t.Errorf("%s: preserve-unknown-fields = %v, want %v", path, got[path], w)
		}
	}
	if _, err := preserveUnknownFields([]byte(in), []string{"spec.missing"}); err == nil {
		t.Error("a path that does not exist was accepted")
	}
}
