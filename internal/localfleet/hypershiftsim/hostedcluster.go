package hypershiftsim

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// historyLimit bounds status.version.history, as the operator does.
const historyLimit = 10

// upgradeRecheck is how often the guest's operators are read again while
// the stand-in has a guest to read (a CSV change is no HostedCluster event).
const upgradeRecheck = 2 * time.Second

type hostedClusterReconciler struct {
	client client.Client
	reader client.Reader // uncached: Secrets and Namespaces
	opts   Options
	now    func() time.Time
	// catalogs are the catalog servers the stand-in runs for hosted
	// clusters with guests (catalogs.go).
	catalogs *catalogServers
}

func setupHostedClusters(mgr ctrl.Manager, opts Options) error {
	r := &hostedClusterReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), opts: opts, now: time.Now, catalogs: newCatalogServers()}
	if err := mgr.Add(r.catalogs); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("hypershiftsim-hostedcluster").For(&hyperv1.HostedCluster{}).Complete(r)
}

// ControlPlaneNamespace is the namespace HyperShift runs a hosted control
// plane in.
func ControlPlaneNamespace(hc *hyperv1.HostedCluster) string { return hc.Namespace + "-" + hc.Name }

// KubeconfigSecretName is the admin kubeconfig Secret of a HostedCluster, in
// its namespace.
func KubeconfigSecretName(hcName string) string { return hcName + "-admin-kubeconfig" }

