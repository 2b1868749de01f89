package delivery

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/delivery/refschema"
)

// classificationProblems compares the reference-shaped fields found in a
// type with a classification table: every found path must be classified,
// every classified path must still exist, and a NotLocal class must say why
// (and only it).
func classificationProblems(found []refschema.Field, table map[string]classification) []string {
	var problems []string
	seen := map[string]bool{}
	for _, f := range found {
		seen[f.Path] = true
		if _, ok := table[f.Path]; !ok {
			problems = append(problems, fmt.Sprintf("%s (%s) is not classified", f.Path, f.Type))
		}
	}
	for p, c := range table {
		if !seen[p] {
			problems = append(problems, fmt.Sprintf("%s is classified but not a reference-shaped field", p))
		}
		switch {
		case c.class != ClassSecret && c.class != ClassConfigMap && c.class != ClassNotLocal:
			problems = append(problems, fmt.Sprintf("%s: unknown class %q", p, c.class))
		case (c.class == ClassNotLocal) != (c.why != ""):
			problems = append(problems, fmt.Sprintf("%s: %s with reason %q", p, c.class, c.why))
		}
	}
	sort.Strings(problems)
	return problems
}

// TestGeneratedReferencesUpToDate fails when zz_generated.references.go
// is stale: run `make generate`.
func TestGeneratedReferencesUpToDate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		t         reflect.Type
		generated []refschema.Field
	}{
		{"HostedClusterSpec", reflect.TypeFor[hyperv1.HostedClusterSpec](), generatedHostedClusterReferences},
		{"NodePoolSpec", reflect.TypeFor[hyperv1.NodePoolSpec](), generatedNodePoolReferences},
	} {
		if found := refschema.Find(tc.t); !slices.Equal(found, tc.generated) {
			t.Errorf("%s: zz_generated.references.go is stale, run `make generate`:\nfound     %v\ngenerated %v", tc.name, found, tc.generated)
		}
	}
}

// TestReferencesClassified fails when a reference-shaped field of the
// pinned HyperShift types is not classified in references.go (a HyperShift
// bump added one: decide its class), or a classified one is gone.
func TestReferencesClassified(t *testing.T) {
	for _, p := range classificationProblems(generatedHostedClusterReferences, hostedClusterClasses) {
		t.Errorf("HostedClusterSpec: %s", p)
	}
	for _, p := range classificationProblems(generatedNodePoolReferences, nodePoolClasses) {
		t.Errorf("NodePoolSpec: %s", p)
	}
}

// newerHostedClusterSpec stands for a HyperShift that added a reference.
type newerHostedClusterSpec struct {
	hyperv1.HostedClusterSpec `json:",inline"`
	Platform                  struct {
		hyperv1.PlatformSpec `json:",inline"`
		NewCloud             struct {
			Credentials corev1.LocalObjectReference `json:"credentials"`
		} `json:"newCloud"`
	} `json:"platform"`
	Webhooks []struct {
		CA corev1.ConfigMapKeySelector `json:"ca"`
	} `json:"webhooks"`
}

