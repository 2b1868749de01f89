// Package crds builds, chooses and installs the Cluster API CRDs that
// HyperShift needs on a management cluster, in the standard
// (`*.cluster.x-k8s.io`) or the private (`*.cluster.hypershift.openshift.io`)
// form of HyperShift's private-CAPI-types enhancement (openshift/enhancements#1927).
//
// The standard CRDs are generated, never hand-written: bases/core is the
// controller-gen output that the pinned sigs.k8s.io/cluster-api module ships,
// bases/agent is controller-gen run over the Agent provider's API types,
// bases/kubevirt and bases/aws are the controller-gen output the pinned
// KubeVirt and AWS provider modules ship (hack/capi/generate.sh makes all of
// them; bases/SOURCES records the versions). The
// private form is derived from them at run time by Privatize, so there is one
// source of truth per version.
package crds

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

//go:embed bases/core/*.yaml bases/agent/*.yaml bases/kubevirt/*.yaml bases/aws/*.yaml bases/SOURCES
var bases embed.FS

// Provider names a set of provider CRDs HostingConfig can enable.
type Provider string

const (
	// ProviderAgent is the OpenShift Agent infrastructure provider
	// (AgentCluster, AgentMachine, AgentMachineTemplate in
	// capi-provider.agent-install.openshift.io).
	ProviderAgent Provider = "agent"
	// ProviderKubeVirt is the KubeVirt infrastructure provider (KubevirtCluster,
	// KubevirtMachine, KubevirtMachineTemplate), for HyperShift's KubeVirt
	// platform.
	ProviderKubeVirt Provider = "kubevirt"
	// ProviderAWS is the AWS infrastructure provider (AWSCluster, AWSMachine,
	// AWSMachineTemplate), for HyperShift's AWS platform.
	ProviderAWS Provider = "aws"
)

// providerSets are the embedded CRD sets, bases/<set>, in install order.
var providerSets = []string{"core", string(ProviderAgent), string(ProviderKubeVirt), string(ProviderAWS)}

const (
	// ManagedByLabel marks CRDs this package installed; with FieldManager in
	// managedFields it is how we recognise our own CRDs (and leave the others).
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is our value of ManagedByLabel.
	ManagedByValue = "hcp-fleet"
	// ModeLabel records which form (standard|private) a CRD was installed in.
	ModeLabel = "hcpfleet.io/capi-mode"
	// SourceAnnotation records the module version a CRD was generated from,
	// so that a human (and Decide) can tell which CAPI release is installed.
	SourceAnnotation = "hcpfleet.io/capi-source"
	// FieldManager is the server-side-apply field manager of every CRD we apply.
	FieldManager = "hcp-fleet-capi"

	// contractLabelV1Beta1 is the Cluster API contract label providers carry
	// (CAPI resolves an infrastructureRef's version from it, see
	// sigs.k8s.io/cluster-api/internal/contract.GetLatestContractAndAPIVersionFromContract).
	// Upstream providers add it with kustomize commonLabels, which controller-gen
	// output does not contain, so we add it here.
	contractLabelV1Beta1 = "cluster.x-k8s.io/v1beta1"
	providerLabel        = "cluster.x-k8s.io/provider"
)

// Options shape the CRD set.
type Options struct {
	// Providers selects provider CRD sets besides the core ones.
	Providers []Provider
	// CoreVersion is the one version of the core CAPI CRDs to serve and store
	// (default: the upstream storage version, v1beta2 for cluster-api v1.12).
	// Every cluster.x-k8s.io CRD must have it; CRDs of the other core groups
	// (addons, ipam, runtime) that lack it keep their storage version.
	//
	// Only one version is served because nothing serves CAPI's conversion
	// webhook cluster-wide here (HyperShift runs the CAPI manager per hosted
	// control plane namespace), and a CRD that serves v1beta1 and v1beta2 with
	// the `None` conversion strategy hands out v1beta2 objects relabelled as
	// v1beta1 — silently wrong data. Older versions stay listed (served: false)
	// so that status.storedVersions of an upgraded CRD stay valid.
	CoreVersion string
}

// Source reports the module versions the embedded CRDs were generated from,
// keyed by set ("core", "agent", "kubevirt", "aws"), as recorded by
// hack/capi/generate.sh.
func Source() map[string]string {
	b, err := bases.ReadFile("bases/SOURCES")
	if err != nil {
		panic(err) // embedded; cannot fail at run time
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && !strings.HasPrefix(f[0], "#") {
			out[f[0]] = f[1]
		}
	}
	return out
}

// Standard returns the standard-form CRDs of the core set and the selected
// providers, with our labels and the served-version policy applied.
func Standard(opts Options) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	sets := []string{"core"}
	for _, p := range opts.Providers {
		if p == "core" || !slices.Contains(providerSets, string(p)) {
			return nil, fmt.Errorf("unknown CAPI provider %q", p)
		}
		if !slices.Contains(sets, string(p)) {
			sets = append(sets, string(p))
		}
	}
	src := Source()
	var out []*apiextensionsv1.CustomResourceDefinition
	all, err := loaded()
	if err != nil {
		return nil, err
	}
	for _, set := range sets {
		for _, orig := range all[set] {
			crd := orig.DeepCopy()
			version := ""
			if set == "core" && opts.CoreVersion != "" && (crd.Spec.Group == groups.Standard || hasVersion(crd, opts.CoreVersion)) {
				version = opts.CoreVersion
			}
			if err := serveOneVersion(crd, version); err != nil {
				return nil, err
			}
			if set != "core" {
				addContractLabels(crd, set)
			}
			setMeta(crd, "standard", src[set])
			out = append(out, crd)
		}
	}
	return out, nil
}

