package main

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// What the bundle is called and published as.
const (
	// BundleDir is the bundle's directory in the repository.
	BundleDir = "bundle"
	// PackageName is the OLM package (and the CSV's name prefix).
	PackageName = "hcp-fleet"
	// Channel is the only channel, also the default. OLM's channel naming
	// (https://olm.operatorframework.io/docs/best-practices/channel-naming)
	// calls pre-release builds "candidate"; the CSV's maturity says alpha.
	Channel = "candidate"
	// Maturity of the API (hcpfleet.io/v1alpha1).
	Maturity = "alpha"
	// MinKubeVersion: the CRDs use CEL validation rules with
	// messageExpression and reason/fieldPath, on by default from Kubernetes
	// 1.28; the tests run on 1.34.
	MinKubeVersion = "1.28.0"
	repository     = "https://github.com/hcp-fleet/hcp-fleet"

	// The hub's container and the environment variable that carries the
	// agent image into --agent-image (manifests/deploy/70-hub-deployment.yaml).
	hubDeploymentName = "hcp-fleet-hub"
	hubContainer      = "hub"
	agentImageEnv     = "RELATED_IMAGE_AGENT"
	// The console plugin's asset server (manifests/console): a second
	// Deployment of the install strategy, without API access.
	consoleDeploymentName = "hcp-fleet-console"
	consoleContainer      = "console"
	// consolePluginsAnnotation lists the CSV's ConsolePlugins: OLM's
	// console offers to enable them when the operator is installed.
	consolePluginsAnnotation = "console.openshift.io/plugins"
)

// Options say what to build the bundle from and which images it names.
type Options struct {
	ManifestsDir string
	ExamplesDir  string
	Version      string
	HubImage     string
	AgentImage   string
	ConsoleImage string
}

// DefaultOptions are `make bundle`'s defaults, relative to the repository
// root; the committed bundle/ is generated with them.
func DefaultOptions() Options {
	return Options{
		ManifestsDir: "manifests",
		ExamplesDir:  "examples",
		Version:      "0.1.0",
		HubImage:     "quay.io/hcp-fleet/hcp-fleet-hub:v0.1.0",
		AgentImage:   "quay.io/hcp-fleet/hcp-fleet-agent:v0.1.0",
		ConsoleImage: "quay.io/hcp-fleet/hcp-fleet-console:v0.1.0",
	}
}

//go:embed icon.svg
var icon []byte

// Kinds in manifests/ that OLM cannot install from a bundle (its catalog
// operator creates only CRDs, RBAC, ServiceAccounts, Services, Secrets,
// ConfigMaps and a few monitoring and console kinds). The admin applies
// them after OLM installed the operator (docs/install.md).
var postInstallKinds = map[schema.GroupKind]bool{
	{Kind: "Namespace"}: true,
	{Group: "addon.open-cluster-management.io", Kind: "ClusterManagementAddOn"}:     true,
	{Group: "cluster.open-cluster-management.io", Kind: "Placement"}:                true,
	{Group: "cluster.open-cluster-management.io", Kind: "ManagedClusterSetBinding"}: true,
	{Group: "hcpfleet.io", Kind: "HostingConfig"}:                                   true,
	// OLM v0 creates no admission policies from a bundle (its catalog
	// operator's supportedKinds).
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
}

// Kinds copied into the bundle as they are (OLM creates them; namespaced
// ones in the namespace it installs the operator into).
var bundleObjectKinds = map[schema.GroupKind]bool{
	{Kind: "Service"}: true,
	// The hub's ServiceMonitor and alerts: OLM creates both kinds from a
	// bundle (where the Prometheus Operator's CRDs exist).
	{Group: "monitoring.coreos.com", Kind: "ServiceMonitor"}: true,
	{Group: "monitoring.coreos.com", Kind: "PrometheusRule"}: true,
	{Group: rbacv1.GroupName, Kind: "ClusterRole"}:           true,
	{Group: rbacv1.GroupName, Kind: "ClusterRoleBinding"}:    true,
	{Group: rbacv1.GroupName, Kind: "Role"}:                  true,
	{Group: rbacv1.GroupName, Kind: "RoleBinding"}:           true,
	// The console plugin's registration (OLM's catalog operator creates
	// ConsolePlugins from a bundle).
	{Group: "console.openshift.io", Kind: "ConsolePlugin"}: true,
}

