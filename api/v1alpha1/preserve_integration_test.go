//go:build integration

package v1alpha1_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hcpv1 "github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// futureHCD is a HostedClusterDeployment as a user of a newer HyperShift would write
// it: it sets fields our pinned HyperShift API does not know, at the top of
// hostedCluster.spec and nodePools[].spec and deep inside objects that have a schema
// of their own, plus two fields outside those specs that nobody knows.
const futureHCD = `
apiVersion: hcpfleet.io/v1alpha1
kind: HostedClusterDeployment
metadata:
  name: future
  namespace: preserve
spec:
  hostingCluster: mgmt-1
  bogusSpecField: dropped
  hostedCluster:
    bogusTemplateField: dropped
    spec:
      release:
        image: quay.io/openshift-release-dev/ocp-release:4.99.0-multi
      pullSecret:
        name: pull-secret
      futureTopLevel:
        enabled: true
        nested:
          list: [a, b]
          deeper: {level: 3}
      dns:
        baseDomain: example.com
        futureDNSOption: private-only
      networking:
        networkType: OVNKubernetes
        clusterNetwork:
        - cidr: 10.132.0.0/14
          futureCIDRFlag: true
        serviceNetwork:
        - cidr: 172.31.0.0/16
        futureNetworking:
          mtu: 9000
      platform:
        type: Agent
        agent:
          agentNamespace: agents
          futureAgentOption: {x: 1}
      etcd:
        managementType: Managed
        managed:
          storage:
            type: PersistentVolume
            persistentVolume:
              size: 8Gi
              futureVolumeOption: fast
      services:
      - service: APIServer
        servicePublishingStrategy:
          type: LoadBalancer
          futurePublishing: {annotations: {a: b}}
      - service: OAuthServer
        servicePublishingStrategy: {type: Route}
      - service: Konnectivity
        servicePublishingStrategy: {type: Route}
      - service: Ignition
        servicePublishingStrategy: {type: Route}
  nodePools:
  - name: future-workers
    spec:
      clusterName: future
      release:
        image: quay.io/openshift-release-dev/ocp-release:4.99.0-multi
      futureNodePoolField: 42
      management:
        upgradeType: Replace
        replace:
          strategy: RollingUpdate
          rollingUpdate:
            maxSurge: 1
            futureSurgeMode: burst
      platform:
        type: Agent
        agent:
          agentLabelSelector:
            matchLabels: {pool: future}
          futureAgentPoolOption: [1, 2]
`

// preservedPaths are the unknown fields that must survive, with their values.
var preservedPaths = map[string]any{
	"spec.hostedCluster.spec.futureTopLevel.enabled":                                               true,
	"spec.hostedCluster.spec.futureTopLevel.nested.list":                                           []any{"a", "b"},
	"spec.hostedCluster.spec.futureTopLevel.nested.deeper.level":                                   int64(3),
	"spec.hostedCluster.spec.dns.futureDNSOption":                                                  "private-only",
	"spec.hostedCluster.spec.networking.clusterNetwork[0].futureCIDRFlag":                          true,
	"spec.hostedCluster.spec.networking.futureNetworking.mtu":                                      int64(9000),
	"spec.hostedCluster.spec.platform.agent.futureAgentOption.x":                                   int64(1),
	"spec.hostedCluster.spec.etcd.managed.storage.persistentVolume.futureVolumeOption":             "fast",
	"spec.hostedCluster.spec.services[0].servicePublishingStrategy.futurePublishing.annotations.a": "b",
	"spec.nodePools[0].spec.futureNodePoolField":                                                   int64(42),
	"spec.nodePools[0].spec.management.replace.rollingUpdate.futureSurgeMode":                      "burst",
	"spec.nodePools[0].spec.platform.agent.futureAgentPoolOption":                                  []any{int64(1), int64(2)},
}

