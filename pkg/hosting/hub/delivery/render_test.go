package delivery

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// testUID is the UID of the test HostedClusterDeployment.
const testUID = "5f0c2d1e-7a4b-4c8e-9d3f-2b6a1e0c9f47"

func testSpec(t *testing.T) Spec {
	t.Helper()
	hcd := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"namespace": "team-a", "name": "prod", "uid": testUID},
		"spec": map[string]any{
			"hostedCluster": map[string]any{
				"labels": map[string]any{"env": "prod"},
				"spec": map[string]any{
					"release":    map[string]any{"image": "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"},
					"pullSecret": map[string]any{"name": "pull-secret"},
					"sshKey":     map[string]any{"name": "prod-ssh"},
					"configuration": map[string]any{"oauth": map[string]any{"identityProviders": []any{
						map[string]any{"name": "a", "htpasswd": map[string]any{"fileData": map[string]any{"name": "htpasswd"}}},
						map[string]any{"name": "b", "openID": map[string]any{"clientSecret": map[string]any{"name": "oidc"}, "ca": map[string]any{"name": "oidc-ca"}}},
					}}},
					"newerThanOurTypes": map[string]any{"x": int64(1)},
				},
			},
			"nodePools": []any{map[string]any{"name": "prod-workers", "spec": map[string]any{
				"clusterName": "prod", "config": []any{map[string]any{"name": "tuning"}}, "replicas": int64(2),
			}}},
		},
	}}
	s, err := SpecFrom(hcd)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestReferences(t *testing.T) {
	s := testSpec(t)
	var got []string
	for _, r := range s.References() {
		got = append(got, r.Kind+"/"+r.Name+"@"+r.Field)
	}
	want := []string{
		"ConfigMap/oidc-ca@spec.hostedCluster.spec.configuration.oauth.identityProviders[1].openID.ca.name",
		"ConfigMap/tuning@spec.nodePools[0].spec.config[0].name",
		"Secret/htpasswd@spec.hostedCluster.spec.configuration.oauth.identityProviders[0].htpasswd.fileData.name",
		"Secret/oidc@spec.hostedCluster.spec.configuration.oauth.identityProviders[1].openID.clientSecret.name",
		"Secret/prod-ssh@spec.hostedCluster.spec.sshKey.name",
		"Secret/pull-secret@spec.hostedCluster.spec.pullSecret.name",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("references:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRender(t *testing.T) {
	s := testSpec(t)
	referenced := map[string]*unstructured.Unstructured{}
	for _, r := range s.References() {
		o := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"k": "dg=="}, "type": "Opaque",
			"metadata": map[string]any{"name": r.Name, "namespace": "team-a", "labels": map[string]any{"private": "x"}}}}
		if r.Kind == KindConfigMap {
			o.Object["data"] = map[string]any{"k": "v"}
			delete(o.Object, "type")
		}
		referenced[r.Kind+"/"+r.Name] = o
	}
	work, err := Render(s, "cluster-1", referenced, "hash-1")
	if err != nil {
		t.Fatal(err)
	}
	if work.Name != hosting.WorkName("team-a", "prod") || work.Namespace != "cluster-1" || work.Annotations[AnnotationInputHash] != "hash-1" {
		t.Errorf("work meta %s/%s %v", work.Namespace, work.Name, work.Annotations)
	}
	// Without an agent namespace: the delivery executor of the default one.
	if e := work.Spec.Executor; e == nil || e.Subject.Type != workv1.ExecutorSubjectTypeServiceAccount || e.Subject.ServiceAccount == nil ||
		*e.Subject.ServiceAccount != (workv1.ManifestWorkSubjectServiceAccount{Namespace: addon.DefaultInstallNamespace, Name: addon.ExecutorDelivery}) {
		t.Errorf("executor %+v, want ServiceAccount %s/%s", e, addon.DefaultInstallNamespace, addon.ExecutorDelivery)
	}
	s.AgentNamespace = "agents"
	inAgents, err := Render(s, "cluster-1", referenced, "hash-1")
	if err != nil {
		t.Fatal(err)
	}
	if e := inAgents.Spec.Executor; e == nil || e.Subject.ServiceAccount == nil || e.Subject.ServiceAccount.Namespace != "agents" {
		t.Errorf("executor %+v, want one in the agent namespace agents", e)
	}
	byKind := map[string][]map[string]any{}
	for _, m := range work.Spec.Workload.Manifests {
		var o map[string]any
		if err := json.Unmarshal(m.Raw, &o); err != nil {
			t.Fatal(err)
		}
		byKind[o["kind"].(string)] = append(byKind[o["kind"].(string)], o)
	}
	if len(byKind["Namespace"]) != 1 || len(byKind["Secret"]) != 4 || len(byKind["ConfigMap"]) != 2 || len(byKind["HostedCluster"]) != 1 || len(byKind["NodePool"]) != 1 {
		t.Fatalf("manifests by kind: %v", byKind)
	}
	hc := &unstructured.Unstructured{Object: byKind["HostedCluster"][0]}
	for path, want := range map[string]string{
		"spec.pullSecret.name": CopyName("team-a", "prod", testUID, KindSecret, "pull-secret"),
		"spec.sshKey.name":     CopyName("team-a", "prod", testUID, KindSecret, "prod-ssh"),
		"metadata.namespace":   "clusters",
	} {
		if got, _, _ := unstructured.NestedString(hc.Object, strings.Split(path, ".")...); got != want {
			t.Errorf("HostedCluster %s = %q, want %q", path, got, want)
		}
	}
	idps, _, _ := unstructured.NestedSlice(hc.Object, "spec", "configuration", "oauth", "identityProviders")
	if n, _, _ := unstructured.NestedString(idps[1].(map[string]any), "openID", "ca", "name"); n != CopyName("team-a", "prod", testUID, KindConfigMap, "oidc-ca") {
		t.Errorf("identity provider CA ref %q", n)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(hc.Object, "spec", "newerThanOurTypes", "x"); !found {
		t.Error("a field newer than our types was dropped")
	}
	if hc.GetLabels()["env"] != "prod" || hc.GetLabels()[hosting.LabelHCDName] != "prod" || hc.GetLabels()[hosting.LabelHCDNamespace] != "team-a" {
		t.Errorf("HostedCluster labels %v", hc.GetLabels())
	}
	np := &unstructured.Unstructured{Object: byKind["NodePool"][0]}
	if cfg, _, _ := unstructured.NestedSlice(np.Object, "spec", "config"); cfg[0].(map[string]any)["name"] != CopyName("team-a", "prod", testUID, KindConfigMap, "tuning") {
		t.Errorf("NodePool config ref %v", cfg)
	}
	copies := map[string]bool{}
	for _, sec := range byKind["Secret"] {
		u := &unstructured.Unstructured{Object: sec}
		copies[u.GetName()] = true
		if u.GetLabels()["private"] != "" || u.GetLabels()[hosting.LabelHCDName] != "prod" || !strings.HasPrefix(u.GetName(), "prod-") {
			t.Errorf("secret copy %s labels %v", u.GetName(), u.GetLabels())
		}
	}
	for _, ref := range []string{"pull-secret", "prod-ssh", "htpasswd", "oidc"} {
		if !copies[CopyName("team-a", "prod", testUID, KindSecret, ref)] {
			t.Errorf("no copy of Secret %s among %v", ref, copies)
		}
	}
	// Every copy and the HostedCluster and NodePool are applied without
	// force: an object someone else holds fields of is not taken over.
	for _, c := range work.Spec.ManifestConfigs[1:] {
		if u := c.UpdateStrategy; u == nil || u.Type != workv1.UpdateStrategyTypeServerSideApply || u.ServerSideApply == nil ||
			u.ServerSideApply.Force || u.ServerSideApply.FieldManager != HostFieldManager(testUID) {
			t.Errorf("%s %s: update strategy %+v", c.ResourceIdentifier.Resource, c.ResourceIdentifier.Name, u)
		}
	}
	if len(work.Spec.ManifestConfigs) != len(work.Spec.Workload.Manifests) {
		t.Errorf("%d manifest configs for %d manifests", len(work.Spec.ManifestConfigs), len(work.Spec.Workload.Manifests))
	}
	// The source objects are not modified by rendering.
	if s.HostedCluster["spec"].(map[string]any)["pullSecret"].(map[string]any)["name"] != "pull-secret" {
		t.Error("Render rewrote the input spec")
	}
	if d := work.Spec.DeleteOption; d.PropagationPolicy != workv1.DeletePropagationPolicyTypeSelectivelyOrphan ||
		len(d.SelectivelyOrphan.OrphaningRules) != 1 || d.SelectivelyOrphan.OrphaningRules[0].Name != "clusters" {
		t.Errorf("delete option %+v", d)
	}
	if c := work.Spec.ManifestConfigs[0]; c.ResourceIdentifier.Resource != "namespaces" || c.UpdateStrategy.Type != workv1.UpdateStrategyTypeCreateOnly {
		t.Errorf("namespace config %+v", c)
	}
	s.DeletionPolicy = "Orphan"
	if w, _ := Render(s, "cluster-1", referenced, "h"); w.Spec.DeleteOption.PropagationPolicy != workv1.DeletePropagationPolicyTypeOrphan {
		t.Errorf("Orphan policy renders %+v", w.Spec.DeleteOption)
	}
	delete(referenced, "Secret/oidc")
	if _, err := Render(s, "cluster-1", referenced, "h"); err == nil || !strings.Contains(err.Error(), "Secret team-a/oidc") {
		t.Errorf("missing reference: %v", err)
	}
}

