package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"

	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// Reporter writes the agent's conditions on its ManagedClusterAddOn. Each
// part of the agent reports through its own Reporter (one owner name each),
// and each owner's conditions are a server-side apply of only that owner's
// condition types: conditions are a map list keyed by type, so owners never
// overwrite each other's, nor those of the addon-manager or registration.
type Reporter struct {
	client    addonclient.Interface
	namespace string // the cluster namespace on the hub
	addonName string
	owner     string
	// recorder records an Event on the ManagedClusterAddOn for each
	// condition transition (nil: none).
	recorder record.EventRecorder

	mu    sync.Mutex
	conds []metav1.Condition
}

// NewReporter returns a Reporter for owner (e.g. "hosting-config",
// "hypershift-operator"), writing to ManagedClusterAddOn addonName in the
// cluster's namespace on the hub.
func NewReporter(client addonclient.Interface, clusterName, addonName, owner string) *Reporter {
	return &Reporter{client: client, namespace: clusterName, addonName: addonName, owner: owner}
}

// WithEvents makes the Reporter record an Event on the ManagedClusterAddOn
// for each condition whose status or reason it changes
// (kubeutil.RecordConditionTransitions): the operator installed, rolling
// out, degraded, the cleanup blocked, and so on. It returns r.
func (r *Reporter) WithEvents(recorder record.EventRecorder) *Reporter {
	r.recorder = recorder
	return r
}

// progressReasons are unhealthy-looking agent states expected on the way
// to healthy: their events are Normal, not Warnings.
var progressReasons = []string{"CleanupInProgress", "RollingOut", "WaitingForAvailability", "WaitingForHostingConfig", "WaitingForCredentials", "NoneNeeded"}

// FieldManager is the server-side apply field manager of this owner.
func (r *Reporter) FieldManager() string { return "hcp-fleet-agent/" + r.owner }

// Set records conditions (Reason and Message are required) and applies all
// of this owner's conditions. A condition whose status did not change keeps
// its lastTransitionTime; nothing is written when nothing changed.
func (r *Reporter) Set(ctx context.Context, conds ...metav1.Condition) error {
	for _, c := range conds {
		if c.Type == "" || c.Reason == "" || c.Message == "" {
			return fmt.Errorf("condition %q: type, reason and message are required", c.Type)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	current, err := r.client.AddonV1alpha1().ManagedClusterAddOns(r.namespace).Get(ctx, r.addonName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading ManagedClusterAddOn %s/%s: %w", r.namespace, r.addonName, err)
	}
	desired := append([]metav1.Condition(nil), r.conds...)
	for _, c := range conds {
		c.ObservedGeneration = current.Generation
		c.Message = kubeutil.ConditionMessage(c.Message)
		// Start from what the hub shows, so transition times survive agent
		// restarts.
		if live := meta.FindStatusCondition(current.Status.Conditions, c.Type); live != nil && meta.FindStatusCondition(desired, c.Type) == nil {
			desired = append(desired, *live)
		}
		meta.SetStatusCondition(&desired, c)
	}
	sort.Slice(desired, func(i, j int) bool { return desired[i].Type < desired[j].Type })
	if conditionsEqual(desired, current.Status.Conditions) {
		r.conds = desired
		return nil
	}
	patch, err := json.Marshal(map[string]any{
		"apiVersion": addonv1alpha1.GroupVersion.String(),
		"kind":       "ManagedClusterAddOn",
		"metadata":   map[string]any{"name": r.addonName, "namespace": r.namespace},
		"status":     map[string]any{"conditions": desired},
	})
	if err != nil {
		return err
	}
	if _, err := r.client.AddonV1alpha1().ManagedClusterAddOns(r.namespace).Patch(ctx, r.addonName, types.ApplyPatchType, patch,
		metav1.PatchOptions{FieldManager: r.FieldManager(), Force: ptr.To(true)}, "status"); err != nil {
		return fmt.Errorf("reporting conditions on ManagedClusterAddOn %s/%s: %w", r.namespace, r.addonName, err)
	}
	r.conds = desired
	applied := make([]metav1.Condition, 0, len(conds))
	for _, c := range conds {
		if d := meta.FindStatusCondition(desired, c.Type); d != nil {
			applied = append(applied, *d)
		}
	}
	kubeutil.RecordConditionTransitions(r.recorder, current, current.Status.Conditions, applied, kubeutil.TrueIsHealthy,
		func(reason string) bool { return slices.Contains(progressReasons, reason) }, "")
	return nil
}

// conditionsEqual reports whether every condition in want is in have with
// the same status, reason, message and generation.
func conditionsEqual(want, have []metav1.Condition) bool {
	for _, w := range want {
		h := meta.FindStatusCondition(have, w.Type)
		if h == nil || h.Status != w.Status || h.Reason != w.Reason || h.Message != w.Message || h.ObservedGeneration != w.ObservedGeneration {
			return false
		}
	}
	return true
}
