package olm

import (
	"encoding/json"
	"fmt"
	"time"
)

// AnnotationUpgradeReport is written by the agent on each delivered
// HostedCluster, in the same pass as (and after) the operator limits: when
// it read the guest, and the guest ClusterVersion's Upgradeable condition.
// The hub reads it back through the ManifestWork's status feedback and holds
// a minor upgrade while it is missing or older than its bound, so that the
// gate never decides on what it has not seen (fail closed).
const AnnotationUpgradeReport = "hcpfleet.io/olm-upgrade-report"

// MaxReportedMessage bounds the Upgradeable message carried in the report:
// CVO's message names every operator; the hub only needs to show it.
const MaxReportedMessage = 1024

// UpgradeReport is the agent's report of what a hosted cluster says about
// upgrading.
type UpgradeReport struct {
	// ObservedAt is when the agent last read the guest (RFC 3339, UTC,
	// seconds). The agent refreshes it even when nothing changed, so its
	// age tells the hub whether the report still speaks for the guest.
	ObservedAt time.Time `json:"observedAt"`
	// ClusterVersion is the guest ClusterVersion "version"'s Upgradeable
	// condition; nil when the guest has no ClusterVersion (yet) or the
	// condition is not set (CVO sets it only while something blocks).
	ClusterVersion *Upgradeable `json:"clusterVersion,omitempty"`
	// NoClusterVersion is true when the guest serves no ClusterVersion at
	// all: then the cluster-version operator's word is missing, and the hub
	// does not take silence for consent.
	NoClusterVersion bool `json:"noClusterVersion,omitempty"`
}

// Upgradeable is one Upgradeable condition.
type Upgradeable struct {
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Encode is the annotation value.
func (r UpgradeReport) Encode() string {
	r.ObservedAt = r.ObservedAt.UTC().Truncate(time.Second)
	if c := r.ClusterVersion; c != nil && len(c.Message) > MaxReportedMessage {
		cut := *c
		cut.Message = cut.Message[:MaxReportedMessage] + "…"
		r.ClusterVersion = &cut
	}
	b, _ := json.Marshal(r)
	return string(b)
}

// SameAs reports whether r says what o says, whenever each was observed.
func (r UpgradeReport) SameAs(o UpgradeReport) bool {
	r.ObservedAt, o.ObservedAt = time.Time{}, time.Time{}
	return r.Encode() == o.Encode()
}

// DecodeUpgradeReport reads the annotation value.
func DecodeUpgradeReport(s string) (UpgradeReport, error) {
	var r UpgradeReport
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return r, fmt.Errorf("%s is not a report: %w", AnnotationUpgradeReport, err)
	}
	if r.ObservedAt.IsZero() {
		return r, fmt.Errorf("%s has no observedAt", AnnotationUpgradeReport)
	}
	return r, nil
}
