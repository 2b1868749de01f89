// Package agent is the extension engine on a management cluster: it applies
// the releases the hub delivers (release ConfigMaps in hosted control-plane
// namespaces, pkg/extension) phase after phase with server-side apply under
// its own field manager — phases without class into that control-plane
// namespace itself, hosted-cluster phases through the extension connector
// it deploys there (connector.go, remote.go; package connector), which
// reaches the hosted cluster with HyperShift's service-network admin
// kubeconfig as written — stops at the first phase
// whose availability probes fail, deletes what a new revision dropped, and
// on removal tears everything down in reverse phase order. It writes its
// progress into the release ConfigMap's status keys, which come back to the
// hub as ManifestWork feedback.
//
// It works only in control-plane namespaces of HostedClusters hcp-fleet
// delivered, where it binds its grants (kubeutil.BindSelf) as it starts
// working there, and only for the hosted cluster the release names.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// ClusterRole is what the engine may do in a hosted control-plane namespace
// it works in, bound there by kubeutil.BindSelf.
const ClusterRole = addon.AgentExtensionNamespaceRole

// AnnotationHostedCluster is the annotation HyperShift puts on a hosted
// control-plane namespace: the HostedCluster's namespace/name.
const AnnotationHostedCluster = "hypershift.openshift.io/cluster"

// Options tune the engine.
type Options struct {
	// GuestTeardownTimeout is how long a removal keeps trying to reach a
	// hosted cluster's API server before it leaves the hosted-cluster
	// objects behind, so that a dead guest never blocks a removal (or the
	// deletion of its control-plane namespace) for ever.
	GuestTeardownTimeout time.Duration
	// ProbeInterval is how often an object that fails its probes is looked
	// at again.
	ProbeInterval time.Duration
	// Resync is how often an available release is applied again (drift).
	Resync time.Duration
	// AgentNamespace is where the agent's Deployment is, whose image the
	// extension connector runs (connector.go).
	AgentNamespace string
}

func (o Options) withDefaults() Options {
	if o.GuestTeardownTimeout == 0 {
		o.GuestTeardownTimeout = 2 * time.Minute
	}
	if o.ProbeInterval == 0 {
		o.ProbeInterval = 2 * time.Second
	}
	if o.Resync == 0 {
		o.Resync = 10 * time.Minute
	}
	return o
}

// Engine reconciles release ConfigMaps.
type Engine struct {
	client client.Client // the management cluster, as the agent
	reader client.Reader // uncached reads
	mapper meta.RESTMapper
	binder *kubeutil.Binder
	opts   Options
	// waiting tracks phase requests the connector has not answered yet.
	waiting waitingSince
}

// NewEngine is the engine over the management cluster's client.
func NewEngine(c client.Client, reader client.Reader, mapper meta.RESTMapper, opts Options) *Engine {
	return &Engine{client: c, reader: reader, mapper: mapper, opts: opts.withDefaults(),
		binder: &kubeutil.Binder{Client: c, ClusterRole: ClusterRole,
			Probe: authorizationv1.ResourceAttributes{Verb: "patch", Resource: "configmaps"}}}
}

// hostedCluster is what the engine knows of a control-plane namespace's
// HostedCluster.
type hostedCluster struct {
	namespace, name string
	hcdNamespace    string
	hcdName         string
	gone, deleting  bool
}

