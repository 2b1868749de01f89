package hub

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

func TestCatalogsCondition(t *testing.T) {
	many := map[string]string{}
	for i := range olm.MaxReportedCatalogs + 3 {
		many[string(rune('a'+i))] = "CONNECTING"
	}
	many["zz-unobserved"] = ""
	for _, tc := range []struct {
		name   string
		report string
		status metav1.ConditionStatus
		reason string
		says   []string
		hides  []string
	}{
		{"no report", "", metav1.ConditionUnknown, v1alpha1.ReasonStatusUnknown, []string{"not reported"}, nil},
		{"garbage", "{", metav1.ConditionUnknown, v1alpha1.ReasonStatusUnknown, []string{"cannot be read"}, nil},
		{"none", olm.NewCatalogHealth(nil).Encode(), metav1.ConditionTrue, v1alpha1.ReasonNoCatalogs, []string{"no CatalogSources"}, nil},
		{"all ready", olm.NewCatalogHealth(map[string]string{"redhat-operators": "READY", "community-operators": "READY"}).Encode(),
			metav1.ConditionTrue, v1alpha1.ReasonAsExpected, []string{"all 2 catalogs"}, nil},
		{"one failing", olm.NewCatalogHealth(map[string]string{"redhat-operators": "READY", "redhat-marketplace": "TRANSIENT_FAILURE", "mine": ""}).Encode(),
			metav1.ConditionFalse, v1alpha1.ReasonCatalogsNotReady,
			[]string{"2 of 3", "redhat-marketplace (TRANSIENT_FAILURE), mine (no connection state yet)"}, []string{"redhat-operators"}},
		{"unobserved only", olm.NewCatalogHealth(map[string]string{"redhat-operators": ""}).Encode(),
			metav1.ConditionUnknown, v1alpha1.ReasonCatalogsNotObserved, []string{"redhat-operators (no connection state yet)"}, nil},
		{"named, missing", olm.NewCatalogHealth(map[string]string{"redhat-operators": "READY", "team-a/private": olm.StateMissing}).Encode(),
			metav1.ConditionFalse, v1alpha1.ReasonCatalogsNotReady,
			[]string{"1 of 2 catalogs (1 in openshift-marketplace, 1 named by the HostingConfig's spec.olm.catalogSources) do not serve: team-a/private (MISSING)"}, nil},
		{"named, ready", olm.NewCatalogHealth(map[string]string{"redhat-operators": "READY", "team-a/private": "READY"}).Encode(),
			metav1.ConditionTrue, v1alpha1.ReasonAsExpected, []string{"all 2 catalogs (1 in openshift-marketplace, 1 named"}, nil},
		{"truncated", olm.NewCatalogHealth(many).Encode(), metav1.ConditionFalse, v1alpha1.ReasonCatalogsNotReady,
			[]string{"24 of 24", "and 4 more"}, []string{"zz-unobserved"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, reason, msg := CatalogsCondition(tc.report)
			if status != tc.status || reason != tc.reason {
				t.Errorf("%s %s (%s), want %s %s", status, reason, msg, tc.status, tc.reason)
			}
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not say %q", msg, s)
				}
			}
			for _, s := range tc.hides {
				if strings.Contains(msg, s) {
					t.Errorf("message %q names %q", msg, s)
				}
			}
		})
	}
}
