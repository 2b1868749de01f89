//go:build integration

package feature_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/internal/legacyfixture"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	addonhub "github.com/hcp-fleet/hcp-fleet/pkg/addon/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/feature"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/migration"
)

// testPrivateModeMigration switches a Standard-mode management cluster that
// holds legacy hosted clusters to Private: the real agent (its own RBAC, the
// fleet's garbage collector running) migrates one hosted cluster, reports
// the other's failure, and says so in the CAPIMigration condition on the hub.
func testPrivateModeMigration(t *testing.T, hub *clients, cluster string) {
	ctx := context.Background()
	c := spoke(t, cluster)
	ensureAgentProviderCRDs(t, c)
	env.Eventually(t, 3*time.Minute, "the HostedCluster CRD on "+cluster, func(ctx context.Context) error {
		return c.Get(ctx, types.NamespacedName{Name: "hostedclusters.hypershift.openshift.io"}, &apiextensionsv1.CustomResourceDefinition{})
	})

	// Laid down while the cluster is still in Standard mode, as a legacy
	// HyperShift left them.
	good, err := legacyfixture.Create(ctx, c, "legacy-1")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := legacyfixture.Create(ctx, c, "legacy-2")
	if err != nil {
		t.Fatal(err)
	}
	// A second CAPI Cluster in one control-plane namespace: preflight refuses
	// it, before anything is written.
	extra := legacyfixture.Object(legacyfixture.CoreAPIVersion, "Cluster", "stray", map[string]any{"spec": map[string]any{"paused": true}})
	extra.SetNamespace(bad.Namespace)
	if err := c.Create(ctx, extra); err != nil {
		t.Fatal(err)
	}
	secretsBefore := secrets(t, c, good.Namespace)

	hc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hcpfleet.io/v1alpha1", "kind": "HostingConfig",
		"metadata": map[string]any{"name": "private-capi", "namespace": "hcp-fleet"},
		"spec":     map[string]any{"capiMode": "Private"},
	}}
	if _, err := hub.hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Create(ctx, hc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hub.setConfig(t, cluster, "private-capi")
	defer hub.setConfig(t, cluster, "")
	hub.condition(t, cluster, feature.ConditionTypes, metav1.ConditionTrue, "Private", "")

	// No Deployment controller or kubelet runs the HyperShift workloads
	// here: play them (the kubelet stand-in runs the proxy sidecars, which
	// have the agent's image, and reports those itself), until the migration
	// is done.
	start := time.Now()
	var last string
	env.Eventually(t, 4*time.Minute, cluster+": CAPIMigration MigrationFailed after migrating legacy-1", func(ctx context.Context) error {
		for _, ns := range []string{good.Namespace, bad.Namespace} {
			if err := legacyfixture.MarkAvailable(ctx, c, ns, runsAgentImage); err != nil {
				return err
			}
		}
		cond, err := hub.findCondition(ctx, cluster, feature.ConditionMigration)
		if err != nil {
			return err
		}
		if cond.Message != last {
			t.Logf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
			last = cond.Message
		}
		if cond.Status != metav1.ConditionFalse || cond.Reason != "MigrationFailed" ||
			!strings.Contains(cond.Message, "1 migrated, 0 waiting, 1 failed") ||
			!strings.Contains(cond.Message, "clusters/legacy-2 (preflight: more than one CAPI Cluster") {
			return fmt.Errorf("condition %s %s: %s", cond.Status, cond.Reason, cond.Message)
		}
		return nil
	})
	t.Logf("migrated in %s", time.Since(start).Round(time.Second))

	// legacy-1: on the private types, nothing lost.
	ann := annotations(t, c, good.HostedCluster)
	if ann[migration.AnnotationPrivateCAPITypes] != "true" || ann["example.com/keep"] != "me" {
		t.Errorf("legacy-1 annotations %v", ann)
	}
	for _, a := range []string{migration.AnnotationScope, migration.AnnotationMigrationInProgress, migration.AnnotationMigrationFailed} {
		if _, ok := ann[a]; ok {
			t.Errorf("legacy-1 still annotated %s: %v", a, ann)
		}
	}
	if n := count(t, c, good.Namespace, "cluster.x-k8s.io", "Machine"); n != 0 {
		t.Errorf("%d standard Machines left in %s", n, good.Namespace)
	}
	privateMachines := map[string]types.UID{}
	for _, kind := range []string{"Cluster", "MachineDeployment", "MachineSet", "Machine", "MachineHealthCheck"} {
		for _, o := range list(t, c, good.Namespace, "cluster.hypershift.openshift.io", kind) {
			if kind == "Machine" {
				privateMachines[o.GetName()] = o.GetUID()
			}
			if o.GetDeletionTimestamp() != nil {
				t.Errorf("private %s %s is being deleted", kind, o.GetName())
			}
		}
	}
	if len(privateMachines) != 2 {
		t.Errorf("private Machines %v, want 2", privateMachines)
	}
	// The bootstrap Secrets and AgentMachines were owned by the standard
	// Machines, which are gone: with the garbage collector running, they
	// survive only because their owners are the private copies now.
	// The positive signal that the garbage collector has worked through the
	// owners that went away: a canary owned by an object that does not
	// exist, created now, is collected.
	canary := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: good.Namespace, Name: "gc-canary",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "never-existed", UID: "00000000-0000-0000-0000-00000000dead"}}}}
	if err := c.Create(ctx, canary); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, time.Minute, "the garbage collector collected its canary", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(canary), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("canary still there (%v)", err)
		}
		return nil
	})
	secretsAfter := secrets(t, c, good.Namespace)
	for name, before := range secretsBefore {
		after, ok := secretsAfter[name]
		if !ok {
			t.Errorf("Secret %s is gone", name)
			continue
		}
		if !maps.EqualFunc(before.Data, after.Data, func(a, b []byte) bool { return string(a) == string(b) }) {
			t.Errorf("Secret %s data changed", name)
		}
		for _, ref := range after.OwnerReferences {
			if ref.Kind == "Machine" && (ref.APIVersion != "cluster.hypershift.openshift.io/v1beta2" || ref.UID != privateMachines[ref.Name]) {
				t.Errorf("Secret %s owner %+v is not the private Machine", name, ref)
			}
		}
	}
	for _, am := range list(t, c, good.Namespace, legacyfixture.AgentGroup, "AgentMachine") {
		refs := am.GetOwnerReferences()
		if len(refs) != 1 || refs[0].UID != privateMachines[refs[0].Name] {
			t.Errorf("AgentMachine %s owners %+v", am.GetName(), refs)
		}
	}
	if n := len(list(t, c, good.Namespace, legacyfixture.AgentGroup, "AgentMachine")); n != 2 {
		t.Errorf("%d AgentMachines, want 2", n)
	}
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: good.Namespace, Name: "cluster-api"}, d); err != nil {
		t.Fatal(err)
	}
	if !runsAgentImage(d) {
		t.Errorf("cluster-api has no proxy sidecar with the agent image: %+v", d.Spec.Template.Spec.Containers)
	}

	// legacy-2: refused in preflight, untouched, the legacy operator's again.
	ann = annotations(t, c, bad.HostedCluster)
	if !strings.HasPrefix(ann[migration.AnnotationMigrationFailed], "preflight: ") || ann[migration.AnnotationScope] != migration.ScopeLegacy {
		t.Errorf("legacy-2 annotations %v", ann)
	}
	if n := count(t, c, bad.Namespace, "cluster.x-k8s.io", "Machine"); n != 2 {
		t.Errorf("legacy-2: %d standard Machines, want 2", n)
	}
	if n := count(t, c, bad.Namespace, "cluster.hypershift.openshift.io", "Machine"); n != 0 {
		t.Errorf("legacy-2: %d private Machines, want none", n)
	}
}

