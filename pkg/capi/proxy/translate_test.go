package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

const (
	std  = groups.ToStandard
	priv = groups.ToPrivate
)

// jsonEq compares two JSON documents semantically.
func jsonEq(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestTranslateJSON(t *testing.T) {
	cases := []struct {
		name  string
		dir   groups.Direction
		scope Scope
		in    string
		want  string
	}{{
		name:  "CAPI object: apiVersion, refs anywhere, ownerReferences, managedFields; labels, annotations and finalizers untouched",
		dir:   std,
		scope: ScopeCAPI,
		in: `{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"Cluster","metadata":{"name":"c1",
			"labels":{"cluster.x-k8s.io/cluster-name":"c1","x":"cluster.hypershift.openshift.io/v1beta2"},
			"annotations":{"a":"AgentMachineTemplate.infrastructure.cluster.hypershift.openshift.io"},
			"finalizers":["cluster.cluster.x-k8s.io"],
			"ownerReferences":[{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"HostedControlPlane","name":"h","uid":"1"}],
			"managedFields":[{"manager":"m","operation":"Apply","apiVersion":"cluster.hypershift.openshift.io/v1beta2","fieldsV1":{"f:spec":{"f:infrastructureRef":{"f:apiGroup":{}}}}}]},
			"spec":{"infrastructureRef":{"apiGroup":"infrastructure.cluster.hypershift.openshift.io","kind":"AgentCluster","name":"c1"},
			"controlPlaneRef":{"apiGroup":"hypershift.openshift.io","kind":"HostedControlPlane","name":"h"},
			"topology":{"classRef":{"name":"x"}},
			"deep":[{"ref":{"apiVersion":"bootstrap.cluster.hypershift.openshift.io/v1beta1"}}]}}`,
		want: `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c1",
			"labels":{"cluster.x-k8s.io/cluster-name":"c1","x":"cluster.hypershift.openshift.io/v1beta2"},
			"annotations":{"a":"AgentMachineTemplate.infrastructure.cluster.hypershift.openshift.io"},
			"finalizers":["cluster.cluster.x-k8s.io"],
			"ownerReferences":[{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"HostedControlPlane","name":"h","uid":"1"}],
			"managedFields":[{"manager":"m","operation":"Apply","apiVersion":"cluster.x-k8s.io/v1beta2","fieldsV1":{"f:spec":{"f:infrastructureRef":{"f:apiGroup":{}}}}}]},
			"spec":{"infrastructureRef":{"apiGroup":"infrastructure.cluster.x-k8s.io","kind":"AgentCluster","name":"c1"},
			"controlPlaneRef":{"apiGroup":"hypershift.openshift.io","kind":"HostedControlPlane","name":"h"},
			"topology":{"classRef":{"name":"x"}},
			"deep":[{"ref":{"apiVersion":"bootstrap.cluster.x-k8s.io/v1beta1"}}]}}`,
	}, {
		name:  "non-CAPI object: only ownerReferences and managedFields, never data",
		dir:   std,
		scope: ScopeOther,
		in: `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"kubeconfig",
			"ownerReferences":[{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"Cluster","name":"c1","uid":"u","controller":true}],
			"managedFields":[{"apiVersion":"v1","manager":"m"}]},
			"stringData":{"apiVersion":"cluster.hypershift.openshift.io/v1beta2"},
			"spec":{"ref":{"apiGroup":"cluster.hypershift.openshift.io"}}}`,
		want: `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"kubeconfig",
			"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","name":"c1","uid":"u","controller":true}],
			"managedFields":[{"apiVersion":"v1","manager":"m"}]},
			"stringData":{"apiVersion":"cluster.hypershift.openshift.io/v1beta2"},
			"spec":{"ref":{"apiGroup":"cluster.hypershift.openshift.io"}}}`,
	}, {
		name:  "a non-CAPI CR holding a CAPI manifest keeps it (ManifestWork)",
		dir:   priv,
		scope: ScopeOther,
		in:    `{"apiVersion":"work.open-cluster-management.io/v1","kind":"ManifestWork","spec":{"workload":{"manifests":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster"}]}}}`,
		want:  `{"apiVersion":"work.open-cluster-management.io/v1","kind":"ManifestWork","spec":{"workload":{"manifests":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster"}]}}}`,
	}, {
		name:  "list of CAPI objects (items are roots, list apiVersion too)",
		dir:   std,
		scope: ScopeCAPI,
		in:    `{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","items":[{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"Machine","spec":{"bootstrap":{"configRef":{"apiGroup":"bootstrap.cluster.hypershift.openshift.io"}}}},{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"Machine"}],"kind":"MachineList","metadata":{"resourceVersion":"5"}}`,
		want:  `{"apiVersion":"cluster.x-k8s.io/v1beta2","items":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Machine","spec":{"bootstrap":{"configRef":{"apiGroup":"bootstrap.cluster.x-k8s.io"}}}},{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Machine"}],"kind":"MachineList","metadata":{"resourceVersion":"5"}}`,
	}, {
		name:  "list of built-ins: items without apiVersion keep their data",
		dir:   std,
		scope: ScopeOther,
		in:    `{"kind":"SecretList","apiVersion":"v1","items":[{"metadata":{"ownerReferences":[{"apiVersion":"cluster.hypershift.openshift.io/v1beta2"}]},"data":{"apiVersion":"cluster.hypershift.openshift.io/v1"}}]}`,
		want:  `{"kind":"SecretList","apiVersion":"v1","items":[{"metadata":{"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2"}]},"data":{"apiVersion":"cluster.hypershift.openshift.io/v1"}}]}`,
	}, {
		name:  "merge patch without apiVersion addressed to a CAPI resource",
		dir:   priv,
		scope: ScopeCAPI,
		in:    `{"spec":{"infrastructureRef":{"apiGroup":"infrastructure.cluster.x-k8s.io"}},"metadata":{"labels":{"cluster.x-k8s.io/cluster-name":"c"}}}`,
		want:  `{"spec":{"infrastructureRef":{"apiGroup":"infrastructure.cluster.hypershift.openshift.io"}},"metadata":{"labels":{"cluster.x-k8s.io/cluster-name":"c"}}}`,
	}, {
		name:  "the same patch addressed to a non-CAPI resource is data",
		dir:   priv,
		scope: ScopeOther,
		in:    `{"spec":{"infrastructureRef":{"apiGroup":"infrastructure.cluster.x-k8s.io"}}}`,
		want:  `{"spec":{"infrastructureRef":{"apiGroup":"infrastructure.cluster.x-k8s.io"}}}`,
	}, {
		name:  "Status: details.group, message, causes",
		dir:   std,
		scope: ScopeCAPI,
		in:    `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"clusters.cluster.hypershift.openshift.io \"c1\" not found","reason":"NotFound","details":{"name":"c1","group":"cluster.hypershift.openshift.io","kind":"clusters","causes":[{"message":"Cluster.cluster.hypershift.openshift.io \"c1\" is invalid"}]},"code":404}`,
		want:  `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"clusters.cluster.x-k8s.io \"c1\" not found","reason":"NotFound","details":{"name":"c1","group":"cluster.x-k8s.io","kind":"clusters","causes":[{"message":"Cluster.cluster.x-k8s.io \"c1\" is invalid"}]},"code":404}`,
	}, {
		name:  "Event references",
		dir:   priv,
		scope: ScopeOther,
		in:    `{"kind":"Event","apiVersion":"v1","involvedObject":{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Machine"},"related":{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1"},"message":"cluster.x-k8s.io said so"}`,
		want:  `{"kind":"Event","apiVersion":"v1","involvedObject":{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"Machine"},"related":{"apiVersion":"infrastructure.cluster.hypershift.openshift.io/v1beta1"},"message":"cluster.x-k8s.io said so"}`,
	}, {
		name:  "Table rows: objects are roots",
		dir:   std,
		scope: ScopeCAPI,
		in:    `{"kind":"Table","apiVersion":"meta.k8s.io/v1","columnDefinitions":[{"name":"Name"}],"rows":[{"cells":["c1"],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"c1","managedFields":[{"apiVersion":"cluster.hypershift.openshift.io/v1beta2"}]}}}]}`,
		want:  `{"kind":"Table","apiVersion":"meta.k8s.io/v1","columnDefinitions":[{"name":"Name"}],"rows":[{"cells":["c1"],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"c1","managedFields":[{"apiVersion":"cluster.x-k8s.io/v1beta2"}]}}}]}`,
	}, {
		name:  "CRD: name and group; contract labels kept",
		dir:   std,
		scope: ScopeCRD,
		in:    `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"agentmachines.infrastructure.cluster.hypershift.openshift.io","labels":{"cluster.x-k8s.io/v1beta1":"v1beta1"}},"spec":{"group":"infrastructure.cluster.hypershift.openshift.io","names":{"plural":"agentmachines"}}}`,
		want:  `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"agentmachines.infrastructure.cluster.x-k8s.io","labels":{"cluster.x-k8s.io/v1beta1":"v1beta1"}},"spec":{"group":"infrastructure.cluster.x-k8s.io","names":{"plural":"agentmachines"}}}`,
	}, {
		name:  "CRD list: the platform's standard CRD is hidden, ours renamed",
		dir:   std,
		scope: ScopeCRD,
		in:    `{"kind":"CustomResourceDefinitionList","apiVersion":"apiextensions.k8s.io/v1","items":[{"kind":"CustomResourceDefinition","metadata":{"name":"clusters.cluster.x-k8s.io"}} , {"kind":"CustomResourceDefinition","metadata":{"name":"clusters.cluster.hypershift.openshift.io"}},{"kind":"CustomResourceDefinition","metadata":{"name":"machines.cluster.x-k8s.io"}},{"kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com"}}]}`,
		want:  `{"kind":"CustomResourceDefinitionList","apiVersion":"apiextensions.k8s.io/v1","items":[{"kind":"CustomResourceDefinition","metadata":{"name":"clusters.cluster.x-k8s.io"}},{"kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com"}}]}`,
	}, {
		name:  "escaped strings are decoded, translated and re-encoded",
		dir:   std,
		scope: ScopeCAPI,
		in:    `{"api\u0056ersion":"cluster.hypershift.openshift.io\/v1beta2","spec":{"r":{"apiGroup":"infrastructure.cluster.hypershift.openshift\u002eio"}}}`,
		want:  `{"apiVersion":"cluster.x-k8s.io/v1beta2","spec":{"r":{"apiGroup":"infrastructure.cluster.x-k8s.io"}}}`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TranslateJSON([]byte(tc.in), tc.dir, tc.scope)
			if err != nil {
				t.Fatal(err)
			}
			jsonEq(t, got, tc.want)
		})
	}
}

