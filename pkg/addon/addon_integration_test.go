//go:build integration

package addon_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	workclient "open-cluster-management.io/api/client/work/clientset/versioned"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	addonhub "github.com/hcp-fleet/hcp-fleet/pkg/addon/hub"
)

var (
	env     *fleettest.Env
	fleet   *localfleet.Fleet
	product *hcpfleet.Product
)

func TestMain(m *testing.M) {
	fleettest.Main(m, 2, func(e *fleettest.Env) { env, fleet, product = e, e.Fleet, e.Product })
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	env.Eventually(t, timeout, what, cond)
}

type clients struct {
	hubKube   kubernetes.Interface
	addons    addonclient.Interface
	clusters  clusterclient.Interface
	works     workclient.Interface
	hubDyn    dynamic.Interface
	spokeKube map[string]kubernetes.Interface
}

func newClients(t *testing.T) *clients {
	t.Helper()
	cfg := fleet.Hub.Config()
	c := &clients{spokeKube: map[string]kubernetes.Interface{}}
	c.hubKube = kubernetes.NewForConfigOrDie(cfg)
	c.addons = addonclient.NewForConfigOrDie(cfg)
	c.clusters = clusterclient.NewForConfigOrDie(cfg)
	c.works = workclient.NewForConfigOrDie(cfg)
	c.hubDyn = dynamic.NewForConfigOrDie(cfg)
	for _, m := range fleet.Managed {
		c.spokeKube[m.Name] = kubernetes.NewForConfigOrDie(m.Config())
	}
	return c
}