// resourcesOf lists, per owned kind, what the operator creates for one
// object of it (the console shows them on the object's page).
var resourcesOf = map[string][]v1alpha1.APIResourceReference{
	"HostedClusterDeployment": {
		{Kind: "ManifestWork", Name: "manifestworks", Version: "v1"},
		{Kind: "ManagedCluster", Name: "managedclusters", Version: "v1"},
		{Kind: "Secret", Version: "v1"}, // a built-in kind: no name

	},
}

// nativeAPIs are the OCM hub APIs hcp-fleet needs and no CSV provides (the
// ClusterManager of ACM/MCE installs them): OLM keeps the CSV in Pending,
// RequirementsNotMet, naming the missing ones, on a hub without them.
var nativeAPIs = []metav1.GroupVersionKind{
	{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Kind: "ClusterManagementAddOn"},
	{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Kind: "ManagedClusterAddOn"},
	{Group: "addon.open-cluster-management.io", Version: "v1alpha1", Kind: "AddOnDeploymentConfig"},
	{Group: "cluster.open-cluster-management.io", Version: "v1", Kind: "ManagedCluster"},
	{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Kind: "Placement"},
	{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Kind: "PlacementDecision"},
	{Group: "cluster.open-cluster-management.io", Version: "v1beta2", Kind: "ManagedClusterSet"},
	{Group: "cluster.open-cluster-management.io", Version: "v1beta2", Kind: "ManagedClusterSetBinding"},
	{Group: "cluster.open-cluster-management.io", Version: "v1alpha1", Kind: "AddOnPlacementScore"},
	{Group: "work.open-cluster-management.io", Version: "v1", Kind: "ManifestWork"},
}

