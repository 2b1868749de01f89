package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The repository root, seen from this package's directory.
const root = "../.."

func testOptions() Options {
	o := DefaultOptions()
	o.ManifestsDir = filepath.Join(root, o.ManifestsDir)
	o.ExamplesDir = filepath.Join(root, o.ExamplesDir)
	return o
}

// bundle/ and bundle.Dockerfile are what `make bundle` generates from
// manifests/ and examples/ now: a change to either without `make bundle`
// (or an edit of the bundle by hand) fails here.
func TestBundleUpToDate(t *testing.T) {
	files, err := Generate(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[string]bool{}
	err = filepath.WalkDir(filepath.Join(root, BundleDir), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		onDisk[rel] = true
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	onDisk["bundle.Dockerfile"] = true
	var stale []string
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil || !bytes.Equal(got, want) {
			stale = append(stale, name)
		}
		delete(onDisk, name)
	}
	for name := range onDisk {
		stale = append(stale, name+" (not generated)")
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("the bundle is stale, run `make bundle`: %s", strings.Join(stale, ", "))
	}
}

// The warnings the validators give the bundle, each accepted for a
// reason. A warning not listed here fails the test; so does a listed one
// that no longer occurs (remove it).
var acceptedWarnings = map[string]string{
	// OperatorHubV2 and AlphaDeprecatedAPIs flag any rule on events in
	// events.k8s.io because events.k8s.io/v1beta1 went away in 1.25. An
	// RBAC rule names a group, not a version: the Role hcp-fleet-hub
	// (manifests/hub/63-hub-role.yaml) lets the hub record events through
	// core/v1 or events.k8s.io/v1, both served in 1.34.
	`Warning: Value hcp-fleet.v0.1.0: this bundle is using APIs which were deprecated and removed in v1.25. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-25. Migrate the API(s) for events: (["ClusterServiceVersion.Spec.InstallStrategy.StrategySpec.Permissions[0].Rules[1]"])`: "RBAC has no versions",
}

// The bundle passes operator-framework's validation as `operator-sdk bundle
// validate --select-optional suite=operatorframework` runs it: the default
// bundle validators and the operatorframework suite, for Kubernetes 1.34.
// Zero errors; every warning accepted above.
func TestBundleValidation(t *testing.T) {
	bundle, err := manifests.GetBundleFromDir(filepath.Join(root, BundleDir))
	if err != nil {
		t.Fatal(err)
	}
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.AlphaDeprecatedAPIsValidator,
		validation.GoodPracticesValidator,
	)
	results := validators.Validate(bundle, map[string]string{"k8s-version": "1.34"})
	if len(results) == 0 {
		t.Fatal("the validators returned no results")
	}
	seen := map[string]bool{}
	for _, r := range results {
		for _, e := range r.Errors {
			t.Errorf("%s: error: %s", r.Name, e.Error())
		}
		for _, w := range r.Warnings {
			msg := w.Error()
			seen[msg] = true
			if _, ok := acceptedWarnings[msg]; !ok {
				t.Errorf("%s: warning not accepted in acceptedWarnings: %q", r.Name, msg)
			}
		}
	}
	for msg := range acceptedWarnings {
		if !seen[msg] {
			t.Errorf("accepted warning no longer given, remove it: %q", msg)
		}
	}
	// The validators saw the bundle whole.
	if bundle.CSV == nil || len(bundle.V1CRDs) != 8 || bundle.Package != PackageName || bundle.DefaultChannel != Channel {
		t.Errorf("bundle loaded as CSV %v, %d CRDs, package %q, channel %q", bundle.CSV != nil, len(bundle.V1CRDs), bundle.Package, bundle.DefaultChannel)
	}
}