// hostedClusterOf reads the HostedCluster whose control-plane namespace ns
// is: the namespace's HyperShift annotation names it, and its name must
// give ns back (an annotation alone is not trusted).
func (e *Engine) hostedClusterOf(ctx context.Context, ns string) (*hostedCluster, error) {
	nsObj := &corev1.Namespace{}
	if err := e.reader.Get(ctx, types.NamespacedName{Name: ns}, nsObj); err != nil {
		return nil, err
	}
	key := nsObj.Annotations[AnnotationHostedCluster]
	hcNS, hcName, ok := strings.Cut(key, "/")
	if !ok || extension.ControlPlaneNamespace(hcNS, hcName) != ns {
		return nil, fmt.Errorf("namespace %s is not a hosted control-plane namespace (annotation %s=%q)", ns, AnnotationHostedCluster, key)
	}
	hc := &hostedCluster{namespace: hcNS, name: hcName, deleting: nsObj.DeletionTimestamp != nil}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(hostedClusterGVK)
	switch err := e.reader.Get(ctx, types.NamespacedName{Namespace: hcNS, Name: hcName}, m); {
	case apierrors.IsNotFound(err):
		hc.gone = true
	case err != nil:
		return nil, err
	default:
		hc.deleting = hc.deleting || m.DeletionTimestamp != nil
		hc.hcdNamespace, hc.hcdName = m.Labels[hosting.LabelHCDNamespace], m.Labels[hosting.LabelHCDName]
	}
	return hc, nil
}

// progress is what the engine writes into a release ConfigMap.
type progress struct {
	revision int64
	state    v1alpha1.ExtensionState
	phase    string
	reason   string
	message  string
	object   string
	objects  []v1alpha1.ExtensionObjectStatus
	applied  []extension.ObjectRef
}