// Build runs kustomize on dir, as `kustomize build` / `kubectl kustomize`.
func Build(dir string) ([]*unstructured.Unstructured, error) {
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, res := range resMap.Resources() {
		// Through JSON: kyaml's maps hold int, unstructured wants int64.
		data, err := res.MarshalJSON()
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// Generate returns the bundle's files by their path from the repository
// root: bundle/manifests/*, bundle/metadata/annotations.yaml and
// bundle.Dockerfile.
func Generate(opts Options) (map[string][]byte, error) {
	ver, err := semver.Parse(opts.Version)
	if err != nil {
		return nil, fmt.Errorf("--version %q: %w", opts.Version, err)
	}
	objs, err := Build(opts.ManifestsDir)
	if err != nil {
		return nil, err
	}
	in, err := sortObjects(objs)
	if err != nil {
		return nil, err
	}
	deploy, side, err := deploymentsWithImages(in.deployments, opts)
	if err != nil {
		return nil, err
	}
	sideSAs, err := tokenlessServiceAccounts(side, in)
	if err != nil {
		return nil, err
	}
	strategy, extra, err := installStrategy(deploy, in)
	if err != nil {
		return nil, err
	}
	for _, d := range side {
		strategy.DeploymentSpecs = append(strategy.DeploymentSpecs, v1alpha1.StrategyDeploymentSpec{Name: d.Name, Label: d.Labels, Spec: d.Spec})
	}
	strategy.Permissions = append(strategy.Permissions, sideSAs...)
	plugins, err := consolePlugins(in.others)
	if err != nil {
		return nil, err
	}
	var owned []v1alpha1.CRDDescription
	for _, crd := range in.crds {
		owned = append(owned, crdDescription(crd))
	}
	examples, err := almExamples(opts.ExamplesDir, in.crds)
	if err != nil {
		return nil, err
	}

	csv := &v1alpha1.ClusterServiceVersion{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ClusterServiceVersionKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: PackageName + ".v" + ver.String(),
			Annotations: map[string]string{
				"alm-examples":           examples,
				"capabilities":           "Basic Install",
				"categories":             "Integration & Delivery,OpenShift Optional",
				"containerImage":         opts.HubImage,
				"description":            "Schedules HyperShift hosted control planes onto management clusters of an ACM/MCE hub.",
				"repository":             repository,
				"support":                "hcp-fleet",
				consolePluginsAnnotation: plugins,
			},
		},
		Spec: v1alpha1.ClusterServiceVersionSpec{
			DisplayName: "HCP Fleet",
			Description: description,
			Version:     version.OperatorVersion{Version: ver},
			Maturity:    Maturity,
			Keywords:    []string{"hypershift", "hosted control planes", "open-cluster-management", "acm", "mce", "fleet", "add-on"},
			Provider:    v1alpha1.AppLink{Name: "hcp-fleet", URL: repository},
			Links: []v1alpha1.AppLink{
				{Name: "Source", URL: repository},
				{Name: "Install", URL: repository + "/blob/main/docs/install.md"},
				{Name: "Architecture", URL: repository + "/blob/main/docs/architecture.md"},
			},
			Icon:           []v1alpha1.Icon{{MediaType: "image/svg+xml", Data: base64.StdEncoding.EncodeToString(icon)}},
			MinKubeVersion: MinKubeVersion,
			NativeAPIs:     nativeAPIs,
			// OwnNamespace only, as ACM's and MCE's own hub operators: the
			// hub's cluster-wide rights are its clusterPermissions whatever
			// the mode, and its namespaced ones (its lease, its events) stay
			// a Role in its namespace. With AllNamespaces, OLM would grant
			// the permissions below cluster-wide (ensureRBACInTargetNamespace
			// makes ClusterRoles of them for a global OperatorGroup): every
			// lease, kube-system's leader elections included.
			InstallModes: []v1alpha1.InstallMode{
				{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: true},
				{Type: v1alpha1.InstallModeTypeSingleNamespace, Supported: false},
				{Type: v1alpha1.InstallModeTypeMultiNamespace, Supported: false},
				{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: false},
			},
			InstallStrategy:           v1alpha1.NamedInstallStrategy{StrategyName: v1alpha1.InstallStrategyNameDeployment, StrategySpec: strategy},
			CustomResourceDefinitions: v1alpha1.CustomResourceDefinitions{Owned: owned},
			RelatedImages: []v1alpha1.RelatedImage{
				{Name: "hcp-fleet-hub", Image: opts.HubImage},
				{Name: "hcp-fleet-agent", Image: opts.AgentImage},
				{Name: "hcp-fleet-console", Image: opts.ConsoleImage},
			},
		},
	}

	files := map[string][]byte{}
	add := func(name string, obj any) error {
		data, err := marshal(obj)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		files[filepath.Join(BundleDir, "manifests", name)] = data
		return nil
	}
	if err := add(PackageName+".clusterserviceversion.yaml", csv); err != nil {
		return nil, err
	}
	for _, crd := range in.crds {
		if err := add(crd.Spec.Group+"_"+crd.Spec.Names.Plural+".yaml", crd); err != nil {
			return nil, err
		}
	}
	for _, obj := range extra {
		if err := add(objectFileName(obj), obj.Object); err != nil {
			return nil, err
		}
	}
	files[filepath.Join(BundleDir, "metadata", "annotations.yaml")] = annotationsYAML()
	files["bundle.Dockerfile"] = dockerfile()
	return files, nil
}

// sorted holds manifests/'s objects by what the bundle makes of them.
type sorted struct {
	crds        []*apiextensionsv1.CustomResourceDefinition
	deployments []*appsv1.Deployment
	sas         []*corev1.ServiceAccount
	// objects OLM installs as they are, RBAC among them.
	others []*unstructured.Unstructured
}

func sortObjects(objs []*unstructured.Unstructured) (*sorted, error) {
	var s sorted
	var errs []error
	for _, obj := range objs {
		gk := obj.GroupVersionKind().GroupKind()
		switch {
		case gk == schema.GroupKind{Group: apiextensionsv1.GroupName, Kind: "CustomResourceDefinition"}:
			var crd apiextensionsv1.CustomResourceDefinition
			if err := fromUnstructured(obj, &crd); err != nil {
				return nil, err
			}
			s.crds = append(s.crds, &crd)
		case gk == schema.GroupKind{Group: appsv1.GroupName, Kind: "Deployment"}:
			var d appsv1.Deployment
			if err := fromUnstructured(obj, &d); err != nil {
				return nil, err
			}
			s.deployments = append(s.deployments, &d)
		case gk == schema.GroupKind{Kind: "ServiceAccount"}:
			var sa corev1.ServiceAccount
			if err := fromUnstructured(obj, &sa); err != nil {
				return nil, err
			}
			s.sas = append(s.sas, &sa)
		case bundleObjectKinds[gk]:
			s.others = append(s.others, obj)
		case postInstallKinds[gk]:
		default:
			errs = append(errs, fmt.Errorf("%s %s: a kind the bundle generator does not place: add it to bundleObjectKinds (OLM installs it) or postInstallKinds (the admin applies it after OLM; say so in docs/install.md)", gk, obj.GetName()))
		}
	}
	sort.Slice(s.crds, func(i, j int) bool { return s.crds[i].Name < s.crds[j].Name })
	return &s, errors.Join(errs...)
}

// deploymentsWithImages returns the hub's Deployment and the console's (the
// side Deployments), with the images of opts.
func deploymentsWithImages(deployments []*appsv1.Deployment, opts Options) (*appsv1.Deployment, []*appsv1.Deployment, error) {
	var hub *appsv1.Deployment
	var side []*appsv1.Deployment
	for _, d := range deployments {
		d = d.DeepCopy()
		switch d.Name {
		case hubDeploymentName:
			if err := setHubImages(d, opts); err != nil {
				return nil, nil, err
			}
			hub = d
		case consoleDeploymentName:
			if err := setImage(d, consoleContainer, opts.ConsoleImage); err != nil {
				return nil, nil, err
			}
			side = append(side, d)
		default:
			return nil, nil, fmt.Errorf("the Deployment %s: the bundle generator knows only %s and %s", d.Name, hubDeploymentName, consoleDeploymentName)
		}
	}
	if hub == nil {
		return nil, nil, fmt.Errorf("the manifests have no Deployment %s", hubDeploymentName)
	}
	return hub, side, nil
}

func setImage(d *appsv1.Deployment, container, image string) error {
	for i := range d.Spec.Template.Spec.Containers {
		if c := &d.Spec.Template.Spec.Containers[i]; c.Name == container {
			c.Image = image
			return nil
		}
	}
	return fmt.Errorf("the Deployment %s has no container %s", d.Name, container)
}

// setHubImages sets the hub's image and the agent image it deploys.
func setHubImages(d *appsv1.Deployment, opts Options) error {
	if err := setImage(d, hubContainer, opts.HubImage); err != nil {
		return err
	}
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		if c.Name != hubContainer {
			continue
		}
		for j := range c.Env {
			if c.Env[j].Name == agentImageEnv {
				c.Env[j].Value = opts.AgentImage
				return nil
			}
		}
	}
	return fmt.Errorf("the Deployment %s: container %s has no %s", d.Name, hubContainer, agentImageEnv)
}

