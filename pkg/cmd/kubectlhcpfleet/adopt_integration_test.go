//go:build integration

package kubectlhcpfleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/adoption"
)

// TestAdoptDryRun: a HostedCluster created directly on a management
// cluster (as `hcp` would) is listed by its agent, and adopt --dry-run says
// it can be adopted into a deployment of its own name with its namespace
// and infraID kept; it refuses, each with its reason, another name, one in
// a namespace the cluster's HostingConfig does not allow and a cluster
// without the agent. A tenant may not even ask, and nothing is written.
func TestAdoptDryRun(t *testing.T) {
	ctx := context.Background()
	const cluster = "cluster-1"
	host := hostOf(t, cluster)
	// Allowed (the default HostingConfig's clusters) and not allowed.
	const allowedNS, elsewhereNS, name = v1alpha1.DefaultHostingNamespace, "adopt-elsewhere", "adopt-wild"
	for _, ns := range []string{allowedNS, elsewhereNS} {
		createUnmanaged(t, host, cluster, ns, name, ns+"-wild-infra", nil)
	}
	// The positive signal: the agent lists both.
	env.Eventually(t, 2*time.Minute, "the agent of "+cluster+" lists both HostedClusters", func(ctx context.Context) error {
		for _, ns := range []string{allowedNS, elsewhereNS} {
			if listed, err := inventoryLists(ctx, cluster, ns, name); err != nil || !listed {
				return fmt.Errorf("%s/%s not listed (%v)", ns, name, err)
			}
		}
		return nil
	})

	out, err := run(ctx, "adopt", cluster, allowedNS+"/"+name, "--into", team, "-o", "json")
	if err != nil {
		t.Fatalf("adopt: %v\n%s", err, out)
	}
	var p adoption.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if !p.Adoptable() || p.IntoNamespace != team || p.IntoName != name || p.HostingNamespace != allowedNS || p.InfraID != allowedNS+"-wild-infra" || p.OrphanOf != nil {
		t.Errorf("plan %+v: want adoptable into %s/%s, hosting namespace %s and its infraID kept", p, team, name, allowedNS)
	}
	if out, err := run(ctx, "adopt", cluster, allowedNS+"/"+name, "--into", team); err != nil ||
		!strings.Contains(out, "can be adopted into HostedClusterDeployment "+team+"/"+name) || !strings.Contains(out, "dry-run: nothing was written") {
		t.Errorf("adopt (text): %v\n%s", err, out)
	}

	for _, tc := range []struct {
		args   []string
		reason string
	}{
		{[]string{cluster, allowedNS + "/" + name, "--into", team + "/renamed"}, adoption.ReasonNameMismatch},
		{[]string{cluster, elsewhereNS + "/" + name, "--into", team}, adoption.ReasonHostingNamespaceNotAllowed},
		{[]string{noAddOn, allowedNS + "/" + name, "--into", team}, adoption.ReasonNotListed},
		{[]string{cluster, allowedNS + "/not-there", "--into", team}, adoption.ReasonNotListed},
	} {
		out, err := run(ctx, append([]string{"adopt"}, append(tc.args, "-o", "json")...)...)
		if err != nil {
			t.Errorf("adopt %v: %v\n%s", tc.args, err, out)
			continue
		}
		var p adoption.Plan
		if err := json.Unmarshal([]byte(out), &p); err != nil || p.Reason != tc.reason || p.Message == "" {
			t.Errorf("adopt %v: %v, want reason %s:\n%s", tc.args, err, tc.reason, out)
		}
	}

	// A tenant may read neither the management clusters nor their
	// inventories: it cannot even ask (the reader names the refused read).
	if out, err := run(ctx, "adopt", cluster, allowedNS+"/"+name, "--into", team, "--as", "alice", "--as-group", team); err == nil || !strings.Contains(err.Error(), "missing permission") {
		t.Errorf("a tenant asked to adopt: %v\n%s", err, out)
	}
	if out, err := run(ctx, "adopt", cluster, name, "--into", team); err == nil || !strings.Contains(err.Error(), "NAMESPACE/NAME") {
		t.Errorf("adopt with a HostedCluster without its namespace: %v\n%s", err, out)
	}
	// It only reads: no deployment was created.
	if err := admin.Get(ctx, types.NamespacedName{Namespace: team, Name: name}, &v1alpha1.HostedClusterDeployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("HostedClusterDeployment %s/%s after a dry-run: %v", team, name, err)
	}
}

var (
	hcGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	npGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "nodepools"}
	nsGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// hostOf is a dynamic client of management cluster name.
func hostOf(t *testing.T, name string) dynamic.Interface {
	t.Helper()
	for _, m := range env.Fleet.Managed {
		if m.Name == name {
			return dynamic.NewForConfigOrDie(m.Config())
		}
	}
	t.Fatalf("no management cluster %s in the fleet", name)
	return nil
}

// inventoryLists reports whether cluster's agent lists namespace/name.
func inventoryLists(ctx context.Context, cluster, namespace, name string) (bool, error) {
	inv := &v1alpha1.HostedClusterInventory{}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: cluster, Name: v1alpha1.InventoryName}, inv); err != nil {
		return false, err
	}
	for _, e := range inv.Status.HostedClusters {
		if e.Namespace == namespace && e.Name == name {
			return true, nil
		}
	}
	return false, nil
}

// createUnmanaged creates, on management cluster cluster (host), the
// namespace ns if missing and in it a HostedCluster name with infraID and
// labels, as `hcp create cluster` would outside hcp-fleet; it is removed
// when the test ends (removeUnmanaged).
func createUnmanaged(t *testing.T, host dynamic.Interface, cluster, ns, name, infraID string, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := host.Resource(nsGVR).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	hc := fleettest.HostedCluster(ns, name)
	if err := unstructured.SetNestedField(hc.Object, infraID, "spec", "infraID"); err != nil {
		t.Fatal(err)
	}
	if labels != nil {
		hc.SetLabels(labels)
	}
	if _, err := host.Resource(hcGVR).Namespace(ns).Create(ctx, hc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeUnmanaged(t, host.Resource(hcGVR).Namespace(ns), cluster, ns, name) })
}

// removeUnmanaged deletes a HostedCluster a test created on a management
// cluster and waits until its agent no longer lists it, so later tests see
// the load they expect.
func removeUnmanaged(t *testing.T, hcs dynamic.ResourceInterface, cluster, namespace, name string) {
	t.Helper()
	if err := hcs.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
		return
	}
	env.Eventually(t, 2*time.Minute, fmt.Sprintf("%s stops listing %s/%s", cluster, namespace, name), func(ctx context.Context) error {
		if listed, err := inventoryLists(ctx, cluster, namespace, name); err != nil || listed {
			return fmt.Errorf("still listed (%v)", err)
		}
		return nil
	})
}
