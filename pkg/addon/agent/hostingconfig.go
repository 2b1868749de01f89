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
	changed := s.current == nil || hc == nil || s.current.SpecHash != hc.SpecHash || s.current.Source != hc.Source ||
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
	}, nil
}
