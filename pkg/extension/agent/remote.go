package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/connector"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/objects"
)

// connectorGrace is how long the engine waits for the connector's first
// report on a request before it says why the phase does not move.
const connectorGrace = 30 * time.Second

// errWaiting is a hosted-cluster phase whose report has not come yet: the
// release stays Progressing (not Failed) while the connector works.
type errWaiting struct{ msg string }

func (e *errWaiting) Error() string { return e.msg }

// remote is a hosted-cluster phase as the connector reported it.
type remote struct {
	byKey map[string]connector.ObjectReport // by the unplaced object's key
}

func (r *remote) place(o extension.Object) extension.Object {
	out := extension.Object{Ref: o.Ref, Object: o.Object.DeepCopy(), Collision: o.Collision}
	if rep, ok := r.byKey[o.Ref.Key()]; ok {
		out.Ref = rep.Ref
		out.Object.SetNamespace(rep.Ref.Namespace)
	}
	return out
}

// report is the connector's report on o (placed).
func (r *remote) report(o extension.Object) (connector.ObjectReport, bool) {
	for _, rep := range r.byKey {
		if rep.Ref.Key() == o.Ref.Key() {
			return rep, true
		}
	}
	return connector.ObjectReport{}, false
}

// claim is the connector's collision verdict: it claims before it applies
// (objects.Claim), so a Refused object was neither applied nor is recorded.
func (r *remote) claim(o extension.Object) objects.Verdict {
	if rep, ok := r.report(o); ok && rep.State == v1alpha1.ObjectStateRefused {
		return objects.Verdict{State: rep.State, Reason: rep.Reason, Message: rep.Message}
	}
	return objects.Verdict{}
}

// state is the object's state the connector reported (it applied and
// probed it).
func (r *remote) state(o extension.Object) objects.Verdict {
	if rep, ok := r.report(o); ok {
		return objects.Verdict{State: rep.State, Reason: rep.Reason, Message: rep.Message}
	}
	return objects.Verdict{State: v1alpha1.ObjectStatePending}
}

// waitingSince remembers when a request was first seen unanswered, and
// the namespaces whose connector this engine process has applied.
type waitingSince struct {
	mu      sync.Mutex
	since   map[string]time.Time // "<namespace>/<request>/<hash>"
	ensured map[string]bool
}

// firstTime says whether ns was not yet marked, and marks it.
func (w *waitingSince) firstTime(ns string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ensured == nil {
		w.ensured = map[string]bool{}
	}
	first := !w.ensured[ns]
	w.ensured[ns] = true
	return first
}

func (w *waitingSince) forget(ns string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.ensured, ns)
}

func (w *waitingSince) get(key string) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since == nil {
		w.since = map[string]time.Time{}
	}
	t, ok := w.since[key]
	if !ok {
		w.since[key] = time.Now()
		return 0
	}
	return time.Since(t)
}

func (w *waitingSince) done(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.since, key)
}

// remoteTarget has the connector run a hosted-cluster phase: it writes the
// phase request and returns the target its report makes, an errWaiting
// until the report answers this request, or the report's reason when the
// connector cannot work on it (the hosted cluster is unreachable).
func (e *Engine) remoteTarget(ctx context.Context, cm *corev1.ConfigMap, release extension.Release, phase extension.PlannedPhase) (*target, error) {
	var spec v1alpha1.ExtensionPhase
	for _, p := range release.Phases {
		if p.Name == phase.Name {
			spec = p
		}
	}
	req := connector.Request{Extension: release.Extension, UID: release.UID, Revision: release.Revision, Phase: spec, AvailabilityProbes: release.AvailabilityProbes}
	rep, current, err := e.request(ctx, cm, phase.Name, &req, nil)
	if err != nil {
		return nil, err
	}
	if !current {
		return nil, e.notAnswered(ctx, cm, phase.Name)
	}
	if rep.Reason != "" {
		return nil, fmt.Errorf("%s", rep.Message)
	}
	r := &remote{byKey: map[string]connector.ObjectReport{}}
	for i, o := range phase.Objects {
		if i < len(rep.Objects) {
			r.byKey[o.Ref.Key()] = rep.Objects[i]
		}
	}
	return &target{class: phase.Class, remote: r}, nil
}

// notAnswered is the errWaiting for a request without its report, or, past
// connectorGrace, an error saying what the connector's Deployment says.
func (e *Engine) notAnswered(ctx context.Context, cm *corev1.ConfigMap, phase string) error {
	key := cm.Namespace + "/" + connector.RequestName(cm.Name, phase)
	live := &corev1.ConfigMap{}
	if err := e.reader.Get(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: connector.RequestName(cm.Name, phase)}, live); err == nil {
		key += "/" + connector.Hash(live.Data[connector.KeyRequest], live.Data[connector.KeyDelete])
	}
	waited := e.waiting.get(key)
	if waited < connectorGrace {
		return &errWaiting{msg: fmt.Sprintf("waiting for the extension connector in %s to run phase %s", cm.Namespace, phase)}
	}
	why := "its Deployment is not available"
	d := &appsv1.Deployment{}
	if err := e.reader.Get(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: connector.Name}, d); err != nil {
		why = "its Deployment cannot be read: " + err.Error()
	} else {
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable {
				why = fmt.Sprintf("its Deployment is Available=%s (%s: %s)", c.Status, c.Reason, c.Message)
			}
		}
	}
	return fmt.Errorf("the extension connector %s/%s has not reported on phase %s for %s; %s",
		cm.Namespace, connector.Name, phase, waited.Round(time.Second), why)
}

