package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

// FuzzTranslate drives every body translator with arbitrary bytes. sel picks
// the translator (JSON document, watch event, JSON patch, protobuf, discovery,
// OpenAPI), the direction and the scope. Properties:
//
//   - never panics, and on error returns its input;
//   - a body that does not mention the source family comes back byte for byte;
//   - JSON output differs from the input only in string values, and only by
//     replacing group tokens (groups.Direction.Text of old and new agree), so
//     no key, number, structure or non-CAPI string is ever touched;
//   - round trip: for a valid input that does not mention the target family,
//     translating there and back gives the input again (semantically for JSON;
//     for protobuf the second translation reproduces the first).
func FuzzTranslate(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		for sel := 0; sel < 36; sel += 5 {
			f.Add([]byte(seed), uint8(sel))
		}
	}
	f.Add(encodePB(f, ownedSecret("cluster.x-k8s.io/v1beta2")), uint8(3))
	f.Add(encodePB(f, ownedSecret("cluster.hypershift.openshift.io/v1beta2")), uint8(3|8))

	f.Fuzz(func(t *testing.T, data []byte, sel uint8) {
		kind := sel % 6
		dir := groups.Direction((sel / 6) % 2)
		scope := Scope((sel / 12) % 3)
		orig := append([]byte{}, data...)
		switch kind {
		case 0, 1:
			checkJSONDoc(t, data, dir, scope, kind == 1)
		case 2:
			out, err := TranslateJSONPatch(data, dir, scope)
			checkCommon(t, data, orig, out, err, dir)
			if err == nil && json.Valid(data) && !mentions(data, dir.Target()) {
				back, err := TranslateJSONPatch(out, dir.Reverse(), scope)
				if err != nil {
					t.Fatalf("reverse failed: %v", err)
				}
				assertSemEq(t, back, data)
			}
		case 3:
			out, err := TranslateProtobuf(data, dir)
			checkCommon(t, data, orig, out, err, dir)
			if err == nil && !bytes.Equal(out, data) && !mentions(data, dir.Target()) {
				back, err := TranslateProtobuf(out, dir.Reverse())
				if err != nil {
					t.Fatalf("reverse failed: %v", err)
				}
				again, err := TranslateProtobuf(back, dir)
				if err != nil || !bytes.Equal(again, out) {
					t.Fatalf("protobuf round trip is not stable (err %v)", err)
				}
			}
		case 4:
			out, err := TranslateDiscovery(data, dir)
			if !bytes.Equal(data, orig) {
				t.Fatal("input modified")
			}
			if err != nil && !bytes.Equal(out, data) {
				t.Fatal("output differs on error")
			}
			if !mentions(data, groups.Standard) && !mentions(data, groups.Private) && !bytes.Equal(out, data) {
				t.Fatal("discovery without CAPI groups changed")
			}
			if err == nil && !bytes.Equal(out, data) && !json.Valid(out) {
				t.Fatal("invalid JSON out")
			}
		case 5:
			out, err := TranslateOpenAPIV3(data, dir, sel&64 != 0)
			checkCommon(t, data, orig, out, err, dir)
			if err == nil && !bytes.Equal(out, data) && !json.Valid(out) {
				t.Fatal("invalid JSON out")
			}
		}
	})
}

func mentions(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }

// checkCommon: input untouched, errors return the input, no source → no change.
func checkCommon(t *testing.T, data, orig, out []byte, err error, dir groups.Direction) {
	t.Helper()
	if !bytes.Equal(data, orig) {
		t.Fatal("input modified")
	}
	if err != nil && !bytes.Equal(out, data) {
		t.Fatal("output differs on error")
	}
	if !dir.ContainsSource(data) && !bytes.Equal(out, data) {
		t.Fatalf("body without %s changed:\n%q\n%q", dir.Source(), data, out)
	}
}

