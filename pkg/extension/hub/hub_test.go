package hub

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

func testExtension() *v1alpha1.HostedClusterExtension {
	return &v1alpha1.HostedClusterExtension{
		ObjectMeta: metav1.ObjectMeta{Name: "audit", Namespace: "team-a", UID: "uid-1", Generation: 3},
		Spec: v1alpha1.HostedClusterExtensionSpec{Phases: []v1alpha1.ExtensionPhase{{Name: "p", Objects: []v1alpha1.ExtensionObject{
			{Object: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)}}}}}},
	}
}

// TestRender: the work carries one release ConfigMap into the hosted
// control-plane namespace, with the revision, labels tying it back, SSA
// without force, and feedback of the agent's keys.
func TestRender(t *testing.T) {
	ext := testExtension()
	rev := Revision{Number: 3, Template: Template{Phases: ext.Spec.Phases}}
	w, err := Render(ext, rev, Target{Name: "hc1", HostingCluster: "mgmt-1", ControlPlaneNamespace: "clusters-hc1", AgentNamespace: "agents"})
	if err != nil {
		t.Fatal(err)
	}
	// Applied as the extension executor of mgmt-1's agent namespace,
	// which may write ConfigMaps only.
	if e := w.Spec.Executor; e == nil || e.Subject.ServiceAccount == nil ||
		*e.Subject.ServiceAccount != (workv1.ManifestWorkSubjectServiceAccount{Namespace: "agents", Name: addon.ExecutorExtension}) {
		t.Fatalf("executor %+v, want ServiceAccount agents/%s", e, addon.ExecutorExtension)
	}
	if w.Namespace != "mgmt-1" || w.Name != extension.WorkName("team-a", "audit", "hc1") || Delivered(w) != 3 {
		t.Fatalf("work %s/%s revision %d", w.Namespace, w.Name, Delivered(w))
	}
	var cm corev1.ConfigMap
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Namespace != "clusters-hc1" || cm.Name != "hcpfleet-extension-audit" || cm.Labels[extension.LabelExtensionUID] != "uid-1" || cm.Labels[extension.LabelRelease] != "true" {
		t.Fatalf("configmap %s/%s %v", cm.Namespace, cm.Name, cm.Labels)
	}
	var rel extension.Release
	if err := json.Unmarshal([]byte(cm.Data[extension.KeyRelease]), &rel); err != nil || rel.Revision != 3 || rel.HostedCluster != "team-a/hc1" || len(rel.Phases) != 1 {
		t.Fatalf("release %+v %v", rel, err)
	}
	cfg := w.Spec.ManifestConfigs[0]
	if cfg.UpdateStrategy.ServerSideApply.Force || !strings.HasPrefix(cfg.UpdateStrategy.ServerSideApply.FieldManager, "work-agent") || len(cfg.FeedbackRules[0].JsonPaths) != 8 {
		t.Fatalf("config %+v", cfg)
	}
}

func workWith(revision string, values map[string]string) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "mgmt-1", Annotations: map[string]string{AnnotationRevision: revision}}}
	m := workv1.ManifestCondition{ResourceMeta: workv1.ManifestResourceMeta{Resource: "configmaps"}}
	for k, v := range values {
		m.StatusFeedbacks.Values = append(m.StatusFeedbacks.Values, workv1.FeedbackValue{Name: k, Value: workv1.FieldValue{Type: workv1.String, String: ptr.To(v)}})
	}
	w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{m}
	return w
}