// TestUnknownHyperShiftFieldsSurvive proves that fields a newer HyperShift knows, set
// anywhere under hostedCluster.spec or nodePools[].spec, are stored and returned by the
// apiserver unchanged — after create, after an update of other fields, and after a
// status update from a typed Go object (which itself cannot hold them) — while fields
// outside those specs are still pruned.
func TestUnknownHyperShiftFieldsSurvive(t *testing.T) {
	ctx := context.Background()
	ensureNamespace(t, "preserve")
	obj := mustObject(t, futureHCD)
	if err := k8s.Create(ctx, obj); err != nil {
		t.Fatalf("creating a HostedClusterDeployment with fields from a newer HyperShift: %v", err)
	}
	key := client.ObjectKeyFromObject(obj)

	checkPreserved := func(stage string) *unstructured.Unstructured {
		t.Helper()
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(hcpv1.GroupVersion.WithKind(hcpv1.HostedClusterDeploymentKind))
		if err := k8s.Get(ctx, key, got); err != nil {
			t.Fatal(err)
		}
		for path, want := range preservedPaths {
			v, ok := lookupPath(got.Object, path)
			if !ok {
				t.Errorf("%s: %s was dropped", stage, path)
				continue
			}
			if !jsonEqual(v, want) {
				t.Errorf("%s: %s = %#v, want %#v", stage, path, v, want)
			}
		}
		for _, path := range []string{"spec.bogusSpecField", "spec.hostedCluster.bogusTemplateField"} {
			if _, ok := lookupPath(got.Object, path); ok {
				t.Errorf("%s: %s is outside the HyperShift specs and should have been pruned", stage, path)
			}
		}
		return got
	}
	checkPreserved("after create")

	// Changing known fields keeps the unknown ones: a merge patch, and an update of
	// the whole object read as unstructured (what controllers must do).
	patch := []byte(`{"spec":{"deletionPolicy":"Orphan","hostedCluster":{"spec":{"release":{"image":"quay.io/openshift-release-dev/ocp-release:4.99.1-multi"}}}}}`)
	if err := k8s.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("patching: %v", err)
	}
	got := checkPreserved("after a merge patch")
	if v, _ := lookupPath(got.Object, "spec.hostedCluster.spec.release.image"); v != "quay.io/openshift-release-dev/ocp-release:4.99.1-multi" {
		t.Errorf("the merge patch was not applied: release image = %v", v)
	}
	pools, _, _ := unstructured.NestedSlice(got.Object, "spec", "nodePools")
	pools[0].(map[string]any)["spec"].(map[string]any)["replicas"] = int64(3)
	if err := unstructured.SetNestedSlice(got.Object, pools, "spec", "nodePools"); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Update(ctx, got); err != nil {
		t.Fatalf("updating the unstructured object: %v", err)
	}
	got = checkPreserved("after an unstructured update")
	if v, _ := lookupPath(got.Object, "spec.nodePools[0].spec.replicas"); v != int64(3) {
		t.Errorf("the update was not applied: replicas = %v", v)
	}

	// A controller holding the typed object: the Go types drop the unknown fields
	// (this is why controllers must read the specs as unstructured), but a status
	// update through the status subresource leaves the stored spec alone.
	var typed hcpv1.HostedClusterDeployment
	if err := k8s.Get(ctx, key, &typed); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(typed.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "futureTopLevel") {
		t.Errorf("the typed Go object unexpectedly kept an unknown field; update the doc comment on HostedClusterTemplate")
	}
	typed.Status.ObservedGeneration = typed.Generation
	typed.Status.HostingCluster = "mgmt-1"
	if err := k8s.Status().Update(ctx, &typed); err != nil {
		t.Fatalf("status update: %v", err)
	}
	checkPreserved("after a typed status update")
}

// lookupPath follows a path like a.b[0].c through maps and lists.
func lookupPath(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for _, seg := range strings.Split(path, ".") {
		name, index, hasIndex := strings.Cut(seg, "[")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[name]; !ok {
			return nil, false
		}
		if hasIndex {
			list, ok := cur.([]any)
			i := int(index[0] - '0')
			if !ok || i >= len(list) {
				return nil, false
			}
			cur = list[i]
		}
	}
	return cur, true
}

func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