// TestClassificationCheckFindsNewReferences: the check above, run on a
// newer HyperShift's type, names each new field; on a table with a field
// HyperShift dropped, names that.
func TestClassificationCheckFindsNewReferences(t *testing.T) {
	got := classificationProblems(refschema.Find(reflect.TypeFor[newerHostedClusterSpec]()), hostedClusterClasses)
	want := []string{
		"platform.newCloud.credentials (k8s.io/api/core/v1.LocalObjectReference) is not classified",
		"webhooks[].ca (k8s.io/api/core/v1.ConfigMapKeySelector) is not classified",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	gone := map[string]classification{"retired.secret": secret, "pullSecret": notLocal("")}
	got = classificationProblems([]refschema.Field{{Path: "pullSecret"}}, gone)
	want = []string{
		`pullSecret: NotLocal with reason ""`,
		"retired.secret is classified but not a reference-shaped field",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// put sets the reference object ref at path in spec, creating the objects
// and lists on the way (one item each).
func put(spec map[string]any, path string, ref map[string]any) {
	var cur any = spec
	steps := splitPath(path)
	for i, step := range steps {
		var next any = map[string]any{}
		if i == len(steps)-1 {
			next = ref
		} else if steps[i+1] == refschema.ListStep {
			next = []any{}
		}
		switch c := cur.(type) {
		case map[string]any:
			if step == refschema.MapStep {
				step = "k"
			}
			if _, ok := c[step]; !ok {
				c[step] = next
			}
			cur = c[step]
		case []any:
			if len(c) == 0 {
				c = append(c, next)
				// Put the grown list back into its parent.
				setLast(spec, steps[:i], c)
			}
			cur = c[0]
		}
	}
}

// setLast replaces the value at steps (no list steps after the last field)
// in spec.
func setLast(spec map[string]any, steps []string, v any) {
	var cur any = spec
	for i, step := range steps {
		switch c := cur.(type) {
		case map[string]any:
			if step == refschema.MapStep {
				step = "k"
			}
			if i == len(steps)-1 {
				c[step] = v
				return
			}
			cur = c[step]
		case []any:
			if i == len(steps)-1 {
				c[0] = v
				return
			}
			cur = c[0]
		}
	}
}

// renderedSpecs renders s and returns the delivered HostedCluster's and
// first NodePool's specs and the names of the copies by kind.
func renderedSpecs(t *testing.T, s Spec, referenced map[string]*unstructured.Unstructured) (hc, np map[string]any, copies map[string]string) {
	t.Helper()
	work, err := Render(s, "c1", referenced, "h")
	if err != nil {
		t.Fatal(err)
	}
	copies = map[string]string{}
	for _, m := range work.Spec.Workload.Manifests {
		var o map[string]any
		if err := json.Unmarshal(m.Raw, &o); err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: o}
		switch u.GetKind() {
		case "HostedCluster":
			hc, _ = o["spec"].(map[string]any)
		case "NodePool":
			np, _ = o["spec"].(map[string]any)
		case KindSecret, KindConfigMap:
			copies[u.GetName()] = u.GetKind()
		}
	}
	return hc, np, copies
}

// TestEveryClassifiedReference: each Secret or ConfigMap reference of the
// table is listed by References with its kind and field, delivered as a
// renamed copy and pointed at it; each NotLocal one passes through.
func TestEveryClassifiedReference(t *testing.T) {
	for _, tc := range []struct {
		kind  SpecKind
		table map[string]classification
	}{{KindHostedCluster, hostedClusterClasses}, {KindNodePool, nodePoolClasses}} {
		for path, c := range tc.table {
			t.Run(string(tc.kind)+"/"+path, func(t *testing.T) {
				spec := map[string]any{}
				put(spec, path, map[string]any{"name": "ref"})
				s := Spec{Namespace: "team-a", Name: "prod", UID: testUID, HostingNamespace: "clusters",
					HostedCluster: map[string]any{"spec": map[string]any{}}}
				field := "spec.hostedCluster.spec."
				if tc.kind == KindHostedCluster {
					s.HostedCluster["spec"] = spec
				} else {
					s.NodePools = []map[string]any{{"name": "workers", "spec": spec}}
					field = "spec.nodePools[0].spec."
				}
				field += strings.NewReplacer("[]", "[0]", "{}", "[k]").Replace(path) + ".name"
				refs := s.References()
				referenced := map[string]*unstructured.Unstructured{}
				for _, r := range refs {
					referenced[r.Kind+"/"+r.Name] = &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"k": "v"}}}
				}
				hc, np, copies := renderedSpecs(t, s, referenced)
				delivered := hc
				if tc.kind == KindNodePool {
					delivered = np
				}
				var name string
				walk(delivered, splitPath(path), "", func(_ string, ref map[string]any) { name, _ = ref["name"].(string) })

				if c.class == ClassNotLocal {
					if len(refs) != 0 || name != "ref" || len(copies) != 0 {
						t.Errorf("NotLocal: references %v, delivered name %q, copies %v", refs, name, copies)
					}
					return
				}
				want := Reference{Kind: string(c.class), Name: "ref", Field: field}
				if len(refs) != 1 || refs[0] != want {
					t.Errorf("References() = %+v, want %+v", refs, want)
				}
				copyName := CopyName("team-a", "prod", testUID, string(c.class), "ref")
				if name != copyName || copies[copyName] != string(c.class) {
					t.Errorf("delivered name %q, want the copy %s; copies %v", name, copyName, copies)
				}
				if got := UnknownReferences(spec, tc.kind); len(got) != 0 {
					t.Errorf("UnknownReferences = %v", got)
				}
			})
		}
	}
}