// request writes the phase request of phase (and, when deletes is not nil,
// its delete list; otherwise the live one stays) and reads the report:
// current says whether it answers exactly what is written.
func (e *Engine) request(ctx context.Context, cm *corev1.ConfigMap, phase string, req *connector.Request, deletes []extension.ObjectRef) (connector.Report, bool, error) {
	name := connector.RequestName(cm.Name, phase)
	live := &corev1.ConfigMap{}
	err := e.reader.Get(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: name}, live)
	if err != nil && !apierrors.IsNotFound(err) {
		return connector.Report{}, false, err
	}
	requestText, deleteText := connector.Marshal(req), live.Data[connector.KeyDelete]
	if deletes != nil {
		deleteText = connector.Marshal(deletes)
	}
	changed := live.Data[connector.KeyRequest] != requestText || live.Data[connector.KeyDelete] != deleteText || live.UID == ""
	// The connector may write only into requests its Role names; and an
	// agent upgraded since it last applied the connector brings its image.
	if changed || e.waiting.firstTime(cm.Namespace) {
		if err := e.ensureConnector(ctx, cm.Namespace, name); err != nil {
			e.waiting.forget(cm.Namespace)
			return connector.Report{}, false, err
		}
	}
	if changed {
		apply := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": cm.Namespace,
				"labels": map[string]any{connector.LabelPhaseRequest: "true", connector.LabelRelease: cm.Name,
					extension.LabelExtensionUID: cm.Labels[extension.LabelExtensionUID]}},
			"data": map[string]any{connector.KeyRequest: requestText, connector.KeyDelete: deleteText}}}
		if err := e.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner(extension.FieldManager), client.ForceOwnership); err != nil {
			return connector.Report{}, false, fmt.Errorf("writing the phase request %s/%s: %w", cm.Namespace, name, err)
		}
		return connector.Report{}, false, nil
	}
	var rep connector.Report
	// No report yet, a partial one, or one about an older request: the
	// connector has not answered this request.
	if json.Unmarshal([]byte(live.Data[connector.KeyReport]), &rep) != nil || rep.RequestHash != connector.Hash(requestText, deleteText) {
		return connector.Report{}, false, nil //nolint:nilerr // not answered yet, not a failure
	}
	e.waiting.done(cm.Namespace + "/" + name + "/" + rep.RequestHash)
	return rep, true, nil
}

// remoteDelete has the connector delete one phase's objects in the hosted
// cluster (only those carrying the extension's UID, objects.Delete) and
// returns those gone. On teardown, or for a phase the release no longer
// has, the request applies nothing any more, so the connector does not
// bring back what it deletes. answered: the connector reported that the
// hosted cluster's API server answered; an errWaiting (no report yet) says
// neither, and a connector silent past connectorGrace counts as a guest
// that does not answer — nothing else can reach it.
func (e *Engine) remoteDelete(ctx context.Context, cm *corev1.ConfigMap, group []extension.ObjectRef, teardown bool) (gone []extension.ObjectRef, answered bool, err error) {
	phase := group[0].Phase
	var release extension.Release
	_ = json.Unmarshal([]byte(cm.Data[extension.KeyRelease]), &release)
	req := connector.Request{Extension: release.Extension, UID: release.UID, Revision: release.Revision, AvailabilityProbes: release.AvailabilityProbes,
		Phase: v1alpha1.ExtensionPhase{Name: phase, Class: v1alpha1.PhaseClassHostedCluster}}
	for _, p := range release.Phases {
		if p.Name == phase && !teardown {
			req.Phase = p
		}
	}
	rep, current, err := e.request(ctx, cm, phase, &req, group)
	if err != nil {
		return nil, true, err // the management cluster's error, not the guest's
	}
	if !current {
		return nil, false, e.notAnswered(ctx, cm, phase)
	}
	answered = rep.Reason != extension.ReasonHostedClusterUnreachable
	if rep.Reason != "" {
		err = fmt.Errorf("%s", rep.Message)
	}
	deleted := map[string]bool{}
	for _, r := range rep.Deleted {
		deleted[r.Key()] = true
	}
	for _, r := range group {
		if deleted[r.Key()] {
			gone = append(gone, r)
		}
	}
	return gone, answered, err
}

// withReported adds to applied the hosted-cluster objects the connector
// reports for the release's requests: what it applied after the engine
// last recorded (the request, written first, was the record), so a
// teardown misses nothing.
func (e *Engine) withReported(ctx context.Context, cm *corev1.ConfigMap, applied []extension.ObjectRef) []extension.ObjectRef {
	requests := &corev1.ConfigMapList{}
	if err := e.reader.List(ctx, requests, client.InNamespace(cm.Namespace), client.MatchingLabels{connector.LabelRelease: cm.Name}); err != nil {
		return applied
	}
	for _, r := range requests.Items {
		var rep connector.Report
		if json.Unmarshal([]byte(r.Data[connector.KeyReport]), &rep) != nil {
			continue
		}
		for _, o := range rep.Objects {
			if o.State != "" && o.State != v1alpha1.ObjectStateRefused {
				applied = extension.Merge(applied, o.Ref)
			}
		}
	}
	return applied
}

// forgetRequests deletes the release's phase requests (its teardown is
// done), or, with keep, those of phases keep does not name.
func (e *Engine) forgetRequests(ctx context.Context, cm *corev1.ConfigMap, keep map[string]bool) error {
	requests := &corev1.ConfigMapList{}
	if err := e.reader.List(ctx, requests, client.InNamespace(cm.Namespace), client.MatchingLabels{connector.LabelRelease: cm.Name}); err != nil {
		return err
	}
	for i := range requests.Items {
		r := &requests.Items[i]
		var req connector.Request
		_ = json.Unmarshal([]byte(r.Data[connector.KeyRequest]), &req)
		if keep[req.Phase.Name] {
			continue
		}
		if err := e.client.Delete(ctx, r); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
