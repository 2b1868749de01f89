package delivery

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	olmhub "github.com/hcp-fleet/hcp-fleet/pkg/olm/hub"
)

// Host is what the hub knows about the hosting cluster.
type Host struct {
	Cluster string
	// Exists: the ManagedCluster is there.
	Exists bool
	// Available: its klusterlet reports in (ManagedCluster Available=True),
	// or stopped reporting less than the grace ago
	// (hostmodel.HeldAvailable).
	Available bool
	// AddOnAvailable: the hcp-fleet agent's lease is fresh, or went stale
	// less than the grace ago.
	AddOnAvailable bool
	// Recheck, when not 0, is when a held availability ends: the status
	// may change then with nothing else changing.
	Recheck time.Duration
}

// Problem is a delivery problem found on the hub before anything reaches
// the host (a missing referenced Secret, a malformed spec).
type Problem struct {
	Reason  string
	Message string
}

// Observed is everything the delivery status is computed from.
type Observed struct {
	Generation int64
	// UID is the HostedClusterDeployment's: feedback from an object on the
	// host labelled with another UID is not this one's (ownsFeedback).
	UID types.UID
	// NodePools are spec.nodePools[].name, in order.
	NodePools []string
	// Work is the ManifestWork, nil while it does not exist.
	Work *workv1.ManifestWork
	Host Host
	// Problem, when set, kept the ManifestWork from being (re)written.
	Problem *Problem
	// DroppedAnnotations are the sorted keys of spec.hostedCluster's
	// annotations the policy keeps off the HostedCluster, named in the
	// Delivered message.
	DroppedAnnotations []string
	// Deleting is set while the HostedClusterDeployment is being deleted;
	// DeletionMessage says what deletion waits for.
	Deleting        bool
	DeletionReason  string
	DeletionMessage string
	// Upgrade is the upgrade gate's decision (nil: none made), reported as
	// UpgradeBlocked.
	Upgrade *olmhub.Decision
	// SubscriptionDefaults are the hosted cluster's effective OLM
	// Subscription defaults (nil: none), reported as
	// SubscriptionDefaultsApplied.
	SubscriptionDefaults *v1alpha1.SubscriptionDefaults
	// ImportStarted: the import's finalizer (importer.Finalizer) is on the
	// HostedClusterDeployment.
	ImportStarted bool
	// Imported is the Imported condition the HostedClusterDeployment shows
	// (nil: none).
	Imported *metav1.Condition
}

// Status is the part of HostedClusterDeployment status the delivery owns.
type Status struct {
	ObservedGeneration   int64
	ManifestWork         string
	Conditions           []metav1.Condition
	Version              *v1alpha1.HostedClusterVersionStatus
	ControlPlaneEndpoint *v1alpha1.APIEndpoint
	NodePools            []v1alpha1.NodePoolStatus
}