func TestTranslateJSONKeepsBytes(t *testing.T) {
	// Formatting, key order and numbers outside the edited strings survive.
	in := "{\n  \"kind\": \"Cluster\",\n  \"apiVersion\": \"cluster.hypershift.openshift.io/v1beta2\",\n  \"spec\": {\"n\": 1.50e+3, \"big\": 123456789012345678901234567890}\n}\n"
	got, err := TranslateJSON([]byte(in), std, ScopeCAPI)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(in, "cluster.hypershift.openshift.io", "cluster.x-k8s.io", 1)
	if string(got) != want {
		t.Fatalf("got %q want %q", got, want)
	}
	// Nothing to do: the very same slice comes back.
	plain := []byte(`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"b"}}`)
	out, err := TranslateJSON(plain, std, ScopeOther)
	if err != nil || &out[0] != &plain[0] {
		t.Fatalf("unchanged body was copied (err %v)", err)
	}
}

func TestTranslateJSONInvalid(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":}`, `{"a":"b"} x`, `[1,]`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", `01`, `-`, `{"a" "b"}`, `nul`} {
		out, err := TranslateJSON([]byte(in), std, ScopeCAPI)
		if err == nil {
			t.Errorf("%q: no error", in)
		}
		if string(out) != in {
			t.Errorf("%q: body changed on error: %q", in, out)
		}
	}
}

