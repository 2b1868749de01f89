package relocation

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

func manifestOf(t *testing.T, work *workv1.ManifestWork, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, m := range work.Spec.Workload.Manifests {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(m.Raw); err != nil {
			t.Fatal(err)
		}
		if obj.GetKind() == kind {
			return obj
		}
	}
	t.Fatalf("no %s in ManifestWork %s/%s", kind, work.Namespace, work.Name)
	return nil
}

func TestPauseWork(t *testing.T) {
	for _, paused := range []bool{true, false} {
		w, err := PauseWork("cluster-1", "agents", "team-a", "app", "clusters", "app", paused)
		if err != nil {
			t.Fatal(err)
		}
		// Applied as the relocation executor of cluster-1's agent
		// namespace, which may write HostedClusters only.
		if e := w.Spec.Executor; e == nil || e.Subject.ServiceAccount == nil ||
			*e.Subject.ServiceAccount != (workv1.ManifestWorkSubjectServiceAccount{Namespace: "agents", Name: addon.ExecutorRelocation}) {
			t.Fatalf("executor %+v, want ServiceAccount agents/%s", e, addon.ExecutorRelocation)
		}
		if w.Namespace != "cluster-1" || w.Name != "relocate-team-a.app" {
			t.Fatalf("pause work %s/%s", w.Namespace, w.Name)
		}
		// Backed up: a hub restored mid-move finds the paused source by it.
		if w.Labels[hosting.LabelBackup] == "" || w.Labels[hosting.LabelHCDName] != "app" {
			t.Fatalf("labels %v: want ACM's backup label and the HCD's", w.Labels)
		}
		// Removing the pause work must never remove the HostedCluster.
		if w.Spec.DeleteOption == nil || w.Spec.DeleteOption.PropagationPolicy != workv1.DeletePropagationPolicyTypeOrphan {
			t.Fatalf("delete option %+v, want Orphan", w.Spec.DeleteOption)
		}
		hc := manifestOf(t, w, "HostedCluster")
		if len(w.Spec.Workload.Manifests) != 1 || len(hc.Object["spec"].(map[string]any)) != 1 {
			t.Fatalf("the pause work must hold spec.pausedUntil only: %v", hc.Object)
		}
		if got, _, _ := unstructured.NestedString(hc.Object, "spec", "pausedUntil"); got != map[bool]string{true: "true", false: "false"}[paused] {
			t.Fatalf("pausedUntil %q for paused=%v", got, paused)
		}
		c := w.Spec.ManifestConfigs[0]
		if c.UpdateStrategy.Type != workv1.UpdateStrategyTypeServerSideApply || c.UpdateStrategy.ServerSideApply.FieldManager != FieldManager || c.UpdateStrategy.ServerSideApply.Force {
			t.Fatalf("update strategy %+v: want server-side apply under %s, not forced", c.UpdateStrategy, FieldManager)
		}
		if len(c.FeedbackRules) != 1 || len(c.FeedbackRules[0].JsonPaths) != len(relocationFeedback) {
			t.Fatalf("feedback rules %+v", c.FeedbackRules)
		}
	}
}

// sourceWork is a delivery-shaped ManifestWork: a namespace, a Secret copy
// and the HostedCluster, paused.
func sourceWork(t *testing.T) *workv1.ManifestWork {
	t.Helper()
	raw := func(o map[string]any) workv1.Manifest {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: b}}
	}
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "hcd-team-a.app", Namespace: "cluster-1"},
		Spec: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				raw(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "clusters"}}),
				raw(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "pull-x", "namespace": "clusters"}}),
				raw(map[string]any{"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
					"metadata": map[string]any{"name": "app", "namespace": "clusters"},
					"spec": map[string]any{"infraID": "app-x7k2p", "pausedUntil": "true",
						"etcd": map[string]any{"managementType": "Managed", "managed": map[string]any{"storage": map[string]any{"type": "PersistentVolume"}}}}}),
			}},
			ManifestConfigs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Group: "hypershift.openshift.io", Resource: "hostedclusters", Namespace: "clusters", Name: "app"},
				FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: []workv1.JsonPath{{Name: "available", Path: ".status"}}}},
			}},
		},
	}
}