// tokenlessServiceAccounts takes the ServiceAccounts of the side
// Deployments out of in and returns a permissions entry without rules for
// each: OLM creates a ServiceAccount only for a permissions entry (with a
// Role that grants nothing here), and the bundle validators refuse a
// ServiceAccount manifest that a Deployment of the CSV names. A side
// Deployment mounts no token and nothing binds its ServiceAccount, which
// this checks.
func tokenlessServiceAccounts(side []*appsv1.Deployment, in *sorted) ([]v1alpha1.StrategyDeploymentPermissions, error) {
	var out []v1alpha1.StrategyDeploymentPermissions
	for _, d := range side {
		pod := d.Spec.Template.Spec
		name := pod.ServiceAccountName
		if name == "" || name == "default" || pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
			return nil, fmt.Errorf("the Deployment %s: want its own ServiceAccount and automountServiceAccountToken: false (it needs no API access)", d.Name)
		}
		for _, obj := range in.others {
			if obj.GetKind() != "RoleBinding" && obj.GetKind() != "ClusterRoleBinding" {
				continue
			}
			var b rbacv1.RoleBinding // ClusterRoleBinding has the same fields
			if err := fromUnstructured(obj, &b); err != nil {
				return nil, err
			}
			for _, s := range b.Subjects {
				if s.Kind == rbacv1.ServiceAccountKind && s.Name == name && s.Namespace == d.Namespace {
					return nil, fmt.Errorf("%s %s binds %s, the ServiceAccount of %s, which runs without API access", obj.GetKind(), obj.GetName(), name, d.Name)
				}
			}
		}
		found := false
		kept := in.sas[:0]
		for _, sa := range in.sas {
			if sa.Name == name && sa.Namespace == d.Namespace {
				found = true
				continue
			}
			kept = append(kept, sa)
		}
		in.sas = kept
		if !found {
			return nil, fmt.Errorf("the manifests have no ServiceAccount %s/%s for Deployment %s", d.Namespace, name, d.Name)
		}
		out = append(out, v1alpha1.StrategyDeploymentPermissions{ServiceAccountName: name, Rules: []rbacv1.PolicyRule{}})
	}
	return out, nil
}

