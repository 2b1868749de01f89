package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

const (
	conditionHostingConfig = addon.ConditionHostingConfigApplied
	conditionCleanup       = addon.ConditionCleanup
)

// HostingConfig is the HostingConfig the hub rendered for this cluster.
type HostingConfig struct {
	// Source is namespace/name of the HostingConfig on the hub.
	Source string
	// SpecHash is OCM's hash of the spec (status.configReferences).
	SpecHash string
	// Spec is the HostingConfig spec as JSON, exactly as the hub holds it.
	Spec json.RawMessage
	// CredentialProblems are the credentials references of the spec the
	// hub could not resolve (messages naming the hub Secret and key); the
	// hub delivers copies of the others (addon.Credential).
	CredentialProblems []string
	// Revision is the hub's name of this content
	// (addon.HostingConfigRevisionAnnotation; empty from an older hub), and
	// HealthyRevision the one the agent last reported the HyperShift
	// operator healthy with (addon.OperatorHealthyRevisionAnnotation).
	Revision, HealthyRevision string
}

// HostingConfigSource holds the current HostingConfig and tells subscribers
// when it changes.
type HostingConfigSource struct {
	mu          sync.Mutex
	current     *HostingConfig
	subscribers []chan<- event.GenericEvent
}

func newHostingConfigSource() *HostingConfigSource { return &HostingConfigSource{} }

// Current returns the current HostingConfig, or nil before the first one.
func (s *HostingConfigSource) Current() *HostingConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// Subscribe sends a GenericEvent for obj on ch whenever the HostingConfig
// changes (use with source.Channel to requeue a reconciler).
func (s *HostingConfigSource) Subscribe(ch chan<- event.GenericEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subscribers = append(s.subscribers, ch)
}

func (s *HostingConfigSource) set(hc *HostingConfig, obj client.Object) {
	s.mu.Lock()
	// The revision covers the spec as handed over, which changes without
	// OCM's spec hash when the release's operator image does; the healthy
	// revision is the agent's own answer and changes nothing.
	changed := s.current == nil || hc == nil || s.current.SpecHash != hc.SpecHash || s.current.Source != hc.Source || s.current.Revision != hc.Revision ||
		!slices.Equal(s.current.CredentialProblems, hc.CredentialProblems)
	s.current = hc
	subs := append([]chan<- event.GenericEvent(nil), s.subscribers...)
	s.mu.Unlock()
	if !changed {
		return
	}
	for _, ch := range subs {
		select {
		case ch <- event.GenericEvent{Object: obj}:
		default: // a requeue is already pending
		}
	}
}

// hostingConfigReconciler loads the HostingConfig ConfigMap the hub renders
// into the agent's namespace and reports whether the agent runs with it.
type hostingConfigReconciler struct {
	client   client.Client
	env      *Env
	reporter *Reporter
}

func setupHostingConfig(mgr ctrl.Manager, env *Env) error {
	r := &hostingConfigReconciler{client: mgr.GetClient(), env: env, reporter: env.Reporter("hosting-config")}
	name, ns := env.Options.HostingConfigMap, env.Options.AddonNamespace
	return ctrl.NewControllerManagedBy(mgr).
		Named("hosting-config").
		For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == ns && o.GetName() == name
		}))).
		Complete(r)
}

func (r *hostingConfigReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cm := &corev1.ConfigMap{}
	key := types.NamespacedName{Namespace: r.env.Options.AddonNamespace, Name: r.env.Options.HostingConfigMap}
	if err := r.client.Get(ctx, key, cm); err != nil {
		if apierrors.IsNotFound(err) {
			r.env.HostingConfig.set(nil, cm)
			return ctrl.Result{}, r.reporter.Set(ctx, metav1.Condition{Type: conditionHostingConfig, Status: metav1.ConditionFalse,
				Reason: "HostingConfigMissing", Message: fmt.Sprintf("ConfigMap %s not found: the hub has not rendered a HostingConfig for this cluster", key)})
		}
		return ctrl.Result{}, err
	}
	hc, err := parseHostingConfig(cm)
	if err != nil {
		return ctrl.Result{}, r.reporter.Set(ctx, metav1.Condition{Type: conditionHostingConfig, Status: metav1.ConditionFalse,
			Reason: "HostingConfigInvalid", Message: fmt.Sprintf("ConfigMap %s: %v", key, err)})
	}
	r.env.HostingConfig.set(hc, cm)
	return ctrl.Result{}, r.reporter.Set(ctx, metav1.Condition{Type: conditionHostingConfig, Status: metav1.ConditionTrue,
		Reason: "HostingConfigApplied", Message: fmt.Sprintf("running with HostingConfig %s (spec hash %s)", hc.Source, hc.SpecHash)})
}

