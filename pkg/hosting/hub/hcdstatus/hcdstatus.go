package hcdstatus

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	hcdac "github.com/hcp-fleet/hcp-fleet/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// FieldManager is the field manager under which both the scheduler and the
// delivery apply HostedClusterDeployment status: the binding
// (status.hostingCluster, the Scheduled condition) and the delivery's fields.
// The scheduler writes a binding together with the status the delivery
// would write right after it (one status write per binding instead of two),
// and a field left out of an apply is only removed when no other manager
// holds it; so the two share a manager, and each of its applies holds all of
// its fields (the delivery's carry the binding as it is). The name is the
// delivery's from before they shared it, so that the fields an older hub
// applied under it are still covered by every apply.
const FieldManager = "hcp-fleet-delivery"

// AnnotationBoundTo is the annotation the delivery puts on a
// HostedClusterDeployment it delivers, with the management cluster it is
// bound to. Status does not survive a backup restore; metadata does. A
// HostedClusterDeployment that carries it but no status.hostingCluster was
// bound before, so the scheduler recovers its binding from the ManifestWork
// and never decides it anew (scheduling/recover.go). Tenants can neither
// set, change nor remove it (the admission policy of
// manifests/hub/40-boundto-admissionpolicy.yaml); even so, where it is
// bound is taken from what the management clusters hold, never from the
// annotation.
const AnnotationBoundTo = "hcpfleet.io/bound-to"

// AnnotationIdentityUID is the annotation the delivery puts on a
// HostedClusterDeployment with its metadata.uid when it first delivers it
// (in the same write as AnnotationBoundTo), and never changes: the UID
// everything the hub delivers for it is named after (IdentityUID). A
// backup restore brings the HostedClusterDeployment back with a new UID
// but with its metadata, this annotation included, so the restored object
// names what it delivers as before and the hub keeps managing the hosted
// cluster that runs. Guarded as AnnotationBoundTo is: a tenant who could
// set it could take over the hosted cluster of an earlier deployment of
// the same name. Honoured only where what the management cluster holds
// carries the same UID (the delivery's UIDMismatch otherwise).
const AnnotationIdentityUID = "hcpfleet.io/identity-uid"

// IdentityUID is the UID the hub names o's deliveries after (copy names,
// host field manager, hosting.LabelHCDUID, the derived infraID): o's
// AnnotationIdentityUID when it carries a valid one, else o's own UID.
// Caches about the live object keep its metadata.uid instead. Pure.
func IdentityUID(o metav1.Object) types.UID {
	v := o.GetAnnotations()[AnnotationIdentityUID]
	if v == "" || len(validation.IsValidLabelValue(v)) > 0 {
		// Not a value hosting.LabelHCDUID could carry: nothing delivered
		// was ever named after it.
		return o.GetUID()
	}
	return types.UID(v)
}

// AnnotationAdoptedFrom, on a HostedClusterDeployment, names the
// HostedCluster ("<cluster>/<namespace>/<name>") a fleet admin adopted into
// it (pkg/hosting/hub/adoption): the scheduler binds it there and nowhere
// else (reason Adopted), and the delivery takes the HostedCluster over
// (kept references, one forced apply). Guarded as AnnotationBoundTo is: a
// tenant who set it could take over another team's hosted cluster.
const AnnotationAdoptedFrom = "hcpfleet.io/adopted-from"

// AnnotationAdoptedReferences, on an adopted HostedClusterDeployment, lists
// the Secrets and ConfigMaps ("Kind/name", comma-separated) its
// HostedCluster referred to when it was adopted: the delivery leaves those
// references as they are on the management cluster rather than copying
// them from the hub (a copy's name would change the spec and roll the
// control plane). Guarded as AnnotationAdoptedFrom is, so that a tenant
// cannot point its cluster at another Secret of the hosting namespace.
const AnnotationAdoptedReferences = "hcpfleet.io/adopted-references"

// AnnotationAdoptedIdentity, on an adopted HostedClusterDeployment, is the
// identity its HostedCluster runs with ("infraID=<id>[,clusterID=<id>]"):
// the delivery sets them on the HostedCluster as they are. They are not in
// the deployment's spec, where the TenantPolicy refuses a tenant's infraID
// and clusterID (the identity of a hosted cluster is not the tenant's to
// choose); the hub, not the tenant, set them. Guarded as
// AnnotationAdoptedFrom is.
const AnnotationAdoptedIdentity = "hcpfleet.io/adopted-identity"