func TestTranslateWatchEvent(t *testing.T) {
	ev := `{"type":"ADDED","object":{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"MachineDeployment","metadata":{"name":"md"}}}`
	out, drop, err := TranslateWatchEvent([]byte(ev), std, ScopeCAPI)
	if err != nil || drop {
		t.Fatalf("drop=%v err=%v", drop, err)
	}
	jsonEq(t, out, strings.ReplaceAll(ev, "cluster.hypershift.openshift.io", "cluster.x-k8s.io"))

	bookmark := `{"type":"BOOKMARK","object":{"kind":"Cluster","apiVersion":"cluster.hypershift.openshift.io/v1beta2","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}`
	out, _, _ = TranslateWatchEvent([]byte(bookmark), std, ScopeCAPI)
	if !bytes.Contains(out, []byte(`"apiVersion":"cluster.x-k8s.io/v1beta2"`)) {
		t.Fatalf("bookmark not translated: %s", out)
	}

	foreign := `{"type":"MODIFIED","object":{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","metadata":{"name":"clusters.cluster.x-k8s.io"}}}`
	_, drop, err = TranslateWatchEvent([]byte(foreign), std, ScopeCRD)
	if err != nil || !drop {
		t.Fatalf("the platform's CRD must be dropped from the watch: drop=%v err=%v", drop, err)
	}
	ours := strings.Replace(foreign, "clusters.cluster.x-k8s.io", "clusters.cluster.hypershift.openshift.io", 1)
	out, drop, _ = TranslateWatchEvent([]byte(ours), std, ScopeCRD)
	if drop || !bytes.Contains(out, []byte(`"name":"clusters.cluster.x-k8s.io"`)) {
		t.Fatalf("our CRD must show under the standard name: drop=%v %s", drop, out)
	}

	table := `{"type":"ADDED","object":{"kind":"Table","apiVersion":"meta.k8s.io/v1","rows":[{"cells":["m"],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"ownerReferences":[{"apiVersion":"cluster.hypershift.openshift.io/v1beta2"}]}}}]}}`
	out, _, _ = TranslateWatchEvent([]byte(table), std, ScopeCAPI)
	if !bytes.Contains(out, []byte(`"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2"}]`)) {
		t.Fatalf("table watch (kubectl get -w) not translated: %s", out)
	}

	status := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","message":"too old resource version for clusters.cluster.hypershift.openshift.io","code":410}}`
	out, _, _ = TranslateWatchEvent([]byte(status), std, ScopeCAPI)
	if !bytes.Contains(out, []byte("for clusters.cluster.x-k8s.io")) {
		t.Fatalf("error event not translated: %s", out)
	}
}

