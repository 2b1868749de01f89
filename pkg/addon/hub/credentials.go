package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"open-cluster-management.io/addon-framework/pkg/utils"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// credentials reads the Secrets the HostingConfig spec (JSON) references in
// its namespace on the hub. A missing Secret, key or value is not an error
// of the render: it is returned as a problem for the agent to report, so a
// bad reference never holds back the rest of the agent's manifests. Other
// read errors are returned (the render is retried).
func (a *AgentAddon) credentials(ctx context.Context, namespace, hostingConfig string, specJSON []byte) ([]CredentialCopy, []string, error) {
	spec := &v1alpha1.HostingConfigSpec{}
	if err := json.Unmarshal(specJSON, spec); err != nil {
		// The agent reports a spec it cannot read; there is nothing to copy.
		return nil, nil, nil //nolint:nilerr // reported by the agent
	}
	var copies []CredentialCopy
	var problems []string
	for _, ref := range addon.CredentialRefs(spec) {
		secret, err := a.kube.CoreV1().Secrets(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("reading Secret %s/%s (%s of HostingConfig %s): %w", namespace, ref.Name, ref.Field, hostingConfig, err)
		}
		if problem := credentialProblem(secret, err, ref); problem != "" {
			problems = append(problems, fmt.Sprintf("%s of HostingConfig %s: Secret %s/%s %s", ref.Field, hostingConfig, namespace, ref.Name, problem))
			continue
		}
		copies = append(copies, CredentialCopy{Credential: ref.Credential,
			Source: ref.Source(namespace), Data: secret.Data[ref.Key]})
	}
	return copies, problems, nil
}

// credentialProblem says what is wrong with the referenced Secret, read
// with err, or "" when its key holds credentials. It never names the key
// (the admin's HostingConfig does) nor the Secret's other keys: the message
// ends up in conditions on the hub and the management cluster.
func credentialProblem(secret *corev1.Secret, err error, ref addon.CredentialRef) string {
	if apierrors.IsNotFound(err) {
		return "does not exist on the hub"
	}
	data, ok := secret.Data[ref.Key]
	switch {
	case !ok && len(secret.Data) == 0:
		return "has no data"
	case !ok:
		return fmt.Sprintf("has no key named by %s.key (or the default)", ref.Field)
	case len(data) == 0:
		return fmt.Sprintf("has an empty value under the key named by %s.key (or the default)", ref.Field)
	}
	return ""
}

// RenderTrigger asks the addon-framework to render one cluster's agent
// manifests again. The framework's queues exist only once the add-on
// manager's Start returned (and Trigger must not race with Start building
// them), so triggers before that are remembered and sent by Started: a
// Secret changed while the manager was starting is never lost.
type RenderTrigger struct {
	manager Renderer
	mu      sync.Mutex
	started bool
	pending map[string]bool
}

// Renderer is the part of the addon-framework's AddonManager a
// RenderTrigger uses.
type Renderer interface {
	Trigger(clusterName, addonName string)
}

// NewRenderTrigger returns a RenderTrigger for the add-on manager m.
func NewRenderTrigger(m Renderer) *RenderTrigger {
	return &RenderTrigger{manager: m, pending: map[string]bool{}}
}

// Started tells the trigger the add-on manager's Start returned, and sends
// the triggers that came before.
func (t *RenderTrigger) Started() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started = true
	for _, cluster := range slices.Sorted(maps.Keys(t.pending)) {
		t.manager.Trigger(cluster, addon.Name)
	}
	t.pending = nil
}

// Trigger re-renders the cluster's agent manifests.
func (t *RenderTrigger) Trigger(cluster string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		t.pending[cluster] = true
		return
	}
	t.manager.Trigger(cluster, addon.Name)
}

// credentialsWatch re-renders the agents whose HostingConfig references a
// Secret when that Secret changes (created, rotated, deleted), so the copies
// on the management clusters follow it. HostingConfig changes need no help:
// OCM's config spec hash changes and the framework re-renders by itself.
type credentialsWatch struct {
	client  client.Client
	trigger *RenderTrigger
}

// SetupCredentialsWatch registers the controller that re-renders agents when
// a Secret their HostingConfig references changes. It watches Secrets'
// metadata only (the hub's metadata informer for Secrets is shared with
// delivery); contents are read live when rendering.
func SetupCredentialsWatch(mgr ctrl.Manager, trigger *RenderTrigger) error {
	w := &credentialsWatch{client: mgr.GetClient(), trigger: trigger}
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return ctrl.NewControllerManagedBy(mgr).
		Named("hostingconfig-credentials").
		WatchesMetadata(secret, handler.EnqueueRequestsFromMapFunc(w.addonsReferencing)).
		Complete(w)
}

// addonsReferencing maps a Secret to the ManagedClusterAddOns whose desired
// HostingConfig references it.
func (w *credentialsWatch) addonsReferencing(ctx context.Context, secret client.Object) []reconcile.Request {
	configs := &v1alpha1.HostingConfigList{}
	if err := w.client.List(ctx, configs, client.InNamespace(secret.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing HostingConfigs", "namespace", secret.GetNamespace())
		return nil
	}
	referencing := map[types.NamespacedName]bool{}
	for i := range configs.Items {
		for _, ref := range addon.CredentialRefs(&configs.Items[i].Spec) {
			if ref.Name == secret.GetName() {
				referencing[client.ObjectKeyFromObject(&configs.Items[i])] = true
			}
		}
	}
	if len(referencing) == 0 {
		return nil
	}
	addons := &addonv1alpha1.ManagedClusterAddOnList{}
	if err := w.client.List(ctx, addons); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ManagedClusterAddOns")
		return nil
	}
	var out []reconcile.Request
	for _, mca := range addons.Items {
		ok, ref := utils.GetAddOnConfigRef(mca.Status.ConfigReferences, HostingConfigGVR.Group, HostingConfigGVR.Resource)
		if mca.Name != addon.Name || !ok || ref.DesiredConfig == nil {
			continue
		}
		if referencing[types.NamespacedName{Namespace: ref.DesiredConfig.Namespace, Name: ref.DesiredConfig.Name}] {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&mca)})
		}
	}
	return out
}

// Reconcile re-renders one cluster's agent.
func (w *credentialsWatch) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	w.trigger.Trigger(req.Namespace)
	return reconcile.Result{}, nil
}
