package hub

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// CatalogsCondition is CatalogsReady's status, reason and message from the
// agent's catalog report (olm.AnnotationCatalogHealth; "" while there is
// none): True when every catalog in openshift-marketplace, and every one
// the HostingConfig names elsewhere, is READY (or there is none), False naming each catalog that does not serve and its
// state, Unknown while the report is missing or only catalogs nothing has
// connected to yet remain. Pure.
func CatalogsCondition(report string) (metav1.ConditionStatus, string, string) {
	if report == "" {
		return metav1.ConditionUnknown, v1alpha1.ReasonStatusUnknown,
			"the hosted cluster's catalogs are not reported (yet): the agent reads them once the hosted cluster's admin kubeconfig is published"
	}
	h, err := olm.DecodeCatalogHealth(report)
	if err != nil {
		return metav1.ConditionUnknown, v1alpha1.ReasonStatusUnknown, "the agent's catalog report cannot be read"
	}
	if h.Total == 0 {
		return metav1.ConditionTrue, v1alpha1.ReasonNoCatalogs,
			fmt.Sprintf("the hosted cluster has no CatalogSources in %s", olm.CatalogNamespace)
	}
	var failing, unobserved []string
	for _, c := range h.NotReady {
		if c.State == "" {
			unobserved = append(unobserved, c.String())
		} else {
			failing = append(failing, c.String())
		}
	}
	where := "in " + olm.CatalogNamespace
	if h.Named > 0 {
		where = fmt.Sprintf("(%d in %s, %d named by the HostingConfig's spec.olm.catalogSources)", h.Total-h.Named, olm.CatalogNamespace, h.Named)
	}
	all := strings.Join(append(failing, unobserved...), ", ")
	if h.Truncated > 0 {
		all += fmt.Sprintf(" and %d more", h.Truncated)
	}
	notReady := len(h.NotReady) + h.Truncated
	switch {
	case len(failing) > 0:
		return metav1.ConditionFalse, v1alpha1.ReasonCatalogsNotReady, fmt.Sprintf(
			"%d of %d catalogs %s do not serve: %s; operators cannot be installed or upgraded from them",
			notReady, h.Total, where, all)
	case notReady > 0:
		return metav1.ConditionUnknown, v1alpha1.ReasonCatalogsNotObserved, fmt.Sprintf(
			"%d of %d catalogs %s have no connection state yet (OLM's catalog-operator has not connected to them): %s",
			notReady, h.Total, where, all)
	}
	return metav1.ConditionTrue, v1alpha1.ReasonAsExpected,
		fmt.Sprintf("all %d catalogs %s serve", h.Total, where)
}

// CatalogSources is the olm.AnnotationCatalogSources value the hub puts on
// the HostedClusters of a HostingConfig with this OLM policy ("" for none).
func CatalogSources(policy *v1alpha1.OLMConfig) string {
	if policy == nil {
		return ""
	}
	refs := make([]string, 0, len(policy.CatalogSources))
	for _, r := range policy.CatalogSources {
		refs = append(refs, r.Namespace+"/"+r.Name)
	}
	return olm.EncodeCatalogSources(refs)
}