func objectsOf(t *testing.T, kind string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := Build(testOptions().ManifestsDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func rulesOf(t *testing.T, kind, name string) []rbacv1.PolicyRule {
	t.Helper()
	for _, o := range objectsOf(t, kind) {
		if o.GetName() == name {
			var r rbacv1.ClusterRole
			if err := fromUnstructured(o, &r); err != nil {
				t.Fatal(err)
			}
			return r.Rules
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

// The CSV's install strategy is the manifests' Deployment (with the
// bundle's images) and the RBAC of its ServiceAccount, as OLM will grant
// it: the Role's rules as permissions, the ClusterRole's as
// clusterPermissions. The ServiceAccount itself is OLM's to create, so it
// is not in the bundle; the ClusterRoles the hub binds for others are.
func TestInstallStrategy(t *testing.T) {
	opts := testOptions()
	files, err := Generate(opts)
	if err != nil {
		t.Fatal(err)
	}
	var csv v1alpha1.ClusterServiceVersion
	if err := unmarshalFile(files, PackageName+".clusterserviceversion.yaml", &csv); err != nil {
		t.Fatal(err)
	}
	s := csv.Spec.InstallStrategy.StrategySpec
	if len(s.DeploymentSpecs) != 2 {
		t.Fatalf("%d deployments, want the hub's and the console's", len(s.DeploymentSpecs))
	}
	deployment := func(name string) appsv1.Deployment {
		for _, obj := range objectsOf(t, "Deployment") {
			if obj.GetName() == name {
				var d appsv1.Deployment
				if err := fromUnstructured(obj, &d); err != nil {
					t.Fatal(err)
				}
				return d
			}
		}
		t.Fatalf("no Deployment %s in the manifests", name)
		return appsv1.Deployment{}
	}
	d := deployment(hubDeploymentName)
	want := d.Spec.DeepCopy()
	want.Template.Spec.Containers[0].Image = opts.HubImage
	want.Template.Spec.Containers[0].Env[0].Value = opts.AgentImage
	if got := s.DeploymentSpecs[0]; got.Name != d.Name || !reflect.DeepEqual(got.Spec, *want) {
		t.Errorf("CSV deployment %s differs from the manifests' Deployment %s with the bundle's images", got.Name, d.Name)
	}
	// The console's asset server: as in the manifests, with the bundle's
	// console image; OLM creates its ServiceAccount for a permissions entry
	// that grants nothing.
	cd := deployment(consoleDeploymentName)
	wantConsole := cd.Spec.DeepCopy()
	wantConsole.Template.Spec.Containers[0].Image = opts.ConsoleImage
	if got := s.DeploymentSpecs[1]; got.Name != cd.Name || !reflect.DeepEqual(got.Spec, *wantConsole) {
		t.Errorf("CSV deployment %s differs from the manifests' Deployment %s with the bundle's console image", got.Name, cd.Name)
	}
	if csv.Annotations[consolePluginsAnnotation] != `["hcp-fleet"]` {
		t.Errorf("%s: %q, want the ConsolePlugin hcp-fleet", consolePluginsAnnotation, csv.Annotations[consolePluginsAnnotation])
	}
	sa := d.Spec.Template.Spec.ServiceAccountName
	wantPerms := []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: rulesOf(t, "Role", "hcp-fleet-hub")},
		{ServiceAccountName: cd.Spec.Template.Spec.ServiceAccountName, Rules: []rbacv1.PolicyRule{}}}
	wantCluster := []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: sa, Rules: rulesOf(t, "ClusterRole", "hcp-fleet:hub")}}
	if !reflect.DeepEqual(s.Permissions, wantPerms) {
		t.Errorf("permissions %+v, want the Role hcp-fleet-hub's rules for %s and none for the console's", s.Permissions, sa)
	}
	if !reflect.DeepEqual(s.ClusterPermissions, wantCluster) {
		t.Errorf("clusterPermissions differ from the ClusterRole hcp-fleet:hub's rules for %s", sa)
	}
	// Only OwnNamespace: for a global OperatorGroup OLM would grant the
	// permissions above (leases) in every namespace.
	for _, m := range csv.Spec.InstallModes {
		if m.Supported != (m.Type == v1alpha1.InstallModeTypeOwnNamespace) {
			t.Errorf("install mode %s supported=%v; want OwnNamespace only", m.Type, m.Supported)
		}
	}
	if len(csv.Spec.RelatedImages) != 3 || csv.Spec.RelatedImages[0].Image != opts.HubImage || csv.Spec.RelatedImages[1].Image != opts.AgentImage ||
		csv.Spec.RelatedImages[2].Image != opts.ConsoleImage || csv.Annotations["containerImage"] != opts.HubImage {
		t.Errorf("relatedImages %v, containerImage %q", csv.Spec.RelatedImages, csv.Annotations["containerImage"])
	}

	var names []string
	for name := range files {
		names = append(names, filepath.Base(name))
	}
	sort.Strings(names)
	wantNames := []string{
		"annotations.yaml",
		"bundle.Dockerfile",
		"hcp-fleet-adopt_rbac.authorization.k8s.io_v1_clusterrole.yaml",
		"hcp-fleet-console_v1_service.yaml",
		"hcp-fleet-cordon_rbac.authorization.k8s.io_v1_clusterrole.yaml",
		"hcp-fleet-hub-console-api_v1_service.yaml",
		"hcp-fleet-hub-metrics_v1_service.yaml",
		"hcp-fleet-hub_monitoring.coreos.com_v1_prometheusrule.yaml",
		"hcp-fleet-hub_monitoring.coreos.com_v1_servicemonitor.yaml",
		"hcp-fleet-metrics-reader_rbac.authorization.k8s.io_v1_clusterrole.yaml",
		"hcp-fleet-relocate_rbac.authorization.k8s.io_v1_clusterrole.yaml",
		"hcp-fleet-tenant_rbac.authorization.k8s.io_v1_clusterrole.yaml",
		"hcp-fleet.clusterserviceversion.yaml",
		"hcp-fleet_console.openshift.io_v1_consoleplugin.yaml",
		"hcpfleet.io_hostedclusteradoptions.yaml",
		"hcpfleet.io_hostedclusterdeployments.yaml",
		"hcpfleet.io_hostedclusterextensions.yaml",
		"hcpfleet.io_hostedclusterinventories.yaml",
		"hcpfleet.io_hostedclusterrelocations.yaml",
		"hcpfleet.io_hostingconfigs.yaml",
		"hcpfleet.io_releaserollouts.yaml",
		"hcpfleet.io_tenantpolicies.yaml",
		"open-cluster-management-hcp-fleet-agent-hub_rbac.authorization.k8s.io_v1_clusterrole.yaml",
	}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("bundle files %v, want %v", names, wantNames)
	}
}