// Reconcile applies or removes one release.
func (e *Engine) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := e.reader.Get(ctx, req.NamespacedName, cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cm.Labels[extension.LabelRelease] != "true" {
		return reconcile.Result{}, nil
	}
	applied := appliedOf(cm)
	hc, err := e.hostedClusterOf(ctx, cm.Namespace)
	if err != nil {
		if cm.DeletionTimestamp != nil && apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if cm.DeletionTimestamp != nil {
		return e.teardown(ctx, cm, hc, applied)
	}
	var release extension.Release
	if err := json.Unmarshal([]byte(cm.Data[extension.KeyRelease]), &release); err != nil {
		return reconcile.Result{}, e.write(ctx, cm, progress{state: v1alpha1.ExtensionStateFailed, reason: extension.ReasonObjectRefused,
			message: "the release does not parse: " + err.Error(), applied: applied})
	}
	p := progress{revision: release.Revision, applied: applied}
	// The release must be for the hosted cluster of this namespace and
	// carry the extension it names.
	if hc.gone || release.HostedCluster != hc.hcdNamespace+"/"+hc.hcdName || release.UID == "" ||
		cm.Labels[extension.LabelExtensionUID] != release.UID || cm.Name != extension.ReleaseName(release.Extension[strings.Index(release.Extension, "/")+1:]) {
		p.state, p.reason = v1alpha1.ExtensionStateFailed, extension.ReasonObjectRefused
		p.message = fmt.Sprintf("the release is for hosted cluster %s, but namespace %s belongs to HostedCluster %s/%s of %s/%s; nothing applied",
			release.HostedCluster, cm.Namespace, hc.namespace, hc.name, hc.hcdNamespace, hc.hcdName)
		return reconcile.Result{}, e.write(ctx, cm, p)
	}
	if !controllerutil.ContainsFinalizer(cm, extension.Finalizer) {
		// Hold the grants in this namespace first: a deletion of the
		// namespace would otherwise take the RoleBinding before the engine
		// could remove the release's finalizer, and both would stay.
		if err := e.binder.Ensure(ctx, cm.Namespace); err != nil {
			return reconcile.Result{}, err
		}
		if err := kubeutil.HoldBinding(ctx, e.client, cm.Namespace, ClusterRole, extension.Finalizer, true); err != nil {
			if apierrors.IsNotFound(err) {
				// Someone deleted the binding: the retry makes it anew.
				e.binder.Forget(cm.Namespace)
			}
			return reconcile.Result{}, e.binder.Checked(cm.Namespace, err)
		}
		if err := kubeutil.AddFinalizer(ctx, e.client, cm, extension.Finalizer); err != nil {
			return reconcile.Result{}, err
		}
	}
	plan := extension.Plan(release.Phases)
	p.objects = pendingObjects(plan)
	if problems := extension.Validate(release.Phases); len(problems) > 0 {
		p.state, p.reason, p.phase, p.object = v1alpha1.ExtensionStateFailed, extension.ReasonObjectRefused, problems[0].Phase, problems[0].Object
		p.message = problems[0].Message
		for i := range p.objects {
			p.objects[i].State = v1alpha1.ObjectStateRefused
		}
		return reconcile.Result{}, e.write(ctx, cm, p)
	}
	p.state = v1alpha1.ExtensionStateProgressing
	index := 0
	// The revision's objects as placed (namespaces set), to tell which
	// applied objects it dropped.
	var desired []extension.ObjectRef
	for _, phase := range plan {
		p.phase = phase.Name
		target, err := e.phaseTarget(ctx, cm, release, phase)
		var waiting *errWaiting
		switch {
		case errors.As(err, &waiting):
			p.reason, p.message = "", waiting.msg
			return reconcile.Result{RequeueAfter: e.opts.ProbeInterval}, e.write(ctx, cm, p)
		case err != nil:
			p.state, p.reason, p.message = v1alpha1.ExtensionStateFailed, extension.ReasonHostedClusterUnreachable, err.Error()
			return reconcile.Result{RequeueAfter: e.opts.ProbeInterval}, e.write(ctx, cm, p)
		}
		// Record the intent first: an object applied and then lost from
		// the record would never be deleted.
		var refs []extension.ObjectRef
		for _, o := range phase.Objects {
			refs = append(refs, target.place(o).Ref)
		}
		desired = append(desired, refs...)
		if merged := extension.Merge(p.applied, refs...); len(merged) != len(p.applied) || !sameRefs(merged, p.applied) {
			p.applied = merged
			if err := e.write(ctx, cm, p); err != nil {
				return reconcile.Result{}, err
			}
		}
		failed := false
		for _, o := range phase.Objects {
			placed := target.place(o)
			state, reason, msg := e.applyOne(ctx, target, placed, release)
			p.objects[index].State, p.objects[index].Namespace = state, placed.Ref.Namespace
			index++
			if state != v1alpha1.ObjectStateAvailable && !failed {
				failed = true
				p.state, p.reason, p.message, p.object = v1alpha1.ExtensionStateFailed, reason, msg, placed.Ref.String()
			}
		}
		if failed {
			// The rollout stops at this phase; probes are looked at again.
			return reconcile.Result{RequeueAfter: e.opts.ProbeInterval}, e.write(ctx, cm, p)
		}
	}
	// Every phase is available: delete what the revision dropped, the
	// later phases' objects first.
	for _, group := range extension.TeardownPhases(extension.Removed(p.applied, desired)) {
		gone, err := e.deleteGroup(ctx, cm, group, false)
		if err != nil {
			p.reason, p.message = extension.ReasonApplyFailed, "deleting objects dropped from the extension: "+err.Error()
			return reconcile.Result{RequeueAfter: e.opts.ProbeInterval}, e.write(ctx, cm, p)
		}
		p.applied = extension.Without(p.applied, gone...)
		if len(gone) < len(group) {
			return reconcile.Result{RequeueAfter: e.opts.ProbeInterval}, e.write(ctx, cm, p)
		}
	}
	if err := e.forgetRequests(ctx, cm, phaseNames(plan)); err != nil {
		return reconcile.Result{}, err
	}
	p.state, p.phase, p.reason, p.message, p.object = v1alpha1.ExtensionStateAvailable, "", "", "", ""
	return reconcile.Result{RequeueAfter: e.opts.Resync}, e.write(ctx, cm, p)
}

func sameRefs(a, b []extension.ObjectRef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func pendingObjects(plan []extension.PlannedPhase) []v1alpha1.ExtensionObjectStatus {
	var out []v1alpha1.ExtensionObjectStatus
	for _, p := range plan {
		for _, o := range p.Objects {
			out = append(out, v1alpha1.ExtensionObjectStatus{Phase: p.Name, Group: o.Ref.Group, Kind: o.Ref.Kind,
				Namespace: o.Ref.Namespace, Name: o.Ref.Name, State: v1alpha1.ObjectStatePending})
		}
	}
	return out
}

// applyOne applies one object and probes it.
func (e *Engine) applyOne(ctx context.Context, t *target, o extension.Object, release extension.Release) (v1alpha1.ExtensionObjectState, string, string) {
	if t.remote != nil {
		return t.remote.state(o) // the connector applied it
	}
	if t.clusterScoped(o.Ref) && t.class == v1alpha1.PhaseClassControlPlane {
		return v1alpha1.ObjectStateRefused, extension.ReasonObjectRefused, "cluster-scoped objects may not be written on the management cluster"
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.Ref.GroupVersionKind())
	switch err := t.client.Get(ctx, types.NamespacedName{Namespace: o.Ref.Namespace, Name: o.Ref.Name}, live); {
	case err == nil:
		if live.GetLabels()[extension.LabelExtensionUID] != release.UID {
			return v1alpha1.ObjectStateRefused, extension.ReasonObjectRefused,
				"exists and does not belong to this extension; it is not taken over (collision protection)"
		}
	case !apierrors.IsNotFound(err):
		return v1alpha1.ObjectStateFailed, extension.ReasonApplyFailed, "reading it: " + err.Error()
	}
	desired := o.Object.DeepCopy()
	delete(desired.Object, "status")
	labels := desired.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[extension.LabelExtension] = release.Extension[strings.Index(release.Extension, "/")+1:]
	labels[extension.LabelExtensionUID] = release.UID
	desired.SetLabels(labels)
	if err := t.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired), client.FieldOwner(extension.FieldManager), client.ForceOwnership); err != nil {
		return v1alpha1.ObjectStateFailed, extension.ReasonApplyFailed, "applying it: " + err.Error()
	}
	if err := t.client.Get(ctx, types.NamespacedName{Namespace: o.Ref.Namespace, Name: o.Ref.Name}, live); err != nil {
		return v1alpha1.ObjectStateFailed, extension.ReasonApplyFailed, "reading it back: " + err.Error()
	}
	if msg := extension.Probe(release.AvailabilityProbes, live); msg != "" {
		return v1alpha1.ObjectStateUnavailable, extension.ReasonProbeFailure, msg
	}
	return v1alpha1.ObjectStateAvailable, "", ""
}