// consolePlugins is the CSV's console.openshift.io/plugins annotation: the
// names of the manifests' ConsolePlugins, as a JSON array.
func consolePlugins(objs []*unstructured.Unstructured) (string, error) {
	names := []string{}
	for _, obj := range objs {
		if obj.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: "console.openshift.io", Kind: "ConsolePlugin"}) {
			names = append(names, obj.GetName())
		}
	}
	if len(names) == 0 {
		return "", errors.New("the manifests have no ConsolePlugin")
	}
	sort.Strings(names)
	data, err := json.Marshal(names)
	return string(data), err
}

// installStrategy turns the Deployment and the RBAC of its ServiceAccount
// into the CSV's install strategy, as OLM wants it: OLM creates the
// ServiceAccount, a Role and RoleBinding in the install namespace for each
// permissions entry and a ClusterRole and ClusterRoleBinding for each
// clusterPermissions entry. Roles bound only to that ServiceAccount, their
// bindings and the ServiceAccount leave the bundle; every other RBAC object
// stays in it, returned as extra.
func installStrategy(d *appsv1.Deployment, in *sorted) (v1alpha1.StrategyDetailsDeployment, []*unstructured.Unstructured, error) {
	saName, ns := d.Spec.Template.Spec.ServiceAccountName, d.Namespace
	var strategy v1alpha1.StrategyDetailsDeployment
	if saName == "" || saName == "default" {
		return strategy, nil, fmt.Errorf("the Deployment %s runs as the namespace's default ServiceAccount", d.Name)
	}
	found := false
	for _, sa := range in.sas {
		if sa.Name != saName || sa.Namespace != ns {
			return strategy, nil, fmt.Errorf("the ServiceAccount %s/%s is not the hub's: OLM creates only the CSV's", sa.Namespace, sa.Name)
		}
		found = true
	}
	if !found {
		return strategy, nil, fmt.Errorf("the manifests have no ServiceAccount %s/%s for Deployment %s", ns, saName, d.Name)
	}

	key := func(u *unstructured.Unstructured) string {
		return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
	}
	byKey := map[string]*unstructured.Unstructured{}
	for _, obj := range in.others {
		byKey[key(obj)] = obj
	}
	var roleRules, clusterRoleRules []rbacv1.PolicyRule
	consumed := map[string]bool{}
	// refs counts, per role, the bindings that are not the hub's.
	refs := map[string]int{}
	isHub := func(subjects []rbacv1.Subject) (bool, error) {
		hub := 0
		for _, s := range subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Name == saName && s.Namespace == ns {
				hub++
			}
		}
		if hub > 0 && len(subjects) > hub {
			return false, errors.New("binds the hub's ServiceAccount and others: split it")
		}
		return hub > 0, nil
	}
	roleKey := func(ref rbacv1.RoleRef, namespace string) string {
		if ref.Kind == "ClusterRole" {
			return "ClusterRole//" + ref.Name
		}
		return "Role/" + namespace + "/" + ref.Name
	}
	rulesOf := func(k string) ([]rbacv1.PolicyRule, error) {
		obj, ok := byKey[k]
		if !ok {
			return nil, fmt.Errorf("%s is not in the manifests", k)
		}
		var r rbacv1.ClusterRole // Role and ClusterRole share rules
		if err := fromUnstructured(obj, &r); err != nil {
			return nil, err
		}
		if r.AggregationRule != nil {
			return nil, fmt.Errorf("%s aggregates: OLM cannot grant an aggregated role", k)
		}
		return r.Rules, nil
	}
	for _, obj := range in.others {
		var subjects []rbacv1.Subject
		var ref rbacv1.RoleRef
		switch obj.GetKind() {
		case "RoleBinding", "ClusterRoleBinding":
			var b rbacv1.RoleBinding // ClusterRoleBinding has the same fields
			if err := fromUnstructured(obj, &b); err != nil {
				return strategy, nil, err
			}
			subjects, ref = b.Subjects, b.RoleRef
		default:
			continue
		}
		hub, err := isHub(subjects)
		if err != nil {
			return strategy, nil, fmt.Errorf("%s: %w", key(obj), err)
		}
		rk := roleKey(ref, obj.GetNamespace())
		if !hub {
			refs[rk]++
			continue
		}
		rules, err := rulesOf(rk)
		if err != nil {
			return strategy, nil, fmt.Errorf("%s: %w", key(obj), err)
		}
		if obj.GetKind() == "RoleBinding" {
			if obj.GetNamespace() != ns {
				return strategy, nil, fmt.Errorf("%s: OLM grants namespaced permissions in the install namespace only", key(obj))
			}
			roleRules = append(roleRules, rules...)
		} else {
			clusterRoleRules = append(clusterRoleRules, rules...)
		}
		consumed[key(obj)] = true
		consumed[rk] = true
	}

	strategy.DeploymentSpecs = []v1alpha1.StrategyDeploymentSpec{{Name: d.Name, Label: d.Labels, Spec: d.Spec}}
	if len(roleRules) > 0 {
		strategy.Permissions = []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: saName, Rules: roleRules}}
	}
	if len(clusterRoleRules) > 0 {
		strategy.ClusterPermissions = []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: saName, Rules: clusterRoleRules}}
	}
	var extra []*unstructured.Unstructured
	for _, obj := range in.others {
		if consumed[key(obj)] && refs[key(obj)] == 0 {
			continue
		}
		obj = obj.DeepCopy()
		// OLM creates namespaced objects in the install namespace.
		obj.SetNamespace("")
		extra = append(extra, obj)
	}
	sort.Slice(extra, func(i, j int) bool { return objectFileName(extra[i]) < objectFileName(extra[j]) })
	return strategy, extra, nil
}

