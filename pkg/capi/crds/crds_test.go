package crds

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/yaml"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

func names(crds []*apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, c := range crds {
		out = append(out, c.Name)
	}
	sort.Strings(out)
	return out
}

// allProviders is every provider set, the Agent one twice (a repeat is
// harmless).
var allProviders = []Provider{ProviderAgent, ProviderKubeVirt, ProviderAWS, ProviderAgent}

func TestStandardSet(t *testing.T) {
	std, err := Standard(Options{Providers: allProviders})
	if err != nil {
		t.Fatal(err)
	}
	got := names(std)
	for _, want := range []string{
		"clusters.cluster.x-k8s.io", "machines.cluster.x-k8s.io", "machinesets.cluster.x-k8s.io",
		"machinedeployments.cluster.x-k8s.io", "machinehealthchecks.cluster.x-k8s.io", "machinepools.cluster.x-k8s.io",
		"clusterclasses.cluster.x-k8s.io", "machinedrainrules.cluster.x-k8s.io",
		"agentclusters.capi-provider.agent-install.openshift.io", "agentmachines.capi-provider.agent-install.openshift.io",
		"agentmachinetemplates.capi-provider.agent-install.openshift.io",
		"kubevirtclusters.infrastructure.cluster.x-k8s.io", "kubevirtmachines.infrastructure.cluster.x-k8s.io",
		"kubevirtmachinetemplates.infrastructure.cluster.x-k8s.io",
		"awsclusters.infrastructure.cluster.x-k8s.io", "awsmachines.infrastructure.cluster.x-k8s.io",
		"awsmachinetemplates.infrastructure.cluster.x-k8s.io",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %s in %v", want, got)
		}
	}
	for _, crd := range std {
		served := ServedVersions(crd)
		if len(served) != 1 || served[0] != StorageVersion(crd) {
			t.Errorf("%s: serves %v, stores %s; want exactly the storage version", crd.Name, served, StorageVersion(crd))
		}
		if crd.Spec.Group == groups.Standard && StorageVersion(crd) != clusterv1.GroupVersion.Version {
			t.Errorf("%s stores %s, the pinned CAPI types are %s", crd.Name, StorageVersion(crd), clusterv1.GroupVersion.Version)
		}
		if crd.Labels[ManagedByLabel] != ManagedByValue || crd.Labels[ModeLabel] != "standard" || crd.Annotations[SourceAnnotation] == "" {
			t.Errorf("%s: labels %v annotations %v", crd.Name, crd.Labels, crd.Annotations)
		}
		if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
			t.Errorf("%s: conversion %+v", crd.Name, crd.Spec.Conversion)
		}
		// CAPI finds a provider's API version from the contract label; every
		// infrastructure CRD carries it and its provider label.
		if crd.Spec.Group == "infrastructure.cluster.x-k8s.io" || crd.Spec.Group == "capi-provider.agent-install.openshift.io" {
			var provider, contract string
			switch kind := crd.Spec.Names.Kind; {
			case strings.HasPrefix(kind, "Agent"):
				provider, contract = "infrastructure-agent", "v1beta1"
			case strings.HasPrefix(kind, "Kubevirt"):
				provider, contract = "infrastructure-kubevirt", "v1alpha1"
			case strings.HasPrefix(kind, "AWS"):
				provider, contract = "infrastructure-aws", "v1beta2"
			default:
				t.Errorf("%s: infrastructure CRD of no known provider", crd.Name)
			}
			if crd.Labels["cluster.x-k8s.io/v1beta1"] != contract || crd.Labels["cluster.x-k8s.io/provider"] != provider {
				t.Errorf("%s: contract label %q provider %q, want %q %q", crd.Name,
					crd.Labels["cluster.x-k8s.io/v1beta1"], crd.Labels["cluster.x-k8s.io/provider"], contract, provider)
			}
			if StorageVersion(crd) != contract {
				t.Errorf("%s stores %s, want %s", crd.Name, StorageVersion(crd), contract)
			}
			// CAPA's v1beta1 stays listed, unserved, so that storedVersions
			// of a CRD that once stored it stay valid.
			if provider == "infrastructure-aws" && (!hasVersion(crd, "v1beta1") || !slices.Equal(ServedVersions(crd), []string{"v1beta2"})) {
				t.Errorf("%s: versions %+v, want v1beta1 listed and only v1beta2 served", crd.Name, crd.Spec.Versions)
			}
		}
	}
	if n := len(std); n != 13+3+3+3 {
		t.Errorf("%d CRDs, want the 13 core ones and 3 of each infrastructure provider: %v", n, got)
	}
	if n := len(got); n != len(slices.Compact(slices.Clone(got))) {
		t.Errorf("a repeated provider installs its CRDs twice: %v", got)
	}
	// without the provider: only the core set
	core, _ := Standard(Options{})
	for _, c := range core {
		if !groups.IsStandard(c.Spec.Group) {
			t.Errorf("core set contains %s", c.Name)
		}
	}
	if _, err := Standard(Options{CoreVersion: "v1beta1"}); err != nil {
		t.Errorf("v1beta1 should be selectable: %v", err)
	}
	if _, err := Standard(Options{CoreVersion: "v9"}); err == nil {
		t.Error("unknown version accepted")
	}
	if _, err := Standard(Options{Providers: []Provider{"nope"}}); err == nil {
		t.Error("unknown provider accepted")
	}
}