// teardown removes the release's objects in reverse phase order, each phase
// gone before the next, then lets the ConfigMap go. Hosted-cluster objects
// are left behind when the hosted cluster is going away (its API server with
// it) or cannot be reached for GuestTeardownTimeout.
func (e *Engine) teardown(ctx context.Context, cm *corev1.ConfigMap, hc *hostedCluster, applied []extension.ObjectRef) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(cm, extension.Finalizer) {
		return reconcile.Result{}, nil
	}
	revision, _ := strconv.ParseInt(cm.Data[extension.KeyObservedRevision], 10, 64)
	applied = e.withReported(ctx, cm, applied)
	p := progress{revision: revision, state: v1alpha1.ExtensionStateRemoving, applied: applied}
	abandonGuest := hc.gone || hc.deleting || time.Since(cm.DeletionTimestamp.Time) > e.opts.GuestTeardownTimeout
	for _, group := range extension.TeardownPhases(extension.Teardown(applied)) {
		p.phase = group[0].Phase
		if group[0].Class == v1alpha1.PhaseClassHostedCluster && abandonGuest {
			p.applied = extension.Without(p.applied, group...)
			continue
		}
		if group[0].Class == v1alpha1.PhaseClassControlPlane && (hc.gone || cm.Namespace == "") {
			p.applied = extension.Without(p.applied, group...)
			continue
		}
		gone, err := e.deleteGroup(ctx, cm, group, true)
		p.applied = extension.Without(p.applied, gone...)
		if err != nil || len(gone) < len(group) {
			if err != nil {
				p.reason, p.message = extension.ReasonHostedClusterUnreachable, err.Error()
			}
			return reconcile.Result{RequeueAfter: e.opts.ProbeInterval}, e.write(ctx, cm, p)
		}
	}
	p.applied = nil
	if err := e.write(ctx, cm, p); err != nil {
		return reconcile.Result{}, err
	}
	if err := e.forgetRequests(ctx, cm, nil); err != nil {
		return reconcile.Result{}, err
	}
	if err := kubeutil.RemoveFinalizer(ctx, e.client, cm, extension.Finalizer); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, e.releaseBindingIfLast(ctx, cm.Namespace)
}

