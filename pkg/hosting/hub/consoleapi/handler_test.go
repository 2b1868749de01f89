package consoleapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
)

// tokens: the bearer token is the user's name; "" and "bad" are not
// tokens.
var tokens = authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" || tok == "bad" {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: tok}}, true, nil
})

// rbac: alice may get deployments in team-a only; it records what it was
// asked.
type rbac struct{ asked []authorizer.Attributes }

func (a *rbac) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	a.asked = append(a.asked, attrs)
	if attrs.GetUser().GetName() == "alice" && attrs.GetNamespace() == "team-a" {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// The endpoint's refusals, before and after the API server's word; the
// explanation itself is TestConsoleAPI's (pkg/cmd/kubectlhcpfleet, on a
// local fleet).
func TestRefusals(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	authz := &rbac{}
	h := newHandler(tokens, authz, fake.NewClientBuilder().WithScheme(scheme).Build(), fleetview.HubSettings{})
	path := func(ns, name string) string {
		return "/api/v1/namespaces/" + ns + "/hostedclusterdeployments/" + name + "/explanation"
	}
	for _, tc := range []struct {
		name, method, path, token string
		code                      int
		reason                    metav1.StatusReason
		message                   string
		// asked: the authorizer was asked (a SubjectAccessReview).
		asked bool
	}{
		{"no token", http.MethodGet, path("team-a", "one"), "", http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized", false},
		{"not a token", http.MethodGet, path("team-a", "one"), "bad", http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized", false},
		{"another namespace", http.MethodGet, path("team-b", "one"), "alice", http.StatusForbidden, metav1.StatusReasonForbidden,
			`hostedclusterdeployments.hcpfleet.io "one" is forbidden: User "alice" cannot get resource "hostedclusterdeployments" in API group "hcpfleet.io" in the namespace "team-b"`, true},
		{"allowed, no such deployment", http.MethodGet, path("team-a", "one"), "alice", http.StatusNotFound, metav1.StatusReasonNotFound, `"one" not found`, true},
		{"not a namespace", http.MethodGet, path("Team_A", "one"), "alice", http.StatusBadRequest, metav1.StatusReasonBadRequest, "not a namespace", false},
		{"not a name", http.MethodGet, path("team-a", "One"), "alice", http.StatusBadRequest, metav1.StatusReasonBadRequest, "not a namespace", false},
		{"a write", http.MethodPost, path("team-a", "one"), "alice", http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "post is not supported", false},
		{"another path", http.MethodGet, "/metrics", "alice", http.StatusNotFound, metav1.StatusReasonNotFound, "serves only", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			authz.asked = nil
			req := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			var s metav1.Status
			if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil {
				t.Fatalf("%d %v: %s", w.Code, err, w.Body)
			}
			if w.Code != tc.code || s.Code != int32(tc.code) || s.Reason != tc.reason || !strings.Contains(s.Message, tc.message) || s.Kind != "Status" {
				t.Errorf("%d %+v, want %d %s %q", w.Code, s, tc.code, tc.reason, tc.message)
			}
			if got := len(authz.asked) > 0; got != tc.asked {
				t.Errorf("authorizer asked %v, want %v", authz.asked, tc.asked)
			}
			for _, a := range authz.asked {
				if a.GetVerb() != "get" || a.GetAPIGroup() != "hcpfleet.io" || a.GetResource() != "hostedclusterdeployments" || a.GetName() != "one" || !a.IsResourceRequest() {
					t.Errorf("asked %+v: want get hostedclusterdeployments.hcpfleet.io one", a)
				}
			}
		})
	}
}

// More explanations at once than MaxConcurrent are answered 429, after the
// caller was authorized.
func TestBusy(t *testing.T) {
	h := newHandler(tokens, &rbac{}, fake.NewClientBuilder().Build(), fleetview.HubSettings{})
	for range MaxConcurrent {
		h.slots <- struct{}{}
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/team-a/hostedclusterdeployments/one/explanation", nil)
	req.Header.Set("Authorization", "Bearer alice")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("%d %v %s, want 429 with Retry-After", w.Code, w.Header(), w.Body)
	}
}
