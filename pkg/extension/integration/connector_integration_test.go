//go:build integration

package integration_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/internal/rbacmatrix"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/connector"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// checkConnector: with want, the connector's Deployment, ServiceAccount,
// Role and RoleBinding are in the control-plane namespace, the Deployment
// available (the kubelet stand-in runs it) and the Secret it mounts points
// at the in-cluster address; without, all four are gone.
func checkConnector(t *testing.T, cpNS string, want bool) {
	t.Helper()
	objs := []client.Object{&appsv1.Deployment{}, &corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}}
	env.Eventually(t, time.Minute, fmt.Sprintf("the connector's objects in %s (want %v)", cpNS, want), func(ctx context.Context) error {
		for _, o := range objs {
			err := mgmt.Get(ctx, types.NamespacedName{Namespace: cpNS, Name: connector.Name}, o)
			switch {
			case want && err != nil:
				return fmt.Errorf("%T: %w", o, err)
			case !want && !apierrors.IsNotFound(err):
				return fmt.Errorf("%T still there (%v)", o, err)
			}
		}
		return nil
	})
	if !want {
		return
	}
	s := &corev1.Secret{}
	if err := mgmt.Get(context.Background(), types.NamespacedName{Namespace: cpNS, Name: extension.GuestKubeconfigSecret}, s); err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(s.Data[hosting.KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	if server := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster].Server; server != "https://kube-apiserver:6443" {
		t.Fatalf("service-network-admin-kubeconfig points at %q, want the in-cluster Service address", server)
	}
	d := objs[0].(*appsv1.Deployment)
	if args := d.Spec.Template.Spec.Containers[0].Args; len(args) == 0 || args[0] != connector.Command {
		t.Fatalf("connector args %q", args)
	}
}

