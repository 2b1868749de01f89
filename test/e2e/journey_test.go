//go:build integration

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/k8sbins"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
	olmhub "github.com/hcp-fleet/hcp-fleet/pkg/olm/hub"
)

var (
	hcGVR  = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	npGVR  = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "nodepools"}
	crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	ccGVR  = schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1alpha1", Resource: "clusterclaims"}
	csvGVR = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "clusterserviceversions"}
)

const (
	examplesDir = "../../examples"
	demoNS      = "hcp-demo"
	// The examples: one HostedClusterDeployment per deletion policy.
	deleteHCD = "demo-agent"    // deletionPolicy Delete, placed by the scheduler
	orphanHCD = "demo-kubevirt" // deletionPolicy Orphan, pinned to cluster-2
	pinnedTo  = "cluster-2"

	fromRelease = "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"
	toRelease   = "quay.io/openshift-release-dev/ocp-release:4.18.6-multi"
	// minorRelease is the next minor, held while a guest operator forbids it.
	minorRelease = "quay.io/openshift-release-dev/ocp-release:4.19.0-multi"
	// managedBy marks everything the agent installs on a management cluster.
	managedBy = "app.kubernetes.io/managed-by=hcp-fleet"
)

var _ = Describe("the hcp-fleet user journey", Ordered, func() {
	// hostOf is where each example HostedClusterDeployment was scheduled;
	// guestKubeconfig is its admin kubeconfig as mirrored to the hub.
	hostOf, guestKubeconfig := map[string]string{}, map[string][]byte{}

	It("enabling the add-on installs the agent and the HyperShift operator on every management cluster", func(ctx SpecContext) {
		useMarkedHostingConfigCredentials(ctx)
		Expect(hcpfleet.EnableOnAll(ctx, fleet)).To(Succeed())
		for _, m := range fleet.Managed {
			By("the add-on and the operator on " + m.Name)
			eventually(ctx, func(ctx context.Context) error { return hcpfleet.HostReady(ctx, hubc, m.Name) }, 3*time.Minute)
			// Host: the operator Deployment available, the HyperShift and
			// CAPI CRDs, the hosting ClusterClaims.
			d, err := hostsKube[m.Name].AppsV1().Deployments("hypershift").Get(ctx, "operator", metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(d.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "hcp-fleet"))
			Expect(d.Status.AvailableReplicas).To(BeNumerically(">=", 1))
			crds := crdNames(ctx, m.Name, managedBy)
			Expect(crds).To(ContainElements("hostedclusters.hypershift.openshift.io", "nodepools.hypershift.openshift.io"))
			Expect(crds).To(ContainElement(Or(HaveSuffix(".cluster.x-k8s.io"), HaveSuffix(".cluster.hypershift.openshift.io"))),
				"the agent installs the CAPI CRDs")
			claim, err := hosts[m.Name].Resource(ccGVR).Get(ctx, hosting.ClaimHostingCluster, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(claim.Object).To(HaveKeyWithValue("spec", HaveKeyWithValue("value", "true")))
			// The admin's HostingConfig credentials reached the operator.
			expectMarkersDelivered(ctx, m.Name, "hypershift", "hypershift-operator-oidc-provider-s3-credentials")
			// Hub: the ManagedClusterAddOn, the capacity score.
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			Expect(hubc.Get(ctx, types.NamespacedName{Namespace: m.Name, Name: addon.Name}, mca)).To(Succeed())
			Expect(meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionHyperShiftOperatorInstalled)).
				To(HaveField("Reason", "Installed"))
			eventually(ctx, func(ctx context.Context) error {
				score := &clusterv1alpha1.AddOnPlacementScore{}
				return hubc.Get(ctx, types.NamespacedName{Namespace: m.Name, Name: "hcp-fleet"}, score)
			})
		}
	})

	It("the examples are scheduled, delivered, Available and imported as ManagedClusters with a kubeconfig", func(ctx SpecContext) {
		objs, err := localfleet.ReadManifestDir(os.DirFS(examplesDir), ".")
		Expect(err).NotTo(HaveOccurred())
		withMarkers(objs)
		applier, err := localfleet.NewApplier(fleet.Hub.Config())
		Expect(err).NotTo(HaveOccurred())
		Expect(applier.Apply(ctx, objs...)).To(Succeed())
		var names []string
		for _, o := range objs {
			if o.GetKind() == "HostedClusterDeployment" {
				names = append(names, o.GetName())
			}
		}
		Expect(names).To(ConsistOf(deleteHCD, orphanHCD), "the journey knows these examples")

		for _, name := range names {
			By(name + ": scheduled, delivered, available, imported")
			var h *v1alpha1.HostedClusterDeployment
			eventually(ctx, func(ctx context.Context) error {
				var err error
				if h, err = getHCD(ctx, name); err != nil {
					return err
				}
				// CatalogsReady: the stand-in serves the default catalogs
				// (management placement) with operator-registry's server.
				return conditionsTrue(h, v1alpha1.ConditionScheduled, v1alpha1.ConditionDelivered, v1alpha1.ConditionAvailable,
					v1alpha1.ConditionNodePoolsReady, v1alpha1.ConditionImported, v1alpha1.ConditionCatalogsReady)
			})
			host := h.Status.HostingCluster
			Expect(hosts).To(HaveKey(host))
			hostOf[name] = host
			Expect(h.Status.Version).To(HaveField("Current", "4.18.5"))
			Expect(h.Status.ControlPlaneEndpoint).NotTo(BeNil())
			Expect(h.Status.ManagedCluster).To(Equal(name))
			Expect(h.Status.ManifestWork).To(Equal(hosting.WorkName(demoNS, name)))

			// Hub: the ManifestWork in the host's namespace; the
			// ManagedCluster; the mirrored kubeconfig pointing at the
			// control plane's endpoint.
			Expect(hubc.Get(ctx, types.NamespacedName{Namespace: host, Name: h.Status.ManifestWork}, &workv1.ManifestWork{})).To(Succeed())
			mc := &clusterv1.ManagedCluster{}
			Expect(hubc.Get(ctx, types.NamespacedName{Name: name}, mc)).To(Succeed())
			Expect(mc.Labels).To(HaveKeyWithValue(hosting.LabelHCDName, name))
			secret := &corev1.Secret{}
			Expect(hubc.Get(ctx, types.NamespacedName{Namespace: demoNS, Name: h.Status.KubeconfigSecret.Name}, secret)).To(Succeed())
			kubeconfig, err := clientcmd.Load(secret.Data[hosting.KubeconfigKey])
			Expect(err).NotTo(HaveOccurred())
			var servers []string
			for _, c := range kubeconfig.Clusters {
				servers = append(servers, c.Server)
			}
			Expect(servers).To(ContainElement(fmt.Sprintf("https://%s:%d", h.Status.ControlPlaneEndpoint.Host, h.Status.ControlPlaneEndpoint.Port)))
			// The kubeconfig works: the hosted cluster's API server answers.
			version, err := guestVersion(secret.Data[hosting.KubeconfigKey])
			Expect(err).NotTo(HaveOccurred())
			Expect(version).To(Equal(k8sbins.KubeVersion))
			guestKubeconfig[name] = secret.Data[hosting.KubeconfigKey]

			// Host: the HostedCluster Available, its NodePool with ready
			// nodes, the control-plane namespace.
			hc, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(hcCondition(hc, "Available")).To(Equal("True"))
			np, err := hosts[host].Resource(npGVR).Namespace("clusters").Get(ctx, name+"-workers", metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(np.Object).To(HaveKeyWithValue("status", HaveKeyWithValue("replicas", BeNumerically("==", 2))))
			_, err = hostsKube[host].CoreV1().Namespaces().Get(ctx, "clusters-"+name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred(), "the control-plane namespace")
			// The tenant's Secrets (with the markers) were delivered.
			copies, err := hostsKube[host].CoreV1().Secrets("clusters").List(ctx, metav1.ListOptions{LabelSelector: hosting.LabelHCDName + "=" + name})
			Expect(err).NotTo(HaveOccurred())
			Expect(copies.Items).NotTo(BeEmpty())
			expectMarkersDelivered(ctx, host, "clusters", copies.Items[0].Name)
		}
		Expect(hostOf[orphanHCD]).To(Equal(pinnedTo), "spec.hostingCluster pins it")

		By("the example extension reaches a hosted cluster: its release held by the engine, which holds its grants there too")
		// A rolling rollout with maxUnavailable 1 that stops at the operator
		// phase (no Deployment controller on the local fleet): one hosted
		// cluster at a time has it. The holds are what lets a deletion of
		// the control-plane namespace, or of the add-on, finish the teardown.
		eventually(ctx, func(ctx context.Context) error {
			for _, name := range names {
				ns := extension.ControlPlaneNamespace("clusters", name)
				cm, err := hostsKube[hostOf[name]].CoreV1().ConfigMaps(ns).Get(ctx, extension.ReleaseName("demo-audit-forwarder"), metav1.GetOptions{})
				if apierrors.IsNotFound(err) || (err == nil && !slices.Contains(cm.Finalizers, extension.Finalizer)) {
					continue
				}
				if err != nil {
					return err
				}
				rb, err := hostsKube[hostOf[name]].RbacV1().RoleBindings(ns).Get(ctx, addon.AgentExtensionNamespaceRole, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if !slices.Contains(rb.Finalizers, extension.Finalizer) {
					return fmt.Errorf("%s: the release is held but the engine's RoleBinding is not", ns)
				}
				return nil
			}
			return fmt.Errorf("no hosted cluster has a held release of the example extension yet")
		})

		By("the fleet view shows both")
		snapshot, err := fleetview.Collect(ctx, hubc, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(snapshot.Hosts).To(HaveLen(len(fleet.Managed)), "imported hosted clusters are not management clusters")
		for _, h := range snapshot.Hosts {
			Expect(h.Operator).To(Equal("Installed"))
			Expect(h.AddOn).To(Equal("Available"))
		}
		Expect(snapshot.Deployments).To(HaveLen(2))
		for _, d := range snapshot.Deployments {
			Expect(d.Phase).To(Equal("Available"), d.Name)
			Expect(d.Host).To(Equal(hostOf[d.Name]))
			Expect(d.Problem).To(BeEmpty())
		}
	})

	It("upgrading a release rolls it out and records the version history on the hub and the host", func(ctx SpecContext) {
		host := hostOf[deleteHCD]
		// A rollout of 4s (stand-in annotation, delivered with the
		// HostedCluster) so the upgrade is seen in progress.
		patch := fmt.Sprintf(`[
			{"op":"add","path":"/spec/hostedCluster/annotations","value":{%q:"4s"}},
			{"op":"replace","path":"/spec/hostedCluster/spec/release/image","value":%q},
			{"op":"replace","path":"/spec/nodePools/0/spec/release/image","value":%q}]`,
			hypershiftsim.AnnotationRolloutDuration, toRelease, toRelease)
		Expect(hubc.Patch(ctx, hcdRef(deleteHCD), client.RawPatch(types.JSONPatchType, []byte(patch)))).To(Succeed())

		By("the HostedClusterDeployment reports the upgrade in progress")
		eventually(ctx, func(ctx context.Context) error {
			h, err := getHCD(ctx, deleteHCD)
			if err != nil {
				return err
			}
			if d := fleetview.DeploymentOf(h); d.Phase != "Upgrading" || d.Version != "4.18.5 → 4.18.6" {
				return fmt.Errorf("phase %s, version %q, conditions %v", d.Phase, d.Version, h.Status.Conditions)
			}
			return nil
		})
		By("the upgrade completes")
		var h *v1alpha1.HostedClusterDeployment
		eventually(ctx, func(ctx context.Context) error {
			var err error
			if h, err = getHCD(ctx, deleteHCD); err != nil {
				return err
			}
			if v := h.Status.Version; v == nil || v.Current != "4.18.6" || len(v.History) == 0 {
				return fmt.Errorf("version %+v", h.Status.Version)
			}
			if c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionProgressing); c == nil || c.Status != metav1.ConditionFalse {
				return fmt.Errorf("Progressing %+v", c)
			}
			return conditionsTrue(h, v1alpha1.ConditionAvailable, v1alpha1.ConditionNodePoolsReady)
		})
		Expect(h.Status.Version.Desired).To(HaveField("Image", toRelease))
		// The hub maps the newest history entry (pkg/hosting/hub/delivery reads
		// history[0] back through the ManifestWork's feedback); the host
		// keeps the whole history.
		Expect(h.Status.Version.History[0]).To(And(HaveField("Version", "4.18.6"), HaveField("Image", toRelease),
			HaveField("State", BeEquivalentTo("Completed"))))

		By("on " + host + ": the HostedCluster's history and the NodePool's version")
		hc, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, deleteHCD, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		image, _, _ := unstructured.NestedString(hc.Object, "spec", "release", "image")
		Expect(image).To(Equal(toRelease))
		history, _, _ := unstructured.NestedSlice(hc.Object, "status", "version", "history")
		Expect(history).To(HaveLen(2))
		Expect(history[0]).To(And(HaveKeyWithValue("version", "4.18.6"), HaveKeyWithValue("state", "Completed")))
		Expect(history[1]).To(And(HaveKeyWithValue("version", "4.18.5"), HaveKeyWithValue("state", "Completed")))
		eventually(ctx, func(ctx context.Context) error {
			np, err := hosts[host].Resource(npGVR).Namespace("clusters").Get(ctx, deleteHCD+"-workers", metav1.GetOptions{})
			if err != nil {
				return err
			}
			image, _, _ := unstructured.NestedString(np.Object, "spec", "release", "image")
			version, _, _ := unstructured.NestedString(np.Object, "status", "version")
			if image != toRelease || version != "4.18.6" {
				return fmt.Errorf("NodePool release %s, status.version %q", image, version)
			}
			return nil
		})
	})

	It("a minor upgrade a guest operator does not support is held and named; the admin's annotation moves it", func(ctx SpecContext) {
		host := hostOf[deleteHCD]
		// An operator in the hosted cluster that supports OpenShift 4.18 at
		// most (OLM's olm.maxOpenShiftVersion), as its admin would install it.
		cfg, err := clientcmd.RESTConfigFromKubeConfig(guestKubeconfig[deleteHCD])
		Expect(err).NotTo(HaveOccurred())
		guest := dynamic.NewForConfigOrDie(cfg)
		_, err = guest.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx,
			&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "legacy-db"}}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = guest.Resource(csvGVR).Namespace("legacy-db").Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
			"metadata": map[string]any{"name": "legacy-db.v2", "annotations": map[string]any{
				olm.PropertiesAnnotation: `{"properties":[{"type":"olm.maxOpenShiftVersion","value":"4.18"}]}`}},
			"spec": map[string]any{"displayName": "Legacy DB", "install": map[string]any{"strategy": "deployment"}},
		}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("the agent's report of the guest's operators reaches the hub (the ManifestWork's feedback)")
		eventually(ctx, func(ctx context.Context) error {
			h, err := getHCD(ctx, deleteHCD)
			if err != nil {
				return err
			}
			work := &workv1.ManifestWork{}
			if err := hubc.Get(ctx, types.NamespacedName{Namespace: host, Name: h.Status.ManifestWork}, work); err != nil {
				return err
			}
			for _, m := range work.Status.ResourceStatus.Manifests {
				for _, f := range m.StatusFeedbacks.Values {
					if f.Value.String != nil && strings.Contains(*f.Value.String, "legacy-db.v2") {
						return nil
					}
				}
			}
			return fmt.Errorf("no report naming legacy-db.v2 in the feedback of %s/%s yet", host, h.Status.ManifestWork)
		})

		By("an upgrade to 4.19 is held: UpgradeBlocked names the operator, the host keeps 4.18.6")
		setRelease := func(image string) {
			patch := fmt.Sprintf(`[
				{"op":"replace","path":"/spec/hostedCluster/spec/release/image","value":%q},
				{"op":"replace","path":"/spec/nodePools/0/spec/release/image","value":%q}]`, image, image)
			Expect(hubc.Patch(ctx, hcdRef(deleteHCD), client.RawPatch(types.JSONPatchType, []byte(patch)))).To(Succeed())
		}
		upgradeBlocked := func(status metav1.ConditionStatus, reason string) func(context.Context) error {
			return func(ctx context.Context) error {
				h, err := getHCD(ctx, deleteHCD)
				if err != nil {
					return err
				}
				c := meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionUpgradeBlocked)
				if c == nil || c.ObservedGeneration != h.Generation || c.Status != status || c.Reason != reason {
					return fmt.Errorf("UpgradeBlocked %+v (generation %d)", c, h.Generation)
				}
				return nil
			}
		}
		setRelease(minorRelease)
		eventually(ctx, upgradeBlocked(metav1.ConditionTrue, v1alpha1.ReasonOperatorIncompatible))
		h, err := getHCD(ctx, deleteHCD)
		Expect(err).NotTo(HaveOccurred())
		Expect(meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionUpgradeBlocked).Message).
			To(And(ContainSubstring("legacy-db/legacy-db.v2"), ContainSubstring("4.18")))
		Expect(fleetview.DeploymentOf(h).Problem).To(HavePrefix("UpgradeBlocked OperatorIncompatible"), "the fleet view's problem line names the hold")
		hc, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, deleteHCD, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		image, _, _ := unstructured.NestedString(hc.Object, "spec", "release", "image")
		Expect(image).To(Equal(toRelease), "the ManifestWork keeps the old release")

		By("the admin allows exactly that release: the hub sets HyperShift's force-upgrade-to and the upgrade completes")
		// In the TenantPolicy governing the examples' namespace
		// (examples/05-tenantpolicy.yaml): tenants cannot write it.
		patch := fmt.Sprintf(`{"spec":{"upgradeOverrides":[{"namespace":%q,"name":%q,"releaseImage":%q}]}}`, demoNS, deleteHCD, minorRelease)
		policy := &v1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "hcp-demo"}}
		Expect(hubc.Patch(ctx, policy, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		eventually(ctx, upgradeBlocked(metav1.ConditionFalse, olmhub.ReasonUpgradeAllowed))
		eventually(ctx, func(ctx context.Context) error {
			hc, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, deleteHCD, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := hc.GetAnnotations()[olm.AnnotationForceUpgradeTo]; got != minorRelease {
				return fmt.Errorf("force-upgrade-to %q", got)
			}
			h, err := getHCD(ctx, deleteHCD)
			if err != nil {
				return err
			}
			if v := h.Status.Version; v == nil || v.Current != "4.19.0" {
				return fmt.Errorf("version %+v", h.Status.Version)
			}
			return conditionsTrue(h, v1alpha1.ConditionAvailable)
		})
	})

	It("no Secret value or key name shows outside Secrets: in objects, conditions, events or logs", func(ctx SpecContext) {
		expectNoMarkerLeaks(ctx)
	})

	It("deleting with deletionPolicy Delete removes the hosted cluster from its host and the hub", func(ctx SpecContext) {
		host := hostOf[deleteHCD]
		Expect(hubc.Delete(ctx, hcdRef(deleteHCD))).To(Succeed())
		eventually(ctx, func(ctx context.Context) error {
			// With the HostedCluster gone, the agent's export of its
			// kubeconfig to the hub goes too.
			return errors.Join(goneFromHub(ctx, deleteHCD, host), notFound(hubc.Get(ctx,
				types.NamespacedName{Namespace: host, Name: hosting.ExportedKubeconfigName(demoNS, deleteHCD)}, &corev1.Secret{}), "exported kubeconfig"))
		})
		// The HCD goes only after the HostedCluster is really gone.
		for _, gvr := range []schema.GroupVersionResource{hcGVR, npGVR} {
			list, err := hosts[host].Resource(gvr).Namespace("clusters").List(ctx, metav1.ListOptions{LabelSelector: hosting.LabelHCDName + "=" + deleteHCD})
			Expect(err).NotTo(HaveOccurred())
			Expect(list.Items).To(BeEmpty(), gvr.Resource)
		}
		secrets, err := hostsKube[host].CoreV1().Secrets("clusters").List(ctx, metav1.ListOptions{LabelSelector: hosting.LabelHCDName + "=" + deleteHCD})
		Expect(err).NotTo(HaveOccurred())
		Expect(secrets.Items).To(BeEmpty(), "the delivered Secret copies")
		eventually(ctx, func(ctx context.Context) error {
			_, err := hostsKube[host].CoreV1().Namespaces().Get(ctx, "clusters-"+deleteHCD, metav1.GetOptions{})
			return notFound(err, "control-plane namespace clusters-"+deleteHCD)
		})
		_, err = guestVersion(guestKubeconfig[deleteHCD])
		Expect(err).To(HaveOccurred(), "the hosted cluster's API server is gone")
	})

	It("deleting with deletionPolicy Orphan leaves the hosted cluster running on its host", func(ctx SpecContext) {
		host := hostOf[orphanHCD]
		Expect(hubc.Delete(ctx, hcdRef(orphanHCD))).To(Succeed())
		eventually(ctx, func(ctx context.Context) error { return goneFromHub(ctx, orphanHCD, host) })
		hc, err := hosts[host].Resource(hcGVR).Namespace("clusters").Get(ctx, orphanHCD, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(hc.GetDeletionTimestamp()).To(BeNil())
		Expect(hcCondition(hc, "Available")).To(Equal("True"))
		_, err = hosts[host].Resource(npGVR).Namespace("clusters").Get(ctx, orphanHCD+"-workers", metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = guestVersion(guestKubeconfig[orphanHCD])
		Expect(err).NotTo(HaveOccurred(), "the orphaned hosted cluster's API server still answers")
	})

	It("disabling the add-on waits for the orphaned hosted cluster, then leaves the management clusters clean", func(ctx SpecContext) {
		orphanHost := hostOf[orphanHCD]
		for _, m := range fleet.Managed {
			patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, hcpfleet.HostLabel)
			Expect(hubc.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: m.Name}},
				client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		}

		By("the cleanup on " + orphanHost + " refuses while the orphaned HostedCluster runs, and says so")
		eventually(ctx, func(ctx context.Context) error {
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			if err := hubc.Get(ctx, types.NamespacedName{Namespace: orphanHost, Name: addon.Name}, mca); err != nil {
				return err
			}
			c := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionCleanup)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "HostedClustersExist" || !strings.Contains(c.Message, "clusters/"+orphanHCD) {
				return fmt.Errorf("%s: %+v", addon.ConditionCleanup, c)
			}
			return nil
		})
		Expect(hosts[orphanHost].Resource(hcGVR).Namespace("clusters").Get(ctx, orphanHCD, metav1.GetOptions{})).
			To(HaveField("Object", HaveKey("metadata")), "the cleanup deletes no HostedCluster")

		By("the admin deletes what was orphaned (its Secret copies, then the HostedCluster); the cleanup completes everywhere")
		// The hosting namespace hcp-fleet created goes once nothing is left
		// in it, so the orphaned Secret copies go first: the cleanup
		// proceeds as soon as the HostedCluster is gone.
		Expect(hostsKube[orphanHost].CoreV1().Secrets("clusters").DeleteCollection(ctx, metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: hosting.LabelHCDName + "=" + orphanHCD})).To(Succeed())
		Expect(hosts[orphanHost].Resource(hcGVR).Namespace("clusters").Delete(ctx, orphanHCD, metav1.DeleteOptions{})).To(Succeed())
		for _, m := range fleet.Managed {
			eventually(ctx, func(ctx context.Context) error { return clean(ctx, m.Name) })
		}
		By("no Secret value or key name shows in what deletion and cleanup left: objects, events, logs")
		expectNoMarkerLeaks(ctx)
	})
})

