//go:build integration

package crds

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/internal/testenv"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := clusterv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func resourceVersions(t *testing.T, c client.Client, names []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(context.Background(), types.NamespacedName{Name: n}, crd); err != nil {
			t.Fatal(err)
		}
		out[n] = crd.ResourceVersion
	}
	return out
}

// Standard install on an empty cluster, idempotent re-apply, and recovery of
// a hand-edited field.
func TestInstallStandard(t *testing.T) {
	ctx := context.Background()
	cfg := testenv.Start(t)
	c := newClient(t, cfg)
	opts := Options{Providers: []Provider{ProviderAgent}}

	d, res, err := Reconcile(ctx, c, ModeAuto, opts)
	if err != nil {
		t.Fatal(err)
	}
	if d.Mode != ModeStandard || !strings.Contains(d.Reason, "no cluster.x-k8s.io CRDs") || len(res.Skipped) != 0 || len(res.Applied) != 16 {
		t.Fatalf("decision %+v result %+v", d, res)
	}

	// The pinned CAPI types work against the installed CRDs…
	cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: "default"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "capi-provider.agent-install.openshift.io", Kind: "AgentCluster", Name: "c1"}}}
	if err := c.Create(ctx, cl); err != nil {
		t.Fatalf("creating a v1beta2 Cluster: %v", err)
	}
	// …and v1beta1 is not served (no conversion webhook: see Options.CoreVersion).
	dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	if _, err := dc.ServerResourcesForGroupVersion("cluster.x-k8s.io/v1beta1"); !apierrors.IsNotFound(err) {
		t.Fatalf("cluster.x-k8s.io/v1beta1 should not be served, got %v", err)
	}
	// The Agent provider CRDs carry the contract label CAPI resolves refs with.
	ac := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, types.NamespacedName{Name: "agentclusters.capi-provider.agent-install.openshift.io"}, ac); err != nil {
		t.Fatal(err)
	}
	if ac.Labels["cluster.x-k8s.io/v1beta1"] != "v1beta1" {
		t.Fatalf("contract label: %v", ac.Labels)
	}

	// Re-applying changes nothing.
	before := resourceVersions(t, c, res.Applied)
	if _, res2, err := Reconcile(ctx, c, ModeAuto, opts); err != nil || len(res2.Applied) != 16 {
		t.Fatalf("second reconcile: %v %+v", err, res2)
	}
	if after := resourceVersions(t, c, res.Applied); !mapsEqual(before, after) {
		t.Fatalf("an idempotent apply rewrote CRDs:\n%v\n%v", before, after)
	}

	// A field we own, changed by someone else, comes back.
	patch := []byte(`{"metadata":{"labels":{"` + ModeLabel + `":"tampered"}}}`)
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "machines.cluster.x-k8s.io"}}
	if err := c.Patch(ctx, crd, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Reconcile(ctx, c, ModeAuto, opts); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, types.NamespacedName{Name: crd.Name}, crd); err != nil || crd.Labels[ModeLabel] != "standard" {
		t.Fatalf("label not restored: %v %v", err, crd.Labels)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// The platform (here: clusterctl) owns some standard CRDs at v1beta1 and
// someone else owns one private CRD: Auto goes private, nothing of theirs is
// written, and the choice sticks.
func TestInstallBesideForeignCRDs(t *testing.T) {
	ctx := context.Background()
	cfg := testenv.Start(t)
	c := newClient(t, cfg)
	opts := Options{Providers: []Provider{ProviderAgent}}

	// The platform's CRDs: v1beta1 only, clusterctl labels, its own manager.
	platformSet, err := Standard(Options{CoreVersion: "v1beta1"})
	if err != nil {
		t.Fatal(err)
	}
	var foreign []string
	for _, crd := range platformSet {
		if !slices.Contains([]string{"clusters.cluster.x-k8s.io", "machines.cluster.x-k8s.io", "machinedeployments.cluster.x-k8s.io"}, crd.Name) {
			continue
		}
		crd.Labels = map[string]string{"clusterctl.cluster.x-k8s.io": "", "cluster.x-k8s.io/provider": "cluster-api"}
		crd.Annotations = nil
		if err := (&Installer{Client: c, FieldManager: "clusterctl"}).apply(ctx, crd, false); err != nil {
			t.Fatal(err)
		}
		foreign = append(foreign, crd.Name)
	}
	// Someone else's private CRD (say, a future HyperShift that installs its own).
	std, _ := Standard(opts)
	var theirPrivate *apiextensionsv1.CustomResourceDefinition
	for _, crd := range std {
		if crd.Name == "machinepools.cluster.x-k8s.io" {
			theirPrivate = Privatize(crd)
		}
	}
	theirPrivate.Labels = map[string]string{"app": "upstream-hypershift"}
	if err := (&Installer{Client: c, FieldManager: "hypershift-operator"}).apply(ctx, theirPrivate, false); err != nil {
		t.Fatal(err)
	}
	if err := WaitEstablished(ctx, c, append(slices.Clone(foreign), theirPrivate.Name), time.Minute); err != nil {
		t.Fatal(err)
	}
	before := resourceVersions(t, c, append(slices.Clone(foreign), theirPrivate.Name))

	d, res, err := Reconcile(ctx, c, ModeAuto, opts)
	if err != nil {
		t.Fatal(err)
	}
	if d.Mode != ModePrivate || d.Reason != "Private: cluster.x-k8s.io CRDs are owned by clusterctl (cluster-api) at v1beta1" {
		t.Fatalf("decision: %+v", d)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].CRD != theirPrivate.Name || res.Skipped[0].Owner != "field manager hypershift-operator" {
		t.Fatalf("skipped: %+v", res.Skipped)
	}
	for _, n := range res.Applied {
		if !strings.Contains(n, "."+groups.Private) && !strings.HasSuffix(n, "agent-install.openshift.io") {
			t.Errorf("applied a non-private CRD %s in private mode", n)
		}
	}
	if len(res.Applied) != 15 {
		t.Errorf("applied %d CRDs, want 15: %v", len(res.Applied), res.Applied)
	}

	// Objects go into the private group.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.hypershift.openshift.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": "c1", "namespace": "default"},
		"spec":     map[string]any{"paused": true},
	}}
	if err := c.Create(ctx, u); err != nil {
		t.Fatalf("creating a private Cluster: %v", err)
	}

	// Explicitly asking for Standard now: private stays, and a standard
	// install never touches the platform's CRDs.
	d2, _, err := Reconcile(ctx, c, ModeStandard, opts)
	if err != nil || d2.Mode != ModePrivate || !strings.Contains(d2.Reason, "switching back is not supported") {
		t.Fatalf("sticky private: %v %+v", err, d2)
	}
	stdCRDs, _ := Build(ModeStandard, opts)
	res3, err := (&Installer{Client: c}).Install(ctx, stdCRDs)
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, s := range res3.Skipped {
		skipped = append(skipped, s.CRD)
		if s.Owner != "clusterctl (cluster-api)" {
			t.Errorf("owner of %s: %q", s.CRD, s.Owner)
		}
	}
	slices.Sort(skipped)
	slices.Sort(foreign)
	if !slices.Equal(skipped, foreign) {
		t.Fatalf("skipped %v, want %v", skipped, foreign)
	}
	after := resourceVersions(t, c, append(slices.Clone(foreign), theirPrivate.Name))
	if !mapsEqual(before, after) {
		t.Fatalf("foreign CRDs were written:\n%v\n%v", before, after)
	}
	for _, n := range foreign {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		_ = c.Get(ctx, types.NamespacedName{Name: n}, crd)
		if IsOurs(crd) || !slices.Equal(ServedVersions(crd), []string{"v1beta1"}) {
			t.Errorf("%s changed hands or versions: %v %v", n, crd.Labels, ServedVersions(crd))
		}
	}
}
