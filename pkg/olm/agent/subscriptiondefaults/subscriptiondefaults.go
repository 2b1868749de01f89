// Package subscriptiondefaults is the agent feature that decides where
// operators users install in hosted clusters run (OCPSTRAT-112, OLM in the hosted control plane: only some node
// pools may reach the hosted control plane, and operator controllers must
// run there). For every HostedCluster the hub delivered with subscription
// defaults (olm.AnnotationSubscriptionDefaults: the HostedClusterDeployment's
// spec.olm.subscriptionDefaults, else its HostingConfig's), the agent sets
// spec.config.nodeSelector and spec.config.tolerations on each OLM
// Subscription in the hosted cluster (its guest API server, as the admin)
// that sets neither; OLM puts them on the operator's Deployment.
//
// It never overwrites what a user set: a Subscription with either field is
// left alone; values the agent set are marked
// (olm.AnnotationSubscriptionDefaulted, the fingerprint of what it set), and
// once they differ from the mark someone changed them, so they are the
// user's and the agent drops its mark and never touches them again. Values
// it set that nobody changed follow the defaults: replaced when they
// change, removed when they go away.
//
// Writes are JSON merge patches of exactly those two fields and the mark,
// with the resourceVersion the decision was made on: a Subscription written
// meanwhile is not changed (the next pass decides again), and fields this
// agent does not know are never lost. (Server-side apply would release
// fields by ownership, and after a user's update the ownership of a list
// or map is split between managers, so releasing could drop values the user
// kept; the fingerprint says exactly whether anything changed.)
//
// It reports on the HostedCluster (olm.AnnotationSubscriptionDefaultsReport,
// read back by the hub through the ManifestWork's status feedback), counts
// its writes (hcpfleet_agent_olm_subscription_defaults_writes_total) and
// logs each one.
package subscriptiondefaults

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm/agent/guests"
)

// DefaultResyncPeriod is how often the hosted clusters' Subscriptions are visited:
// a Subscription created in a hosted cluster gets the defaults within it.
// Flag --olm-subscription-defaults-resync.
const DefaultResyncPeriod = 15 * time.Second

// DefaultGuestRetry is how long a hosted cluster whose guest could not be read is
// left alone (its last report stands).
const DefaultGuestRetry = time.Minute

// FieldManager writes the defaults on guest Subscriptions and the report on
// HostedClusters.
const FieldManager = "hcp-fleet-olm-subscription-defaults"

var (
	guestScheme = runtime.NewScheme()
	writes      = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hcpfleet_agent_olm_subscription_defaults_writes_total",
		Help: "Writes of Subscription defaults in hosted clusters, by action: set (defaults set or updated), remove (defaults removed), forget (the user changed them; the mark dropped), failed.",
	}, []string{"action"})
)

func init() {
	if err := operatorsv1alpha1.AddToScheme(guestScheme); err != nil {
		panic(err)
	}
	metrics.Registry.MustRegister(writes)
}

// Feature is the Subscription defaults as an agent feature.
func Feature() agent.Feature {
	return guests.Pass{Name: "olm-subscription-defaults", Scheme: guestScheme, Retry: DefaultGuestRetry, Period: DefaultResyncPeriod,
		Failing: "setting Subscription defaults in hosted clusters",
		Visit:   func(v *guests.Visitor) guests.VisitFunc { return (&defaulter{guests: v}).visit }}.Feature()
}

type defaulter struct {
	guests *guests.Visitor
}