func TestTranslateListDropCommas(t *testing.T) {
	item := func(n string) string {
		return `{"kind":"CustomResourceDefinition","metadata":{"name":"` + n + `"}}`
	}
	s, p, o := item("a.cluster.x-k8s.io"), item("a.cluster.hypershift.openshift.io"), item("b.example.com")
	for _, tc := range []struct{ in, want []string }{
		{[]string{s}, nil},
		{[]string{s, s}, nil},
		{[]string{s, o}, []string{o}},
		{[]string{o, s}, []string{o}},
		{[]string{o, s, p}, []string{o, item("a.cluster.x-k8s.io")}},
		{[]string{s, o, s, o, s}, []string{o, o}},
	} {
		in := `{"kind":"CustomResourceDefinitionList","items":[` + strings.Join(tc.in, " , ") + `]}`
		want := `{"kind":"CustomResourceDefinitionList","items":[` + strings.Join(tc.want, ",") + `]}`
		got, err := TranslateJSON([]byte(in), std, ScopeCRD)
		if err != nil {
			t.Fatal(err)
		}
		jsonEq(t, got, want)
	}
}

func TestTranslateJSONPatch(t *testing.T) {
	in := `[{"op":"add","path":"/metadata/ownerReferences/-","value":{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","name":"c"}},
		{"op":"replace","path":"/spec/infrastructureRef/apiGroup","value":"infrastructure.cluster.x-k8s.io"},
		{"op":"test","path":"/metadata/labels/cluster.x-k8s.io~1cluster-name","value":"c"},
		{"op":"add","path":"/data/apiVersion","value":"cluster.x-k8s.io/v1beta2"}]`
	capi, err := TranslateJSONPatch([]byte(in), priv, ScopeCAPI)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, capi, `[{"op":"add","path":"/metadata/ownerReferences/-","value":{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"Cluster","name":"c"}},
		{"op":"replace","path":"/spec/infrastructureRef/apiGroup","value":"infrastructure.cluster.hypershift.openshift.io"},
		{"op":"test","path":"/metadata/labels/cluster.x-k8s.io~1cluster-name","value":"c"},
		{"op":"add","path":"/data/apiVersion","value":"cluster.hypershift.openshift.io/v1beta2"}]`)

	// On a Secret only the ownerReference moves; its data stays.
	other, err := TranslateJSONPatch([]byte(in), priv, ScopeOther)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, other, `[{"op":"add","path":"/metadata/ownerReferences/-","value":{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"Cluster","name":"c"}},
		{"op":"replace","path":"/spec/infrastructureRef/apiGroup","value":"infrastructure.cluster.x-k8s.io"},
		{"op":"test","path":"/metadata/labels/cluster.x-k8s.io~1cluster-name","value":"c"},
		{"op":"add","path":"/data/apiVersion","value":"cluster.x-k8s.io/v1beta2"}]`)
}

