package operatorlimits

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// DefaultReportRefresh is how old the upgrade report may grow before the
// agent writes it again although nothing changed (Options.ReportRefresh):
// its observedAt is the hub's proof that the report still speaks for the
// guest, so it must stay well inside the hub's bound
// (pkg/olm/hub.DefaultReportMaxAge).
const DefaultReportRefresh = time.Minute

// clusterVersionGVK is OpenShift's ClusterVersion (config.openshift.io/v1),
// read as unstructured: the agent needs one condition of it.
var clusterVersionGVK = schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "ClusterVersion"}

// ReadClusterVersion reads the guest ClusterVersion "version"'s Upgradeable
// condition, as the cluster-version operator aggregates it (every
// ClusterOperator's Upgradeable, admin acks, its own checks).
func ReadClusterVersion(ctx context.Context, guest client.Reader, now time.Time) (olm.UpgradeReport, error) {
	r := olm.UpgradeReport{ObservedAt: now}
	cv := &unstructured.Unstructured{}
	cv.SetGroupVersionKind(clusterVersionGVK)
	if err := guest.Get(ctx, client.ObjectKey{Name: "version"}, cv); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			r.NoClusterVersion = true
			return r, nil
		}
		return r, fmt.Errorf("reading ClusterVersion version: %w", err)
	}
	conditions, _, _ := unstructured.NestedSlice(cv.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Upgradeable" {
			continue
		}
		// The condition's status, reason and message, by their JSON names.
		b, err := json.Marshal(m)
		u := &olm.Upgradeable{}
		if err == nil && json.Unmarshal(b, u) == nil {
			r.ClusterVersion = u
		}
	}
	return r, nil
}

// writeUpgradeReport writes r onto hc when it says something new or the
// written one is due for refresh.
func (r *reporter) writeUpgradeReport(ctx context.Context, hc *unstructured.Unstructured, report olm.UpgradeReport) error {
	if old, err := olm.DecodeUpgradeReport(hc.GetAnnotations()[olm.AnnotationUpgradeReport]); err == nil && old.SameAs(report) &&
		report.ObservedAt.Sub(old.ObservedAt) < r.reportRefresh() {
		return nil
	}
	value := report.Encode()
	return r.guests.Annotate(ctx, hc, olm.AnnotationUpgradeReport, &value, FieldManager)
}
