//go:build integration

package kubectlhcpfleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/kubectlhcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/consoleapi"
)

// TestConsoleAPI serves the hub's console endpoint with the hub's own
// identity (its ServiceAccount's RBAC, as shipped) and asks it as a tenant
// (a ServiceAccount of namespace team bound to hcp-fleet:tenant there
// only, with its own token, as the console's proxy forwards the user's):
// it explains team's deployment with the same text as kubectl hcpfleet
// explain run by an admin, and without the other tenants' names; it
// refuses team-unbound's deployment as the API server words a refusal,
// and callers without a valid token.
func TestConsoleAPI(t *testing.T) {
	ctx := context.Background()
	for _, u := range []*newHCDArgs{{team, "console-bound", placed("all")}, {unbound, "console-hidden", placed("all")}} {
		if err := admin.Create(ctx, newHCD(u.namespace, u.name, u.spec)); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	env.Eventually(t, time.Minute, "console-bound bound", func(ctx context.Context) error {
		h, _, err := scheduled(ctx, team, "console-bound")
		if err == nil && h.Status.HostingCluster == "" {
			err = errors.New("not bound")
		}
		return err
	})

	hubCfg, err := hcpfleet.HubConfig(ctx, env.Fleet)
	if err != nil {
		t.Fatal(err)
	}
	hubReader, err := client.New(hubCfg, client.Options{Scheme: kubectlhcpfleet.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	h, err := consoleapi.NewHandler(hubCfg, hubReader, hubSettings)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	token := tenantToken(ctx, t)

	get := func(t *testing.T, method, path, token string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}
	path := func(ns, name string) string {
		return fmt.Sprintf("/api/v1/namespaces/%s/hostedclusterdeployments/%s/explanation", ns, name)
	}

	t.Run("tenant, own namespace", func(t *testing.T) {
		kubectl, err := kubectlhcpfleet.NewReader(env.Fleet.Hub.Config())
		if err != nil {
			t.Fatal(err)
		}
		// The same answer as an admin's kubectl hcpfleet explain: both
		// read the fleet at about the same time; a change in between (an
		// agent's report) is retried.
		env.Eventually(t, time.Minute, "the endpoint's explanation is kubectl's", func(ctx context.Context) error {
			code, body := get(t, http.MethodGet, path(team, "console-bound"), token)
			if code != http.StatusOK {
				return fmt.Errorf("%d: %s", code, body)
			}
			var got consoleapi.Explanation
			if err := json.Unmarshal(body, &got); err != nil {
				return fmt.Errorf("%w: %s", err, body)
			}
			x, err := kubectlhcpfleet.ExplainHCD(ctx, kubectl, hubSettings, team, "console-bound")
			if err != nil {
				return err
			}
			var want strings.Builder
			if err := kubectlhcpfleet.RenderExplanation(&want, x); err != nil {
				return err
			}
			if got.Text != want.String() {
				return fmt.Errorf("the endpoint says:\n%s\nkubectl says:\n%s", got.Text, want.String())
			}
			s := got.Explanation.Scheduling
			if s == nil || s.Decision.Cluster == "" || s.Decision.Cluster != got.Explanation.BoundTo || len(s.Candidates) < 2 {
				return fmt.Errorf("explanation %+v: want the decision for where it is bound, among the candidates", got.Explanation)
			}
			for _, c := range s.Candidates {
				if c.Candidate.Occupied != nil {
					return fmt.Errorf("candidate %s names what is bound to it: %v", c.Candidate.Name, c.Candidate.Occupied)
				}
			}
			if strings.Contains(string(body), "console-hidden") {
				return fmt.Errorf("the answer names another tenant's deployment: %s", body)
			}
			return nil
		})
	})

	t.Run("tenant, other namespace", func(t *testing.T) {
		code, body := get(t, http.MethodGet, path(unbound, "console-hidden"), token)
		var s metav1.Status
		if err := json.Unmarshal(body, &s); err != nil {
			t.Fatalf("%d %v: %s", code, err, body)
		}
		want := `hostedclusterdeployments.hcpfleet.io "console-hidden" is forbidden: User "system:serviceaccount:team:console-tenant" cannot get resource "hostedclusterdeployments" in API group "hcpfleet.io" in the namespace "team-unbound"`
		if code != http.StatusForbidden || s.Reason != metav1.StatusReasonForbidden || !strings.HasPrefix(s.Message, want) {
			t.Errorf("%d %s %q, want 403 %q", code, s.Reason, s.Message, want)
		}
		if strings.Contains(string(body), "cluster-1") {
			t.Errorf("the refusal tells about the fleet: %s", body)
		}
	})

	t.Run("tenant, no such deployment", func(t *testing.T) {
		if code, body := get(t, http.MethodGet, path(team, "no-such-deployment"), token); code != http.StatusNotFound {
			t.Errorf("%d %s, want 404", code, body)
		}
	})

	t.Run("unauthenticated", func(t *testing.T) {
		for name, tok := range map[string]string{"no token": "", "a token the API server does not know": "not-a-token"} {
			if code, body := get(t, http.MethodGet, path(team, "console-bound"), tok); code != http.StatusUnauthorized || strings.Contains(string(body), "cluster-1") {
				t.Errorf("%s: %d %s, want 401 and nothing else", name, code, body)
			}
		}
	})

	t.Run("not a read of a deployment", func(t *testing.T) {
		for _, tc := range []struct {
			method, path string
			code         int
		}{
			{http.MethodPost, path(team, "console-bound"), http.StatusMethodNotAllowed},
			{http.MethodGet, path("Team_A", "console-bound"), http.StatusBadRequest},
			{http.MethodGet, "/metrics", http.StatusNotFound},
			{http.MethodGet, "/api/v1/namespaces/team/hostedclusterdeployments/console-bound", http.StatusNotFound},
		} {
			if code, body := get(t, tc.method, tc.path, token); code != tc.code {
				t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, code, body, tc.code)
			}
		}
	})
}

type newHCDArgs struct {
	namespace, name string
	spec            func(map[string]any)
}

// tenantToken is a token of ServiceAccount team/console-tenant, bound to
// hcp-fleet:tenant in team only.
func tenantToken(ctx context.Context, t *testing.T) string {
	t.Helper()
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "console-tenant"}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "console-tenant"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hcp-fleet:tenant"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: team, Name: "console-tenant"}}},
	}
	for _, o := range objs {
		if err := admin.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	kube, err := kubernetes.NewForConfig(env.Fleet.Hub.Config())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := kube.CoreV1().ServiceAccounts(team).CreateToken(ctx, "console-tenant", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}
