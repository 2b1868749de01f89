package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

type stringList []string

func (p *stringList) String() string     { return strings.Join(*p, ",") }
func (p *stringList) Set(v string) error { *p = append(*p, v); return nil }

func preserveUnknownFieldsCmd(args []string) error {
	fs := flag.NewFlagSet("preserve-unknown-fields", flag.ExitOnError)
	file := fs.String("file", "", "CRD YAML file to rewrite in place")
	var paths stringList
	fs.Var(&paths, "path",
		"dotted path below the version's openAPIV3Schema (name[] descends into list items) whose subtree keeps unknown fields; repeatable")
	_ = fs.Parse(args)
	if *file == "" || len(paths) == 0 {
		fs.Usage()
		return errors.New("-file and -path are required")
	}
	in, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	out, err := preserveUnknownFields(in, paths)
	if err != nil {
		return fmt.Errorf("%s: %w", *file, err)
	}
	return os.WriteFile(*file, out, 0o644)
}

// preserveUnknownFields rewrites one CRD document. It works on generic maps so that
// nothing the Go CRD types might not know is lost, and writes YAML the way
// controller-gen does (keys sorted, "---" header), so the diff is only the added flags
// and running it again changes nothing.
func preserveUnknownFields(in []byte, paths []string) ([]byte, error) {
	crd, err := readCRD(in)
	if err != nil {
		return nil, err
	}
	versions, ok := dig(crd, "spec", "versions").([]any)
	if !ok || len(versions) == 0 {
		return nil, errors.New("no spec.versions")
	}
	for _, v := range versions {
		version, _ := v.(map[string]any)
		schema, ok := dig(version, "schema", "openAPIV3Schema").(map[string]any)
		if !ok {
			return nil, fmt.Errorf("version %v has no schema", version["name"])
		}
		for _, p := range paths {
			node, err := lookup(schema, p)
			if err != nil {
				return nil, fmt.Errorf("version %v: %s: %w", version["name"], p, err)
			}
			markObjects(node)
		}
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return nil, err
	}
	return append([]byte("---\n"), out...), nil
}

func readCRD(in []byte) (map[string]any, error) {
	doc := bytes.TrimPrefix(bytes.TrimSpace(in), []byte("---\n"))
	var crd map[string]any
	if err := yaml.Unmarshal(doc, &crd); err != nil {
		return nil, err
	}
	if crd["kind"] != "CustomResourceDefinition" {
		return nil, fmt.Errorf("not a CustomResourceDefinition but %v", crd["kind"])
	}
	return crd, nil
}

// lookup follows a dotted path of property names; a name ending in [] continues into
// the items of that list.
func lookup(schema map[string]any, path string) (map[string]any, error) {
	node := schema
	for _, seg := range strings.Split(path, ".") {
		name, list := strings.CutSuffix(seg, "[]")
		next, ok := dig(node, "properties", name).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("no property %q", name)
		}
		if list {
			if next, ok = next["items"].(map[string]any); !ok {
				return nil, fmt.Errorf("property %q is not a list", name)
			}
		}
		node = next
	}
	return node, nil
}

func markObjects(node map[string]any) {
	if node["type"] == "object" && node["additionalProperties"] == nil {
		node["x-kubernetes-preserve-unknown-fields"] = true
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for _, p := range props {
			if child, ok := p.(map[string]any); ok {
				markObjects(child)
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if child, ok := node[key].(map[string]any); ok {
			markObjects(child)
		}
	}
}

func dig(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}
