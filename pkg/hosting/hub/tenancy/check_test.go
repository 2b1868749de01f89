package tenancy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// fakeFleet is a Fleet from a table.
type fakeFleet struct {
	hostnames map[string][]types.NamespacedName
	replicas  int64
}

func (f fakeFleet) HostnameOwners(h string) []types.NamespacedName { return f.hostnames[h] }
func (f fakeFleet) NodePoolReplicas(string, string) int64          { return f.replicas }

// deployment is a tenant's usual HostedClusterDeployment (as the tests'
// fleet and the README create them); mutate edits its HostedCluster spec.
func deployment(mutate ...func(hc, np map[string]any)) Deployment {
	var hc, np map[string]any
	_ = json.Unmarshal([]byte(`{
	  "release": {"image": "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"},
	  "pullSecret": {"name": "pull-secret"}, "sshKey": {"name": "ssh-key"},
	  "platform": {"type": "KubeVirt", "kubevirt": {"baseDomainPassthrough": true}},
	  "dns": {"baseDomain": "example.com"},
	  "controllerAvailabilityPolicy": "HighlyAvailable",
	  "networking": {"networkType": "OVNKubernetes", "clusterNetwork": [{"cidr": "10.132.0.0/14"}], "serviceNetwork": [{"cidr": "172.31.0.0/16"}]},
	  "etcd": {"managementType": "Managed", "managed": {"storage": {"type": "PersistentVolume", "persistentVolume": {"size": "8Gi"}}}},
	  "services": [
	    {"service": "APIServer", "servicePublishingStrategy": {"type": "NodePort", "nodePort": {"address": "10.0.0.1"}}},
	    {"service": "OAuthServer", "servicePublishingStrategy": {"type": "Route"}}
	  ]}`), &hc)
	_ = json.Unmarshal([]byte(`{"clusterName": "hc", "replicas": 2,
	  "release": {"image": "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"},
	  "management": {"upgradeType": "Replace"},
	  "platform": {"type": "KubeVirt", "kubevirt": {"compute": {"cores": 4}}}}`), &np)
	for _, m := range mutate {
		m(hc, np)
	}
	return Deployment{Namespace: "team-a", Name: "hc",
		HostedCluster: map[string]any{"labels": map[string]any{"team": "a"}, "spec": hc},
		NodePools:     []map[string]any{{"name": "hc-workers", "spec": np}}}
}

func set(path string, value any) func(hc, np map[string]any) {
	return func(hc, np map[string]any) {
		target := hc
		if p, ok := strings.CutPrefix(path, "np."); ok {
			target, path = np, p
		}
		steps := strings.Split(path, ".")
		for _, s := range steps[:len(steps)-1] {
			next, ok := target[s].(map[string]any)
			if !ok {
				next = map[string]any{}
				target[s] = next
			}
			target = next
		}
		target[steps[len(steps)-1]] = value
	}
}