// crdDescription describes an owned CRD for the console from its schema:
// the kind's description, and one descriptor per top-level field of spec
// and status.
func crdDescription(crd *apiextensionsv1.CustomResourceDefinition) v1alpha1.CRDDescription {
	var v apiextensionsv1.CustomResourceDefinitionVersion
	for _, cv := range crd.Spec.Versions {
		if cv.Storage {
			v = cv
		}
	}
	desc := v1alpha1.CRDDescription{
		Name:        crd.Name,
		Version:     v.Name,
		Kind:        crd.Spec.Names.Kind,
		DisplayName: humanize(crd.Spec.Names.Kind),
		Resources:   resourcesOf[crd.Spec.Names.Kind],
	}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return desc
	}
	root := v.Schema.OpenAPIV3Schema
	desc.Description = firstSentences(root.Description)
	spec, status := root.Properties["spec"], root.Properties["status"]
	for _, name := range sortedKeys(spec.Properties) {
		p := spec.Properties[name]
		desc.SpecDescriptors = append(desc.SpecDescriptors, v1alpha1.SpecDescriptor{
			Path: name, DisplayName: humanize(name), Description: firstSentences(p.Description), XDescriptors: specXDescriptors(p),
		})
	}
	for _, name := range sortedKeys(status.Properties) {
		p := status.Properties[name]
		desc.StatusDescriptors = append(desc.StatusDescriptors, v1alpha1.StatusDescriptor{
			Path: name, DisplayName: humanize(name), Description: firstSentences(p.Description), XDescriptors: statusXDescriptors(name, p),
		})
	}
	return desc
}