// TestNewlyCopiedReferences: references the hand-kept list had missed, and
// which passed through to the shared hosting namespace, are now copied.
func TestNewlyCopiedReferences(t *testing.T) {
	for path, kind := range map[string]string{
		"etcd.unmanaged.tls.clientSecret":                                                KindSecret,
		"configuration.apiServer.clientCA":                                               KindConfigMap,
		"configuration.authentication.oauthMetadata":                                     KindConfigMap,
		"configuration.authentication.oidcProviders[].issuer.issuerCertificateAuthority": KindConfigMap,
		"configuration.authentication.oidcProviders[].oidcClients[].clientSecret":        KindSecret,
		"configuration.authentication.webhookTokenAuthenticator.kubeConfig":              KindSecret,
		"configuration.authentication.webhookTokenAuthenticators[].kubeConfig":           KindSecret,
		"configuration.ingress.componentRoutes[].servingCertKeyPairSecret":               KindSecret,
		"configuration.scheduler.policy":                                                 KindConfigMap,
		"platform.openstack.identityRef":                                                 KindSecret,
		"platform.powervs.kubeCloudControllerCreds":                                      KindSecret,
		"platform.powervs.nodePoolManagementCreds":                                       KindSecret,
		"platform.powervs.ingressOperatorCloudCreds":                                     KindSecret,
		"platform.powervs.storageOperatorCloudCreds":                                     KindSecret,
		"platform.powervs.imageRegistryOperatorCloudCreds":                               KindSecret,
		"secretEncryption.kms.ibmcloud.auth.unmanaged.credentials":                       KindSecret,
	} {
		spec := map[string]any{}
		put(spec, path, map[string]any{"name": "tenant-ref", "cloudName": "openstack"})
		s := Spec{Namespace: "team-a", Name: "prod", UID: testUID, HostingNamespace: "clusters", HostedCluster: map[string]any{"spec": spec}}
		refs := s.References()
		if len(refs) != 1 || refs[0].Kind != kind || refs[0].Name != "tenant-ref" {
			t.Errorf("%s: references %+v, want %s tenant-ref", path, refs, kind)
			continue
		}
		hc, _, _ := renderedSpecs(t, s, map[string]*unstructured.Unstructured{kind + "/tenant-ref": {Object: map[string]any{}}})
		walk(hc, splitPath(path), "", func(_ string, ref map[string]any) {
			if ref["name"] != CopyName("team-a", "prod", testUID, kind, "tenant-ref") || ref["cloudName"] != "openstack" {
				t.Errorf("%s: delivered %v", path, ref)
			}
		})
	}
}

// TestReferenceNamespace: a namespace on a copied reference is reported by
// UnknownReferences and, delivered anyway, points at the copy's namespace.
func TestReferenceNamespace(t *testing.T) {
	spec := map[string]any{"pullSecret": map[string]any{"name": "pull", "namespace": "other-tenant"}}
	if got := UnknownReferences(spec, KindHostedCluster); !slices.Equal(got, []string{"pullSecret.namespace"}) {
		t.Errorf("UnknownReferences = %v", got)
	}
	s := Spec{Namespace: "team-a", Name: "prod", UID: testUID, HostingNamespace: "clusters", HostedCluster: map[string]any{"spec": spec}}
	hc, _, _ := renderedSpecs(t, s, map[string]*unstructured.Unstructured{"Secret/pull": {Object: map[string]any{}}})
	if got := hc["pullSecret"]; !reflect.DeepEqual(got, map[string]any{"name": CopyName("team-a", "prod", testUID, KindSecret, "pull"), "namespace": "clusters"}) {
		t.Errorf("delivered pullSecret %v", got)
	}
}

func TestRenderNeedsUID(t *testing.T) {
	s := testSpec(t)
	s.UID = ""
	if _, err := Render(s, "c1", nil, "h"); err == nil || !strings.Contains(err.Error(), "no UID") {
		t.Errorf("Render without a UID: %v", err)
	}
}
