package hypershiftsim

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// reasonWaitingForMachines is HyperShift's reason while a NodePool's
// machines are not all available.
const reasonWaitingForMachines = "WaitingForAvailableMachines"

type nodePoolReconciler struct {
	client client.Client
	opts   Options
	now    func() time.Time
}

func setupNodePools(mgr ctrl.Manager, opts Options) error {
	r := &nodePoolReconciler{client: mgr.GetClient(), opts: opts, now: time.Now}
	// A HostedCluster becoming available lets its NodePools' machines join.
	poolsOf := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		pools := &hyperv1.NodePoolList{}
		if err := r.client.List(ctx, pools, client.InNamespace(obj.GetNamespace())); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for _, np := range pools.Items {
			if np.Spec.ClusterName == obj.GetName() {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&np)})
			}
		}
		return reqs
	})
	return ctrl.NewControllerManagedBy(mgr).Named("hypershiftsim-nodepool").
		For(&hyperv1.NodePool{}).
		Watches(&hyperv1.HostedCluster{}, poolsOf).
		Complete(r)
}

func (r *nodePoolReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	np := &hyperv1.NodePool{}
	if err := r.client.Get(ctx, req.NamespacedName, np); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	hc := &hyperv1.HostedCluster{}
	err := r.client.Get(ctx, types.NamespacedName{Namespace: np.Namespace, Name: np.Spec.ClusterName}, hc)
	if client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	}
	hcFound := err == nil
	duration := r.opts.RolloutDuration
	if hcFound {
		duration = rolloutDuration(hc.Annotations, duration)
	}
	if np.DeletionTimestamp != nil {
		if !controllerutil.ContainsFinalizer(np, Finalizer) {
			return reconcile.Result{}, nil
		}
		if elapsed := r.now().Sub(np.DeletionTimestamp.Time); elapsed < duration {
			return reconcile.Result{RequeueAfter: duration - elapsed}, nil
		}
		return reconcile.Result{}, client.IgnoreNotFound(kubeutil.RemoveFinalizer(ctx, r.client, np, Finalizer))
	}
	if err := kubeutil.AddFinalizer(ctx, r.client, np, Finalizer); err != nil {
		return reconcile.Result{}, err
	}
	hcAvailable := hcFound && meta.IsStatusConditionTrue(hc.Status.Conditions, string(hyperv1.HostedClusterAvailable))
	status, requeue := desiredNodePoolStatus(np, hcAvailable, r.now(), duration)
	if err := patchNodePoolStatus(ctx, r.client, np, status); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// nodePoolStatus is the part of NodePool status the operator owns.
type nodePoolStatus struct {
	Replicas   int32                       `json:"replicas"`
	Version    string                      `json:"version,omitempty"`
	Conditions []hyperv1.NodePoolCondition `json:"conditions"`
}

// targetReplicas is what the NodePool asks for: spec.replicas, or the
// autoscaler's minimum.
func targetReplicas(np *hyperv1.NodePool) int32 {
	switch {
	case np.Spec.Replicas != nil:
		return *np.Spec.Replicas
	case np.Spec.AutoScaling != nil:
		return np.Spec.AutoScaling.Min
	}
	return 0
}