// ComputeStatus maps what the hub observes into HostedClusterDeployment
// status. Pure.
func ComputeStatus(o Observed) Status {
	s := Status{ObservedGeneration: o.Generation}
	var hc Values
	pools := map[string]Values{}
	if o.Work != nil {
		s.ManifestWork = o.Work.Name
		for _, m := range o.Work.Status.ResourceStatus.Manifests {
			if !o.ownsFeedback(m) {
				continue
			}
			switch m.ResourceMeta.Resource {
			case "hostedclusters":
				hc = valuesOf(m.StatusFeedbacks)
			case "nodepools":
				pools[m.ResourceMeta.Name] = valuesOf(m.StatusFeedbacks)
			}
		}
	}
	cond := func(t string, status metav1.ConditionStatus, reason, message string) {
		s.Conditions = append(s.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: o.Generation})
	}

	delivered, deliveredReason, deliveredMsg := deliveredCondition(o)
	cond(v1alpha1.ConditionDelivered, delivered, deliveredReason, deliveredMsg)

	// Hosting cluster.
	switch {
	case !o.Host.Exists:
		cond(v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionFalse, v1alpha1.ReasonHostingClusterLost,
			fmt.Sprintf("ManagedCluster %s is gone; the hosted cluster is not moved elsewhere", o.Host.Cluster))
	case !o.Host.Available:
		cond(v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionFalse, v1alpha1.ReasonHostingClusterUnavailable,
			fmt.Sprintf("ManagedCluster %s is not available (its agent stopped reporting); status below is the last reported", o.Host.Cluster))
	case !o.Host.AddOnAvailable:
		cond(v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionFalse, v1alpha1.ReasonAddOnNotAvailable,
			fmt.Sprintf("the hcp-fleet add-on on %s is not available (lease expired or not installed)", o.Host.Cluster))
	default:
		cond(v1alpha1.ConditionHostingClusterAvailable, metav1.ConditionTrue, v1alpha1.ReasonAsExpected,
			fmt.Sprintf("management cluster %s and its hcp-fleet add-on are available", o.Host.Cluster))
	}

	// Available and Progressing mirror HyperShift's.
	available := o.Host.Available && hc[fbAvailable] == "True"
	switch {
	case hc[fbAvailable] == "":
		cond(v1alpha1.ConditionAvailable, metav1.ConditionUnknown, v1alpha1.ReasonStatusUnknown, "no status reported for the HostedCluster yet")
	case !o.Host.Available:
		cond(v1alpha1.ConditionAvailable, metav1.ConditionUnknown, v1alpha1.ReasonStatusUnknown,
			fmt.Sprintf("hosting cluster %s is not available; last reported Available=%s: %s", o.Host.Cluster, hc[fbAvailable], hc[fbAvailableMessage]))
	case hc[fbAvailable] == "True":
		cond(v1alpha1.ConditionAvailable, metav1.ConditionTrue, v1alpha1.ReasonAsExpected, orDefault(hc[fbAvailableMessage], "the hosted cluster's API is available"))
	default:
		cond(v1alpha1.ConditionAvailable, metav1.ConditionFalse, v1alpha1.ReasonHostedClusterNotAvailable,
			hyperShiftSays(hc[fbAvailableReason], hc[fbAvailableMessage]))
	}
	switch hc[fbProgressing] {
	case "True":
		cond(v1alpha1.ConditionProgressing, metav1.ConditionTrue, v1alpha1.ReasonRollingOut, hyperShiftSays(hc[fbProgressingReason], hc[fbProgressingMessage]))
	case "False":
		cond(v1alpha1.ConditionProgressing, metav1.ConditionFalse, v1alpha1.ReasonAsExpected, hyperShiftSays(hc[fbProgressingReason], hc[fbProgressingMessage]))
	default:
		cond(v1alpha1.ConditionProgressing, metav1.ConditionUnknown, v1alpha1.ReasonStatusUnknown, "no status reported for the HostedCluster yet")
	}

	// Degraded collects every problem that needs attention.
	var problems []string
	degradedReason := ""
	addProblem := func(reason, msg string) {
		if degradedReason == "" {
			degradedReason = reason
		}
		problems = append(problems, msg)
	}
	if delivered == metav1.ConditionFalse && (deliveredReason == v1alpha1.ReasonApplyFailed || deliveredReason == v1alpha1.ReasonReferencedObjectNotFound ||
		deliveredReason == v1alpha1.ReasonReferencedObjectTooLarge || deliveredReason == v1alpha1.ReasonOwnedByAnother) {
		addProblem(deliveredReason, deliveredMsg)
	}
	if hc[fbValidRelease] == "False" {
		addProblem("InvalidReleaseImage", "release image: "+hc[fbValidReleaseMsg])
	}
	if hc[fbValidConfig] == "False" {
		addProblem("InvalidConfiguration", "configuration: "+hc[fbValidConfigMsg])
	}
	if hc[fbDegraded] == "True" {
		addProblem(orDefault(hc[fbDegradedReason], "HostedClusterDegraded"), "HyperShift: "+hc[fbDegradedMessage])
	}
	// HyperShift expects ClusterVersionSucceeding True
	// (support/conditions.ExpectedHCConditions): False is the CVO failing
	// to roll out the desired release, so a release rollout counts that
	// upgrade Failed instead of waiting on it as Upgrading.
	if hc[fbCVSucceeding] == "False" {
		addProblem(orDefault(hc[fbCVSucceedingReason], "ClusterVersionFailing"), "cluster version: "+hc[fbCVSucceedingMessage])
	}
	if hc[fbMigrationFailed] != "" {
		addProblem("CAPIMigrationFailed", "migration to private CAPI types failed: "+hc[fbMigrationFailed])
	}
	if len(problems) > 0 {
		cond(v1alpha1.ConditionDegraded, metav1.ConditionTrue, degradedReason, strings.Join(problems, "; "))
	} else if hc[fbMigrating] != "" {
		cond(v1alpha1.ConditionDegraded, metav1.ConditionFalse, "CAPIMigrationInProgress", "migrating the hosted cluster's CAPI objects to private types")
	} else {
		cond(v1alpha1.ConditionDegraded, metav1.ConditionFalse, v1alpha1.ReasonAsExpected, "no problems reported")
	}

	if u := o.Upgrade; u != nil && !o.Deleting {
		status := metav1.ConditionFalse
		if u.Status {
			status = metav1.ConditionTrue
		}
		cond(v1alpha1.ConditionUpgradeBlocked, status, u.Reason, u.Message)
	}
	if c := olmhub.SubscriptionDefaultsCondition(o.SubscriptionDefaults, hc[fbSubscriptionDefaults]); c != nil && !o.Deleting {
		cond(c.Type, c.Status, c.Reason, c.Message)
	}

	// CatalogsReady from the agent's report of the guest's CatalogSources;
	// while the host is unavailable it is the last reported, as above.
	if !o.Deleting && o.Work != nil {
		status, reason, message := olmhub.CatalogsCondition(hc[fbCatalogHealth])
		cond(v1alpha1.ConditionCatalogsReady, status, reason, message)
	}

	if carriesImportWaiting(o, available) {
		c := hcdstatus.WaitingForAvailable(o.Host.Cluster)
		cond(c.Type, c.Status, c.Reason, c.Message)
	}

	// Node pools.
	var notReady []string
	for _, name := range o.NodePools {
		v := pools[name]
		np := v1alpha1.NodePoolStatus{Name: name}
		desired := v[fbDesiredReplicas]
		if desired == "" {
			desired = v[fbAutoscalingMin]
		}
		np.Replicas = atoi32(desired)
		// Bounded as the schema is: a release rollout reads it to tell a
		// pool is at the release (pkg/hosting/hub/releaserollout).
		if ver := v[fbVersion]; len(ver) <= 64 {
			np.Version = ver
		}
		if v[fbReady] == "True" {
			np.ReadyReplicas = atoi32(v[fbReplicas])
		}
		s.NodePools = append(s.NodePools, np)
		if v[fbReady] != "True" || np.ReadyReplicas < np.Replicas {
			detail := fmt.Sprintf("%s %d/%d ready", name, np.ReadyReplicas, np.Replicas)
			if m := v[fbReadyMessage]; m != "" && v[fbReady] != "True" {
				detail += " (" + m + ")"
			}
			notReady = append(notReady, detail)
		}
	}
	switch {
	case len(o.NodePools) == 0:
		cond(v1alpha1.ConditionNodePoolsReady, metav1.ConditionTrue, v1alpha1.ReasonNoNodePools, "the hosted cluster has no node pools")
	case len(notReady) > 0:
		cond(v1alpha1.ConditionNodePoolsReady, metav1.ConditionFalse, v1alpha1.ReasonNodePoolsNotReady, strings.Join(notReady, "; "))
	default:
		cond(v1alpha1.ConditionNodePoolsReady, metav1.ConditionTrue, v1alpha1.ReasonAsExpected, fmt.Sprintf("all %d node pools are ready", len(o.NodePools)))
	}

	// Version and endpoint.
	if hc[fbDesiredImage] != "" || hc[fbLatestState] != "" {
		v := &v1alpha1.HostedClusterVersionStatus{
			Desired: v1alpha1.ReleaseStatus{Version: hc[fbDesiredVersion], Image: hc[fbDesiredImage]},
			Current: hc[fbCurrentVersion],
		}
		if st := hc[fbLatestState]; st != "" {
			v.History = []v1alpha1.VersionHistoryEntry{{State: v1alpha1.VersionUpdateState(st), Version: hc[fbLatestVersion], Image: hc[fbLatestImage]}}
			if t, err := time.Parse(time.RFC3339, hc[fbLatestCompletion]); err == nil {
				v.History[0].CompletionTime = &metav1.Time{Time: t}
			}
		}
		// No report, or one that does not read, shows no update: the
		// rollout then knows of no risk to hold a release for.
		if u, err := hosting.DecodeReleaseUpdates(hc[fbReleaseUpdates]); hc[fbReleaseUpdates] != "" && err == nil {
			v.AvailableUpdates, v.ConditionalUpdates = u.Available, u.Conditional
		}
		s.Version = v
	}
	if host := hc[fbEndpointHost]; host != "" {
		s.ControlPlaneEndpoint = &v1alpha1.APIEndpoint{Host: host, Port: atoi32(hc[fbEndpointPort])}
	}
	return s
}