// visit applies hc's defaults to its guest's Subscriptions and reports.
func (r *defaulter) visit(ctx context.Context, hc *unstructured.Unstructured, guest client.Client) error {
	defaults, err := olm.DecodeSubscriptionDefaults(hc.GetAnnotations()[olm.AnnotationSubscriptionDefaults])
	if err != nil {
		return err
	}
	var subs operatorsv1alpha1.SubscriptionList
	if err := guest.List(ctx, &subs); err != nil && !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("listing Subscriptions: %w", err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("hostedCluster", hc.GetNamespace()+"/"+hc.GetName())
	report := olm.SubscriptionDefaultsReport{Defaults: olm.FingerprintOf(defaults)}
	for i := range subs.Items {
		sub := &subs.Items[i]
		if sub.DeletionTimestamp != nil {
			continue
		}
		name := sub.Namespace + "/" + sub.Name
		action, state := Decide(Of(sub), defaults)
		if action != Keep {
			if err := guest.Patch(ctx, sub, client.RawPatch(types.MergePatchType, Patch(action, sub.ResourceVersion, Of(sub), defaults)), client.FieldOwner(FieldManager)); err != nil {
				// A conflict (the Subscription changed since it was read)
				// is decided again on the next pass.
				writes.WithLabelValues("failed").Inc()
				log.Error(err, "writing Subscription defaults", "subscription", name, "action", action)
				report.Failed++
				report.FailedNames = appendName(report.FailedNames, name)
				continue
			}
			writes.WithLabelValues(string(action)).Inc()
			log.Info("Subscription defaults", "subscription", name, "action", action)
		}
		switch state {
		case Defaulted:
			report.Defaulted++
		case Own:
			report.Own++
			report.OwnNames = appendName(report.OwnNames, name)
		}
	}
	var value *string
	if defaults != nil || report.Defaulted > 0 || report.Failed > 0 {
		b, _ := json.Marshal(report)
		s := string(b)
		value = &s
	}
	return r.guests.Annotate(ctx, hc, olm.AnnotationSubscriptionDefaultsReport, value, FieldManager)
}

func appendName(names []string, name string) []string {
	if len(names) >= olm.MaxReportedNames {
		return names
	}
	return append(names, name)
}

// Subscription is what the decision needs of one Subscription.
type Subscription struct {
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	// Mark is the value of olm.AnnotationSubscriptionDefaulted; Marked
	// whether it is there.
	Mark   string
	Marked bool
}

// Of reads a Subscription.
func Of(sub *operatorsv1alpha1.Subscription) Subscription {
	s := Subscription{}
	s.Mark, s.Marked = sub.Annotations[olm.AnnotationSubscriptionDefaulted]
	if sub.Spec != nil && sub.Spec.Config != nil {
		s.NodeSelector = sub.Spec.Config.NodeSelector
		s.Tolerations = sub.Spec.Config.Tolerations
	}
	return s
}

// Action is what to write on a Subscription.
type Action string

const (
	// Keep writes nothing.
	Keep Action = ""
	// Set sets the defaults and marks them.
	Set Action = "set"
	// Remove removes the values the agent set, and the mark.
	Remove Action = "remove"
	// Forget drops the mark and leaves the values: someone changed them.
	Forget Action = "forget"
)

// State is where a Subscription's placement comes from after the action.
type State int

const (
	// None: no node selector or tolerations.
	None State = iota
	// Defaulted: the defaults, set by the agent.
	Defaulted
	// Own: the user's (set by them, or changed since the agent set them).
	Own
)

// Decide is what to do with one Subscription given the defaults (nil:
// none). Pure.
func Decide(s Subscription, defaults *v1alpha1.SubscriptionDefaults) (Action, State) {
	current := olm.Fingerprint(s.NodeSelector, s.Tolerations)
	want := olm.FingerprintOf(defaults)
	if s.Marked {
		switch {
		case current != s.Mark && current != "":
			// Changed since the agent set them: the user's now.
			return Forget, Own
		case current != s.Mark:
			// Removed since: a Subscription without placement, like any.
			if want == "" {
				return Forget, None
			}
			return Set, Defaulted
		case want == "":
			return Remove, None
		case want == current:
			return Keep, Defaulted
		default:
			return Set, Defaulted
		}
	}
	switch {
	case current != "":
		return Keep, Own
	case want == "":
		return Keep, None
	default:
		return Set, Defaulted
	}
}

// Patch is the JSON merge patch of an action on sub: only
// spec.config.nodeSelector, spec.config.tolerations and the mark, on
// resourceVersion (the apiserver refuses it if the Subscription changed
// since). A merge patch merges maps key by key, so keys of sub's node
// selector that the defaults do not have are removed explicitly (Set
// replaces only values the agent set itself).
func Patch(action Action, resourceVersion string, sub Subscription, defaults *v1alpha1.SubscriptionDefaults) []byte {
	var mark, nodeSelector, tolerations any // nil: JSON null, removes
	switch action {
	case Set:
		mark = olm.FingerprintOf(defaults)
		ns, tol := defaults.Placement()
		if len(ns) > 0 || len(sub.NodeSelector) > 0 {
			m := map[string]any{}
			for k := range sub.NodeSelector {
				m[k] = nil
			}
			for k, v := range ns {
				m[k] = v
			}
			if len(ns) > 0 {
				nodeSelector = m
			}
		}
		if tol != nil {
			tolerations = tol
		}
	case Keep:
		return nil
	}
	patch := map[string]any{"metadata": map[string]any{
		"resourceVersion": resourceVersion,
		"annotations":     map[string]any{olm.AnnotationSubscriptionDefaulted: mark},
	}}
	if action != Forget {
		patch["spec"] = map[string]any{"config": map[string]any{"nodeSelector": nodeSelector, "tolerations": tolerations}}
	}
	b, _ := json.Marshal(patch)
	return b
}