func (c *clients) label(t *testing.T, cluster, key string, value *string) {
	t.Helper()
	v := "null"
	if value != nil {
		v = fmt.Sprintf("%q", *value)
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, key, v))
	if _, err := c.clusters.ClusterV1().ManagedClusters().Patch(context.Background(), cluster, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func ptrTo(s string) *string { return &s }

// agentReady waits until the add-on is registered and Available on cluster
// and returns its ManagedClusterAddOn.
func (c *clients) agentReady(t *testing.T, cluster string) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	var mca *addonv1alpha1.ManagedClusterAddOn
	eventually(t, 3*time.Minute, "add-on Available on "+cluster, func(ctx context.Context) error {
		var err error
		mca, err = c.addons.AddonV1alpha1().ManagedClusterAddOns(cluster).Get(ctx, addon.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range []string{addonv1alpha1.ManagedClusterAddOnConditionAvailable, addonv1alpha1.ManagedClusterAddOnRegistrationApplied, addon.ConditionHostingConfigApplied} {
			if !meta.IsStatusConditionTrue(mca.Status.Conditions, cond) {
				return fmt.Errorf("condition %s not True: %+v", cond, mca.Status.Conditions)
			}
		}
		return nil
	})
	return mca
}

func (c *clients) deployment(t *testing.T, cluster string) *appsv1.Deployment {
	t.Helper()
	d, err := c.spokeKube[cluster].AppsV1().Deployments(addon.DefaultInstallNamespace).Get(context.Background(), "hcp-fleet-agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// agentHubConfig builds a client config from the agent's hub credentials as
// OCM registration issued them (the Secret on the management cluster).
func (c *clients) agentHubConfig(t *testing.T, cluster string) *rest.Config {
	t.Helper()
	s, err := c.spokeKube[cluster].CoreV1().Secrets(addon.DefaultInstallNamespace).Get(context.Background(), addon.HubKubeconfigSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &rest.Config{Host: fleet.Hub.Host, TLSClientConfig: rest.TLSClientConfig{
		CAData: fleet.Hub.CAData(), CertData: s.Data["tls.crt"], KeyData: s.Data["tls.key"],
	}}
}

func TestAddOnLifecycle(t *testing.T) {
	ctx := context.Background()
	c := newClients(t)

	// An AddOnDeploymentConfig for node placement, resources and proxy,
	// attached to the install strategy.
	adc := &addonv1alpha1.AddOnDeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-placement", Namespace: "hcp-fleet"},
		Spec: addonv1alpha1.AddOnDeploymentConfigSpec{
			// An AddOnDeploymentConfig defaults agentInstallNamespace to
			// OCM's shared open-cluster-management-agent-addon.
			AgentInstallNamespace: addon.DefaultInstallNamespace,
			NodePlacement: &addonv1alpha1.NodePlacement{
				NodeSelector: map[string]string{"node-role.kubernetes.io/infra": ""},
				Tolerations:  []corev1.Toleration{{Key: "node-role.kubernetes.io/infra", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			},
			ProxyConfig: addonv1alpha1.ProxyConfig{HTTPSProxy: "http://proxy.example.com:3128", NoProxy: ".cluster.local"},
			ResourceRequirements: []addonv1alpha1.ContainerResourceRequirements{{
				ContainerID: "deployments:hcp-fleet-agent:agent",
				Resources:   corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: mustQuantity("128Mi")}},
			}},
		},
	}
	if _, err := c.addons.AddonV1alpha1().AddOnDeploymentConfigs("hcp-fleet").Create(ctx, adc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"installStrategy":{"type":"Placements","placements":[{"name":"hcp-fleet-hosts","namespace":"hcp-fleet","rolloutStrategy":{"type":"All"},` +
		`"configs":[{"group":"addon.open-cluster-management.io","resource":"addondeploymentconfigs","name":"agent-placement","namespace":"hcp-fleet"}]}]}}}`)
	if _, err := c.addons.AddonV1alpha1().ClusterManagementAddOns().Patch(ctx, addon.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	cluster2Enabled := false

	// Enable on cluster-1 through the Placement install strategy.
	c.label(t, "cluster-1", hcpfleet.HostLabel, ptrTo("true"))
	mca := c.agentReady(t, "cluster-1")

	t.Run("registered through the CSR flow", func(t *testing.T) {
		csrs, err := c.hubKube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{
			LabelSelector: "open-cluster-management.io/cluster-name=cluster-1,open-cluster-management.io/addon-name=" + addon.Name,
		})
		if err != nil {
			t.Fatal(err)
		}
		signed := false
		for _, csr := range csrs.Items {
			signed = signed || len(csr.Status.Certificate) > 0
		}
		if !signed {
			t.Fatalf("no signed add-on CSR for cluster-1 (%d CSRs)", len(csrs.Items))
		}
	})

	t.Run("the agent records its transitions as Events on its ManagedClusterAddOn", func(t *testing.T) {
		// The agent's hub identity may create Events only in its cluster
		// namespace; an Event there from the agent shows the grant works.
		eventually(t, time.Minute, "an Installed event from the agent", func(ctx context.Context) error {
			events, err := c.hubKube.CoreV1().Events("cluster-1").List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			var seen []string
			for _, e := range events.Items {
				if e.InvolvedObject.Kind != "ManagedClusterAddOn" || e.InvolvedObject.Name != addon.Name || e.Source.Component != "hcp-fleet-agent" {
					continue
				}
				if e.Reason == "Installed" && e.Type == corev1.EventTypeNormal {
					return nil
				}
				seen = append(seen, e.Type+"/"+e.Reason)
			}
			return fmt.Errorf("agent events in cluster-1: %v", seen)
		})
	})

	t.Run("agent objects carry both configs", func(t *testing.T) {
		d := c.deployment(t, "cluster-1")
		pod := d.Spec.Template.Spec
		if _, ok := pod.NodeSelector["node-role.kubernetes.io/infra"]; !ok || len(pod.Tolerations) != 1 {
			t.Errorf("node placement from the AddOnDeploymentConfig missing: %v %v", pod.NodeSelector, pod.Tolerations)
		}
		agent := pod.Containers[0]
		if got := agent.Resources.Requests.Memory().String(); got != "128Mi" {
			t.Errorf("memory request: want 128Mi from the AddOnDeploymentConfig, got %s", got)
		}
		if !hasEnv(agent.Env, "HTTPS_PROXY", "http://proxy.example.com:3128") {
			t.Errorf("proxy env missing: %v", agent.Env)
		}
		if agent.Image != hcpfleet.AgentImage {
			t.Errorf("image: want %s from the default HostingConfig, got %s", hcpfleet.AgentImage, agent.Image)
		}
		if !hasArg(agent.Args, "--cluster-name=cluster-1") {
			t.Errorf("args do not name the cluster: %v", agent.Args)
		}
		cm, err := c.spokeKube["cluster-1"].CoreV1().ConfigMaps(addon.DefaultInstallNamespace).Get(ctx, addon.HostingConfigMap, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := configHash(mca, "hostingconfigs")
		if want == "" || cm.Data[addon.HostingConfigHashKey] != want || cm.Data[addon.HostingConfigRefKey] != "hcp-fleet/default" {
			t.Errorf("hosting config map %v does not match the resolved config (hash %q)", cm.Data, want)
		}
		if _, err := c.addons.AddonV1alpha1().ManagedClusterAddOns("cluster-2").Get(ctx, addon.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("cluster-2 is not selected by the Placement but has the add-on: %v", err)
		}
	})

	t.Run("agent hub identity is confined to its cluster namespace", func(t *testing.T) {
		cfg := c.agentHubConfig(t, "cluster-1")
		kube := kubernetes.NewForConfigOrDie(cfg)
		addons := addonclient.NewForConfigOrDie(cfg)
		if _, err := addons.AddonV1alpha1().ManagedClusterAddOns("cluster-1").Get(ctx, addon.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("agent must read its own ManagedClusterAddOn: %v", err)
		}
		for what, err := range map[string]error{
			// Its exports are granted by name, per bound HCD
			// (pkg/hosting/hub/exportaccess): never a list.
			"Secrets in cluster-1":      listErr(kube.CoreV1().Secrets("cluster-1").List(ctx, metav1.ListOptions{})),
			"Secrets in cluster-2":      listErr(kube.CoreV1().Secrets("cluster-2").List(ctx, metav1.ListOptions{})),
			"Secrets in hcp-fleet":      listErr(kube.CoreV1().Secrets("hcp-fleet").List(ctx, metav1.ListOptions{})),
			"Secrets cluster-wide":      listErr(kube.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})),
			"Namespaces":                listErr(kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})),
			"ClusterRoles":              listErr(kube.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})),
			"ManagedClusterAddOns of 2": listErr(addons.AddonV1alpha1().ManagedClusterAddOns("cluster-2").List(ctx, metav1.ListOptions{})),
		} {
			if !apierrors.IsForbidden(err) {
				t.Errorf("agent of cluster-1 listing %s: want Forbidden, got %v", what, err)
			}
		}
	})

	t.Run("each identity may do exactly what docs/security.md lists", func(t *testing.T) { checkLeastPrivilege(t, c) })

	t.Run("per-cluster HostingConfig override changes only that cluster", func(t *testing.T) {
		c.label(t, "cluster-2", hcpfleet.HostLabel, ptrTo("true"))
		c.agentReady(t, "cluster-2")
		cluster2Enabled = true
		before := c.addonWorkGenerations(t, "cluster-1")

		override := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hcpfleet.io/v1alpha1", "kind": "HostingConfig",
			"metadata": map[string]any{"name": "cluster-2-override", "namespace": "hcp-fleet"},
			"spec":     map[string]any{"agentImage": "registry.example.com/hcp-fleet/hcp-fleet-agent:override"},
		}}
		if _, err := c.hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Create(ctx, override, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		mcaPatch := []byte(`{"spec":{"configs":[{"group":"hcpfleet.io","resource":"hostingconfigs","name":"cluster-2-override","namespace":"hcp-fleet"}]}}`)
		if _, err := c.addons.AddonV1alpha1().ManagedClusterAddOns("cluster-2").Patch(ctx, addon.Name, types.MergePatchType, mcaPatch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "cluster-2 agent runs the override image", func(ctx context.Context) error {
			d := c.deployment(t, "cluster-2")
			if img := d.Spec.Template.Spec.Containers[0].Image; img != "registry.example.com/hcp-fleet/hcp-fleet-agent:override" {
				return fmt.Errorf("image %s", img)
			}
			return nil
		})
		// A different image is not a program the kubelet stand-in knows, so
		// only the manifests are checked on cluster-2; cluster-1 must be
		// untouched.
		if after := c.addonWorkGenerations(t, "cluster-1"); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("cluster-1's add-on ManifestWorks changed: %v -> %v", before, after)
		}
		if img := c.deployment(t, "cluster-1").Spec.Template.Spec.Containers[0].Image; img != hcpfleet.AgentImage {
			t.Errorf("cluster-1 image changed to %s", img)
		}
		// Back to the default, so cluster-2's agent runs again.
		if _, err := c.addons.AddonV1alpha1().ManagedClusterAddOns("cluster-2").Patch(ctx, addon.Name, types.MergePatchType, []byte(`{"spec":{"configs":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		c.agentReady(t, "cluster-2")
	})

	t.Run("an unrelated change does not re-render", func(t *testing.T) {
		before := c.addonWorkGenerations(t, "cluster-1")
		renders := agentRenders(t, "cluster-1")
		// The add-on manager renders the agent again on every change of
		// the ManagedClusterAddOn (a ManagedCluster change only with an
		// AgentDeployTriggerClusterFilter, which hcp-fleet does not set), and
		// writes only if the result differs: wait for that render.
		patch := []byte(`{"metadata":{"annotations":{"example.com/unrelated":"yes"}}}`)
		if _, err := c.addons.AddonV1alpha1().ManagedClusterAddOns("cluster-1").Patch(ctx, addon.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		env.Eventually(t, time.Minute, "the add-on manager rendered cluster-1 again", func(context.Context) error {
			if n := agentRenders(t, "cluster-1"); n <= renders {
				return fmt.Errorf("%v renders since the change", n-renders)
			}
			return nil
		})
		if after := c.addonWorkGenerations(t, "cluster-1"); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("an unrelated ManagedClusterAddOn change rewrote the agent's ManifestWorks: %v -> %v", before, after)
		}
	})

	t.Run("the agent reconnects when its hub credentials rotate", func(t *testing.T) {
		old, err := c.spokeKube["cluster-1"].CoreV1().Secrets(addon.DefaultInstallNamespace).Get(ctx, addon.HubKubeconfigSecret, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Losing the credentials makes OCM registration issue new ones
		// through a new CSR.
		if err := c.spokeKube["cluster-1"].CoreV1().Secrets(addon.DefaultInstallNamespace).Delete(ctx, addon.HubKubeconfigSecret, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, "new hub credentials issued", func(ctx context.Context) error {
			s, err := c.spokeKube["cluster-1"].CoreV1().Secrets(addon.DefaultInstallNamespace).Get(ctx, addon.HubKubeconfigSecret, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(s.Data["tls.crt"]) == 0 || string(s.Data["tls.crt"]) == string(old.Data["tls.crt"]) {
				return fmt.Errorf("certificate not rotated yet")
			}
			return nil
		})
		// The agent works with the new identity: it applies a HostingConfig
		// change made after the rotation and reports it.
		patch := []byte(`{"spec":{"capacity":{"maxHostedClusters":79}}}`)
		if _, err := c.hubDyn.Resource(addonhub.HostingConfigGVR).Namespace("hcp-fleet").Patch(ctx, "default", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, "the agent reports the new HostingConfig with its new credentials", func(ctx context.Context) error {
			mca, err := c.addons.AddonV1alpha1().ManagedClusterAddOns("cluster-1").Get(ctx, addon.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			want := configHash(mca, "hostingconfigs")
			cond := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionHostingConfigApplied)
			if want == "" || cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, want) {
				return fmt.Errorf("want hash %s reported, condition %+v", want, cond)
			}
			return nil
		})
	})

	t.Run("disabling the add-on cleans up and removes everything", func(t *testing.T) {
		// Watch the add-on through its removal: the pre-delete hook (the
		// agent's cleanup Job) must report success before it goes.
		w, err := c.addons.AddonV1alpha1().ManagedClusterAddOns("cluster-1").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + addon.Name})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		cleanupSeen := make(chan string, 1)
		go func() {
			for ev := range w.ResultChan() {
				if m, ok := ev.Object.(*addonv1alpha1.ManagedClusterAddOn); ok {
					if cond := meta.FindStatusCondition(m.Status.Conditions, addon.ConditionCleanup); cond != nil && cond.Status == metav1.ConditionTrue {
						cleanupSeen <- cond.Message
						return
					}
				}
			}
		}()
		// Grants the agent bound itself where it worked (as the janitor and
		// the CAPI providers do) go with the add-on: its cleanup removes
		// them.
		selfBound := map[string]string{"unbind-probe-hosting": addon.AgentHostingNamespaceRole, "unbind-probe-capi": addon.AgentCAPINamespaceRole,
			"unbind-probe-extension": addon.AgentExtensionNamespaceRole}
		bindAsAgent(t, fleet.Managed[0].Config(), selfBound)
		// The agent's HostedClusterInventory is there before (the positive
		// signal the cleanup has something to remove) and goes with it.
		inventories := c.hubDyn.Resource(v1alpha1.GroupVersion.WithResource("hostedclusterinventories")).Namespace("cluster-1")
		eventually(t, time.Minute, "cluster-1's HostedClusterInventory", func(ctx context.Context) error {
			_, err := inventories.Get(ctx, v1alpha1.InventoryName, metav1.GetOptions{})
			return err
		})
		started := time.Now()
		c.label(t, "cluster-1", hcpfleet.HostLabel, nil)
		milestones := map[string]time.Duration{}
		mark := func(name string) {
			if _, ok := milestones[name]; !ok {
				milestones[name] = time.Since(started).Round(100 * time.Millisecond)
			}
		}
		eventually(t, 3*time.Minute, "add-on removed from cluster-1", func(ctx context.Context) error {
			if _, err := c.addons.AddonV1alpha1().ManagedClusterAddOns("cluster-1").Get(ctx, addon.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("ManagedClusterAddOn still there (%v)", err)
			}
			mark("ManagedClusterAddOn gone")
			if _, err := c.spokeKube["cluster-1"].AppsV1().Deployments(addon.DefaultInstallNamespace).Get(ctx, "hcp-fleet-agent", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("agent Deployment still there: %w", err)
			}
			mark("agent Deployment gone")
			if _, err := c.spokeKube["cluster-1"].CoreV1().Namespaces().Get(ctx, addon.DefaultInstallNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("namespace %s still there: %v", addon.DefaultInstallNamespace, err)
			}
			mark("namespace gone")
			if _, err := c.spokeKube["cluster-1"].RbacV1().ClusterRoles().Get(ctx, "open-cluster-management:hcp-fleet:agent", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("ClusterRole still there: %v", err)
			}
			return nil
		})
		t.Logf("add-on removed from cluster-1 in %s (%v)", time.Since(started).Round(time.Millisecond), milestones)
		if _, err := inventories.Get(ctx, v1alpha1.InventoryName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the HostedClusterInventory outlived the add-on (%v)", err)
		}
		for ns, role := range selfBound {
			if _, err := c.spokeKube["cluster-1"].RbacV1().RoleBindings(ns).Get(ctx, role, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the RoleBinding %s/%s the agent bound itself outlived the add-on (%v)", ns, role, err)
			}
		}
		select {
		case msg := <-cleanupSeen:
			t.Logf("cleanup hook reported: %s", msg)
		default:
			t.Error("the add-on went without its cleanup hook reporting CleanupSucceeded")
		}
		eventually(t, time.Minute, "the add-on's ManifestWorks gone from cluster-1", func(ctx context.Context) error {
			works, err := c.works.WorkV1().ManifestWorks("cluster-1").List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			var left []string
			for _, w := range works.Items {
				left = append(left, fmt.Sprintf("%s (deleting: %v, finalizers %v)", w.Name, w.DeletionTimestamp != nil, w.Finalizers))
			}
			if len(left) > 0 {
				return fmt.Errorf("left: %v", left)
			}
			return nil
		})
		roles, err := c.hubKube.RbacV1().RoleBindings("cluster-1").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, rb := range roles.Items {
			if rb.Name == addonhub.HubBindingName {
				t.Errorf("hub RoleBinding %s left in cluster-1", rb.Name)
			}
		}
		// cluster-2 keeps its agent (when an earlier subtest enabled it).
		if cluster2Enabled {
			c.agentReady(t, "cluster-2")
		}
	})
}

// addonWorkGenerations returns name → generation of the add-on's
// ManifestWorks in a cluster namespace.
func (c *clients) addonWorkGenerations(t *testing.T, cluster string) map[string]int64 {
	t.Helper()
	works, err := c.works.WorkV1().ManifestWorks(cluster).List(context.Background(), metav1.ListOptions{
		LabelSelector: addonv1alpha1.AddonLabelKey + "=" + addon.Name,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, w := range works.Items {
		out[w.Name] = w.Generation
	}
	if len(out) == 0 {
		t.Fatalf("no add-on ManifestWorks in %s", cluster)
	}
	return out
}

func configHash(mca *addonv1alpha1.ManagedClusterAddOn, resource string) string {
	for _, ref := range mca.Status.ConfigReferences {
		if ref.Resource == resource && ref.DesiredConfig != nil {
			return ref.DesiredConfig.SpecHash
		}
	}
	return ""
}

func hasEnv(env []corev1.EnvVar, name, value string) bool {
	for _, e := range env {
		if e.Name == name && e.Value == value {
			return true
		}
	}
	return false
}

func hasArg(args []string, want string) bool {
	for _, a := range args {
		if a == want {
			return true
		}
	}
	return false
}

func listErr(_ any, err error) error { return err }

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// agentRenders reads how often the hub (in this process) rendered the
// agent's manifests for cluster.
func agentRenders(t *testing.T, cluster string) float64 {
	t.Helper()
	return fleettest.Metric(t, "hcpfleet_hub_addon_agent_renders_total", map[string]string{"cluster": cluster})
}