// AdoptedIdentity parses the AnnotationAdoptedIdentity of annotations, when
// they also carry AnnotationAdoptedFrom ("" otherwise).
func AdoptedIdentity(annotations map[string]string) (infraID, clusterID string) {
	if _, ok := annotations[AnnotationAdoptedFrom]; !ok {
		return "", ""
	}
	for _, kv := range strings.Split(annotations[AnnotationAdoptedIdentity], ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch k {
		case "infraID":
			infraID = v
		case "clusterID":
			clusterID = v
		}
	}
	return infraID, clusterID
}

// AdoptedFrom parses hcd's AnnotationAdoptedFrom; ok is false when it has
// none or it is malformed.
func AdoptedFrom(hcd *v1alpha1.HostedClusterDeployment) (cluster, namespace, name string, ok bool) {
	parts := strings.Split(hcd.Annotations[AnnotationAdoptedFrom], "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// Conditions returns the desired conditions as a controller applies them
// over live (the conditions the HostedClusterDeployment shows), sorted by
// type: each carries observedGeneration generation and, as
// meta.SetStatusCondition keeps it, the live lastTransitionTime unless its
// status changed (now when it did, or when the condition is new). changed
// says whether any desired condition is new or differs from the live one in
// status, reason, message or observedGeneration. Live conditions of other
// types are neither returned nor compared. Pure.
func Conditions(live, desired []metav1.Condition, generation int64, now metav1.Time) (conds []metav1.Condition, changed bool) {
	conds = make([]metav1.Condition, 0, len(desired))
	for _, d := range desired {
		d.ObservedGeneration = generation
		d.LastTransitionTime = now
		d.Message = kubeutil.ConditionMessage(d.Message)
		var merged []metav1.Condition
		if old := meta.FindStatusCondition(live, d.Type); old != nil {
			merged = []metav1.Condition{*old}
		}
		if meta.SetStatusCondition(&merged, d) {
			changed = true
		}
		conds = append(conds, merged[0])
	}
	slices.SortStableFunc(conds, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
	return conds, changed
}

// ApplyConditions converts conditions to apply configurations, for
// HostedClusterDeploymentStatusApplyConfiguration.WithConditions.
func ApplyConditions(conds []metav1.Condition) []*metav1ac.ConditionApplyConfiguration {
	out := make([]*metav1ac.ConditionApplyConfiguration, 0, len(conds))
	for _, c := range conds {
		out = append(out, metav1ac.Condition().
			WithType(c.Type).
			WithStatus(c.Status).
			WithReason(c.Reason).
			WithMessage(c.Message).
			WithObservedGeneration(c.ObservedGeneration).
			WithLastTransitionTime(c.LastTransitionTime))
	}
	return out
}

// Apply server-side applies hcd to the status subresource of the
// HostedClusterDeployment it names, as fieldManager, taking over fields
// another manager holds (ForceOwnership). A resourceVersion in hcd makes it a
// compare-and-swap: the apply fails with a Conflict when the object changed
// since. Errors (NotFound included) are returned as they are.
func Apply(ctx context.Context, c client.StatusClient, hcd *hcdac.HostedClusterDeploymentApplyConfiguration, fieldManager string) error {
	target, patch, err := kubeutil.ApplyPatch(hcd)
	if err != nil {
		return err
	}
	return c.Status().Patch(ctx, target, patch, client.FieldOwner(fieldManager), client.ForceOwnership)
}

// WaitingForAvailable is the Imported condition while the import waits for
// the hosted cluster bound to host to be Available. Two controllers write
// it: the delivery, whose status carries it from the binding on until the
// import writes its next state (so that the import needs no write of its
// own while it waits), and the import, which owns Imported otherwise and
// writes this state only over another of its own (an import refused, then
// the hosted cluster went unavailable). Both take it from here, so neither
// finds anything to change in what the other wrote, and its event is
// recorded once, by the write that set it.
func WaitingForAvailable(host string) metav1.Condition {
	message := "waiting for the hosted cluster to be scheduled and available"
	if host != "" {
		message = fmt.Sprintf("waiting for the hosted cluster to be available on %s", host)
	}
	return metav1.Condition{Type: v1alpha1.ConditionImported, Status: metav1.ConditionFalse,
		Reason: v1alpha1.ReasonWaitingForAvailable, Message: message}
}