func (r *hostedClusterReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	hc := &hyperv1.HostedCluster{}
	if err := r.client.Get(ctx, req.NamespacedName, hc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	duration := rolloutDuration(hc.Annotations, r.opts.RolloutDuration)
	if hc.DeletionTimestamp != nil {
		return r.delete(ctx, hc, duration)
	}
	if err := kubeutil.AddFinalizer(ctx, r.client, hc, Finalizer); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.ensureControlPlaneNamespace(ctx, hc); err != nil {
		return reconcile.Result{}, err
	}
	if paused, requeue, _ := pausedUntil(hc.Spec.PausedUntil, r.now()); paused {
		return r.reconcilePaused(ctx, hc, requeue)
	}
	if err := r.forgetSnapshot(ctx, hc); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.defaultClusterID(ctx, hc); err != nil {
		return reconcile.Result{}, err
	}

	// HyperShift updates status first (ClusterVersionUpgradeable, copied
	// from the guest's ClusterVersion), then refuses an upgrade the guest's
	// operators forbid and skips the rest of the reconcile.
	upgradeable := r.clusterVersionUpgradeable(ctx, hc)
	seen := hc.DeepCopy()
	if upgradeable != nil {
		meta.SetStatusCondition(&seen.Status.Conditions, *upgradeable)
	}
	if err := upgradeBlocked(seen); err != nil {
		ctrl.LoggerFrom(ctx).Info("reconciliation is blocked", "message", err.Error())
		s := simStatus{Conditions: seen.Status.Conditions, Version: hc.Status.Version, ControlPlaneEndpoint: hc.Status.ControlPlaneEndpoint, KubeConfig: hc.Status.KubeConfig}
		return reconcile.Result{RequeueAfter: upgradeRecheck}, patchHostedClusterStatus(ctx, r.client, hc, s)
	}
	status, requeue := desiredStatus(hc, r.now(), duration)
	if upgradeable != nil {
		meta.SetStatusCondition(&status.Conditions, *upgradeable)
		if requeue == 0 || requeue > upgradeRecheck {
			requeue = upgradeRecheck
		}
	}
	if controlPlaneUp(status) {
		if err := r.restoreSnapshot(ctx, hc); err != nil {
			return reconcile.Result{}, err
		}
		cp, err := r.opts.ControlPlanes.Ensure(ctx, hc)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("control plane of %s/%s: %w", hc.Namespace, hc.Name, err)
		}
		if err := r.ensureKubeconfig(ctx, hc, cp.Kubeconfig); err != nil {
			return reconcile.Result{}, err
		}
		if err := r.ensureServiceNetworkKubeconfig(ctx, hc, cp); err != nil {
			return reconcile.Result{}, err
		}
		status.ControlPlaneEndpoint = hyperv1.APIEndpoint{Host: cp.Host, Port: cp.Port}
		status.KubeConfig = &corev1.LocalObjectReference{Name: KubeconfigSecretName(hc.Name)}
		if guests, ok := r.opts.ControlPlanes.(Guests); ok {
			if cfg, ok := guests.GuestConfig(hc); ok {
				// Logged, not returned: the status below must not wait for
				// the catalogs (rechecked every upgradeRecheck anyway).
				if err := r.reconcileCatalogs(ctx, hc, cfg); err != nil {
					ctrl.LoggerFrom(ctx).Error(err, "default catalogs of the hosted cluster")
				}
				if requeue == 0 || requeue > upgradeRecheck {
					requeue = upgradeRecheck
				}
			}
		}
	}
	if err := patchHostedClusterStatus(ctx, r.client, hc, status); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// defaultClusterID gives a HostedCluster without spec.clusterID a random
// UUID, written to its spec, as upstream's defaultClusterIDsIfNeeded
// (hypershift-operator/controllers/hostedcluster/hostedcluster_controller.go)
// does after the pause check: the guest's identity, which a restore
// elsewhere must carry over. (Upstream defaults spec.infraID there too; the
// hub always sets it.)
func (r *hostedClusterReconciler) defaultClusterID(ctx context.Context, hc *hyperv1.HostedCluster) error {
	if hc.Spec.ClusterID != "" {
		return nil
	}
	hc.Spec.ClusterID = string(uuid.NewUUID())
	if err := r.client.Update(ctx, hc); err != nil {
		return fmt.Errorf("failed to update hostedcluster after defaulting IDs: %w", err)
	}
	return nil
}

// rolloutDuration is the annotation's duration where it parses, else def.
func rolloutDuration(annotations map[string]string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(annotations[AnnotationRolloutDuration]); err == nil && d >= 0 {
		return d
	}
	return def
}

// simStatus is the part of HostedCluster status the operator owns.
type simStatus struct {
	Conditions           []metav1.Condition            `json:"conditions"`
	Version              *hyperv1.ClusterVersionStatus `json:"version,omitempty"`
	ControlPlaneEndpoint hyperv1.APIEndpoint           `json:"controlPlaneEndpoint,omitzero"`
	KubeConfig           *corev1.LocalObjectReference  `json:"kubeconfig,omitempty"`
}

// controlPlaneUp: a rollout completed once and the control plane is not held
// down by the never-available annotation.
func controlPlaneUp(s simStatus) bool {
	return meta.IsStatusConditionTrue(s.Conditions, string(hyperv1.HostedClusterAvailable))
}

// desiredStatus computes the operator's status for hc at now, and when to
// look again (zero: only on the next change).
func desiredStatus(hc *hyperv1.HostedCluster, now time.Time, duration time.Duration) (simStatus, time.Duration) {
	s := simStatus{Conditions: append([]metav1.Condition(nil), hc.Status.Conditions...)}
	if hc.Status.Version != nil {
		s.Version = hc.Status.Version.DeepCopy()
	}
	set := func(t hyperv1.ConditionType, status metav1.ConditionStatus, reason, message string) {
		meta.SetStatusCondition(&s.Conditions, metav1.Condition{Type: string(t), Status: status, Reason: reason,
			Message: message, ObservedGeneration: hc.Generation, LastTransitionTime: metav1.NewTime(now)})
	}
	meta.SetStatusCondition(&s.Conditions, reconciliationActive(hc, now))
	set(hyperv1.ReconciliationSucceeded, metav1.ConditionTrue, "ReconciliatonSucceeded", "Reconciliation completed successfully")
	set(hyperv1.ValidHostedClusterConfiguration, metav1.ConditionTrue, hyperv1.AsExpectedReason, "Configuration passes validation")
	set(hyperv1.SupportedHostedCluster, metav1.ConditionTrue, hyperv1.AsExpectedReason, "HostedCluster is supported by operator configuration")
	failing := failingUpgrade(hc)
	switch msg, ok := hc.Annotations[AnnotationDegraded]; {
	case ok:
		set(hyperv1.HostedClusterDegraded, metav1.ConditionTrue, "UnavailableReplicas", orDefault(msg, "hosted control plane components are unavailable (injected by the HyperShift stand-in)"))
	case failing:
		// The control-plane operator's reconcileDegradedStatus
		// (control-plane-operator/controllers/hostedcontrolplane/
		// hostedcontrolplane_controller.go) names each of its Deployments
		// with unavailable replicas; HyperShift copies the condition.
		set(hyperv1.HostedClusterDegraded, metav1.ConditionTrue, "UnavailableReplicas", failingMessage)
	default:
		set(hyperv1.HostedClusterDegraded, metav1.ConditionFalse, hyperv1.AsExpectedReason, "The hosted cluster is not degraded")
	}
	clusterVersionSucceeding(&s.Conditions, failing, hc.Generation, now)

	image := hc.Spec.Release.Image
	version, invalid := releaseVersion(image)
	var requeue time.Duration
	if invalid != nil {
		set(hyperv1.ValidReleaseImage, metav1.ConditionFalse, hyperv1.InvalidImageReason, invalid.Error())
		set(hyperv1.HostedClusterProgressing, metav1.ConditionFalse, hyperv1.BlockedReason, invalid.Error())
		if s.Version == nil || !anyCompleted(s.Version.History) {
			set(hyperv1.HostedClusterAvailable, metav1.ConditionFalse, hyperv1.InvalidImageReason,
				"The hosted control plane cannot be rolled out: "+invalid.Error())
		}
		if s.Version != nil {
			s.Version.ObservedGeneration = hc.Generation
		}
		return s, 0
	}
	set(hyperv1.ValidReleaseImage, metav1.ConditionTrue, hyperv1.AsExpectedReason, "Release image is valid")

	if s.Version == nil || s.Version.Desired.Image != image {
		// A new rollout: the first one, or an upgrade.
		if s.Version == nil {
			s.Version = &hyperv1.ClusterVersionStatus{}
		}
		s.Version.Desired = configv1.Release{Image: image, Version: version}
		entry := configv1.UpdateHistory{State: configv1.PartialUpdate, StartedTime: metav1.NewTime(now), Image: image, Version: version}
		s.Version.History = append([]configv1.UpdateHistory{entry}, s.Version.History...)
		if len(s.Version.History) > historyLimit {
			s.Version.History = s.Version.History[:historyLimit]
		}
	}
	s.Version.ObservedGeneration = hc.Generation
	// The hosted CVO's available and conditional updates from the version
	// it runs (updates.go). AvailableUpdates is never nil: required by the
	// schema, and null would delete it in a merge patch.
	s.Version.AvailableUpdates, s.Version.ConditionalUpdates = updates(graphFor(hc.Spec.Channel), version, s.Version.ConditionalUpdates, now)
	neverMsg, never := hc.Annotations[AnnotationNeverAvailable]
	if msg, ok := hc.Annotations[AnnotationRestoredNeverAvailable]; ok && !never && restoredFromSnapshot(hc) {
		neverMsg, never = msg, true
	}
	// A failing upgrade never completes: the CVO keeps the history entry
	// Partial while it cannot apply the release.
	if current := &s.Version.History[0]; current.State == configv1.PartialUpdate && !never && !failing {
		if elapsed := now.Sub(current.StartedTime.Time); elapsed >= duration {
			current.State = configv1.CompletedUpdate
			current.CompletionTime = ptr.To(metav1.NewTime(now))
		} else {
			requeue = duration - elapsed
		}
	}
	switch {
	case never:
		set(hyperv1.HostedClusterAvailable, metav1.ConditionFalse, hyperv1.WaitingForAvailableReason,
			orDefault(neverMsg, "the hosted control plane never becomes available (injected by the HyperShift stand-in)"))
	case anyCompleted(s.Version.History):
		set(hyperv1.HostedClusterAvailable, metav1.ConditionTrue, hyperv1.AsExpectedReason, "The hosted control plane is available")
	default:
		set(hyperv1.HostedClusterAvailable, metav1.ConditionFalse, hyperv1.WaitingForAvailableReason, "Waiting for hosted control plane to be healthy")
	}
	if s.Version.History[0].State == configv1.PartialUpdate {
		set(hyperv1.HostedClusterProgressing, metav1.ConditionTrue, "Progressing", "HostedCluster is deploying, upgrading, or reconfiguring")
	} else {
		set(hyperv1.HostedClusterProgressing, metav1.ConditionFalse, hyperv1.AsExpectedReason, "HostedCluster is at expected version")
	}
	return s, requeue
}

// failingMessage is the Degraded message of an upgrade that fails, as the
// control-plane operator words a Deployment with unavailable replicas.
const failingMessage = "kube-apiserver deployment has 1 unavailable replicas"

// failingUpgrade: the HostedCluster runs, or moves to, the release its
// failing-release annotation names, so the upgrade fails.
func failingUpgrade(hc *hyperv1.HostedCluster) bool {
	image, ok := hc.Annotations[AnnotationFailingRelease]
	return ok && image != "" && image == hc.Spec.Release.Image
}

// clusterVersionSucceeding plays HyperShift's copy of the hosted CVO's
// Failing condition, inverted into ClusterVersionSucceeding
// (hypershift-operator/controllers/hostedcluster/hostedcluster_controller.go):
// a release whose kube-apiserver does not come up leaves the CVO Failing
// with ClusterOperatorDegraded (cluster-version-operator's
// "Cluster operator %s is degraded"). The stand-in writes it only once an
// upgrade failed, and keeps it up to date from then on.
func clusterVersionSucceeding(conds *[]metav1.Condition, failing bool, generation int64, now time.Time) {
	c := metav1.Condition{Type: string(hyperv1.ClusterVersionSucceeding), ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now),
		Status: metav1.ConditionTrue, Reason: hyperv1.AsExpectedReason, Message: "Cluster version is available"}
	if failing {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "ClusterOperatorDegraded", "Cluster operator kube-apiserver is degraded"
	} else if meta.FindStatusCondition(*conds, c.Type) == nil {
		return
	}
	meta.SetStatusCondition(conds, c)
}

