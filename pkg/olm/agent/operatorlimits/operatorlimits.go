// Package operatorlimits is the agent feature that tells the hub which
// operators installed in each hosted cluster limit its OpenShift minor
// upgrades: for every HostedCluster the hub delivered whose admin kubeconfig
// exists, the agent lists the ClusterServiceVersions in the hosted cluster
// (its guest API server, as the admin), applies OLM's rule (pkg/olm.Limits:
// olm.maxOpenShiftVersion, copies ignored, invalid values block) and writes
// the result onto the HostedCluster as olm.AnnotationOperatorLimits, which
// the hub reads back through the ManifestWork's status feedback and gates
// minor upgrades with (pkg/olm/hub.Decide). In the same pass it lists the
// CatalogSources in the hosted cluster's openshift-marketplace and writes
// their connection states (OLM's catalog-operator's
// status.connectionState.lastObservedState) as olm.AnnotationCatalogHealth,
// which the hub turns into the CatalogsReady condition
// (pkg/olm/hub.CatalogsCondition).
//
// A hosted cluster without OLM's CRDs has no operators and no catalogs: it
// reports an empty list and no catalogs. One the agent cannot reach keeps
// its last report (and the hub decides on it) until it can again.
//
// After the limits it writes olm.AnnotationUpgradeReport: when it read the
// guest and the guest ClusterVersion's Upgradeable condition, refreshed
// even when unchanged, so the hub can tell a fresh report from a stale one
// and holds minor upgrades without one (pkg/olm/hub.Decide).
//
// It reaches the guests as pkg/olm/agent/guests does. What it writes: the
// annotations olm.AnnotationOperatorLimits, olm.AnnotationUpgradeReport and
// olm.AnnotationCatalogHealth,
// by merge patch. In the hosted cluster it only reads (CSVs,
// CatalogSources, the ClusterVersion), as its admin.
package operatorlimits

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm/agent/guests"
)

// DefaultResyncPeriod is how often the hosted clusters' operators are read: a CSV
// installed or removed in a hosted cluster reaches the hub within it (plus
// the work agent's feedback interval). Flag --olm-operator-limits-resync.
const DefaultResyncPeriod = 15 * time.Second

var guestScheme = runtime.NewScheme()

func init() {
	if err := operatorsv1alpha1.AddToScheme(guestScheme); err != nil {
		panic(err)
	}
}

// Options tune the feature beyond its flags.
type Options struct {
	// ReportRefresh is how old an unchanged upgrade report may grow before
	// it is written again (nil or 0: DefaultReportRefresh). A func, read at
	// each write, so that a test can change it while the agent runs.
	ReportRefresh func() time.Duration
}

// Feature is the operator-limits report as an agent feature.
func Feature(opts Options) agent.Feature {
	return guests.Pass{Name: "olm-operator-limits", Scheme: guestScheme, Retry: DefaultGuestRetry, Period: DefaultResyncPeriod,
		Failing: "reading hosted clusters' operators",
		Visit:   func(v *guests.Visitor) guests.VisitFunc { return (&reporter{guests: v, opts: opts}).report }}.Feature()
}

// DefaultGuestRetry is how long a hosted cluster whose guest API server could not
// be read is left alone (its last report stands), so unreachable guests
// (a control plane still coming up, a network problem) cost one attempt per
// period instead of one per pass.
const DefaultGuestRetry = time.Minute

type reporter struct {
	guests *guests.Visitor
	opts   Options
}

// reportRefresh is Options.ReportRefresh now, or its default.
func (r *reporter) reportRefresh() time.Duration {
	if r.opts.ReportRefresh != nil {
		if d := r.opts.ReportRefresh(); d > 0 {
			return d
		}
	}
	return DefaultReportRefresh
}

// report writes hc's operator limits and catalog health onto it when they
// changed. A failure to read one does not hold up the other's report.
func (r *reporter) report(ctx context.Context, hc *unstructured.Unstructured, guest client.Client) error {
	var errs []error
	now := time.Now()
	limitsWritten := false
	if limits, err := Read(ctx, guest); err != nil {
		errs = append(errs, err)
	} else if value, err := Encode(limits); err != nil {
		errs = append(errs, err)
	} else if err := r.guests.Annotate(ctx, hc, olm.AnnotationOperatorLimits, &value, FieldManager); err != nil {
		errs = append(errs, err)
	} else {
		limitsWritten = true
	}
	// The upgrade report vouches for the limits too (the hub takes its
	// observedAt as the age of both), so it is written only after them.
	if limitsWritten {
		if report, err := ReadClusterVersion(ctx, guest, now); err != nil {
			errs = append(errs, err)
		} else if err := r.writeUpgradeReport(ctx, hc, report); err != nil {
			errs = append(errs, err)
		}
	}
	named := olm.DecodeCatalogSources(hc.GetAnnotations()[olm.AnnotationCatalogSources])
	if catalogs, err := ReadCatalogs(ctx, guest, named); err != nil {
		errs = append(errs, err)
	} else {
		value := catalogs.Encode()
		if err := r.guests.Annotate(ctx, hc, olm.AnnotationCatalogHealth, &value, FieldManager); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// FieldManager owns the report annotation on HostedClusters.
const FieldManager = "hcp-fleet-olm-operator-limits"

// Read lists the hosted cluster's CSVs and returns their limits; none when
// OLM's CRDs are not installed.
func Read(ctx context.Context, guest client.Reader) ([]olm.Limit, error) {
	var csvs operatorsv1alpha1.ClusterServiceVersionList
	if err := guest.List(ctx, &csvs); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing ClusterServiceVersions: %w", err)
	}
	return olm.Limits(csvs.Items), nil
}

// Encode is the report's annotation value: a JSON list (never null), at
// most olm.MaxReportedLimits entries, blocking ones first so that what is
// cut never hides a limit.
func Encode(limits []olm.Limit) (string, error) {
	if limits == nil {
		limits = []olm.Limit{}
	}
	if len(limits) > olm.MaxReportedLimits {
		// Invalid limits and the lowest maxima first: they block the
		// nearest minors.
		sorted := slices.Clone(limits)
		slices.SortStableFunc(sorted, func(a, b olm.Limit) int {
			switch {
			case a.Invalid != "" || b.Invalid != "":
				return boolRank(a.Invalid == "") - boolRank(b.Invalid == "")
			case minorBelow(a.MaxOpenShiftVersion, b.MaxOpenShiftVersion):
				return -1
			case minorBelow(b.MaxOpenShiftVersion, a.MaxOpenShiftVersion):
				return 1
			}
			return 0
		})
		limits = sorted[:olm.MaxReportedLimits]
	}
	b, err := json.Marshal(limits)
	return string(b), err
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// minorBelow reports whether minor a is below minor b.
func minorBelow(a, b string) bool {
	return olm.Limit{MaxOpenShiftVersion: a}.Blocks(b) && a != b
}