// runsAgentImage: the Deployment has a container with the agent's image
// (the proxy sidecar), which the kubelet stand-in runs and reports.
func runsAgentImage(d *appsv1.Deployment) bool {
	return slices.ContainsFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Image == hcpfleet.AgentImage })
}

// ensureAgentProviderCRDs installs the Agent infrastructure provider's CRDs
// the legacy fixture uses, unless an earlier test had the agent install them.
func ensureAgentProviderCRDs(t *testing.T, c client.Client) {
	t.Helper()
	set, err := crds.Standard(crds.Options{Providers: []crds.Provider{crds.ProviderAgent}})
	if err != nil {
		t.Fatal(err)
	}
	var want []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range set {
		if crd.Spec.Group != legacyfixture.AgentGroup {
			continue
		}
		err := c.Get(context.Background(), types.NamespacedName{Name: crd.Name}, &apiextensionsv1.CustomResourceDefinition{})
		if apierrors.IsNotFound(err) {
			want = append(want, crd)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if len(want) == 0 {
		return
	}
	res, err := (&crds.Installer{Client: c}).Install(context.Background(), want)
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.WaitEstablished(context.Background(), c, res.Applied, time.Minute); err != nil {
		t.Fatal(err)
	}
}

func (c *clients) findCondition(ctx context.Context, cluster, condType string) (*metav1.Condition, error) {
	mca, err := c.addons.AddonV1alpha1().ManagedClusterAddOns(cluster).Get(ctx, "hcp-fleet", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	for i := range mca.Status.Conditions {
		if mca.Status.Conditions[i].Type == condType {
			return &mca.Status.Conditions[i], nil
		}
	}
	return nil, fmt.Errorf("no condition %s yet", condType)
}

func annotations(t *testing.T, c client.Client, hc types.NamespacedName) map[string]string {
	t.Helper()
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(migration.HostedClusterGVK)
	if err := c.Get(context.Background(), hc, m); err != nil {
		t.Fatal(err)
	}
	return m.Annotations
}

func list(t *testing.T, c client.Client, ns, group, kind string) []unstructured.Unstructured {
	t.Helper()
	version := "v1beta2"
	if group == legacyfixture.AgentGroup {
		version = "v1beta1"
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: kind + "List"})
	if err := c.List(context.Background(), l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func count(t *testing.T, c client.Client, ns, group, kind string) int {
	t.Helper()
	return len(list(t, c, ns, group, kind))
}

func secrets(t *testing.T, c client.Client, ns string) map[string]corev1.Secret {
	t.Helper()
	l := &corev1.SecretList{}
	if err := c.List(context.Background(), l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Secret{}
	for _, s := range l.Items {
		if len(s.OwnerReferences) > 0 {
			out[s.Name] = s
		}
	}
	if len(out) == 0 {
		t.Fatalf("no owned Secrets in %s", ns)
	}
	return out
}