// carriesImportWaiting says whether the delivery's status carries the
// import's Imported=False WaitingForAvailable (hcdstatus.WaitingForAvailable)
// so the import need not write it: the binding (BindingStatus) writes it with
// the delivery's first status, the delivery's writes keep it, and the import
// (pkg/hosting/hub/importer) finds it as it would write it. available is
// the Available this status reports.
//
// It is carried while nothing else holds the condition and the hosted
// cluster is not available, and, once carried, until the import replaces it
// with its next state (WaitingForKubeconfig, Imported, ImportFailed), even
// after the hosted cluster became available: dropping it from an apply as
// soon as the delivery reports Available=True would remove the condition
// (this field manager being its only one) until the import's next write, and
// the user would see Imported come and go. The import always writes its next
// state once it reads Available=True, and the import's field manager then
// holds the condition, so the delivery's later applies that leave it out
// release it without removing it. An apply that carries it is a
// compare-and-swap (statusApply), so a copy read before the import's write
// cannot take the condition back. The import's own state, an import already
// started, and a deletion (nothing will be imported) are never overwritten.
// Pure.
func carriesImportWaiting(o Observed, available bool) bool {
	if o.Deleting || o.Host.Cluster == "" {
		return false
	}
	if o.Imported == nil {
		return !available && !o.ImportStarted
	}
	return o.Imported.Reason == v1alpha1.ReasonWaitingForAvailable
}