func parseHostingConfig(cm *corev1.ConfigMap) (*HostingConfig, error) {
	spec := cm.Data[addon.HostingConfigKey]
	if spec == "" {
		return nil, fmt.Errorf("key %s is empty", addon.HostingConfigKey)
	}
	if !json.Valid([]byte(spec)) {
		return nil, fmt.Errorf("key %s is not valid JSON", addon.HostingConfigKey)
	}
	var problems []string
	if p := cm.Data[addon.CredentialProblemsKey]; p != "" {
		if err := json.Unmarshal([]byte(p), &problems); err != nil {
			return nil, fmt.Errorf("key %s is not a JSON list of messages: %w", addon.CredentialProblemsKey, err)
		}
	}
	return &HostingConfig{
		Source:             cm.Data[addon.HostingConfigRefKey],
		SpecHash:           cm.Data[addon.HostingConfigHashKey],
		Spec:               json.RawMessage(spec),
		CredentialProblems: problems,
		Revision:           cm.Annotations[addon.HostingConfigRevisionAnnotation],
		HealthyRevision:    cm.Annotations[addon.OperatorHealthyRevisionAnnotation],
	}, nil
}

// ReportOperatorHealth answers the hub's revision of the HostingConfig
// ConfigMap: healthy says whether the HyperShift operator is healthy as
// installed from hc (or left to another manager). The answer is an
// annotation of that ConfigMap, which a condition rule of the add-on
// ManifestWork compares with the revision (pkg/addon/hub, rollouthealth.go),
// so OCM's rollout counts this cluster done only once the operator is healthy
// with the configuration the rollout brought. An hc that is no longer the
// current one is not answered (the answer would be about a configuration
// the ConfigMap no longer holds); nothing is written when the ConfigMap
// already says so.
func (e *Env) ReportOperatorHealth(ctx context.Context, hc *HostingConfig, healthy bool) error {
	current := e.HostingConfig.Current()
	if hc == nil || current == nil || hc.Revision == "" || current.Revision != hc.Revision {
		return nil
	}
	var want any // null removes the annotation
	if healthy {
		want = hc.Revision
	}
	answer := ""
	if healthy {
		answer = hc.Revision
	}
	// The cached ConfigMap may not show this agent's last patch yet: skip
	// only when it and the last answer written agree with this one, or a
	// withdrawal right after an answer would be lost.
	e.healthAnswer.mu.Lock()
	defer e.healthAnswer.mu.Unlock()
	if current.HealthyRevision == answer && (e.healthAnswer.written == nil || *e.healthAnswer.written == answer) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{addon.OperatorHealthyRevisionAnnotation: want},
	}})
	if err != nil {
		return err
	}
	// A merge patch of the one annotation: the hub's fields stay the work
	// agent's.
	if _, err := e.ManagedClient.CoreV1().ConfigMaps(e.Options.AddonNamespace).Patch(ctx, e.Options.HostingConfigMap,
		types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("reporting the HyperShift operator's health on ConfigMap %s/%s: %w", e.Options.AddonNamespace, e.Options.HostingConfigMap, err)
	}
	e.healthAnswer.written = &answer
	return nil
}

// healthAnswer is the last answer ReportOperatorHealth wrote.
type healthAnswer struct {
	mu      sync.Mutex
	written *string
}

// ReadHostingConfig reads the HostingConfig ConfigMap from the API server
// (for the cleanup, which runs without the agent's cache); nil when there is
// none.
func (e *Env) ReadHostingConfig(ctx context.Context) (*HostingConfig, error) {
	cm, err := e.ManagedClient.CoreV1().ConfigMaps(e.Options.AddonNamespace).Get(ctx, e.Options.HostingConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseHostingConfig(cm)
}