// The embedded core CRDs are exactly what the pinned cluster-api module ships.
func TestCoreCRDsMatchPinnedModule(t *testing.T) {
	// The version go.mod pins (test binaries carry no dependency build info).
	v, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "sigs.k8s.io/cluster-api").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	version := strings.TrimSpace(string(v))
	if src := Source()["core"]; src != "sigs.k8s.io/cluster-api@"+version {
		t.Fatalf("bases/SOURCES says %q but the build uses cluster-api %s: run hack/capi/generate.sh", src, version)
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "sigs.k8s.io", "cluster-api@"+version, "config", "crd", "bases")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s (%v)", dir, err)
	}
	embedded, _ := bases.ReadDir("bases/core")
	if len(embedded) != len(files) {
		t.Fatalf("%d embedded core CRDs, module has %d: run hack/capi/generate.sh", len(embedded), len(files))
	}
	for _, f := range files {
		want, _ := os.ReadFile(f)
		got, err := bases.ReadFile("bases/core/" + filepath.Base(f))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from the module's copy: run hack/capi/generate.sh", filepath.Base(f))
		}
	}
}

func TestPrivatize(t *testing.T) {
	std, err := Standard(Options{Providers: allProviders})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range std {
		before := in.DeepCopy()
		p := Privatize(in)
		if !equalJSON(t, in, before) {
			t.Fatalf("%s: Privatize modified its input", in.Name)
		}
		if p.Labels[ModeLabel] != "private" {
			t.Errorf("%s: mode label %q", p.Name, p.Labels[ModeLabel])
		}
		if !groups.IsStandard(in.Spec.Group) {
			if p.Name != in.Name || p.Spec.Group != in.Spec.Group {
				t.Errorf("%s: provider group outside the CAPI family was renamed to %s", in.Name, p.Name)
			}
			continue
		}
		wantGroup := strings.TrimSuffix(in.Spec.Group, groups.Standard) + groups.Private
		if p.Spec.Group != wantGroup || p.Name != in.Spec.Names.Plural+"."+wantGroup {
			t.Errorf("%s: got %s / %s", in.Name, p.Name, p.Spec.Group)
		}
		if p.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter || len(ServedVersions(p)) != 1 {
			t.Errorf("%s: conversion %v served %v", p.Name, p.Spec.Conversion.Strategy, ServedVersions(p))
		}
		if len(p.Spec.Names.ShortNames) != 0 || slices.Contains(p.Spec.Names.Categories, "cluster-api") {
			t.Errorf("%s: short names %v categories %v would clash with the platform's", p.Name, p.Spec.Names.ShortNames, p.Spec.Names.Categories)
		}
		// Only name and group move: apart from those (and our metadata) the
		// CRD is the standard one, schemas included.
		a, b := in.DeepCopy(), p.DeepCopy()
		b.Name, b.Spec.Group, b.Spec.Names, b.Labels, b.Spec.Conversion = a.Name, a.Spec.Group, a.Spec.Names, a.Labels, a.Spec.Conversion
		if !equalJSON(t, a, b) {
			t.Errorf("%s: Privatize changed more than name/group/names/labels/conversion", in.Name)
		}
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := yaml.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, _ := yaml.Marshal(b)
	return bytes.Equal(ja, jb)
}

func crd(name string, labels, ann map[string]string, managers []string, served []string, storage string) apiextensionsv1.CustomResourceDefinition {
	c := apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: ann}}
	_, c.Spec.Group, _ = strings.Cut(name, ".")
	for _, m := range managers {
		c.ManagedFields = append(c.ManagedFields, metav1.ManagedFieldsEntry{Manager: m})
	}
	for _, v := range served {
		c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: true, Storage: v == storage})
	}
	return c
}