func deliveredCondition(o Observed) (metav1.ConditionStatus, string, string) {
	if o.Deleting {
		return metav1.ConditionFalse, o.DeletionReason, o.DeletionMessage
	}
	if o.Problem != nil {
		return metav1.ConditionFalse, o.Problem.Reason, o.Problem.Message
	}
	w := o.Work
	if w == nil {
		return metav1.ConditionFalse, v1alpha1.ReasonWaitingForApply, "the ManifestWork is being created"
	}
	applied := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
	if applied == nil || applied.ObservedGeneration != w.Generation {
		return metav1.ConditionFalse, v1alpha1.ReasonWaitingForApply,
			fmt.Sprintf("ManifestWork %s/%s: waiting for management cluster %s to apply it", w.Namespace, w.Name, w.Namespace)
	}
	if applied.Status == metav1.ConditionTrue {
		return metav1.ConditionTrue, v1alpha1.ReasonApplied,
			fmt.Sprintf("applied on management cluster %s by ManifestWork %s", w.Namespace, w.Name) + droppedAnnotationsMessage(o.DroppedAnnotations)
	}
	var failures []string
	conflict := false
	for _, m := range w.Status.ResourceStatus.Manifests {
		c := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied)
		if c == nil || c.Status == metav1.ConditionTrue {
			continue
		}
		kind, ns, name := kindOf(m.ResourceMeta), m.ResourceMeta.Namespace, m.ResourceMeta.Name
		if isApplyConflict(c.Message) {
			// The object is another HostedClusterDeployment's or someone
			// else's (ownership.go): said first, whatever else failed.
			conflict = true
			failures = append(failures, ownedByAnother(kind, ns, name, c.Message))
			continue
		}
		failures = append(failures, fmt.Sprintf("%s %s/%s: %s", kind, ns, name, c.Message))
	}
	sort.Strings(failures)
	msg := applied.Message
	if len(failures) > 0 {
		msg = strings.Join(failures, "; ")
	}
	if conflict {
		return metav1.ConditionFalse, v1alpha1.ReasonOwnedByAnother,
			fmt.Sprintf("management cluster %s refused to apply: %s (%s)", w.Namespace, msg, ownedByAnotherHint)
	}
	return metav1.ConditionFalse, v1alpha1.ReasonApplyFailed, fmt.Sprintf("management cluster %s could not apply: %s", w.Namespace, msg)
}

// isApplyConflict tells a server-side apply conflict in the work agent's
// message ("Failed to apply manifest: Apply failed with 1 conflict:
// conflict with \"kubectl\" using v1: .data.x").
func isApplyConflict(message string) bool {
	return strings.Contains(message, "Apply failed with") && strings.Contains(message, "conflict")
}

func kindOf(m workv1.ManifestResourceMeta) string {
	if m.Kind != "" {
		return m.Kind
	}
	return m.Resource
}

func hyperShiftSays(reason, message string) string {
	switch {
	case reason != "" && message != "":
		return reason + ": " + message
	case message != "":
		return message
	case reason != "":
		return reason
	}
	return "no message from HyperShift"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func atoi32(s string) int32 {
	n, _ := strconv.ParseInt(s, 10, 32)
	return int32(n)
}

// firstOfJSON returns a JSON scalar as a string, or the first item of a JSON
// list.
func firstOfJSON(raw string) string {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return raw
	}
	if l, ok := v.([]any); ok {
		if len(l) == 0 {
			return ""
		}
		v = l[0]
	}
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
