package consoleapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
)

func imageSet(name, image string) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"releaseImage": image}}}
	u.SetName(name)
	return u
}

// The form is offered only the releases the policy lets the namespace
// run, newest first; a policy that allows nothing offers no release.
func TestCreateOptions(t *testing.T) {
	sets := []unstructured.Unstructured{
		imageSet("img4.18.5-multi-appsub", "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"),
		imageSet("img4.19.2-multi-appsub", "quay.io/openshift-release-dev/ocp-release:4.19.2-multi"),
		imageSet("elsewhere", "registry.example.com/ocp-release:4.19.3-multi"),
		imageSet("custom", "quay.io/openshift-release-dev/ocp-release@sha256:0123"),
		imageSet("empty", ""),
	}
	got := createOptions(tenancy.Builtin(), sets, "")
	want := []Release{
		{Name: "img4.19.2-multi-appsub", Image: "quay.io/openshift-release-dev/ocp-release:4.19.2-multi", Version: "4.19.2"},
		{Name: "img4.18.5-multi-appsub", Image: "quay.io/openshift-release-dev/ocp-release:4.18.5-multi", Version: "4.18.5"},
		{Name: "custom", Image: "quay.io/openshift-release-dev/ocp-release@sha256:0123"},
	}
	if !reflect.DeepEqual(got.Releases, want) {
		t.Errorf("releases %+v, want %+v", got.Releases, want)
	}
	if got.Policy != "the built-in default tenant policy" || len(got.Platforms) != 2 {
		t.Errorf("offer %+v", got.Offer)
	}
	digest, err := tenancy.Compile("TenantPolicy digests", v1alpha1.TenantPolicySpec{
		ReleaseImages: &v1alpha1.ReleaseImagePolicy{Repositories: []string{tenancy.DefaultReleaseRepository}, RequireDigest: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got := createOptions(digest, sets, ""); len(got.Releases) != 1 || got.Releases[0].Name != "custom" {
		t.Errorf("digests only: %+v", got.Releases)
	}
	broken, _ := tenancy.Compile("TenantPolicy broken", v1alpha1.TenantPolicySpec{Fields: v1alpha1.TenantFields{HostedCluster: []string{"etcd.*"}}})
	if got := createOptions(broken, sets, ""); len(got.Releases) != 0 || got.Refused == "" {
		t.Errorf("a policy allowing nothing offers %+v", got)
	}
	// The JSON the form reads: the offer inline, releases always a list.
	b, err := json.Marshal(createOptions(broken, nil, "the hub could not list ClusterImageSets"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"policy":"TenantPolicy broken"`, `"refused":`, `"releases":[]`, `"releasesUnknown":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("%s lacks %s", b, key)
		}
	}
}

// The create options are the hub's answer only for whoever may create
// deployments in the namespace: the API server is asked exactly that.
func TestCreateOptionsRefusals(t *testing.T) {
	authz := &rbac{}
	h := newHandler(tokens, authz, fake.NewClientBuilder().Build(), fleetview.HubSettings{})
	for _, tc := range []struct {
		name, method, ns, token string
		code                    int
		message                 string
	}{
		{"no token", http.MethodGet, "team-a", "", http.StatusUnauthorized, "Unauthorized"},
		{"another namespace", http.MethodGet, "team-b", "alice", http.StatusForbidden,
			`hostedclusterdeployments.hcpfleet.io is forbidden: User "alice" cannot create resource "hostedclusterdeployments" in API group "hcpfleet.io" in the namespace "team-b"`},
		{"not a namespace", http.MethodGet, "Team_A", "alice", http.StatusBadRequest, "not a namespace"},
		{"a write", http.MethodPut, "team-a", "alice", http.StatusMethodNotAllowed, "put is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			authz.asked = nil
			req := httptest.NewRequest(tc.method, "/api/v1/namespaces/"+tc.ns+"/createoptions", nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			var s metav1.Status
			if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil {
				t.Fatalf("%d %v: %s", w.Code, err, w.Body)
			}
			if w.Code != tc.code || !strings.Contains(s.Message, tc.message) {
				t.Errorf("%d %q, want %d %q", w.Code, s.Message, tc.code, tc.message)
			}
			for _, a := range authz.asked {
				if a.GetVerb() != "create" || a.GetResource() != "hostedclusterdeployments" || a.GetName() != "" || a.GetNamespace() != tc.ns {
					t.Errorf("asked %+v: want create hostedclusterdeployments in %s", a, tc.ns)
				}
			}
			if tc.code == http.StatusForbidden && len(authz.asked) != 1 {
				t.Errorf("authorizer asked %d times, want once", len(authz.asked))
			}
		})
	}
}
