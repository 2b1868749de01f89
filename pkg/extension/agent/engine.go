// Package agent is the extension engine on a management cluster: it applies
// the releases the hub delivers (release ConfigMaps in hosted control-plane
// namespaces, pkg/extension) phase after phase with server-side apply under
// its own field manager — phases without class into that control-plane
// namespace itself, hosted-cluster phases through the extension connector
// it deploys there (connector.go, remote.go; package connector), which
// reaches the hosted cluster with HyperShift's service-network admin
// kubeconfig as written; both apply, claim (collision protection) and
// delete with pkg/extension/agent/objects — stops at the first phase
// whose availability probes fail, deletes what a new revision dropped once
// the new revision is available (objects in both revisions are the same
// extension's and are applied in place: handed over, never re-created),
// applies and deletes nothing while the rollout is paused, and on removal
// tears everything down in reverse phase order. It writes its
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
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/objects"
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
	// GuestTeardownTimeout is how long a hosted cluster's API server may
	// not answer during a removal before the hosted-cluster objects are
	// left behind, so that a dead guest never blocks a removal (or the
	// deletion of its control-plane namespace) for ever. A guest that
	// answers is waited for however long its objects take.
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
	// watches report changes of applied control-plane objects (nil: only
	// the periodic looks, as in unit tests).
	watches *appliedWatches
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
	// unreachableSince is when a teardown first found the hosted cluster's
	// API server not answering (RFC 3339; empty while it answers).
	unreachableSince string
	// paused: the release is paused, and the engine applies and deletes
	// nothing (paused.go).
	paused bool
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
	if release.Paused {
		return e.observePaused(ctx, cm, release, plan, p)
	}
	p.state = v1alpha1.ExtensionStateProgressing
	// The record follows the current phase order, so that a removal
	// reverses it even after a revision reordered the phases.
	p.applied = extension.InPhaseOrder(p.applied, release.Phases)
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
			// The engine watches the phase requests (watch.go): the report
			// brings it back; this requeue only notices a connector that
			// never answers.
			p.reason, p.message = "", waiting.msg
			return reconcile.Result{RequeueAfter: connectorGrace}, e.write(ctx, cm, p)
		case err != nil:
			p.state, p.reason, p.message = v1alpha1.ExtensionStateFailed, extension.ReasonHostedClusterUnreachable, err.Error()
			return reconcile.Result{RequeueAfter: e.opts.ProbeInterval}, e.write(ctx, cm, p)
		}
		// Collision protection before anything is recorded or written: an
		// object that is not this extension's (and may not be adopted) is
		// neither applied nor recorded, so no removal ever deletes it.
		placed := make([]extension.Object, len(phase.Objects))
		verdicts := make([]objects.Verdict, len(phase.Objects))
		var refs []extension.ObjectRef
		for i, o := range phase.Objects {
			placed[i] = target.place(o)
			desired = append(desired, placed[i].Ref)
			verdicts[i] = e.claim(ctx, target, placed[i], release.UID)
			if verdicts[i].State == "" {
				refs = append(refs, placed[i].Ref)
			}
		}
		// Record the intent first: an object applied and then lost from
		// the record would never be deleted.
		if merged := extension.InPhaseOrder(extension.Merge(p.applied, refs...), release.Phases); !sameRefs(merged, p.applied) {
			p.applied = merged
			if err := e.write(ctx, cm, p); err != nil {
				return reconcile.Result{}, err
			}
		}
		failed := false
		for i, o := range placed {
			v := verdicts[i]
			if v.State == "" {
				v = e.applyOne(ctx, target, o, release)
			}
			state, reason, msg := v.State, v.Reason, v.Message
			p.objects[index].State, p.objects[index].Namespace = state, o.Ref.Namespace
			index++
			if state != v1alpha1.ObjectStateAvailable && !failed {
				failed = true
				p.state, p.reason, p.message, p.object = v1alpha1.ExtensionStateFailed, reason, msg, o.Ref.String()
			}
		}
		if failed {
			// The rollout stops at this phase; probes are looked at again,
			// and the watches report a change of what was applied.
			e.watchApplied(ctx, cm, release.UID, p.applied)
			return reconcile.Result{RequeueAfter: e.opts.ProbeInterval}, e.write(ctx, cm, p)
		}
	}
	// Every phase is available: delete what the revision dropped, the
	// later phases' objects first.
	for _, group := range extension.TeardownPhases(extension.Removed(p.applied, desired)) {
		gone, _, err := e.deleteGroup(ctx, cm, release.UID, group, false)
		var waiting *errWaiting
		if errors.As(err, &waiting) {
			// The connector has not reported on the deletion yet; its
			// report wakes the release (watch.go).
			p.reason, p.message = "", waiting.msg
			return reconcile.Result{RequeueAfter: connectorGrace}, e.write(ctx, cm, p)
		}
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
	// Available: from now on a change of an applied object (a probe that
	// starts failing, a deletion) comes through the watches within
	// seconds; Resync is only the backstop.
	e.watchApplied(ctx, cm, release.UID, p.applied)
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

// applyOne applies one object claim allowed and probes it (objects.Apply,
// which the connector uses for hosted-cluster objects).
func (e *Engine) applyOne(ctx context.Context, t *target, o extension.Object, release extension.Release) objects.Verdict {
	if t.remote != nil {
		return t.remote.state(o) // the connector claimed, applied and probed it
	}
	return objects.Apply(ctx, t.client, o, release.Extension, release.UID, release.AvailabilityProbes)
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
		extension.KeyGuestUnreachableSince: p.unreachableSince, extension.KeyPaused: "",
	}
	if p.paused {
		data[extension.KeyPaused] = "true"
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