func anyCompleted(history []configv1.UpdateHistory) bool {
	for _, h := range history {
		if h.State == configv1.CompletedUpdate {
			return true
		}
	}
	return false
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// patchHostedClusterStatus writes the operator's status fields with a JSON
// patch on the status subresource, guarded by the resourceVersion read (other
// status fields stay as they are), and only when they changed. A JSON patch,
// not a merge patch: in a merge patch the null completionTime of a Partial
// history entry would be dropped, and the schema requires the field.
func patchHostedClusterStatus(ctx context.Context, c client.Client, hc *hyperv1.HostedCluster, s simStatus) error {
	live := simStatus{Conditions: hc.Status.Conditions, Version: hc.Status.Version,
		ControlPlaneEndpoint: hc.Status.ControlPlaneEndpoint, KubeConfig: hc.Status.KubeConfig}
	if reflect.DeepEqual(normalizeJSON(live), normalizeJSON(s)) {
		return nil
	}
	ops := []map[string]any{{"op": "test", "path": "/metadata/resourceVersion", "value": hc.ResourceVersion}}
	if reflect.DeepEqual(hc.Status, hyperv1.HostedClusterStatus{}) {
		ops = append(ops, map[string]any{"op": "add", "path": "/status", "value": s})
	} else {
		ops = append(ops, map[string]any{"op": "add", "path": "/status/conditions", "value": s.Conditions})
		if s.Version != nil {
			ops = append(ops, map[string]any{"op": "add", "path": "/status/version", "value": s.Version})
		}
		if s.ControlPlaneEndpoint != (hyperv1.APIEndpoint{}) {
			ops = append(ops, map[string]any{"op": "add", "path": "/status/controlPlaneEndpoint", "value": s.ControlPlaneEndpoint})
		}
		if s.KubeConfig != nil {
			ops = append(ops, map[string]any{"op": "add", "path": "/status/kubeconfig", "value": s.KubeConfig})
		}
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	return c.Status().Patch(ctx, hc, client.RawPatch(types.JSONPatchType, data))
}

// normalizeJSON makes two statuses comparable as the API would store them
// (times at second precision).
func normalizeJSON(s any) string {
	b, _ := json.Marshal(s)
	var v any
	_ = json.Unmarshal(b, &v)
	b, _ = json.Marshal(v)
	return string(b)
}

func (r *hostedClusterReconciler) ensureControlPlaneNamespace(ctx context.Context, hc *hyperv1.HostedCluster) error {
	name := ControlPlaneNamespace(hc)
	err := r.reader.Get(ctx, types.NamespacedName{Name: name}, &corev1.Namespace{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels:      map[string]string{"hypershift.openshift.io/hosted-control-plane": "true"},
		Annotations: map[string]string{"hypershift.openshift.io/cluster": hc.Namespace + "/" + hc.Name}}}
	if err := r.client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating control-plane namespace %s: %w", name, err)
	}
	return nil
}

// ensureKubeconfig writes the admin kubeconfig Secret, owned by the
// HostedCluster, when it is missing or differs.
func (r *hostedClusterReconciler) ensureKubeconfig(ctx context.Context, hc *hyperv1.HostedCluster, kubeconfig []byte) error {
	key := types.NamespacedName{Namespace: hc.Namespace, Name: KubeconfigSecretName(hc.Name)}
	live := &corev1.Secret{}
	err := r.reader.Get(ctx, key, live)
	switch {
	case err == nil && string(live.Data[KubeconfigKey]) == string(kubeconfig):
		return nil
	case err == nil:
		live.Data = map[string][]byte{KubeconfigKey: kubeconfig}
		return r.client.Update(ctx, live)
	case apierrors.IsNotFound(err):
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: hyperv1.GroupVersion.String(), Kind: "HostedCluster",
					Name: hc.Name, UID: hc.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Data: map[string][]byte{KubeconfigKey: kubeconfig},
		}
		return r.client.Create(ctx, secret)
	default:
		return err
	}
}