// Build returns the CRDs for a resolved mode (Standard or Private).
func Build(mode Mode, opts Options) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	std, err := Standard(opts)
	if err != nil {
		return nil, err
	}
	switch mode {
	case ModeStandard:
		return std, nil
	case ModePrivate:
		out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(std))
		for _, crd := range std {
			out = append(out, Privatize(crd))
		}
		return out, nil
	default:
		return nil, fmt.Errorf("crds.Build needs a resolved mode (Standard or Private), got %q", mode)
	}
}

// Privatize returns the private form of a standard CRD: name, spec.group and
// our mode label move to the private group; everything else (schemas,
// printer columns, the `cluster.x-k8s.io/<contract>` labels CAPI reads by key)
// is kept. CRDs outside the `*.cluster.x-k8s.io` family (the Agent provider)
// are returned as a copy with only the mode label changed: the enhancement
// maps only that family, and nothing else installs those groups' rivals.
//
// Adjustments, and why:
//   - spec.conversion becomes None: CAPI's conversion webhook only knows the
//     standard groups and would reject a ConversionReview for the private one,
//     so a private CRD can only ever serve one version (see Options.CoreVersion).
//   - shortNames and the `cluster-api` category are dropped: they would be
//     ambiguous with the platform's standard CRDs (`kubectl get md` or
//     `kubectl get cluster-api` on the management cluster must keep meaning the
//     platform's objects). Private objects are reached by their full resource
//     name, and through the API proxy under the standard names.
func Privatize(in *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	crd := in.DeepCopy()
	if !groups.IsStandard(crd.Spec.Group) {
		setMeta(crd, "private", crd.Annotations[SourceAnnotation])
		return crd
	}
	crd.Name, _ = groups.ToPrivate.CRDName(crd.Name)
	crd.Spec.Group, _ = groups.ToPrivate.Group(crd.Spec.Group)
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	crd.Spec.Names.ShortNames = nil
	crd.Spec.Names.Categories = slices.DeleteFunc(crd.Spec.Names.Categories, func(c string) bool { return c == "cluster-api" })
	if len(crd.Spec.Names.Categories) == 0 {
		crd.Spec.Names.Categories = nil
	}
	setMeta(crd, "private", crd.Annotations[SourceAnnotation])
	return crd
}

// loaded parses the embedded YAMLs once; callers deep-copy what they change.
var loaded = sync.OnceValues(func() (map[string][]*apiextensionsv1.CustomResourceDefinition, error) {
	out := map[string][]*apiextensionsv1.CustomResourceDefinition{}
	for _, set := range providerSets {
		crds, err := load("bases/" + set)
		if err != nil {
			return nil, err
		}
		out[set] = crds
	}
	return out, nil
})

// load parses every CRD YAML of an embedded directory, sorted by file name.
func load(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := fs.ReadDir(bases, dir)
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		b, err := bases.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("%s/%s: %w", dir, e.Name(), err)
		}
		if crd.Kind != "CustomResourceDefinition" || crd.Name == "" {
			return nil, fmt.Errorf("%s/%s: not a CustomResourceDefinition", dir, e.Name())
		}
		out = append(out, crd)
	}
	return out, nil
}

// serveOneVersion serves and stores exactly one version (the upstream storage
// version when version is empty) and drops any conversion webhook stanza.
func serveOneVersion(crd *apiextensionsv1.CustomResourceDefinition, version string) error {
	if version == "" {
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				version = v.Name
			}
		}
	}
	found := false
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		v.Served = v.Name == version
		v.Storage = v.Name == version
		found = found || v.Served
	}
	if !found {
		return fmt.Errorf("CRD %s has no version %q", crd.Name, version)
	}
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	return nil
}

func hasVersion(crd *apiextensionsv1.CustomResourceDefinition, v string) bool {
	for _, cv := range crd.Spec.Versions {
		if cv.Name == v {
			return true
		}
	}
	return false
}

// addContractLabels adds what upstream providers add with kustomize. The
// contract label's value lists the versions the CRD serves here, so it names
// the version CAPI must use: v1beta1 for Agent, v1alpha1 for KubeVirt, and
// v1beta2 for AWS (upstream says v1beta1_v1beta2, but without CAPA's
// conversion webhook we serve only the storage version, v1beta2).
func addContractLabels(crd *apiextensionsv1.CustomResourceDefinition, set string) {
	if crd.Labels == nil {
		crd.Labels = map[string]string{}
	}
	var served []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			served = append(served, v.Name)
		}
	}
	crd.Labels[contractLabelV1Beta1] = strings.Join(served, "_")
	crd.Labels[providerLabel] = "infrastructure-" + set
}

func setMeta(crd *apiextensionsv1.CustomResourceDefinition, mode, source string) {
	if crd.Labels == nil {
		crd.Labels = map[string]string{}
	}
	if crd.Annotations == nil {
		crd.Annotations = map[string]string{}
	}
	crd.Labels[ManagedByLabel] = ManagedByValue
	crd.Labels[ModeLabel] = mode
	if source != "" {
		crd.Annotations[SourceAnnotation] = source
	}
}

// StorageVersion is the version a CRD stores ("" if none is marked).
func StorageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// ServedVersions lists the versions a CRD serves, in spec order.
func ServedVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			out = append(out, v.Name)
		}
	}
	return out
}