// TestStatus: the agent's report becomes the hosted cluster's state, and
// the first failure, with the probe's message, the extension's conditions.
func TestStatus(t *testing.T) {
	if s := HostedClusterStatus("a", nil); s.State != v1alpha1.ExtensionStatePending {
		t.Fatalf("no work: %v", s.State)
	}
	stale := HostedClusterStatus("a", workWith("3", map[string]string{extension.KeyObservedRevision: "2", extension.KeyState: "Available"}))
	if stale.State != v1alpha1.ExtensionStateProgressing {
		t.Fatalf("agent on an older revision: %v", stale.State)
	}
	failed := HostedClusterStatus("b", workWith("3", map[string]string{extension.KeyObservedRevision: "3", extension.KeyState: "Failed",
		extension.KeyPhase: "deploy", extension.KeyReason: extension.ReasonProbeFailure, extension.KeyFailedObject: "Deployment.apps op",
		extension.KeyMessage: "condition Available=True, is False", extension.KeyObjects: `[{"phase":"deploy","group":"apps","kind":"Deployment","name":"op","state":"Unavailable"}]`}))
	if failed.State != v1alpha1.ExtensionStateFailed || failed.Failure == nil || failed.Failure.Reason != extension.ReasonProbeFailure || len(failed.Objects) != 1 {
		t.Fatalf("failed: %+v", failed)
	}
	ok := HostedClusterStatus("c", workWith("3", map[string]string{extension.KeyObservedRevision: "3", extension.KeyState: "Available"}))
	sum := Summarize(3, []v1alpha1.ExtensionHostedClusterStatus{stale, failed, ok}, nil)
	if sum.Selected != 3 || sum.Updated != 3 || sum.Available != 1 || sum.Failed != 1 {
		t.Fatalf("summary %+v", sum)
	}
	var available, degraded metav1.Condition
	for _, c := range sum.Conditions {
		switch c.Type {
		case ConditionAvailable:
			available = c
		case ConditionDegraded:
			degraded = c
		}
	}
	if available.Status != metav1.ConditionFalse || available.Reason != extension.ReasonProbeFailure ||
		!strings.Contains(degraded.Message, "hosted cluster b: phase deploy: Deployment.apps op: condition Available=True, is False") {
		t.Fatalf("conditions %+v", sum.Conditions)
	}
	invalid := Summarize(3, nil, []string{"phase p: Secret x: nope"})
	if invalid.Conditions[0].Reason != ReasonInvalidSpec || !strings.Contains(invalid.Conditions[0].Message, "not delivered: phase p") {
		t.Fatalf("invalid %+v", invalid.Conditions)
	}
}

// TestPausedSummary: a paused rollout says so in Progressing, with how
// far the revision got and on how many hosted clusters the agents confirmed
// the pause, also once it is complete.
func TestPausedSummary(t *testing.T) {
	partial := []v1alpha1.ExtensionHostedClusterStatus{
		{Name: "a", ManifestWork: "w-a", Revision: 2, ObservedRevision: 2, State: v1alpha1.ExtensionStateAvailable, Paused: true},
		{Name: "b", ManifestWork: "w-b", Revision: 1, ObservedRevision: 1, State: v1alpha1.ExtensionStateAvailable},
		{Name: "c", State: v1alpha1.ExtensionStatePending},
	}
	s := Summarize(2, partial, nil)
	s.Pause(2, partial)
	progressing := find(s.Conditions, ConditionProgressing)
	if progressing.Status != metav1.ConditionFalse || progressing.Reason != ReasonPaused || !strings.Contains(progressing.Message, "reached 1 of 3") ||
		!strings.Contains(progressing.Message, "agents of 1 of the 2 that have the extension") {
		t.Fatalf("Progressing %+v", progressing)
	}
	partial = partial[:2]
	partial[1].Revision, partial[1].ObservedRevision = 2, 2
	done := Summarize(2, partial, nil)
	done.Pause(2, partial)
	if c := find(done.Conditions, ConditionProgressing); c.Reason != ReasonPaused {
		t.Fatalf("a complete paused rollout: %+v", c)
	}
	// The agent's confirmation counts for the revision it reports on.
	w := workWith("2", map[string]string{extension.KeyObservedRevision: "2", extension.KeyState: "Available", extension.KeyPaused: "true"})
	if !HostedClusterStatus("a", w).Paused {
		t.Fatal("the agent's pause not read")
	}
	w = workWith("3", map[string]string{extension.KeyObservedRevision: "2", extension.KeyState: "Available", extension.KeyPaused: "true"})
	if HostedClusterStatus("a", w).Paused {
		t.Fatal("a pause confirmed for an older revision counted")
	}
}

func find(cs []metav1.Condition, t string) metav1.Condition {
	for _, c := range cs {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// TestRemovalDegraded: an unreachable guest during removal is Degraded
// with its reason; a clean removal is not.
func TestRemovalDegraded(t *testing.T) {
	statuses := []v1alpha1.ExtensionHostedClusterStatus{{Name: "b", State: v1alpha1.ExtensionStateRemoving},
		{Name: "a", State: v1alpha1.ExtensionStateRemoving, CurrentPhase: "guest", Failure: &v1alpha1.ExtensionFailure{
			Reason: extension.ReasonHostedClusterUnreachable, Message: "the hosted cluster's API server does not answer"}}}
	c := removalDegraded(statuses)
	if c.Status != metav1.ConditionTrue || c.Reason != extension.ReasonHostedClusterUnreachable || !strings.Contains(c.Message, "hosted cluster a: phase guest") {
		t.Fatalf("Degraded %+v", c)
	}
	if c := removalDegraded(statuses[:1]); c.Status != metav1.ConditionFalse {
		t.Fatalf("clean removal Degraded %+v", c)
	}
}