// specXDescriptors picks the console's form widget from the field's type.
func specXDescriptors(p apiextensionsv1.JSONSchemaProps) []string {
	const ui = "urn:alm:descriptor:com.tectonic.ui:"
	switch {
	case p.Type == "string" && len(p.Enum) > 0:
		var out []string
		for _, e := range p.Enum {
			var s string
			if json.Unmarshal(e.Raw, &s) == nil {
				out = append(out, ui+"select:"+s)
			}
		}
		return out
	case p.Type == "string":
		return []string{ui + "text"}
	case p.Type == "integer" || p.Type == "number":
		return []string{ui + "number"}
	case p.Type == "boolean":
		return []string{ui + "booleanSwitch"}
	}
	return nil
}

func statusXDescriptors(name string, p apiextensionsv1.JSONSchemaProps) []string {
	switch {
	case name == "conditions":
		return []string{"urn:alm:descriptor:io.kubernetes.conditions"}
	case p.Type == "string" || p.Type == "integer":
		return []string{"urn:alm:descriptor:text"}
	}
	return nil
}

// almExamples is the JSON list of the objects in dir whose kind is one of
// crds', without their namespaces (the console creates them in the one the
// user is in).
func almExamples(dir string, crds []*apiextensionsv1.CustomResourceDefinition) (string, error) {
	owned := map[schema.GroupKind]bool{}
	for _, crd := range crds {
		owned[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = true
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return "", err
	}
	sort.Strings(paths)
	examples := []map[string]any{}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var obj unstructured.Unstructured
			if err := dec.Decode(&obj.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return "", fmt.Errorf("%s: %w", path, err)
			}
			if obj.Object == nil || !owned[obj.GroupVersionKind().GroupKind()] {
				continue
			}
			obj.SetNamespace("")
			examples = append(examples, obj.Object)
		}
	}
	if len(examples) == 0 {
		return "", fmt.Errorf("no examples of %v in %s", owned, dir)
	}
	out, err := json.MarshalIndent(examples, "", "  ")
	return string(out), err
}

func annotations() [][2]string {
	return [][2]string{
		{"operators.operatorframework.io.bundle.mediatype.v1", "registry+v1"},
		{"operators.operatorframework.io.bundle.manifests.v1", "manifests/"},
		{"operators.operatorframework.io.bundle.metadata.v1", "metadata/"},
		{"operators.operatorframework.io.bundle.package.v1", PackageName},
		{"operators.operatorframework.io.bundle.channels.v1", Channel},
		{"operators.operatorframework.io.bundle.channel.default.v1", Channel},
	}
}

const generatedHeader = "# Generated by `make bundle` (hack/bundle) from manifests/ and examples/. Do not edit.\n"

func annotationsYAML() []byte {
	var b strings.Builder
	b.WriteString(generatedHeader)
	b.WriteString("annotations:\n")
	for _, a := range annotations() {
		fmt.Fprintf(&b, "  %s: %s\n", a[0], a[1])
	}
	return []byte(b.String())
}