// The generator refuses what OLM cannot express instead of dropping it.
func TestInstallStrategyRefuses(t *testing.T) {
	deploy := &appsv1.Deployment{}
	deploy.Name, deploy.Namespace = "hcp-fleet-hub", "hcp-fleet"
	deploy.Spec.Template.Spec.ServiceAccountName = "hcp-fleet-hub"
	sa := u("v1", "ServiceAccount", "hcp-fleet", "hcp-fleet-hub", nil)
	role := u("rbac.authorization.k8s.io/v1", "ClusterRole", "", "r", map[string]any{"rules": []any{}})
	binding := func(kind, ns string, subjects ...map[string]any) *unstructured.Unstructured {
		var subs []any
		for _, s := range subjects {
			subs = append(subs, s)
		}
		return u("rbac.authorization.k8s.io/v1", kind, ns, "b", map[string]any{
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
			"subjects": subs,
		})
	}
	hubSubject := map[string]any{"kind": "ServiceAccount", "name": "hcp-fleet-hub", "namespace": "hcp-fleet"}
	other := map[string]any{"kind": "Group", "name": "team-a", "apiGroup": "rbac.authorization.k8s.io"}
	var hubSA corev1.ServiceAccount
	if err := fromUnstructured(sa, &hubSA); err != nil {
		t.Fatal(err)
	}
	someone := &corev1.ServiceAccount{}
	someone.Name, someone.Namespace = "someone", "hcp-fleet"
	for name, in := range map[string]*sorted{
		"binding of the hub and a group":        {sas: []*corev1.ServiceAccount{&hubSA}, others: []*unstructured.Unstructured{role, binding("ClusterRoleBinding", "", hubSubject, other)}},
		"RoleBinding in another namespace":      {sas: []*corev1.ServiceAccount{&hubSA}, others: []*unstructured.Unstructured{role, binding("RoleBinding", "kube-system", hubSubject)}},
		"binding to a role not in the bundle":   {sas: []*corev1.ServiceAccount{&hubSA}, others: []*unstructured.Unstructured{binding("ClusterRoleBinding", "", hubSubject)}},
		"a ServiceAccount other than the hub's": {sas: []*corev1.ServiceAccount{&hubSA, someone}},
		"no ServiceAccount":                     {},
	} {
		if _, _, err := installStrategy(deploy, in); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The control: the hub's own binding is taken.
	ok := &sorted{sas: []*corev1.ServiceAccount{&hubSA}, others: []*unstructured.Unstructured{role, binding("ClusterRoleBinding", "", hubSubject)}}
	if _, _, err := installStrategy(deploy, ok); err != nil {
		t.Errorf("the hub's ClusterRoleBinding: %v", err)
	}
	// A side Deployment (the console's) runs without API access, or the
	// bundle does not take it.
	consoleDeploy := func(sa string, automount *bool) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.Name, d.Namespace = consoleDeploymentName, "hcp-fleet"
		d.Spec.Template.Spec.ServiceAccountName = sa
		d.Spec.Template.Spec.AutomountServiceAccountToken = automount
		return d
	}
	consoleSA := &corev1.ServiceAccount{}
	consoleSA.Name, consoleSA.Namespace = "hcp-fleet-console", "hcp-fleet"
	no, yes := false, true
	consoleSubject := map[string]any{"kind": "ServiceAccount", "name": "hcp-fleet-console", "namespace": "hcp-fleet"}
	for name, tc := range map[string]struct {
		d  *appsv1.Deployment
		in *sorted
	}{
		"the console with a token":           {consoleDeploy("hcp-fleet-console", &yes), &sorted{sas: []*corev1.ServiceAccount{consoleSA}}},
		"the console with the default token": {consoleDeploy("hcp-fleet-console", nil), &sorted{sas: []*corev1.ServiceAccount{consoleSA}}},
		"the console as default":             {consoleDeploy("default", &no), &sorted{}},
		"the console's ServiceAccount bound": {consoleDeploy("hcp-fleet-console", &no), &sorted{sas: []*corev1.ServiceAccount{consoleSA}, others: []*unstructured.Unstructured{role, binding("ClusterRoleBinding", "", consoleSubject)}}},
		"no ServiceAccount for the console":  {consoleDeploy("hcp-fleet-console", &no), &sorted{}},
	} {
		if _, err := tokenlessServiceAccounts([]*appsv1.Deployment{tc.d}, tc.in); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	in := &sorted{sas: []*corev1.ServiceAccount{consoleSA, &hubSA}}
	if perms, err := tokenlessServiceAccounts([]*appsv1.Deployment{consoleDeploy("hcp-fleet-console", &no)}, in); err != nil ||
		len(perms) != 1 || perms[0].ServiceAccountName != "hcp-fleet-console" || len(perms[0].Rules) != 0 || len(in.sas) != 1 {
		t.Errorf("the console without a token: %+v, %v; ServiceAccounts left %d, want the hub's", perms, err, len(in.sas))
	}
	if _, _, err := deploymentsWithImages([]*appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{Name: "another"}}, deploy}, testOptions()); err == nil || !strings.Contains(err.Error(), "knows only") {
		t.Errorf("an unknown Deployment: accepted")
	}
	if _, err := sortObjects([]*unstructured.Unstructured{u("batch/v1", "Job", "hcp-fleet", "j", nil)}); err == nil {
		t.Errorf("a Job: accepted, but OLM cannot install it and the admin is not told")
	}
}

func u(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		obj.Object[k] = v
	}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetNamespace(ns)
	obj.SetName(name)
	return obj
}

func unmarshalFile(files map[string][]byte, name string, into any) error {
	return yaml.Unmarshal(files[filepath.Join(BundleDir, "manifests", name)], into)
}

// The native APIs the CSV requires are served by the OCM hub CRDs the local
// fleet installs (open-cluster-management.io/api as pinned; a real hub's
// ClusterManager installs the same), so OLM does not wait for an API the
// hub never has.
func TestNativeAPIsServedByOCM(t *testing.T) {
	served := map[metav1.GroupVersionKind]bool{}
	paths, err := filepath.Glob(filepath.Join(root, "internal/localfleet/crds/hub/*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("OCM hub CRDs: %v (%d files)", err, len(paths))
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				served[metav1.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = true
			}
		}
	}
	for _, api := range nativeAPIs {
		if !served[api] {
			t.Errorf("native API %v is not served by OCM's hub CRDs", api)
		}
	}
}
