//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/hcp-fleet/hcp-fleet/internal/promrules"
)

// scraperNamespace holds the test's scraper ServiceAccounts on each cluster.
const scraperNamespace = "default"

// serviceAccountToken creates the ServiceAccount name (admin) and returns a
// token of it from the API server's TokenRequest, as a projected token a
// Prometheus pod would hold.
func serviceAccountToken(t *testing.T, kc kubernetes.Interface, name string) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: scraperNamespace}}
	if _, err := kc.CoreV1().ServiceAccounts(scraperNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.CoreV1().ServiceAccounts(scraperNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	tr, err := kc.CoreV1().ServiceAccounts(scraperNamespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// metricsToken is a token of a ServiceAccount bound (ClusterRoleBinding) to
// the metrics-reader ClusterRole role on the cluster of admin.
func metricsToken(t *testing.T, admin *rest.Config, role string) string {
	t.Helper()
	kc := kubernetes.NewForConfigOrDie(admin)
	name := "metrics-scraper"
	token := serviceAccountToken(t, kc, name)
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-" + role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: scraperNamespace}},
	}
	if _, err := kc.RbacV1().ClusterRoleBindings().Create(context.Background(), crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
	return token
}

// checkRefused: who's /metrics refuses a request without a token (401), with
// a malformed token (500: the API server's TokenReview reports an error for
// it, and controller-runtime's filter answers an authenticator error so)
// and with a valid token of a ServiceAccount bound to nothing (403); no
// answer carries a metric.
func checkRefused(t *testing.T, who string, admin *rest.Config) {
	t.Helper()
	stranger := serviceAccountToken(t, kubernetes.NewForConfigOrDie(admin), "metrics-stranger")
	for _, c := range []struct {
		what, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a malformed token", "not-a-token-of-this-cluster", http.StatusInternalServerError},
		{"an unbound ServiceAccount's token", stranger, http.StatusForbidden},
	} {
		// Eventually: the listener starts with the manager.
		env.Eventually(t, 30*time.Second, who+" /metrics with "+c.what, func(ctx context.Context) error {
			code, body, err := get(ctx, endpoints.get(who), c.token)
			if err != nil {
				return err
			}
			if code != c.want || strings.Contains(string(body), "hcpfleet_") {
				return fmt.Errorf("status %d, want %d (body %.80q)", code, c.want, body)
			}
			return nil
		})
	}
}

// checkAlertMetrics: every metric the shipped alerts and dashboard read is
// on a live scrape of the hub, so none of them queries a name that does
// not exist (an alert on an absent series never fires).
func checkAlertMetrics(families map[string]*dto.MetricFamily) error {
	alerts, err := promrules.Alerts("../../../manifests/deploy/73-prometheusrule.yaml")
	if err != nil {
		return err
	}
	queries, err := promrules.DashboardQueries("../../../manifests/observability/80-dashboard-configmap.yaml")
	if err != nil {
		return err
	}
	for _, a := range alerts {
		queries["alert "+a.Alert] = a.Expr
	}
	var missing []string
	for what, q := range queries {
		names, err := promrules.MetricNames(q)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		for _, n := range promrules.Missing(names, families) {
			missing = append(missing, what+": "+n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("not on the hub's /metrics: %s", strings.Join(missing, "; "))
	}
	return nil
}