// TestRenderRestoredIdentity: a HostedClusterDeployment restored from a
// backup (a new metadata.uid, its hcdstatus.AnnotationIdentityUID kept)
// renders the ManifestWork it was delivered with: the same copy names,
// field manager, hosting.LabelHCDUID and infraID.
func TestRenderRestoredIdentity(t *testing.T) {
	render := func(uid string, annotations map[string]any) *workv1.ManifestWork {
		t.Helper()
		meta := map[string]any{"namespace": "team-a", "name": "prod", "uid": uid}
		if annotations != nil {
			meta["annotations"] = annotations
		}
		s, err := SpecFrom(&unstructured.Unstructured{Object: map[string]any{"metadata": meta, "spec": map[string]any{
			"hostedCluster": map[string]any{"spec": map[string]any{"pullSecret": map[string]any{"name": "pull-secret"}}}}}})
		if err != nil {
			t.Fatal(err)
		}
		referenced := map[string]*unstructured.Unstructured{"Secret/pull-secret": {Object: map[string]any{"data": map[string]any{"k": "dg=="},
			"metadata": map[string]any{"name": "pull-secret", "namespace": "team-a"}}}}
		w, err := Render(s, "cluster-1", referenced, "hash-1")
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	before := render(testUID, nil)
	restored := render("0e1d2c3b-restored", map[string]any{hcdstatus.AnnotationIdentityUID: testUID})
	b, _ := json.Marshal(before)
	r, _ := json.Marshal(restored)
	if string(b) != string(r) {
		t.Errorf("restored renders\n%s\nwant\n%s", r, b)
	}
	if WorkUID(restored) != testUID {
		t.Errorf("restored work carries UID %s, want %s", WorkUID(restored), testUID)
	}
	if string(render("0e1d2c3b-restored", nil).Spec.Workload.Manifests[1].Raw) == string(before.Spec.Workload.Manifests[1].Raw) {
		t.Error("without the annotation, the restored deployment renders the same manifests")
	}
}

func TestInputHash(t *testing.T) {
	s := testSpec(t)
	a, _ := InputHash(s, "c1", map[string]string{"Secret/pull-secret": "1"})
	b, _ := InputHash(s, "c1", map[string]string{"Secret/pull-secret": "1"})
	c, _ := InputHash(s, "c1", map[string]string{"Secret/pull-secret": "2"})
	d, _ := InputHash(s, "c2", map[string]string{"Secret/pull-secret": "1"})
	if a != b || a == c || a == d {
		t.Errorf("hash: same input %v, changed secret %v, changed cluster %v", a == b, a != c, a != d)
	}
}

func TestCopyName(t *testing.T) {
	const uid, other = testUID, "0a9e8d7c-6b5a-4f3e-8d2c-1b0a9f8e7d6c"
	// Pairs that the old "<hcd>-<ref>" naming sent to the same object, and
	// the same HCD name recreated (a new UID): its copy names cannot be
	// known before it exists.
	for _, pair := range [][2][5]string{
		{{"team-a", "a", uid, KindSecret, "b-c"}, {"team-a", "a-b", uid, KindSecret, "c"}},
		{{"team-a", "prod", uid, KindSecret, "pull-secret"}, {"team-b", "prod", uid, KindSecret, "pull-secret"}},
		{{"team-a", "prod", uid, KindSecret, "ssh"}, {"team-a", "prod", uid, KindSecret, "prod-ssh"}},
		{{"team-a", "prod", uid, KindSecret, "ca"}, {"team-a", "prod", uid, KindConfigMap, "ca"}},
		{{"team-a", "prod", uid, KindSecret, "x"}, {"team", "a-prod", uid, KindSecret, "x"}},
		{{"team-a", "prod", uid, KindSecret, "pull-secret"}, {"team-a", "prod", other, KindSecret, "pull-secret"}},
		{{"team-a", "prod", uid, KindSecret, "pull-secret"}, {"team-a", "prod", "", KindSecret, "pull-secret"}},
	} {
		a, b := pair[0], pair[1]
		na, nb := CopyName(a[0], a[1], types.UID(a[2]), a[3], a[4]), CopyName(b[0], b[1], types.UID(b[2]), b[3], b[4])
		if na == nb {
			t.Errorf("%v and %v share the copy name %s", a, b, na)
		}
	}
	long := strings.Repeat("r", 240) + "." + strings.Repeat("s", 12)
	for _, in := range [][4]string{
		{"team-a", "prod", KindSecret, "pull-secret"},
		{"team-a", "prod", KindSecret, "prod-ssh"},
		{"team-a", "prod", KindConfigMap, "trust.bundle"},
		{"team-a", "prod", KindSecret, long},
		{"team-a", "prod", KindSecret, strings.Repeat("r", 235) + ".s"},
		{"team-a", "prod", KindSecret, strings.Repeat("r", 234) + "-s"},
	} {
		name := CopyName(in[0], in[1], uid, in[2], in[3])
		if again := CopyName(in[0], in[1], uid, in[2], in[3]); again != name {
			t.Errorf("%v: not deterministic: %s then %s", in, name, again)
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("%v: %q is not a valid object name: %v", in, name, errs)
		}
		if !strings.HasPrefix(name, "prod-") {
			t.Errorf("%v: %q lost its readable prefix", in, name)
		}
	}
	if got := CopyName("team-a", "prod", testUID, KindSecret, "pull-secret"); !strings.HasPrefix(got, "prod-pull-secret-") || len(got) != len("prod-pull-secret-")+copyHashLength {
		t.Errorf("readable copy name %q", got)
	}
	if got := CopyName("team-a", "prod", testUID, KindSecret, "prod-ssh"); !strings.HasPrefix(got, "prod-ssh-") || strings.HasPrefix(got, "prod-prod-") {
		t.Errorf("a reference already prefixed with the HCD's name is not prefixed again: %q", got)
	}
	// Cut long names still differ by the hash of the whole tuple.
	if a, b := CopyName("team-a", "prod", testUID, KindSecret, long+"a"), CopyName("team-a", "prod", testUID, KindSecret, long+"b"); a == b {
		t.Errorf("long names collide: %s", a)
	}
}

// TestRenderFleetAnnotations: the fleet's annotations reach the
// HostedCluster (never its NodePools), the HCD's own keys win, and they
// count in the input hash only when there are any, so ManifestWorks without
// a fleet policy are not rewritten.
func TestRenderFleetAnnotations(t *testing.T) {
	s := testSpec(t)
	s.Annotations, _ = ParseAnnotationPolicy("hypershift.openshift.io/olm-catalogs-is-registry-overrides")
	s.HostedCluster["annotations"] = map[string]any{"hypershift.openshift.io/olm-catalogs-is-registry-overrides": "own=mine"}
	s.NodePools[0]["spec"].(map[string]any)["config"] = nil
	delete(s.HostedCluster["spec"].(map[string]any), "configuration")
	referenced := map[string]*unstructured.Unstructured{}
	for _, r := range s.References() {
		referenced[r.Kind+"/"+r.Name] = &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{}}}
	}
	before, _ := InputHash(s, "c1", nil)
	s.FleetAnnotations = map[string]string{
		"hypershift.openshift.io/olm-catalogs-is-registry-overrides": "fleet=mirror",
		"hypershift.openshift.io/redhat-operators-catalog-image":     "r@sha256:1",
	}
	after, _ := InputHash(s, "c1", nil)
	if before == after {
		t.Error("the fleet's annotations do not change the input hash")
	}
	s.FleetAnnotations = map[string]string{}
	if empty, _ := InputHash(s, "c1", nil); empty != before {
		t.Error("no fleet annotations hash differently from none at all: every ManifestWork would be rewritten")
	}
	s.FleetAnnotations = map[string]string{
		"hypershift.openshift.io/olm-catalogs-is-registry-overrides": "fleet=mirror",
		"hypershift.openshift.io/redhat-operators-catalog-image":     "r@sha256:1",
	}
	work, err := Render(s, "c1", referenced, after)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range work.Spec.Workload.Manifests {
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(m.Raw); err != nil {
			t.Fatal(err)
		}
		a := o.GetAnnotations()
		switch o.GetKind() {
		case "HostedCluster":
			if a["hypershift.openshift.io/olm-catalogs-is-registry-overrides"] != "own=mine" {
				t.Errorf("the HCD's own annotation lost to the fleet's: %v", a)
			}
			if a["hypershift.openshift.io/redhat-operators-catalog-image"] != "r@sha256:1" {
				t.Errorf("the fleet's annotation is missing: %v", a)
			}
		case "NodePool":
			if len(a) != 0 {
				t.Errorf("NodePool annotations %v", a)
			}
		}
	}
}