func checkJSONDoc(t *testing.T, data []byte, dir groups.Direction, scope Scope, watch bool) {
	orig := append([]byte{}, data...)
	out, res, err := translate(data, dir, scope, watch)
	checkCommon(t, data, orig, out, err, dir)
	if res.dropDoc && (dir != groups.ToStandard || !watch) {
		t.Fatal("dropped an event outside a to-standard watch")
	}
	if err != nil || !json.Valid(data) {
		return
	}
	if !res.dropDoc && !json.Valid(out) {
		t.Fatalf("invalid JSON out of valid JSON:\n%s\n%s", data, out)
	}
	if res.dropped == 0 && !res.dropDoc {
		var a, b any
		_ = json.Unmarshal(data, &a)
		_ = json.Unmarshal(out, &b)
		if err := onlyTokensChanged(a, b, dir, ""); err != nil {
			t.Fatalf("%v\nin:  %s\nout: %s", err, data, out)
		}
	}
	if scope == ScopeOther && !watch {
		dataOfNonCAPIUntouched(t, data, out, dir)
	}
	if mentions(data, dir.Target()) {
		return // not a valid input for the round trip
	}
	if res.dropped != 0 || res.dropDoc {
		t.Fatal("dropped something from an input without the standard family")
	}
	back, res2, err := translate(out, dir.Reverse(), scope, watch)
	if err != nil || res2.dropped != 0 || res2.dropDoc {
		t.Fatalf("reverse: err %v dropped %d/%v", err, res2.dropped, res2.dropDoc)
	}
	assertSemEq(t, back, data)
}

// dataOfNonCAPIUntouched: in an object that is not in a CAPI group (and is
// not a CRD, Event or Status, whose reference fields are translated by
// design), nothing outside metadata changes.
func dataOfNonCAPIUntouched(t *testing.T, data, out []byte, dir groups.Direction) {
	t.Helper()
	var a, b map[string]any
	if json.Unmarshal(data, &a) != nil || json.Unmarshal(out, &b) != nil {
		return
	}
	av, _ := a["apiVersion"].(string)
	g, _, _ := strings.Cut(av, "/")
	if !strings.Contains(av, "/") {
		g = ""
	}
	if dir.IsSource(g) || dir.Reverse().IsSource(g) {
		return
	}
	switch a["kind"] {
	case "CustomResourceDefinition", "Event", "Status":
		return
	}
	for k, v := range a {
		if k == "metadata" || k == "items" || k == "rows" || k == "apiVersion" {
			continue
		}
		if !reflect.DeepEqual(v, b[k]) {
			t.Fatalf("data %q of a non-CAPI object changed:\nin:  %s\nout: %s", k, data, out)
		}
	}
}

func assertSemEq(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("round trip output is not JSON: %v", err)
	}
	_ = json.Unmarshal(want, &w)
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("round trip differs:\nin:   %s\nback: %s", want, got)
	}
}