// releaseBindingIfLast takes the hold off the engine's RoleBinding in ns once
// no release there keeps its finalizer. Reconciles run one at a time, so no
// release gains a finalizer between the list and the release.
func (e *Engine) releaseBindingIfLast(ctx context.Context, ns string) error {
	releases := &corev1.ConfigMapList{}
	if err := e.reader.List(ctx, releases, client.InNamespace(ns), client.MatchingLabels{extension.LabelRelease: "true"}); err != nil {
		return err
	}
	if len(heldReleases(releases.Items)) > 0 {
		return nil
	}
	// The connector goes while the engine still holds its grants here.
	if err := e.removeConnector(ctx, ns); err != nil {
		return err
	}
	return kubeutil.HoldBinding(ctx, e.client, ns, ClusterRole, extension.Finalizer, false)
}

// deleteGroup deletes the objects of one phase and returns those gone.
func (e *Engine) deleteGroup(ctx context.Context, cm *corev1.ConfigMap, group []extension.ObjectRef, teardown bool) ([]extension.ObjectRef, error) {
	if group[0].Class == v1alpha1.PhaseClassHostedCluster {
		return e.remoteDelete(ctx, cm, group, teardown)
	}
	t, err := e.targetFor(ctx, cm.Namespace, group[0].Class)
	if err != nil {
		return nil, err
	}
	var gone []extension.ObjectRef
	var errs []error
	for _, ref := range group {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(ref.GroupVersionKind())
		err := t.client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, u)
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			gone = append(gone, ref)
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		}
		if u.GetLabels()[extension.LabelExtensionUID] == "" {
			// Not ours (any more): never delete someone else's object.
			gone = append(gone, ref)
			continue
		}
		if u.GetDeletionTimestamp() == nil {
			uid := u.GetUID()
			if err := t.client.Delete(ctx, u, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				errs = append(errs, err)
			}
		}
	}
	return gone, errors.Join(errs...)
}

// write server-side applies the engine's status keys of the ConfigMap.
func (e *Engine) write(ctx context.Context, cm *corev1.ConfigMap, p progress) error {
	objects, err := json.Marshal(p.objects)
	if err != nil {
		return err
	}
	if p.objects == nil {
		objects = []byte("[]")
	}
	applied, err := json.Marshal(p.applied)
	if err != nil {
		return err
	}
	if p.applied == nil {
		applied = []byte("[]")
	}
	data := map[string]string{
		extension.KeyObservedRevision: strconv.FormatInt(p.revision, 10), extension.KeyState: string(p.state),
		extension.KeyPhase: p.phase, extension.KeyReason: p.reason, extension.KeyMessage: truncate(p.message),
		extension.KeyFailedObject: p.object, extension.KeyObjects: string(objects), extension.KeyApplied: string(applied),
	}
	same := true
	for k, v := range data {
		if cur, ok := cm.Data[k]; !ok || cur != v {
			same = false
		}
	}
	if same {
		return nil
	}
	apply := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": cm.Name, "namespace": cm.Namespace, "uid": string(cm.UID)}}}
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	apply.Object["data"] = d
	err = e.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner(extension.FieldManager), client.ForceOwnership)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) && cm.DeletionTimestamp != nil {
		return nil
	}
	return err
}

func truncate(s string) string {
	if len(s) <= 1000 {
		return s
	}
	return s[:1000] + "…"
}

func appliedOf(cm *corev1.ConfigMap) []extension.ObjectRef {
	var out []extension.ObjectRef
	if raw := cm.Data[extension.KeyApplied]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &out)
	}
	return out
}

var _ reconcile.Reconciler = &Engine{}