func TestDestinationWork(t *testing.T) {
	src := sourceWork(t)
	src.Labels = map[string]string{hosting.LabelBackup: "hcp-fleet"}
	src.Annotations = map[string]string{"hcpfleet.io/spec-hash": "x"}
	before := src.DeepCopy()
	w, err := DestinationWork(src, "cluster-2", "agents-2", "https://bucket.example.com/app.db", "0d6e6f3c")
	if err != nil {
		t.Fatal(err)
	}
	// The destination's own delivery executor, whatever the source's was.
	if e := w.Spec.Executor; e == nil || e.Subject.ServiceAccount == nil ||
		*e.Subject.ServiceAccount != (workv1.ManifestWorkSubjectServiceAccount{Namespace: "agents-2", Name: addon.ExecutorDelivery}) {
		t.Fatalf("executor %+v, want ServiceAccount agents-2/%s", e, addon.ExecutorDelivery)
	}
	if src.Spec.Executor != nil {
		t.Fatal("DestinationWork set the source's executor")
	}
	if w.Namespace != "cluster-2" || w.Name != src.Name {
		t.Fatalf("destination work %s/%s: want cluster-2/%s (the delivery's name, so it takes it over)", w.Namespace, w.Name, src.Name)
	}
	if len(w.Spec.Workload.Manifests) != 3 {
		t.Fatalf("%d manifests, want the source's 3 (namespace, Secret copies, HostedCluster)", len(w.Spec.Workload.Manifests))
	}
	hc := manifestOf(t, w, "HostedCluster")
	if got, _, _ := unstructured.NestedStringSlice(hc.Object, "spec", "etcd", "managed", "storage", "restoreSnapshotURL"); len(got) != 1 || got[0] != "https://bucket.example.com/app.db" {
		t.Fatalf("restoreSnapshotURL %v", got)
	}
	if id, _, _ := unstructured.NestedString(hc.Object, "spec", "clusterID"); id != "0d6e6f3c" {
		t.Fatalf("clusterID %q, want the source's", id)
	}
	if id, _, _ := unstructured.NestedString(hc.Object, "spec", "infraID"); id != "app-x7k2p" {
		t.Fatalf("infraID %q, want the source's", id)
	}
	if _, found, _ := unstructured.NestedString(hc.Object, "spec", "pausedUntil"); found {
		t.Fatal("the destination is created paused")
	}
	if rules := w.Spec.ManifestConfigs[0].FeedbackRules; len(rules) != 2 {
		t.Fatalf("feedback rules %+v: want the delivery's and the relocation's", rules)
	}
	// A copy, of cluster-1, until the binding moves; backed up as the
	// delivery's.
	if w.Annotations[hosting.AnnotationRelocationCopy] != "cluster-1" || w.Annotations["hcpfleet.io/spec-hash"] != "x" || w.Labels[hosting.LabelBackup] == "" {
		t.Fatalf("annotations %v, labels %v", w.Annotations, w.Labels)
	}
	if !equality.Semantic.DeepEqual(src.ObjectMeta, before.ObjectMeta) ||
		string(src.Spec.Workload.Manifests[2].Raw) != string(before.Spec.Workload.Manifests[2].Raw) || len(src.Spec.ManifestConfigs[0].FeedbackRules) != 1 {
		t.Fatal("DestinationWork changed the source ManifestWork")
	}

	noHC := sourceWork(t)
	noHC.Spec.Workload.Manifests = noHC.Spec.Workload.Manifests[:2]
	if _, err := DestinationWork(noHC, "cluster-2", "", "u", ""); err == nil {
		t.Fatal("a ManifestWork without a HostedCluster was moved")
	}
}

func TestObserve(t *testing.T) {
	str := func(s string) workv1.FieldValue { return workv1.FieldValue{Type: workv1.String, String: ptr.To(s)} }
	num := func(i int64) workv1.FieldValue { return workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(i)} }
	work := func(values map[string]workv1.FieldValue) *workv1.ManifestWork {
		w := &workv1.ManifestWork{}
		var fv []workv1.FeedbackValue
		for n, v := range values {
			fv = append(fv, workv1.FeedbackValue{Name: n, Value: v})
		}
		w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{
			{ResourceMeta: workv1.ManifestResourceMeta{Resource: "namespaces", Name: "clusters"},
				StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{{Name: fbAvailable, Value: str("True")}}}},
			{ResourceMeta: workv1.ManifestResourceMeta{Resource: "hostedclusters", Name: "app"}, StatusFeedbacks: workv1.StatusFeedbackResult{Values: fv}},
		}
		return w
	}
	paused := map[string]workv1.FieldValue{
		fbReconciliationActive: str("False"), fbReconciliationReason: str("ReconciliationPaused"),
		fbReconciliationGeneration: num(3), fbGeneration: num(3),
		fbSnapshotURL: str("https://bucket.example.com/app.db"), fbInfraID: str("app-x7k2p"), fbClusterID: str("0d6e6f3c"),
	}
	got := Observe(work(paused))
	want := HostedClusterFacts{Paused: true, SnapshotURL: "https://bucket.example.com/app.db", Identity: Identity{InfraID: "app-x7k2p", ClusterID: "0d6e6f3c"}}
	if got != want {
		t.Fatalf("Observe = %+v, want %+v", got, want)
	}
	// The pause not yet seen at the current generation: not paused.
	paused[fbGeneration] = num(4)
	if Observe(work(paused)).Paused {
		t.Fatal("paused at an older generation counted as paused")
	}
	running := Observe(work(map[string]workv1.FieldValue{fbReconciliationActive: str("True"), fbReconciliationGeneration: num(5),
		fbGeneration: num(5), fbAvailable: str("True")}))
	if !running.Running || running.Paused || !running.Available {
		t.Fatalf("a running, available HostedCluster observed as %+v", running)
	}
	if (Observe(&workv1.ManifestWork{}) != HostedClusterFacts{}) {
		t.Fatal("a ManifestWork without feedback observed as something")
	}
}
