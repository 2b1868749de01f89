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
// none): True when every catalog in openshift-marketplace is READY (or
// there is none), False naming each catalog that does not serve and its
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
	all := strings.Join(append(failing, unobserved...), ", ")
	if h.Truncated > 0 {
		all += fmt.Sprintf(" and %d more", h.Truncated)
	}
	notReady := len(h.NotReady) + h.Truncated
	switch {
	case len(failing) > 0:
		return metav1.ConditionFalse, v1alpha1.ReasonCatalogsNotReady, fmt.Sprintf(
			"%d of %d catalogs in %s do not serve: %s; operators cannot be installed or upgraded from them",
			notReady, h.Total, olm.CatalogNamespace, all)
	case notReady > 0:
		return metav1.ConditionUnknown, v1alpha1.ReasonCatalogsNotObserved, fmt.Sprintf(
			"%d of %d catalogs in %s have no connection state yet (OLM's catalog-operator has not connected to them): %s",
			notReady, h.Total, olm.CatalogNamespace, all)
	}
	return metav1.ConditionTrue, v1alpha1.ReasonAsExpected,
		fmt.Sprintf("all %d catalogs in %s serve", h.Total, olm.CatalogNamespace)
}