// guestVersion asks a hosted cluster's API server for its version, with its
// admin kubeconfig.
func guestVersion(kubeconfig []byte) (string, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return "", err
	}
	cfg.Timeout = 10 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

func hcdRef(name string) *v1alpha1.HostedClusterDeployment {
	return &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: demoNS, Name: name}}
}

func getHCD(ctx context.Context, name string) (*v1alpha1.HostedClusterDeployment, error) {
	h := &v1alpha1.HostedClusterDeployment{}
	return h, hubc.Get(ctx, types.NamespacedName{Namespace: demoNS, Name: name}, h)
}

// conditionsTrue returns an error naming the first condition of h that is
// not True.
func conditionsTrue(h *v1alpha1.HostedClusterDeployment, conds ...string) error {
	for _, t := range conds {
		c := meta.FindStatusCondition(h.Status.Conditions, t)
		if c == nil {
			return fmt.Errorf("%s/%s: no %s condition yet", h.Namespace, h.Name, t)
		}
		if c.Status != metav1.ConditionTrue {
			return fmt.Errorf("%s/%s: %s=%s (%s: %s)", h.Namespace, h.Name, t, c.Status, c.Reason, c.Message)
		}
	}
	return nil
}

// hcCondition is a HostedCluster condition's status ("" when absent).
func hcCondition(hc *unstructured.Unstructured, t string) string {
	conds, _, _ := unstructured.NestedSlice(hc.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == t {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

func notFound(err error, what string) error {
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	default:
		return fmt.Errorf("%s still there", what)
	}
}

// goneFromHub: the HostedClusterDeployment, its ManifestWork, its
// ManagedCluster and the mirrored kubeconfig are all gone.
func goneFromHub(ctx context.Context, name, host string) error {
	return errors.Join(
		notFound(hubc.Get(ctx, types.NamespacedName{Namespace: demoNS, Name: name}, &v1alpha1.HostedClusterDeployment{}), "HostedClusterDeployment"),
		notFound(hubc.Get(ctx, types.NamespacedName{Namespace: host, Name: hosting.WorkName(demoNS, name)}, &workv1.ManifestWork{}), "ManifestWork"),
		notFound(hubc.Get(ctx, types.NamespacedName{Name: name}, &clusterv1.ManagedCluster{}), "ManagedCluster"),
		notFound(hubc.Get(ctx, types.NamespacedName{Namespace: demoNS, Name: hosting.AdminKubeconfigName(name)}, &corev1.Secret{}), "mirrored kubeconfig"),
	)
}

// crdNames lists the CRDs on a management cluster matching a label selector.
func crdNames(ctx context.Context, cluster, selector string) []string {
	GinkgoHelper()
	list, err := hosts[cluster].Resource(crdGVR).List(ctx, metav1.ListOptions{LabelSelector: selector})
	Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, c := range list.Items {
		names = append(names, c.GetName())
	}
	slices.Sort(names)
	return names
}

// clean returns nil once the add-on is gone from cluster and left nothing
// behind: on the hub no ManagedClusterAddOn, score, exported kubeconfig or
// ManifestWork; on the
// management cluster no HostedCluster, no agent or operator namespace, none
// of the CRDs, ClusterClaims or hosting namespaces hcp-fleet created (the
// agent's cleanup removes its CRDs once no object of theirs is left).
func clean(ctx context.Context, cluster string) error {
	var errs []error
	errs = append(errs,
		notFound(hubc.Get(ctx, types.NamespacedName{Namespace: cluster, Name: addon.Name}, &addonv1alpha1.ManagedClusterAddOn{}), cluster+": ManagedClusterAddOn"),
		notFound(hubc.Get(ctx, types.NamespacedName{Namespace: cluster, Name: "hcp-fleet"}, &clusterv1alpha1.AddOnPlacementScore{}), cluster+": AddOnPlacementScore"))
	exported := &corev1.SecretList{}
	if err := hubc.List(ctx, exported, client.InNamespace(cluster), client.MatchingLabels{hosting.LabelAdminKubeconfig: "true"}); err != nil {
		errs = append(errs, err)
	} else if len(exported.Items) > 0 {
		errs = append(errs, fmt.Errorf("%s: %d exported kubeconfigs left on the hub", cluster, len(exported.Items)))
	}
	works := &workv1.ManifestWorkList{}
	if err := hubc.List(ctx, works, client.InNamespace(cluster)); err != nil {
		errs = append(errs, err)
	} else if len(works.Items) > 0 {
		errs = append(errs, fmt.Errorf("%s: %d ManifestWorks left on the hub", cluster, len(works.Items)))
	}
	host, hostKube := hosts[cluster], hostsKube[cluster]
	hcs, err := host.Resource(hcGVR).List(ctx, metav1.ListOptions{})
	switch {
	case err == nil && len(hcs.Items) > 0:
		errs = append(errs, fmt.Errorf("%s: %d HostedClusters left", cluster, len(hcs.Items)))
	case err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err):
		errs = append(errs, err)
	}
	for _, ns := range []string{"hypershift", addon.DefaultInstallNamespace} {
		_, err := hostKube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		errs = append(errs, notFound(err, cluster+": namespace "+ns))
	}
	if names := crdNames(ctx, cluster, managedBy); len(names) > 0 {
		errs = append(errs, fmt.Errorf("%s: CRDs the agent installed left: %v", cluster, names))
	}
	claims, err := host.Resource(ccGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		errs = append(errs, err)
	} else {
		for _, c := range claims.Items {
			if strings.HasSuffix(c.GetName(), hosting.ClaimHostingCluster) {
				errs = append(errs, fmt.Errorf("%s: ClusterClaim %s left", cluster, c.GetName()))
			}
		}
	}
	// The agent's own grants (kubeutil.BindSelf) and, with them, no
	// namespace stuck terminating on a finalizer nobody removes.
	bindings, err := hostKube.RbacV1().RoleBindings("").List(ctx, metav1.ListOptions{LabelSelector: kubeutil.BindLabel + "=" + kubeutil.BindLabelValue})
	if err != nil {
		errs = append(errs, err)
	} else {
		for _, rb := range bindings.Items {
			errs = append(errs, fmt.Errorf("%s: RoleBinding %s/%s of the agent left", cluster, rb.Namespace, rb.Name))
		}
	}
	namespaces, err := hostKube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		errs = append(errs, err)
	} else {
		for _, ns := range namespaces.Items {
			if ns.DeletionTimestamp != nil {
				errs = append(errs, fmt.Errorf("%s: namespace %s still terminating", cluster, ns.Name))
			}
		}
	}
	created, err := hostKube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: hosting.LabelCreatedNamespace + "=true"})
	if err != nil {
		errs = append(errs, err)
	} else {
		for _, ns := range created.Items {
			errs = append(errs, fmt.Errorf("%s: hosting namespace %s that hcp-fleet created left", cluster, ns.Name))
		}
	}
	return errors.Join(errs...)
}
