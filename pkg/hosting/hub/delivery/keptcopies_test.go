package delivery

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"
)

// TestKeptCopies: a ManifestWork an older hub wrote (copies named
// LegacyCopyName) keeps those names when rendered again, so the hub's
// upgrade renames no reference HyperShift may refuse to change; a reference
// it did not deliver yet gets the salted name.
func TestKeptCopies(t *testing.T) {
	s := testSpec(t)
	refs := s.References()
	legacyPull := LegacyCopyName(s.Namespace, s.Name, KindSecret, "pull-secret")
	old := &workv1.ManifestWork{}
	for _, m := range []map[string]any{
		{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": legacyPull, "namespace": "clusters"}},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": legacyPull, "namespace": "clusters"}},
	} {
		raw, _ := json.Marshal(m)
		old.Spec.Workload.Manifests = append(old.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	s.KeepDelivered(old)
	if len(s.KeptCopies) != 1 || s.KeptCopies["Secret/pull-secret"] != legacyPull {
		t.Fatalf("kept %v, want only the pull secret's legacy name", s.KeptCopies)
	}
	referenced := map[string]*unstructured.Unstructured{}
	for _, r := range refs {
		referenced[r.Kind+"/"+r.Name] = &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"k": "dg=="}}}
	}
	hc, _, _ := renderedSpecs(t, s, referenced)
	if got := hc["pullSecret"].(map[string]any)["name"]; got != legacyPull {
		t.Errorf("pullSecret renders %v, want the kept %s", got, legacyPull)
	}
	if got, want := hc["sshKey"].(map[string]any)["name"], CopyName(s.Namespace, s.Name, s.UID, KindSecret, "prod-ssh"); got != want {
		t.Errorf("sshKey renders %v, want the salted %s", got, want)
	}
	fresh := testSpec(t)
	if fresh.KeepDelivered(nil); fresh.KeptCopies != nil {
		t.Error("copies kept without a ManifestWork")
	}
}

// TestKeepRestored: a HostedCluster a relocation created on this cluster
// (restoreSnapshotURL and the source's clusterID) keeps both when the
// delivery takes its ManifestWork over; one never restored gets neither.
func TestKeepRestored(t *testing.T) {
	s := testSpec(t)
	raw, _ := json.Marshal(map[string]any{"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
		"metadata": map[string]any{"name": s.Name, "namespace": "clusters"},
		"spec": map[string]any{"infraID": "app-x7k2p", "clusterID": "0d6e6f3c",
			"etcd": map[string]any{"managed": map[string]any{"storage": map[string]any{"restoreSnapshotURL": []string{"http://127.0.0.1/s.db"}}}}}})
	moved := &workv1.ManifestWork{}
	moved.Spec.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	plain := testSpec(t)
	plainHash, err := InputHash(plain, "cluster-2", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.KeepDelivered(moved)
	referenced := map[string]*unstructured.Unstructured{}
	for _, r := range s.References() {
		referenced[r.Kind+"/"+r.Name] = &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"k": "dg=="}}}
	}
	hc, _, _ := renderedSpecs(t, s, referenced)
	if hc["clusterID"] != "0d6e6f3c" {
		t.Errorf("clusterID %v, want the restored one", hc["clusterID"])
	}
	if urls, _, _ := unstructured.NestedStringSlice(hc, "etcd", "managed", "storage", "restoreSnapshotURL"); len(urls) != 1 || urls[0] != "http://127.0.0.1/s.db" {
		t.Errorf("restoreSnapshotURL %v, want the restored one", urls)
	}
	if h, _ := InputHash(s, "cluster-2", nil); h == plainHash {
		t.Error("the kept restore fields do not change the input hash")
	}
	hc, _, _ = renderedSpecs(t, plain, referenced)
	if _, found, _ := unstructured.NestedFieldNoCopy(hc, "etcd", "managed", "storage", "restoreSnapshotURL"); found || hc["clusterID"] != nil {
		t.Errorf("a HostedCluster never restored renders %v", hc)
	}
}