func TestTranslateDiscovery(t *testing.T) {
	groupList := `{"kind":"APIGroupList","apiVersion":"v1","groups":[
		{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}},
		{"name":"cluster.x-k8s.io","versions":[{"groupVersion":"cluster.x-k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"cluster.x-k8s.io/v1beta1","version":"v1beta1"}},
		{"name":"cluster.hypershift.openshift.io","versions":[{"groupVersion":"cluster.hypershift.openshift.io/v1beta2","version":"v1beta2"}],"preferredVersion":{"groupVersion":"cluster.hypershift.openshift.io/v1beta2","version":"v1beta2"}}]}`
	out, err := TranslateDiscovery([]byte(groupList), std)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, out, `{"kind":"APIGroupList","apiVersion":"v1","groups":[
		{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}},
		{"name":"cluster.x-k8s.io","versions":[{"groupVersion":"cluster.x-k8s.io/v1beta2","version":"v1beta2"}],"preferredVersion":{"groupVersion":"cluster.x-k8s.io/v1beta2","version":"v1beta2"}}]}`)

	resList := `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"cluster.hypershift.openshift.io/v1beta2","resources":[{"name":"machinedeployments/scale","group":"autoscaling","version":"v1","kind":"Scale"},{"name":"clusters","kind":"Cluster","verbs":["get"]}]}`
	out, _ = TranslateDiscovery([]byte(resList), std)
	jsonEq(t, out, strings.Replace(resList, "cluster.hypershift.openshift.io/v1beta2", "cluster.x-k8s.io/v1beta2", 1))

	agg := `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[
		{"metadata":{"name":"cluster.x-k8s.io"},"versions":[]},
		{"metadata":{"name":"infrastructure.cluster.hypershift.openshift.io"},"versions":[{"version":"v1beta1","resources":[{"resource":"agentclusters","responseKind":{"group":"infrastructure.cluster.hypershift.openshift.io","version":"v1beta1","kind":"AgentCluster"},"subresources":[{"subresource":"status","responseKind":{"group":"infrastructure.cluster.hypershift.openshift.io","kind":"AgentCluster"}}]}]}]}]}`
	out, _ = TranslateDiscovery([]byte(agg), std)
	jsonEq(t, out, `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[
		{"metadata":{"name":"infrastructure.cluster.x-k8s.io"},"versions":[{"version":"v1beta1","resources":[{"resource":"agentclusters","responseKind":{"group":"infrastructure.cluster.x-k8s.io","version":"v1beta1","kind":"AgentCluster"},"subresources":[{"subresource":"status","responseKind":{"group":"infrastructure.cluster.x-k8s.io","kind":"AgentCluster"}}]}]}]}]}`)
}