func dockerfile() []byte {
	var b strings.Builder
	b.WriteString(generatedHeader)
	b.WriteString("# The bundle image: podman build -f bundle.Dockerfile -t <registry>/hcp-fleet-bundle:v<version> .\n")
	b.WriteString("FROM scratch\n")
	for _, a := range annotations() {
		fmt.Fprintf(&b, "LABEL %s=%s\n", a[0], a[1])
	}
	b.WriteString("COPY bundle/manifests /manifests/\n")
	b.WriteString("COPY bundle/metadata /metadata/\n")
	return []byte(b.String())
}

// marshal writes obj as YAML after the generated-file header, without the
// empty creationTimestamp and status that typed objects carry.
func marshal(obj any) ([]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	dropNulls(m)
	data, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append([]byte(generatedHeader), data...), nil
}

func dropNulls(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
				continue
			}
			dropNulls(e)
		}
	case []any:
		for _, e := range t {
			dropNulls(e)
		}
	}
}

// objectFileName follows operator-sdk's names for bundle objects:
// <name>_<group>_<version>_<kind>.yaml.
func objectFileName(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	parts := []string{strings.ReplaceAll(obj.GetName(), ":", "-")}
	if gvk.Group != "" {
		parts = append(parts, gvk.Group)
	}
	parts = append(parts, gvk.Version, strings.ToLower(gvk.Kind))
	return strings.Join(parts, "_") + ".yaml"
}

func fromUnstructured(obj *unstructured.Unstructured, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, into, true); err != nil {
		return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

func sortedKeys(m map[string]apiextensionsv1.JSONSchemaProps) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// acronyms are written in capitals in display names.
var acronyms = map[string]string{"capi": "CAPI", "olm": "OLM", "oidc": "OIDC", "dns": "DNS"}

// humanize turns a field or kind name into words: hostingCluster → Hosting
// Cluster, HostedClusterDeployment → Hosted Cluster Deployment.
func humanize(name string) string {
	var words []string
	start := 0
	runes := []rune(name)
	for i := 1; i < len(runes); i++ {
		if unicode.IsUpper(runes[i]) && !unicode.IsUpper(runes[i-1]) {
			words = append(words, string(runes[start:i]))
			start = i
		}
	}
	words = append(words, string(runes[start:]))
	for i, w := range words {
		if a, ok := acronyms[strings.ToLower(w)]; ok {
			words[i] = a
			continue
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}

// firstSentences is the first paragraph of a schema description, on one
// line, cut after the sentence that passes 200 characters.
func firstSentences(s string) string {
	para, _, _ := strings.Cut(strings.TrimSpace(s), "\n\n")
	para = strings.Join(strings.Fields(para), " ")
	if len(para) <= 200 {
		return para
	}
	if i := strings.Index(para[200:], ". "); i >= 0 {
		return para[:200+i+1]
	}
	return para
}

const description = `hcp-fleet is an [open-cluster-management](https://open-cluster-management.io) hub add-on for
fleets of HyperShift hosted control planes, on an ACM or MCE hub.

A fleet admin or a tenant declares a hosted OpenShift cluster on the hub as a
**HostedClusterDeployment**; hcp-fleet picks a management cluster for it (an OCM
Placement, capacity, platform and release support), delivers the HostedCluster
and its NodePools there with a ManifestWork, reports its state back, and imports
it as a ManagedCluster once it is available.

On every management cluster the **hcp-fleet agent** (an OCM add-on) installs and
runs the HyperShift operator, the Cluster API CRDs and providers it needs, and
reports capacity and supported releases. A **HostingConfig** configures the
agents (default and per cluster, through the add-on's configs).

### After installing

OLM installs the hub, its RBAC and the CRDs. Then apply the add-on's hub
objects (the ClusterManagementAddOn, the hcp-fleet-hosts Placement and the
default HostingConfig; see docs/install.md) and label the management clusters
` + "`hcpfleet.io/management-cluster=true`" + `.

Install this operator in the namespace ` + "`hcp-fleet`" + `, with an OperatorGroup that
targets that namespace (OwnNamespace, as ACM and MCE themselves): the hub still
works across the hub, with the cluster-wide rights this CSV asks for.
`