// desiredNodePoolStatus: a NodePool whose replicas or version differ from
// its spec waits (Ready=False, WaitingForAvailableMachines) for the rollout
// duration, counted from when it started waiting, and for its HostedCluster
// to be available; then it has what it asked for.
func desiredNodePoolStatus(np *hyperv1.NodePool, hcAvailable bool, now time.Time, duration time.Duration) (nodePoolStatus, time.Duration) {
	s := nodePoolStatus{Replicas: np.Status.Replicas, Version: np.Status.Version,
		Conditions: append([]hyperv1.NodePoolCondition(nil), np.Status.Conditions...)}
	set := func(t string, status corev1.ConditionStatus, reason, message string) {
		setNodePoolCondition(&s.Conditions, hyperv1.NodePoolCondition{Type: t, Status: status, Reason: reason, Message: message,
			ObservedGeneration: np.Generation, LastTransitionTime: metav1.NewTime(now)})
	}
	want := targetReplicas(np)
	version, invalid := releaseVersion(np.Spec.Release.Image)
	if invalid != nil {
		set(hyperv1.NodePoolValidReleaseImageConditionType, corev1.ConditionFalse, hyperv1.InvalidImageReason, invalid.Error())
		version = s.Version // nothing to roll out
	} else {
		set(hyperv1.NodePoolValidReleaseImageConditionType, corev1.ConditionTrue, hyperv1.AsExpectedReason, "Using release image: "+np.Spec.Release.Image)
	}
	if s.Version != "" && s.Version != version {
		set(hyperv1.NodePoolUpdatingVersionConditionType, corev1.ConditionTrue, hyperv1.AsExpectedReason, "Updating version in progress. Target version: "+version)
	} else {
		set(hyperv1.NodePoolUpdatingVersionConditionType, corev1.ConditionFalse, hyperv1.AsExpectedReason, "")
	}
	var requeue time.Duration
	if s.Replicas != want || s.Version != version {
		waiting := findNodePoolCondition(s.Conditions, hyperv1.NodePoolReadyConditionType)
		since := now
		if waiting != nil && waiting.Status == corev1.ConditionFalse && waiting.Reason == reasonWaitingForMachines {
			since = waiting.LastTransitionTime.Time
		}
		elapsed := now.Sub(since)
		switch {
		case elapsed >= duration && hcAvailable:
			s.Replicas, s.Version = want, version
		case !hcAvailable:
			msg := fmt.Sprintf("Minimum availability requires %d replicas, current %d available: waiting for HostedCluster %s to be available", want, s.Replicas, np.Spec.ClusterName)
			set(hyperv1.NodePoolReadyConditionType, corev1.ConditionFalse, reasonWaitingForMachines, msg)
			set(hyperv1.NodePoolAllMachinesReadyConditionType, corev1.ConditionFalse, reasonWaitingForMachines, msg)
			return s, 0 // the HostedCluster's change wakes us
		default:
			msg := fmt.Sprintf("Minimum availability requires %d replicas, current %d available", want, s.Replicas)
			set(hyperv1.NodePoolReadyConditionType, corev1.ConditionFalse, reasonWaitingForMachines, msg)
			set(hyperv1.NodePoolAllMachinesReadyConditionType, corev1.ConditionFalse, reasonWaitingForMachines, msg)
			return s, duration - elapsed
		}
	}
	set(hyperv1.NodePoolReadyConditionType, corev1.ConditionTrue, hyperv1.AsExpectedReason, "")
	set(hyperv1.NodePoolAllMachinesReadyConditionType, corev1.ConditionTrue, hyperv1.AsExpectedReason, "All is well")
	set(hyperv1.NodePoolUpdatingVersionConditionType, corev1.ConditionFalse, hyperv1.AsExpectedReason, "")
	return s, requeue
}

func findNodePoolCondition(conds []hyperv1.NodePoolCondition, t string) *hyperv1.NodePoolCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// setNodePoolCondition sets c, keeping the transition time when the status
// does not change.
func setNodePoolCondition(conds *[]hyperv1.NodePoolCondition, c hyperv1.NodePoolCondition) {
	if live := findNodePoolCondition(*conds, c.Type); live != nil {
		if live.Status == c.Status {
			c.LastTransitionTime = live.LastTransitionTime
		}
		*live = c
		return
	}
	*conds = append(*conds, c)
}

func patchNodePoolStatus(ctx context.Context, c client.Client, np *hyperv1.NodePool, s nodePoolStatus) error {
	live := nodePoolStatus{Replicas: np.Status.Replicas, Version: np.Status.Version, Conditions: np.Status.Conditions}
	if reflect.DeepEqual(normalizeJSON(live), normalizeJSON(s)) {
		return nil
	}
	data, err := json.Marshal(map[string]any{"status": s})
	if err != nil {
		return err
	}
	return c.Status().Patch(ctx, np, client.RawPatch(types.MergePatchType, data))
}