func TestTranslateOpenAPIV3(t *testing.T) {
	index := `{"paths":{"apis/cluster.x-k8s.io/v1beta1":{"serverRelativeURL":"/openapi/v3/apis/cluster.x-k8s.io/v1beta1?hash=A"},"apis/cluster.hypershift.openshift.io/v1beta2":{"serverRelativeURL":"/openapi/v3/apis/cluster.hypershift.openshift.io/v1beta2?hash=B"},"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=C"}}}`
	out, err := TranslateOpenAPIV3([]byte(index), std, true)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, out, `{"paths":{"apis/cluster.x-k8s.io/v1beta2":{"serverRelativeURL":"/openapi/v3/apis/cluster.x-k8s.io/v1beta2?hash=B"},"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=C"}}}`)
}

func TestPlanFor(t *testing.T) {
	cases := []struct {
		method, url string
		path, query string
		scope       Scope
		resp        respKind
		watch       bool
	}{
		{"GET", "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/clusters/c1", "/apis/cluster.hypershift.openshift.io/v1beta2/namespaces/ns/clusters/c1", "", ScopeCAPI, respObject, false},
		{"GET", "/apis/infrastructure.cluster.x-k8s.io/v1beta1/agentmachines?watch=true&resourceVersion=5", "/apis/infrastructure.cluster.hypershift.openshift.io/v1beta1/agentmachines", "watch=true&resourceVersion=5", ScopeCAPI, respObject, true},
		{"GET", "/apis/cluster.x-k8s.io/v1beta2/watch/namespaces/ns/machines", "/apis/cluster.hypershift.openshift.io/v1beta2/watch/namespaces/ns/machines", "", ScopeCAPI, respObject, true},
		{"GET", "/apis", "/apis", "", ScopeOther, respDiscovery, false},
		{"GET", "/apis/cluster.x-k8s.io", "/apis/cluster.hypershift.openshift.io", "", ScopeCAPI, respDiscovery, false},
		{"GET", "/apis/cluster.x-k8s.io/v1beta2", "/apis/cluster.hypershift.openshift.io/v1beta2", "", ScopeCAPI, respDiscovery, false},
		{"GET", "/apis/cluster.hypershift.openshift.io/v1beta2/clusters", "/apis/cluster.hypershift.openshift.io/v1beta2/clusters", "", ScopeOther, respNone, false},
		{"GET", "/api/v1/namespaces/ns/secrets/s", "/api/v1/namespaces/ns/secrets/s", "", ScopeOther, respObject, false},
		{"POST", "/api/v1/namespaces/ns/events", "/api/v1/namespaces/ns/events", "", ScopeOther, respObject, false},
		{"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/agentmachines.infrastructure.cluster.x-k8s.io", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/agentmachines.infrastructure.cluster.hypershift.openshift.io", "", ScopeCRD, respObject, false},
		{"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldSelector=metadata.name%3Dclusters.cluster.x-k8s.io&watch=1", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "fieldSelector=metadata.name%3Dclusters.cluster.hypershift.openshift.io&watch=1", ScopeCRD, respObject, true},
		{"GET", "/openapi/v3/apis/cluster.x-k8s.io/v1beta2?hash=X", "/openapi/v3/apis/cluster.hypershift.openshift.io/v1beta2", "hash=X", ScopeCAPI, respOpenAPIGroup, false},
		{"GET", "/openapi/v3", "/openapi/v3", "", ScopeOther, respOpenAPIIndex, false},
		{"GET", "/version", "/version", "", ScopeOther, respNone, false},
	}
	for _, tc := range cases {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		p := planFor(tc.method, u)
		if p.path != tc.path || p.rawQuery != tc.query || p.scope != tc.scope || p.resp != tc.resp || p.watch != tc.watch {
			t.Errorf("%s %s: got %+v", tc.method, tc.url, p)
		}
	}
}

func TestJSONOnlyAccept(t *testing.T) {
	for in, want := range map[string]string{
		"":                                    "application/json",
		"application/vnd.kubernetes.protobuf": "application/json",
		"application/vnd.kubernetes.protobuf, */*":                      "*/*",
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
		"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
		"application/cbor": "application/json",
	} {
		if got := jsonOnlyAccept(in); got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}

func TestWatchTranslatorFraming(t *testing.T) {
	events := []string{
		`{"type":"ADDED","object":{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"Machine","metadata":{"name":"a","annotations":{"x":"} { \" \\ ]"}}}}`,
		"{\n  \"type\": \"MODIFIED\",\n  \"object\": {\"apiVersion\": \"cluster.hypershift.openshift.io/v1beta2\", \"kind\": \"Machine\"}\n}",
		`{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","data":{"k":"[[["}}}`,
	}
	stream := strings.Join(events, "\n") + "\n"
	want := []string{
		strings.Replace(events[0], "cluster.hypershift.openshift.io", "cluster.x-k8s.io", 1),
		strings.Replace(events[1], "cluster.hypershift.openshift.io", "cluster.x-k8s.io", 1),
		events[2],
	}
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(stream),
		"one byte": iotest.OneByteReader(strings.NewReader(stream)),
		"halves":   iotest.HalfReader(strings.NewReader(stream)),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := io.ReadAll(newWatchTranslator(io.NopCloser(r), ScopeCAPI))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != strings.Join(want, "\n")+"\n" {
				t.Fatalf("got:\n%q\nwant:\n%q", got, strings.Join(want, "\n")+"\n")
			}
		})
	}
	// one Read hands over every complete event already received, no more
	wt := newWatchTranslator(io.NopCloser(strings.NewReader(events[0]+events[2]+`{"type":"ADD`)), ScopeCAPI)
	buf := make([]byte, 1<<20)
	n, err := wt.Read(buf)
	if err != nil || strings.Count(string(buf[:n]), "\n") != 2 {
		t.Fatalf("first read: %d %v %q", n, err, buf[:n])
	}
	// the truncated tail is passed on as it came, then EOF
	n, err = wt.Read(buf)
	if err != nil || string(buf[:n]) != `{"type":"ADD` {
		t.Fatalf("tail: %q %v", buf[:n], err)
	}
	if _, err := wt.Read(buf); !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF, got %v", err)
	}
	// the platform's CRD events vanish from a CRD watch
	crdStream := `{"type":"ADDED","object":{"kind":"CustomResourceDefinition","metadata":{"name":"clusters.cluster.x-k8s.io"}}}` + "\n" +
		`{"type":"ADDED","object":{"kind":"CustomResourceDefinition","metadata":{"name":"clusters.cluster.hypershift.openshift.io"}}}` + "\n"
	got, _ := io.ReadAll(newWatchTranslator(io.NopCloser(strings.NewReader(crdStream)), ScopeCRD))
	if strings.Count(string(got), "\n") != 1 || !strings.Contains(string(got), `"name":"clusters.cluster.x-k8s.io"`) {
		t.Fatalf("CRD watch: %s", got)
	}
}