// TestConnectorUnreachableGuestAndTakeover: the hosted cluster's Service
// network is down, so the connector cannot reach the guest through
// service-network-admin-kubeconfig; the extension says so (reason and
// message) while the guest is fine from outside. Meanwhile an object the
// central engine of an older agent applied (its labels and field manager)
// is in the guest; once the Service answers, the connector completes the
// phase and takes that object over in place (same UID), and the removal
// deletes it and the connector.
func TestConnectorUnreachableGuestAndTakeover(t *testing.T) {
	ctx := context.Background()
	ns := "ext-unreachable"
	tenant(t, ns)
	createHCD(t, ns, "guest-u")
	waitAvailable(t, ns, "guest-u")
	cpNS := extension.ControlPlaneNamespace(v1alpha1.DefaultHostingNamespace, "guest-u")
	guest := guestClient(t, "guest-u")
	setServiceNetworkDown(t, "guest-u", true)

	spec := map[string]any{
		"hostedClusterSelector": map[string]any{"matchLabels": map[string]any{"extensions": "yes"}},
		"availabilityProbes":    probes,
		"phases": []any{
			phase("guest-rbac", "hosted-cluster", obj(guestNamespace), obj(guestRole)),
			phase("operator", "", obj(cpConfig)),
		},
	}
	applyExtension(t, ns, "reach", spec)
	failed := waitHostedCluster(t, ns, "reach", "guest-u", 2*time.Minute, "the unreachable guest is reported", stateIs(v1alpha1.ExtensionStateFailed))
	if failed.CurrentPhase != "guest-rbac" || failed.Failure == nil || failed.Failure.Reason != extension.ReasonHostedClusterUnreachable ||
		!strings.Contains(failed.Failure.Message, "https://kube-apiserver:6443") || !strings.Contains(failed.Failure.Message, "no such host") {
		t.Fatalf("failure %+v at phase %s", failed.Failure, failed.CurrentPhase)
	}
	e, err := getExtension(ctx, ns, "reach")
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(e.Status.Conditions, "Degraded"); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "kube-apiserver:6443") {
		t.Fatalf("Degraded %+v", c)
	}
	// The later phase waits for the unreachable one.
	if ok, err := exists(ctx, mgmt, "v1", "ConfigMap", cpNS, "audit-operator"); ok || err != nil {
		t.Fatalf("phase operator ran before phase guest-rbac (%v)", err)
	}

	// What the central engine of an older agent applied: the Namespace,
	// with the extension's labels, under the engine's field manager.
	old := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "audit", "labels": map[string]any{extension.LabelExtension: "reach", extension.LabelExtensionUID: string(e.UID)}}}}
	if err := guest.Apply(ctx, client.ApplyConfigurationFromUnstructured(old), client.FieldOwner(extension.FieldManager)); err != nil {
		t.Fatal(err)
	}
	if err := guest.Get(ctx, types.NamespacedName{Name: "audit"}, old); err != nil {
		t.Fatal(err)
	}

	setServiceNetworkDown(t, "guest-u", false)
	waitHostedCluster(t, ns, "reach", "guest-u", 2*time.Minute, "the phases complete once the Service answers", stateIs(v1alpha1.ExtensionStateAvailable))
	now := &corev1.Namespace{}
	if err := guest.Get(ctx, types.NamespacedName{Name: "audit"}, now); err != nil || now.UID != old.GetUID() {
		t.Fatalf("the Namespace the older engine applied was not taken over in place: uid %s, was %s (%v)", now.UID, old.GetUID(), err)
	}
	if ok, err := exists(ctx, guest, "rbac.authorization.k8s.io/v1", "ClusterRole", "", "audit-reader"); !ok {
		t.Fatalf("the ClusterRole is not in the guest: %v", err)
	}
	checkConnector(t, cpNS, true)
	t.Run("the connector's grant is docs/security.md's", func(t *testing.T) { checkConnectorRBAC(t, cpNS) })

	if err := hubc.Delete(ctx, e); err != nil {
		t.Fatal(err)
	}
	for _, o := range [][3]string{{"v1", "Namespace", "audit"}, {"rbac.authorization.k8s.io/v1", "ClusterRole", "audit-reader"}} {
		env.Eventually(t, 2*time.Minute, o[1]+" "+o[2]+" gone from the hosted cluster", func(ctx context.Context) error {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion(o[0])
			u.SetKind(o[1])
			err := guest.Get(ctx, types.NamespacedName{Name: o[2]}, u)
			if apierrors.IsNotFound(err) || err == nil && u.GetDeletionTimestamp() != nil {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
	}
	checkConnector(t, cpNS, false)
	requests := &corev1.ConfigMapList{}
	if err := mgmt.List(ctx, requests, client.InNamespace(cpNS), client.MatchingLabels{connector.LabelPhaseRequest: "true"}); err != nil || len(requests.Items) != 0 {
		t.Fatalf("phase requests left: %d (%v)", len(requests.Items), err)
	}
}

// setServiceNetworkDown annotates the HostedCluster so the HyperShift
// stand-in takes its kube-apiserver Service off the cluster DNS (or puts it
// back).
func setServiceNetworkDown(t *testing.T, name string, down bool) {
	t.Helper()
	value := any(nil)
	if down {
		value = "service network down (test)"
	}
	hc := &unstructured.Unstructured{}
	hc.SetAPIVersion("hypershift.openshift.io/v1beta1")
	hc.SetKind("HostedCluster")
	hc.SetNamespace(v1alpha1.DefaultHostingNamespace)
	hc.SetName(name)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%s}}}`, hypershiftsim.AnnotationServiceNetworkDown, jsonValue(value))
	if err := mgmt.Patch(context.Background(), hc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

func jsonValue(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%q", v)
}

// checkConnectorRBAC asks the API server about every cell of verbs ×
// resources × namespaces × names for the connector's ServiceAccount and
// compares with docs/security.md's table.
func checkConnectorRBAC(t *testing.T, cpNS string) {
	requests := &corev1.ConfigMapList{}
	if err := mgmt.List(context.Background(), requests, client.InNamespace(cpNS), client.MatchingLabels{connector.LabelPhaseRequest: "true"}); err != nil || len(requests.Items) == 0 {
		t.Fatalf("phase requests: %d (%v)", len(requests.Items), err)
	}
	var names []string
	for _, r := range requests.Items {
		names = append(names, r.Name)
	}
	doc, err := os.ReadFile("../../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	table, err := rbacmatrix.Parse(strings.NewReader(string(doc)), "### The extension connector",
		map[string]string{"<extension namespace>": cpNS, "<phase requests>": strings.Join(names, ",")})
	if err != nil {
		t.Fatal(err)
	}
	var resources []rbacmatrix.Resource
	for _, r := range []string{"configmaps", "secrets", "serviceaccounts", "serviceaccounts/token", "pods", "events", "coordination.k8s.io/leases",
		"apps/deployments", "rbac.authorization.k8s.io/roles", "rbac.authorization.k8s.io/rolebindings"} {
		group, res := rbacmatrix.SplitResource(r)
		res, sub, _ := strings.Cut(res, "/")
		resources = append(resources, rbacmatrix.Resource{Group: group, Resource: res, Subresource: sub, Namespaced: true})
	}
	for _, r := range []string{"namespaces", "nodes", "rbac.authorization.k8s.io/clusterroles", "apiextensions.k8s.io/customresourcedefinitions"} {
		group, res := rbacmatrix.SplitResource(r)
		resources = append(resources, rbacmatrix.Resource{Group: group, Resource: res})
	}
	matrix := rbacmatrix.Matrix{Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "bind", "escalate", "impersonate"},
		Resources: resources, Namespaces: []string{cpNS, "default", "kube-system", v1alpha1.DefaultHostingNamespace},
		Names: []string{"probe-foreign-name", extension.GuestKubeconfigSecret, connector.Name}}
	id := rbacmatrix.Identity{User: serviceaccount.MakeUsername(cpNS, connector.Name),
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + cpNS, "system:authenticated"}}
	cells := matrix.Cells(table)
	broader, narrower, err := rbacmatrix.Diff(context.Background(), kubernetes.NewForConfigOrDie(env.Fleet.Managed[0].Config()), id, table, cells)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cells asked", len(cells))
	if len(broader) > 0 {
		t.Errorf("the connector may do more than docs/security.md says:\n  %s", strings.Join(rbacmatrix.Summarize(broader), "\n  "))
	}
	if len(narrower) > 0 {
		t.Errorf("docs/security.md promises what the connector may not do:\n  %s", strings.Join(rbacmatrix.Summarize(narrower), "\n  "))
	}
}