func compile(t *testing.T, spec v1alpha1.TenantPolicySpec) *Policy {
	t.Helper()
	p, err := Compile("TenantPolicy test", spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheck(t *testing.T) {
	agent := v1alpha1.TenantPolicySpec{Platforms: []v1alpha1.PlatformPolicy{{Type: "Agent", AgentNamespaces: []string{"team-a-hosts"}}}}
	for _, tc := range []struct {
		name   string
		policy *Policy
		d      Deployment
		fleet  Fleet
		want   []string // substrings of the violations, in order; none: allowed
	}{
		{name: "the usual deployment", policy: Builtin(), d: deployment()},
		{name: "a list the table names whole", policy: Builtin(), d: deployment(set("np.config", []any{map[string]any{"name": "tuning"}}),
			set("imageContentSources", []any{map[string]any{"source": "quay.io", "mirrors": []any{"mirror.example.com"}}}))},
		{name: "unmanaged etcd", policy: Builtin(), d: deployment(set("etcd.unmanaged.endpoint", "https://etcd.other:2379")),
			want: []string{"spec.hostedCluster.spec.etcd.unmanaged.endpoint is not a field tenants may set"}},
		{name: "an uncopied reference", policy: Builtin(), d: deployment(set("configuration.authentication.webhookTokenAuthenticator.kubeConfig.name", "x")),
			want: []string{}}, // configuration.authentication is tenant-settable: every reference in it is copied (delivery)
		{name: "a field newer than the pinned API", policy: Builtin(), d: deployment(set("futureField.secretRef.name", "admin-kubeconfig")),
			want: []string{"spec.hostedCluster.spec.futureField.secretRef.name is not a field"}},
		{name: "infraID is the hub's", policy: Builtin(), d: deployment(set("infraID", "victim-abcde")),
			want: []string{"spec.hostedCluster.spec.infraID is not a field"}},
		{name: "issuerURL is the hub's", policy: Builtin(), d: deployment(set("issuerURL", "https://victim.example.com")),
			want: []string{"spec.hostedCluster.spec.issuerURL is not a field"}},
		{name: "control-plane node selector", policy: Builtin(), d: deployment(set("nodeSelector", map[string]any{"node-role.kubernetes.io/master": ""})),
			want: []string{"spec.hostedCluster.spec.nodeSelector.node-role.kubernetes.io/master is not a field"}},
		{name: "release from another registry", policy: Builtin(), d: deployment(set("release.image", "evil.example.com/ocp-release:4.18.5")),
			want: []string{"release image evil.example.com/ocp-release:4.18.5 is not from a repository"}},
		{name: "node pool release from another registry", policy: Builtin(), d: deployment(set("np.release.image", "evil.example.com/r:4.18.5")),
			want: []string{"spec.nodePools[0].spec.release.image: release image evil.example.com/r:4.18.5"}},
		{name: "a repository that only starts like the allowed one", policy: Builtin(),
			d:    deployment(set("release.image", "quay.io/openshift-release-dev/ocp-release-evil:4.18.5")),
			want: []string{"is not from a repository"}},
		{name: "a digest is required", policy: compile(t, v1alpha1.TenantPolicySpec{ReleaseImages: &v1alpha1.ReleaseImagePolicy{
			Repositories: []string{"quay.io/openshift-release-dev/*"}, RequireDigest: true}}), d: deployment(),
			want: []string{"referenced by tag", "referenced by tag"}},
		{name: "a cloud platform", policy: Builtin(), d: deployment(set("platform.type", "AWS"), set("np.platform.type", "AWS")),
			want: []string{"platform AWS is not one", "platform AWS is not one"}},
		{name: "Agent without namespaces", policy: Builtin(), d: deployment(set("platform.type", "Agent"), set("platform.agent.agentNamespace", "team-b-hosts")),
			want: []string{"Agents of namespace team-b-hosts", "platform Agent is not one", "names no namespace"}},
		{name: "Agent in another team's namespace", policy: compile(t, agent),
			d:    deployment(set("platform", map[string]any{"type": "Agent", "agent": map[string]any{"agentNamespace": "team-b-hosts"}}), set("np.platform", map[string]any{"type": "Agent"})),
			want: []string{"Agents of namespace team-b-hosts on the management cluster are not ones TenantPolicy test lets this namespace claim (team-a-hosts)"}},
		{name: "Agent in its own namespace", policy: compile(t, agent),
			d: deployment(set("platform", map[string]any{"type": "Agent", "agent": map[string]any{"agentNamespace": "team-a-hosts"}}), set("np.platform", map[string]any{"type": "Agent"}))},
		{name: "a reserved label", policy: Builtin(), d: deployment(func(hc, _ map[string]any) {}),
			want: nil},
		{name: "a route hostname without domains", policy: Builtin(), d: deployment(func(hc, _ map[string]any) {
			hc["services"].([]any)[1].(map[string]any)["servicePublishingStrategy"].(map[string]any)["route"] = map[string]any{"hostname": "oauth.victim.example.com"}
		}), want: []string{"spec.hostedCluster.spec.services[1].servicePublishingStrategy.route.hostname is not a field"}},
		{name: "a route hostname outside the domains", policy: compile(t, v1alpha1.TenantPolicySpec{Hostnames: []string{"team-a.example.com"}}),
			d: deployment(func(hc, _ map[string]any) {
				hc["services"].([]any)[1].(map[string]any)["servicePublishingStrategy"].(map[string]any)["route"] = map[string]any{"hostname": "oauth.team-b.example.com"}
			}), want: []string{"hostname oauth.team-b.example.com is not under a domain TenantPolicy test allows (team-a.example.com)"}},
		{name: "a hostname another HCD publishes", policy: compile(t, v1alpha1.TenantPolicySpec{Hostnames: []string{"example.com"}}),
			d:     deployment(set("kubeAPIServerDNSName", "API.team-a.example.com.")),
			fleet: fakeFleet{hostnames: map[string][]types.NamespacedName{"api.team-a.example.com": {{Namespace: "team-b", Name: "x"}}}},
			want:  []string{"api.team-a.example.com is published by another HostedClusterDeployment already"}},
		{name: "its own hostname", policy: compile(t, v1alpha1.TenantPolicySpec{Hostnames: []string{"example.com"}}),
			d:     deployment(set("kubeAPIServerDNSName", "api.team-a.example.com")),
			fleet: fakeFleet{hostnames: map[string][]types.NamespacedName{"api.team-a.example.com": {{Namespace: "team-a", Name: "hc"}}}}},
		{name: "node ports", policy: Builtin(), d: deployment(func(hc, _ map[string]any) {
			hc["services"].([]any)[0].(map[string]any)["servicePublishingStrategy"].(map[string]any)["nodePort"].(map[string]any)["port"] = int64(30443)
		}), want: []string{"services[0].servicePublishingStrategy.nodePort.port is not a field"}},
		{name: "replicas over the quota", policy: compile(t, v1alpha1.TenantPolicySpec{Quotas: v1alpha1.TenantQuotas{MaxNodePoolReplicas: ptr.To[int32](10)}}),
			d: deployment(set("np.autoScaling", map[string]any{"min": int64(1), "max": int64(6)})), fleet: fakeFleet{replicas: 5},
			want: []string{"11 node-pool replicas in namespace team-a with this HostedClusterDeployment's 6, above the 10"}},
		{name: "replicas within the quota", policy: compile(t, v1alpha1.TenantPolicySpec{Quotas: v1alpha1.TenantQuotas{MaxNodePoolReplicas: ptr.To[int32](10)}}),
			d: deployment(), fleet: fakeFleet{replicas: 8}},
		{name: "a trusted team sets everything", policy: compile(t, v1alpha1.TenantPolicySpec{Fields: v1alpha1.TenantFields{AllowAll: true}}),
			d: deployment(set("futureField.x", "y"), set("etcd.unmanaged.endpoint", "https://e:2379"), set("np.platform.kubevirt.nodeSelector", map[string]any{"a": "b"}))},
		{name: "a trusted team still runs allowed releases", policy: compile(t, v1alpha1.TenantPolicySpec{Fields: v1alpha1.TenantFields{AllowAll: true}}),
			d: deployment(set("controlPlaneRelease.image", "evil.example.com/cpo:1")), want: []string{"controlPlaneRelease.image: release image evil.example.com/cpo:1"}},
		{name: "a field the admin adds", policy: compile(t, v1alpha1.TenantPolicySpec{Fields: v1alpha1.TenantFields{HostedCluster: []string{"etcd.unmanaged"}}}),
			d: deployment(set("etcd.unmanaged.endpoint", "https://e:2379"))},
		{name: "two policies", policy: conflicting("team-a", []string{"a", "b"}), d: deployment(),
			want: []string{"namespace team-a is selected by more than one TenantPolicy (a, b)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.policy.Check(tc.d, tc.fleet)
			if len(got.List) != len(tc.want) {
				t.Fatalf("violations %d, want %d: %s", len(got.List), len(tc.want), got.Message())
			}
			for i, w := range tc.want {
				if !strings.Contains(got.List[i].String(), w) {
					t.Errorf("violation %d = %q, want it to contain %q", i, got.List[i], w)
				}
			}
		})
	}
}

func TestReservedLabels(t *testing.T) {
	d := deployment()
	d.HostedCluster["labels"] = map[string]any{"team": "a", "hypershift.openshift.io/hosted-cluster-size": "small", "hcpfleet.io/hcd-name": "victim"}
	d.NodePools[0]["labels"] = map[string]any{"cluster.open-cluster-management.io/clusterset": "prod"}
	got := Builtin().Check(d, nil)
	if len(got.List) != 3 {
		t.Fatalf("violations: %s", got.Message())
	}
	allowed := compile(t, v1alpha1.TenantPolicySpec{Fields: v1alpha1.TenantFields{Labels: []string{"hypershift.openshift.io/hosted-cluster-size"}}})
	if got := allowed.Check(d, nil); len(got.List) != 2 {
		t.Fatalf("with the size label allowed: %s", got.Message())
	}
}

func TestInvalidPolicyAllowsNothing(t *testing.T) {
	p, err := Compile("TenantPolicy broken", v1alpha1.TenantPolicySpec{Fields: v1alpha1.TenantFields{HostedCluster: []string{"etcd.*"}}})
	if err == nil {
		t.Fatal("a path with * compiled")
	}
	if got := p.Check(deployment(), nil); len(got.List) != 1 || !strings.Contains(got.Message(), "TenantPolicy broken is invalid") {
		t.Fatalf("got %s", got.Message())
	}
}

func TestMessageBoundsAndNamesNoValues(t *testing.T) {
	d := deployment()
	for i := range 12 {
		set("x"+string(rune('a'+i)), "secret-value")(d.HostedCluster["spec"].(map[string]any), nil)
	}
	msg := Builtin().Check(d, nil).Message()
	if !strings.Contains(msg, "and 4 more") || strings.Contains(msg, "secret-value") {
		t.Fatalf("message: %s", msg)
	}
}

func TestForced(t *testing.T) {
	p := compile(t, v1alpha1.TenantPolicySpec{Forced: v1alpha1.ForcedFields{
		HostedClusterSpec: &apiextensionsv1.JSON{Raw: []byte(`{"nodeSelector":{"pool":"team-a"},"controllerAvailabilityPolicy":"SingleReplica","networking":{"networkType":"Other"}}`)},
	}})
	spec := deployment().HostedCluster["spec"].(map[string]any)
	got := Merge(spec, p.Forced().HostedClusterSpec)
	if got["controllerAvailabilityPolicy"] != "SingleReplica" || !reflect.DeepEqual(got["nodeSelector"], map[string]any{"pool": "team-a"}) {
		t.Fatalf("forced fields not set: %v", got)
	}
	net := got["networking"].(map[string]any)
	if net["networkType"] != "Other" || net["clusterNetwork"] == nil {
		t.Fatalf("objects must merge key by key: %v", net)
	}
	if spec["controllerAvailabilityPolicy"] != "HighlyAvailable" {
		t.Fatal("Merge changed its input")
	}
}

func TestSplitImage(t *testing.T) {
	for image, want := range map[string]string{
		"quay.io/openshift-release-dev/ocp-release:4.18.5-multi":   "quay.io/openshift-release-dev/ocp-release",
		"quay.io/openshift-release-dev/ocp-release@sha256:abc":     "quay.io/openshift-release-dev/ocp-release",
		"registry.local:5000/ocp/release:4.18.5":                   "registry.local:5000/ocp/release",
		"registry.local:5000/ocp/release":                          "registry.local:5000/ocp/release",
		"registry.local:5000/ocp/release:4.18.5@sha256:0123456789": "registry.local:5000/ocp/release",
	} {
		if got, _ := splitImage(image); got != want {
			t.Errorf("splitImage(%s) = %s, want %s", image, got, want)
		}
	}
}

// TestUnknownReferencesAreRefusedEverywhere: even a policy that allows every
// field refuses a reference the hub would not copy.
func TestUnknownReferencesAreRefusedEverywhere(t *testing.T) {
	d := deployment(set("futureAuth.kubeconfig.name", "hc-admin-kubeconfig"))
	d.UnknownReferences = []string{"spec.hostedCluster.spec.futureAuth.kubeconfig"}
	got := compile(t, v1alpha1.TenantPolicySpec{Fields: v1alpha1.TenantFields{AllowAll: true}}).Check(d, nil)
	if len(got.List) != 1 || !strings.Contains(got.List[0].String(), "spec.hostedCluster.spec.futureAuth.kubeconfig: a reference the hub does not know") {
		t.Fatalf("got %s", got.Message())
	}
}

// TestSchemaDefaultsPass: what the API server fills in from HyperShift's
// schema defaults is not the tenant's choice; the same field set to another
// value is.
func TestSchemaDefaultsPass(t *testing.T) {
	d, err := loadDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if d.hostedCluster["issuerURL"] != "https://kubernetes.default.svc" {
		t.Fatalf("issuerURL default %v; defaults read: %d", d.hostedCluster["issuerURL"], len(d.hostedCluster))
	}
	if got := Builtin().Check(deployment(set("issuerURL", "https://kubernetes.default.svc")), nil); len(got.List) != 0 {
		t.Errorf("the defaulted issuerURL is refused: %s", got.Message())
	}
	if got := Builtin().Check(deployment(set("issuerURL", "https://oidc.example.com/victim")), nil); len(got.List) != 1 {
		t.Errorf("a chosen issuerURL passes: %s", got.Message())
	}
}

// TestImportOptOut: spec.import Disabled is the admin's to allow; the
// built-in policy and a policy without allowImportOptOut refuse it.
func TestImportOptOut(t *testing.T) {
	refusesImport := func(p *Policy, d Deployment) bool {
		for _, v := range p.Check(d, fakeFleet{}).List {
			if v.Field == "spec.import" {
				return true
			}
		}
		return false
	}
	optOut := deployment()
	optOut.Import = string(v1alpha1.ImportDisabled)
	enabled := deployment()
	enabled.Import = string(v1alpha1.ImportEnabled)
	allowing := compile(t, v1alpha1.TenantPolicySpec{AllowImportOptOut: true})
	for name, c := range map[string]struct {
		p       *Policy
		d       Deployment
		refused bool
	}{
		"built-in refuses the opt-out":      {Builtin(), optOut, true},
		"a policy without it refuses it":    {compile(t, v1alpha1.TenantPolicySpec{}), optOut, true},
		"a policy allowing it lets it pass": {allowing, optOut, false},
		"Enabled is everyone's":             {Builtin(), enabled, false},
		"unset is everyone's":               {Builtin(), deployment(), false},
		"allowAll alone does not allow it":  {compile(t, v1alpha1.TenantPolicySpec{Fields: v1alpha1.TenantFields{AllowAll: true}}), optOut, true},
	} {
		if got := refusesImport(c.p, c.d); got != c.refused {
			t.Errorf("%s: spec.import refused = %v", name, got)
		}
	}
	if !allowing.AllowsImportOptOut() || Builtin().AllowsImportOptOut() || conflicting("ns", []string{"a", "b"}).AllowsImportOptOut() {
		t.Error("AllowsImportOptOut: only a valid policy with allowImportOptOut allows it")
	}
}