// onlyTokensChanged walks two decoded documents in parallel.
func onlyTokensChanged(a, b any, dir groups.Direction, path string) error {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return fmt.Errorf("%s: object shape changed", path)
		}
		for k, ae := range av {
			be, ok := bv[k]
			if !ok {
				return fmt.Errorf("%s: key %q lost", path, k)
			}
			if err := onlyTokensChanged(ae, be, dir, path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return fmt.Errorf("%s: array shape changed", path)
		}
		for i := range av {
			if err := onlyTokensChanged(av[i], bv[i], dir, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case string:
		bs, ok := b.(string)
		if !ok {
			return fmt.Errorf("%s: type changed", path)
		}
		if av == bs {
			return nil
		}
		if !strings.Contains(av, dir.Source()) {
			return fmt.Errorf("%s: %q changed to %q without a CAPI group in it", path, av, bs)
		}
		ta, _ := dir.Text(av)
		tb, _ := dir.Text(bs)
		if ta != tb {
			return fmt.Errorf("%s: %q changed to %q beyond group tokens", path, av, bs)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			return fmt.Errorf("%s: %v changed to %v", path, a, b)
		}
	}
	return nil
}

func fuzzSeeds() []string {
	return []string{
		`{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"Cluster","metadata":{"name":"c1","labels":{"cluster.x-k8s.io/cluster-name":"c1"},"ownerReferences":[{"apiVersion":"hypershift.openshift.io/v1beta1","kind":"HostedControlPlane","name":"h","uid":"1"}],"managedFields":[{"manager":"m","apiVersion":"cluster.hypershift.openshift.io/v1beta2"}]},"spec":{"infrastructureRef":{"apiGroup":"infrastructure.cluster.hypershift.openshift.io","kind":"AgentCluster","name":"c1"}}}`,
		`{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Machine","spec":{"bootstrap":{"configRef":{"apiGroup":"bootstrap.cluster.x-k8s.io","kind":"K","name":"n"}},"infrastructureRef":{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1"}}}`,
		`{"kind":"Secret","apiVersion":"v1","metadata":{"ownerReferences":[{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"Cluster"}]},"stringData":{"apiVersion":"cluster.hypershift.openshift.io/v1beta2"}}`,
		`{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","items":[{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"Machine"},{"metadata":{"managedFields":[{"apiVersion":"cluster.hypershift.openshift.io/v1beta2"}]}}],"kind":"MachineList"}`,
		`{"type":"ADDED","object":{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachineSet","spec":{"template":{"spec":{"infrastructureRef":{"apiGroup":"infrastructure.cluster.x-k8s.io"}}}}}}`,
		`{"kind":"Status","apiVersion":"v1","message":"clusters.cluster.hypershift.openshift.io \"c1\" not found","details":{"name":"c1","group":"cluster.hypershift.openshift.io","kind":"clusters","causes":[{"message":"x.cluster.hypershift.openshift.io/y"}]}}`,
		`{"kind":"Event","apiVersion":"v1","involvedObject":{"apiVersion":"cluster.x-k8s.io/v1beta2"},"related":{"apiVersion":"a.cluster.x-k8s.io/v1"}}`,
		`{"kind":"CustomResourceDefinitionList","items":[{"kind":"CustomResourceDefinition","metadata":{"name":"clusters.cluster.x-k8s.io"},"spec":{"group":"cluster.x-k8s.io"}},{"kind":"CustomResourceDefinition","metadata":{"name":"clusters.cluster.hypershift.openshift.io"},"spec":{"group":"cluster.hypershift.openshift.io"}}]}`,
		`{"kind":"Table","apiVersion":"meta.k8s.io/v1","rows":[{"cells":["c"],"object":{"kind":"PartialObjectMetadata","metadata":{"name":"machines.cluster.hypershift.openshift.io","ownerReferences":[{"apiVersion":"cluster.hypershift.openshift.io/v1beta2"}]}}}]}`,
		`[{"op":"add","path":"/metadata/ownerReferences/-","value":{"apiVersion":"cluster.x-k8s.io/v1beta2"}},{"op":"replace","path":"/spec/r/apiGroup","value":"cluster.x-k8s.io"}]`,
		`{"kind":"APIGroupList","groups":[{"name":"cluster.hypershift.openshift.io","versions":[{"groupVersion":"cluster.hypershift.openshift.io/v1beta2"}],"preferredVersion":{"groupVersion":"cluster.hypershift.openshift.io/v1beta2"}},{"name":"cluster.x-k8s.io"}]}`,
		`{"kind":"APIGroupDiscoveryList","items":[{"metadata":{"name":"ipam.cluster.hypershift.openshift.io"},"versions":[{"resources":[{"responseKind":{"group":"ipam.cluster.hypershift.openshift.io"},"subresources":[{"responseKind":{"group":"ipam.cluster.hypershift.openshift.io"}}]}]}]}]}`,
		`{"paths":{"apis/cluster.hypershift.openshift.io/v1beta2":{"serverRelativeURL":"/openapi/v3/apis/cluster.hypershift.openshift.io/v1beta2?hash=1"}}}`,
		`{"api\u0056ersion":"cluster.hypershift.openshift\u002eio/v1","spec":{"a":{"apiGroup":"cluster.hypershift.openshift.io"}}}`,
		`{"apiVersion":"cluster.x-k8s.io/v1beta2","apiVersion":"v1","spec":{"x":[1,2.5e3,true,null,{"apiGroup":"cluster.x-k8s.io"}]}}`,
		// group-name boundaries
		`{"apiVersion":"xcluster.hypershift.openshift.io/v1","spec":{"r":{"apiGroup":"a-cluster.hypershift.openshift.io"},"s":{"apiGroup":"cluster.hypershift.openshift.io.evil"}}}`,
		`{"apiVersion":"cluster.hypershift.openshift.io/v1","metadata":{"ownerReferences":[{"apiVersion":".cluster.hypershift.openshift.io/v"},{"apiVersion":"xcluster.hypershift.openshift.io/v"}]}}`,
		// non-CAPI data that looks like CAPI
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2"}]},"data":{"apiVersion":"cluster.x-k8s.io/v1beta2","apiGroup":"cluster.x-k8s.io"},"spec":{"ref":{"apiVersion":"cluster.x-k8s.io/v1beta2"}}}`,
	}
}