// ServiceNetworkKubeconfigSecret is the Secret, in the control-plane
// namespace, with an admin kubeconfig for components running next to the
// control plane: it points at the kube-apiserver Service (kasservice.go).
const ServiceNetworkKubeconfigSecret = "service-network-admin-kubeconfig"

// delete plays the operator's teardown: after the rollout duration, delete
// the NodePools, the kubeconfig Secret and the control-plane namespace, and
// let the HostedCluster go once its NodePools are gone.
func (r *hostedClusterReconciler) delete(ctx context.Context, hc *hyperv1.HostedCluster, duration time.Duration) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(hc, Finalizer) {
		return reconcile.Result{}, nil
	}
	if elapsed := r.now().Sub(hc.DeletionTimestamp.Time); elapsed < duration {
		return reconcile.Result{RequeueAfter: duration - elapsed}, nil
	}
	pools := &hyperv1.NodePoolList{}
	if err := r.client.List(ctx, pools, client.InNamespace(hc.Namespace)); err != nil {
		return reconcile.Result{}, err
	}
	remaining := 0
	for i := range pools.Items {
		np := &pools.Items[i]
		if np.Spec.ClusterName != hc.Name {
			continue
		}
		remaining++
		if np.DeletionTimestamp == nil {
			if err := r.client.Delete(ctx, np); client.IgnoreNotFound(err) != nil {
				return reconcile.Result{}, err
			}
		}
	}
	if remaining > 0 {
		return reconcile.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hc.Namespace, Name: KubeconfigSecretName(hc.Name)}}
	if err := r.client.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	}
	// As HyperShift's HostedClusterReconciler.delete does
	// (hypershift-operator/controllers/hostedcluster/hostedcluster_controller.go),
	// block until the control-plane namespace is gone: a HostedCluster
	// deleted and created again under its name must not find its new
	// content refused by a namespace still terminating.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ControlPlaneNamespace(hc)}}
	if err := r.client.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	}
	if err := r.reader.Get(ctx, types.NamespacedName{Name: ns.Name}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		if err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	r.catalogs.remove(hc.UID)
	if r.opts.ClusterDNS != nil {
		r.opts.ClusterDNS.Remove(ControlPlaneNamespace(hc), KubeAPIServerService)
	}
	if err := r.opts.ControlPlanes.Remove(ctx, hc); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, client.IgnoreNotFound(kubeutil.RemoveFinalizer(ctx, r.client, hc, Finalizer))
}
