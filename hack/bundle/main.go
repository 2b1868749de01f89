// Command bundle generates hcp-fleet's OLM bundle (`make bundle`): it builds
// manifests/ with kustomize (what `make deploy` installs) and turns it into
// bundle/manifests (the ClusterServiceVersion, the CRDs and the objects OLM
// can install besides), bundle/metadata/annotations.yaml and
// bundle.Dockerfile. The bundle is generated, never edited: the tests in this
// directory regenerate it and fail when bundle/ differs, and validate it with
// operator-framework's validators.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	opts := DefaultOptions()
	fs := flag.NewFlagSet("bundle", flag.ExitOnError)
	fs.StringVar(&opts.ManifestsDir, "manifests", opts.ManifestsDir, "Kustomization to build the bundle from.")
	fs.StringVar(&opts.ExamplesDir, "examples", opts.ExamplesDir, "Directory whose objects of the bundle's CRDs become the CSV's alm-examples.")
	fs.StringVar(&opts.Version, "version", opts.Version, "Bundle (CSV) version, semver without a leading v.")
	fs.StringVar(&opts.HubImage, "hub-image", opts.HubImage, "Hub image of the CSV's Deployment.")
	fs.StringVar(&opts.AgentImage, "agent-image", opts.AgentImage, "Agent image the hub deploys on management clusters.")
	fs.StringVar(&opts.ConsoleImage, "console-image", opts.ConsoleImage, "Image of the console plugin's asset server.")
	out := fs.String("out", ".", "Directory to write bundle/ and bundle.Dockerfile into (the repository root).")
	_ = fs.Parse(os.Args[1:])
	if err := run(opts, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func run(opts Options, out string) error {
	files, err := Generate(opts)
	if err != nil {
		return err
	}
	// Replace what an earlier run wrote, so that a removed object leaves
	// no file behind.
	if err := os.RemoveAll(filepath.Join(out, BundleDir)); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", name)
	}
	return nil
}