func TestDecide(t *testing.T) {
	clusterctl := crd("clusters.cluster.x-k8s.io", map[string]string{"clusterctl.cluster.x-k8s.io": "", "cluster.x-k8s.io/provider": "cluster-api"}, nil, []string{"clusterctl"}, []string{"v1beta1"}, "v1beta1")
	platform := crd("machines.cluster.x-k8s.io", nil, map[string]string{"include.release.openshift.io/self-managed-high-availability": "true"}, nil, []string{"v1beta1", "v1beta2"}, "v1beta2")
	oursStd := crd("clusters.cluster.x-k8s.io", map[string]string{ManagedByLabel: ManagedByValue}, nil, []string{FieldManager}, []string{"v1beta2"}, "v1beta2")
	oursPriv := crd("clusters.cluster.hypershift.openshift.io", nil, nil, []string{FieldManager}, []string{"v1beta2"}, "v1beta2")
	unrelated := crd("foos.example.com", nil, nil, []string{"x"}, []string{"v1"}, "v1")
	helm := crd("ipaddresses.ipam.cluster.x-k8s.io", map[string]string{ManagedByLabel: "Helm"}, nil, nil, []string{"v1beta1"}, "v1beta1")

	cases := []struct {
		name      string
		requested Mode
		on        []apiextensionsv1.CustomResourceDefinition
		mode      Mode
		conflict  bool
		compat    bool
		reason    []string
	}{
		{"auto, empty cluster", ModeAuto, []apiextensionsv1.CustomResourceDefinition{unrelated}, ModeStandard, false, true, []string{"Standard: no cluster.x-k8s.io CRDs"}},
		{"empty means auto", "", nil, ModeStandard, false, true, []string{"Standard"}},
		{"auto, ours", ModeAuto, []apiextensionsv1.CustomResourceDefinition{oursStd}, ModeStandard, false, true, []string{"managed by hcp-fleet"}},
		{"auto, clusterctl owns them", ModeAuto, []apiextensionsv1.CustomResourceDefinition{clusterctl, unrelated}, ModePrivate, false, true, []string{"Private: cluster.x-k8s.io CRDs are owned by clusterctl (cluster-api) at v1beta1"}},
		{"auto, the platform owns them at our version", ModeAuto, []apiextensionsv1.CustomResourceDefinition{platform}, ModePrivate, false, true, []string{"Private:", "the OpenShift release payload", "v1beta2"}},
		{"auto, mixed owners", ModeAuto, []apiextensionsv1.CustomResourceDefinition{platform, helm}, ModePrivate, false, true, []string{"cluster.x-k8s.io, ipam.cluster.x-k8s.io", "Helm"}},
		{"auto, private is sticky", ModeAuto, []apiextensionsv1.CustomResourceDefinition{oursPriv}, ModePrivate, false, true, []string{"already installed"}},
		{"private requested", ModePrivate, nil, ModePrivate, false, true, []string{"Private: requested"}},
		{"private requested with platform", ModePrivate, []apiextensionsv1.CustomResourceDefinition{clusterctl}, ModePrivate, false, true, []string{"requested", "clusterctl"}},
		{"standard requested, free", ModeStandard, nil, ModeStandard, false, true, []string{"Standard: requested"}},
		{"standard requested, compatible owner", ModeStandard, []apiextensionsv1.CustomResourceDefinition{platform}, ModeStandard, true, true, []string{"Standard requested, but", "leaving them as they are"}},
		{"standard requested, incompatible owner", ModeStandard, []apiextensionsv1.CustomResourceDefinition{clusterctl}, ModeStandard, true, false, []string{"do not serve cluster.x-k8s.io/v1beta2", "Auto or Private"}},
		{"standard requested after private", ModeStandard, []apiextensionsv1.CustomResourceDefinition{oursPriv}, ModePrivate, false, true, []string{"switching back is not supported"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.requested, tc.on, "")
			if d.Mode != tc.mode || d.Conflict != tc.conflict || d.Compatible != tc.compat {
				t.Fatalf("got mode %s conflict %v compatible %v (%s)", d.Mode, d.Conflict, d.Compatible, d.Reason)
			}
			for _, r := range tc.reason {
				if !strings.Contains(d.Reason, r) {
					t.Errorf("reason %q lacks %q", d.Reason, r)
				}
			}
			c := d.Condition(3)
			if c.Type != ConditionType || c.Message != d.Reason || c.ObservedGeneration != 3 || (c.Status == metav1.ConditionFalse) != (tc.conflict && !tc.compat) {
				t.Errorf("condition %+v", c)
			}
		})
	}
	d := Decide(ModeAuto, []apiextensionsv1.CustomResourceDefinition{oursStd, platform, oursPriv}, "")
	if !slices.Equal(d.OwnStandard, []string{"clusters.cluster.x-k8s.io"}) || !slices.Equal(d.OwnPrivate, []string{"clusters.cluster.hypershift.openshift.io"}) || len(d.Foreign) != 1 {
		t.Fatalf("inventory: %+v", d)
	}
}
