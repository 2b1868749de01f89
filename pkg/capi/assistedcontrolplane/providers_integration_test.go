//go:build integration

package assistedcontrolplane_test

// These tests run both OpenShift assisted providers (the bootstrap and the
// control-plane controller, in one manager as the agent runs them) against
// a real kube-apiserver with the Cluster API core, assisted-service, hive
// and Metal3-shaped CRDs, and assistedsim as assisted-service and the hosts.
// Nothing runs Cluster API's own controllers here: the tests create the
// worker Machines (with their OpenshiftAssistedConfigs and Metal3Machines)
// as a MachineSet would, and the owner references CAPI would set; the
// control-plane Machines are made by our control-plane controller.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	hiveext "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/hcp-fleet/hcp-fleet/internal/assistedtest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/assistedsim"
	"github.com/hcp-fleet/hcp-fleet/internal/poll"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	bootstrapv1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/bootstrap/v1alpha1"
	controlplanev1 "github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/controlplane/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedapi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedbootstrap"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedcontrolplane"
)

var metal3MachineGVK = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "Metal3Machine"}

const (
	timeout = 60 * time.Second
	// agentNamespace mimics the agent's manager: Secrets are cached only in
	// its own namespace, so the providers must not read Secrets from cache.
	agentNamespace = "open-cluster-management-agent-addon"
)

type env struct {
	cfg *rest.Config
	c   client.Client
}

// TestProviders shares one kube-apiserver and one assistedsim between its
// subtests; each subtest has its own namespace and its own providers'
// manager, whose cache sees only that namespace.
func TestProviders(t *testing.T) {
	setLogOnce.Do(func() { ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.Level(zapcore.ErrorLevel))) })
	logs.set(t)
	defer logs.set(nil) // runs after the managers stopped (t.Cleanup ran)
	start := time.Now()
	cfg, c := assistedtest.Start(t)
	t.Logf("kube-apiserver with all CRDs up in %s", time.Since(start).Round(time.Millisecond))
	e := &env{cfg: cfg, c: c}
	simMgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: assistedtest.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	sim := &assistedsim.Sim{Client: simMgr.GetClient(), InfraGVK: metal3MachineGVK, ISOURLPath: "spec.image.url", ClaimHosts: true}
	if err := sim.SetupWithManager(simMgr); err != nil {
		t.Fatal(err)
	}
	startManager(t, simMgr)

	t.Run("three control-plane and two worker Machines install, late Machines join as day 2, scaling", e.testInstall)
	t.Run("a restart mid-installation loses nothing and creates nothing twice", e.testRestart)
	t.Run("bad input is reported with reasons and creates nothing", e.testBadInput)
	t.Run("cleanup refuses while objects exist, then removes only our CRDs", e.testCleanup)
}

// testWriter sends controller errors to the log of the running test. The
// controller-runtime logger is process-wide and set once, so the test it
// writes to is swapped in and out.
type testWriter struct {
	mu sync.Mutex
	t  *testing.T
}

func (w *testWriter) set(t *testing.T) { w.mu.Lock(); w.t = t; w.mu.Unlock() }

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t != nil {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

var (
	logs       = &testWriter{}
	setLogOnce sync.Once
)

// startManager runs mgr until the returned stop is called (or the test ends).
func startManager(t *testing.T, mgr ctrl.Manager) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var stopped bool
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// startProviders runs both providers, set up as the agent features do.
func (e *env) startProviders(t *testing.T, ns string) (stop func()) {
	mgr, err := ctrl.NewManager(e.cfg, ctrl.Options{
		Scheme:  assistedtest.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			ByObject:          map[client.Object]cache.ByObject{&corev1.Secret{}: {Namespaces: map[string]cache.Config{agentNamespace: {}}}},
		},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := assistedbootstrap.DefaultOptions()
	opts.RequeueAfter = time.Second
	if err := assistedbootstrap.Setup(mgr, opts); err != nil {
		t.Fatal(err)
	}
	if err := assistedcontrolplane.Setup(mgr); err != nil {
		t.Fatal(err)
	}
	return startManager(t, mgr)
}

func (e *env) namespace(t *testing.T, name string) string {
	ctx := context.Background()
	for _, n := range []string{name, agentNamespace} {
		if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return name
}

func (e *env) create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := e.c.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func metal3Template(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"image": map[string]any{"checksum": "none"},
	}}}}}
	u.SetGroupVersionKind(metal3MachineGVK.GroupVersion().WithKind("Metal3MachineTemplate"))
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// cluster makes the CAPI objects of a cluster as a user (and, for owner
// references, CAPI) would: pull secret, templates, Cluster, a
// MachineDeployment of `workers` replicas, and the control plane.
func (e *env) cluster(t *testing.T, ns, name string, workers int32, mutate func(*controlplanev1.OpenshiftAssistedControlPlane)) *controlplanev1.OpenshiftAssistedControlPlane {
	t.Helper()
	ctx := context.Background()
	e.create(t,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-pull-secret"},
			Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}, Type: corev1.SecretTypeDockerConfigJson},
		metal3Template(ns, name+"-cp"), metal3Template(ns, name+"-workers"),
	)
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{ControlPlaneRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: controlplanev1.GroupVersion.Group, Kind: "OpenshiftAssistedControlPlane", Name: name}},
	}
	e.create(t, cluster)
	e.create(t, &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-workers", Labels: map[string]string{clusterv1.ClusterNameLabel: name}},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: name, Replicas: ptr.To(workers),
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": name + "-workers"}},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"pool": name + "-workers"}},
				Spec: clusterv1.MachineSpec{ClusterName: name,
					Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfigTemplate", Name: name + "-workers"}},
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: metal3MachineGVK.Group, Kind: "Metal3MachineTemplate", Name: name + "-workers"}},
			},
		},
	})
	acp := &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: cluster.UID}}},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			Replicas:            ptr.To[int32](3),
			Version:             "v1.29.5",
			DistributionVersion: "4.16.3",
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: metal3MachineGVK.Group, Kind: "Metal3MachineTemplate", Name: name + "-cp"}}},
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
				BaseDomain: "example.com", PullSecretRef: &corev1.LocalObjectReference{Name: name + "-pull-secret"},
				APIVIPs: []string{"192.168.111.5"}, IngressVIPs: []string{"192.168.111.4"},
			},
		},
	}
	if mutate != nil {
		mutate(acp)
	}
	if err := e.c.Create(ctx, acp); err != nil {
		t.Fatal(err)
	}
	return acp
}

// workerMachine makes worker Machine i as a MachineSet would: a
// Metal3Machine and an OpenshiftAssistedConfig from the templates, then the
// Machine referencing both.
func (e *env) workerMachine(t *testing.T, ns, cluster string, i int) string {
	t.Helper()
	name := fmt.Sprintf("%s-workers-%d", cluster, i)
	labels := map[string]string{clusterv1.ClusterNameLabel: cluster, "pool": cluster + "-workers"}
	infra := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"image": map[string]any{"checksum": "none"}}}}
	infra.SetGroupVersionKind(metal3MachineGVK)
	infra.SetNamespace(ns)
	infra.SetName(name)
	infra.SetLabels(labels)
	e.create(t, infra,
		&bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: bootstrapv1.OpenshiftAssistedConfigSpec{PullSecretRef: &corev1.LocalObjectReference{Name: cluster + "-pull-secret"}}},
		&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: clusterv1.MachineSpec{ClusterName: cluster,
				Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: metal3MachineGVK.Group, Kind: "Metal3Machine", Name: name}}},
	)
	return name
}

// eventually polls f until it returns nil, failing with its last error.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	poll.Until(t, timeout, what, func(context.Context) error { return f() })
}

// consistently checks f stays nil for d.
func consistently(t *testing.T, what string, d time.Duration, f func() error) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

func (e *env) get(obj client.Object, ns, name string) error {
	return e.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, obj)
}

func condition(conds []metav1.Condition, t string) string {
	c := meta.FindStatusCondition(conds, t)
	if c == nil {
		return "<none>"
	}
	return string(c.Status) + "/" + c.Reason
}

func (e *env) aci(t *testing.T, ns, name string) *hiveext.AgentClusterInstall {
	t.Helper()
	aci := &hiveext.AgentClusterInstall{}
	if err := e.get(aci, ns, name); err != nil {
		t.Fatal(err)
	}
	return aci
}

func (e *env) waitInstalling(t *testing.T, ns, cluster string) {
	eventually(t, "installation starts", func() error {
		aci := &hiveext.AgentClusterInstall{}
		if err := e.get(aci, ns, cluster); err != nil {
			return err
		}
		if aci.Status.DebugInfo.State != "installing" {
			return fmt.Errorf("ACI state %q, conditions %+v", aci.Status.DebugInfo.State, aci.Status.Conditions)
		}
		return nil
	})
}

func (e *env) finishInstall(t *testing.T, ns, cluster string) {
	patch := []byte(`{"metadata":{"annotations":{"` + assistedsim.FinishInstallAnnotation + `":"true"}}}`)
	aci := &hiveext.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster}}
	if err := e.c.Patch(context.Background(), aci, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

func (e *env) waitReady(t *testing.T, ns, cluster string, readyReplicas int32) *controlplanev1.OpenshiftAssistedControlPlane {
	acp := &controlplanev1.OpenshiftAssistedControlPlane{}
	eventually(t, "control plane Ready", func() error {
		if err := e.get(acp, ns, cluster); err != nil {
			return err
		}
		if !ptr.Deref(acp.Status.Initialization.ControlPlaneInitialized, false) || !acp.Status.Ready ||
			ptr.Deref(acp.Status.ReadyReplicas, -1) != readyReplicas {
			return fmt.Errorf("initialized=%v ready=%v readyReplicas=%v conditions=%+v", acp.Status.Initialization.ControlPlaneInitialized,
				acp.Status.Ready, ptr.Deref(acp.Status.ReadyReplicas, -1), acp.Status.Conditions)
		}
		return nil
	})
	return acp
}

// agentOf returns the Agent of config cfg (registered in its InfraEnv).
func (e *env) agentOf(ns, cfg string) (*aiv1beta1.Agent, error) {
	list := &aiv1beta1.AgentList{}
	if err := e.c.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{aiv1beta1.InfraEnvNameLabel: cfg}); err != nil {
		return nil, err
	}
	if len(list.Items) != 1 {
		return nil, fmt.Errorf("%d agents for %s", len(list.Items), cfg)
	}
	return &list.Items[0], nil
}

func (e *env) testInstall(t *testing.T) {
	ns := e.namespace(t, "install")
	e.startProviders(t, ns)
	e.cluster(t, ns, "c1", 2, nil)
	workers := []string{e.workerMachine(t, ns, "c1", 0), e.workerMachine(t, ns, "c1", 1)}

	// The control plane made its Machines and the assisted objects.
	eventually(t, "3 control-plane Machines", func() error {
		list := &clusterv1.MachineList{}
		if err := e.c.List(context.Background(), list, client.InNamespace(ns), client.HasLabels{clusterv1.MachineControlPlaneLabel}); err != nil {
			return err
		}
		if len(list.Items) != 3 {
			return fmt.Errorf("%d control-plane Machines", len(list.Items))
		}
		return nil
	})
	cps := []string{"c1-0", "c1-1", "c1-2"}
	cd := &hivev1.ClusterDeployment{}
	if err := e.get(cd, ns, "c1"); err != nil {
		t.Fatal(err)
	}
	if cd.Spec.BaseDomain != "example.com" || cd.Spec.ClusterInstallRef == nil || cd.Spec.ClusterInstallRef.Kind != "AgentClusterInstall" ||
		cd.Spec.PullSecretRef == nil || cd.Spec.PullSecretRef.Name != "c1-pull-secret" || cd.Spec.Platform.AgentBareMetal == nil {
		t.Fatalf("ClusterDeployment spec: %+v", cd.Spec)
	}
	aci := e.aci(t, ns, "c1")
	if got := aci.Spec.ProvisionRequirements; got.ControlPlaneAgents != 3 || got.WorkerAgents != 2 {
		t.Fatalf("provisionRequirements %+v, want 3 control-plane and 2 workers", got)
	}
	if aci.Spec.PlatformType != hiveext.BareMetalPlatformType || len(aci.Spec.APIVIPs) != 1 || aci.Spec.APIVIPs[0] != "192.168.111.5" ||
		aci.Spec.ImageSetRef == nil || aci.Spec.ImageSetRef.Name != "openshift-4.16.3" {
		t.Fatalf("AgentClusterInstall spec: %+v", aci.Spec)
	}
	if err := e.get(&hivev1.ClusterImageSet{}, "", "openshift-4.16.3"); err != nil {
		t.Fatalf("ClusterImageSet: %v", err)
	}

	// Every host booted the ISO, registered, and was given its role.
	e.waitInstalling(t, ns, "c1")
	for _, name := range append(append([]string{}, cps...), workers...) {
		cfg := &bootstrapv1.OpenshiftAssistedConfig{}
		if err := e.get(cfg, ns, name); err != nil {
			t.Fatal(err)
		}
		if !ptr.Deref(cfg.Status.Initialization.DataSecretCreated, false) || !cfg.Status.Ready || ptr.Deref(cfg.Status.DataSecretName, "") != name {
			t.Fatalf("config %s status: %+v", name, cfg.Status)
		}
		secret := &corev1.Secret{}
		if err := e.get(secret, ns, name); err != nil || secret.Type != clusterv1.ClusterSecretType || len(secret.Data["value"]) != 0 {
			t.Fatalf("bootstrap data secret %s: %v %+v", name, err, secret)
		}
		infra := &unstructured.Unstructured{}
		infra.SetGroupVersionKind(metal3MachineGVK)
		if err := e.get(infra, ns, name); err != nil {
			t.Fatal(err)
		}
		url, _, _ := unstructured.NestedString(infra.Object, "spec", "image", "url")
		format, _, _ := unstructured.NestedString(infra.Object, "spec", "image", "diskFormat")
		if url != cfg.Status.ISODownloadURL || !strings.Contains(url, "/images/"+ns+"/"+name) || format != "live-iso" {
			t.Fatalf("%s image: url=%q format=%q (config says %q)", name, url, format, cfg.Status.ISODownloadURL)
		}
		if checksum, _, _ := unstructured.NestedString(infra.Object, "spec", "image", "checksum"); checksum != "none" {
			t.Fatalf("%s: the merge patch lost spec.image.checksum", name)
		}
		agent, err := e.agentOf(ns, name)
		if err != nil {
			t.Fatal(err)
		}
		wantRole := "worker"
		if strings.HasPrefix(name, "c1-") && !strings.Contains(name, "workers") {
			wantRole = "master"
		}
		bmh := &unstructured.Unstructured{}
		bmh.SetGroupVersionKind(schema.GroupVersionKind{Group: "metal3.io", Version: "v1alpha1", Kind: "BareMetalHost"})
		if err := e.get(bmh, ns, name); err != nil {
			t.Fatal(err)
		}
		if string(agent.Spec.Role) != wantRole || !agent.Spec.Approved || agent.Spec.Hostname != name ||
			agent.Spec.NodeLabels["metal3.io/uuid"] != string(bmh.GetUID()) {
			t.Fatalf("agent of %s: role=%s approved=%v hostname=%s nodeLabels=%v (BMH %s)", name, agent.Spec.Role, agent.Spec.Approved,
				agent.Spec.Hostname, agent.Spec.NodeLabels, bmh.GetUID())
		}
	}

	// A worker added while the cluster installs is held.
	md := &clusterv1.MachineDeployment{}
	if err := e.get(md, ns, "c1-workers"); err != nil {
		t.Fatal(err)
	}
	md.Spec.Replicas = ptr.To[int32](3)
	if err := e.c.Update(context.Background(), md); err != nil {
		t.Fatal(err)
	}
	late := e.workerMachine(t, ns, "c1", 2)
	eventually(t, "late worker held", func() error {
		cfg := &bootstrapv1.OpenshiftAssistedConfig{}
		if err := e.get(cfg, ns, late); err != nil {
			return err
		}
		if got := condition(cfg.Status.Conditions, bootstrapv1.ConditionReady); got != "False/"+bootstrapv1.ReasonWaitingForInstallation {
			return fmt.Errorf("Ready=%s", got)
		}
		return nil
	})
	consistently(t, "held worker gets no InfraEnv, the installation keeps its counts", 2*time.Second, func() error {
		if err := e.get(&aiv1beta1.InfraEnv{}, ns, late); !apierrors.IsNotFound(err) {
			return fmt.Errorf("InfraEnv of held worker: %v", err)
		}
		if got := e.aci(t, ns, "c1").Spec.ProvisionRequirements.WorkerAgents; got != 2 {
			return fmt.Errorf("workerAgents changed to %d during installation", got)
		}
		return nil
	})
	acp := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := e.get(acp, ns, "c1"); err != nil {
		t.Fatal(err)
	}
	if acp.Status.Ready || condition(acp.Status.Conditions, controlplanev1.ConditionInstalled) != "False/"+controlplanev1.ReasonInstalling {
		t.Fatalf("during installation: ready=%v Installed=%s", acp.Status.Ready, condition(acp.Status.Conditions, controlplanev1.ConditionInstalled))
	}

	// The installation completes: kubeconfig, Initialized/Ready.
	e.finishInstall(t, ns, "c1")
	acp = e.waitReady(t, ns, "c1", 3)
	kc := &corev1.Secret{}
	if err := e.get(kc, ns, "c1-kubeconfig"); err != nil {
		t.Fatal(err)
	}
	if kc.Type != clusterv1.ClusterSecretType || kc.Labels[clusterv1.ClusterNameLabel] != "c1" ||
		string(kc.Data["value"]) != assistedsim.Kubeconfig(ns, "c1") || !metav1.IsControlledBy(kc, acp) {
		t.Fatalf("kubeconfig secret: type=%s labels=%v owners=%v value=%q", kc.Type, kc.Labels, kc.OwnerReferences, kc.Data["value"])
	}
	if acp.Status.Selector == "" || ptr.Deref(acp.Status.Replicas, 0) != 3 || acp.Status.DistributionVersion != "4.16.3" {
		t.Fatalf("contract status: %+v", acp.Status)
	}

	// The held worker is released and joins as a day-2 host.
	eventually(t, "late worker installed as day 2", func() error {
		agent, err := e.agentOf(ns, late)
		if err != nil {
			return err
		}
		if !agent.Spec.Approved || agent.Spec.Role != "worker" || agent.Status.DebugInfo.State != "added-to-existing-cluster" {
			return fmt.Errorf("agent approved=%v role=%s state=%s", agent.Spec.Approved, agent.Spec.Role, agent.Status.DebugInfo.State)
		}
		return nil
	})

	// Scale the control plane up after the installation: a day-2 master.
	e.scale(t, ns, "c1", 4)
	e.waitReady(t, ns, "c1", 4)
	agent, err := e.agentOf(ns, "c1-3")
	if err != nil {
		t.Fatal(err)
	}
	if agent.Spec.Role != "master" || agent.Status.DebugInfo.State != "added-to-existing-cluster" {
		t.Fatalf("day-2 master: role=%s state=%s", agent.Spec.Role, agent.Status.DebugInfo.State)
	}
	// And down again: the newest Machine goes, with its config and infra machine.
	e.scale(t, ns, "c1", 3)
	eventually(t, "scale down to 3", func() error {
		for _, o := range []client.Object{&clusterv1.Machine{}, &bootstrapv1.OpenshiftAssistedConfig{}} {
			if err := e.get(o, ns, "c1-3"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%T c1-3 still there (%v)", o, err)
			}
		}
		infra := &unstructured.Unstructured{}
		infra.SetGroupVersionKind(metal3MachineGVK)
		if err := e.get(infra, ns, "c1-3"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Metal3Machine c1-3 still there (%v)", err)
		}
		return nil
	})
	if names := e.names(t, ns, &clusterv1.MachineList{}, client.HasLabels{clusterv1.MachineControlPlaneLabel}); strings.Join(names, ",") != "c1-0,c1-1,c1-2" {
		t.Fatalf("control-plane Machines after scale down: %v", names)
	}
}

func (e *env) scale(t *testing.T, ns, name string, replicas int32) {
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	acp := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := e.c.Patch(context.Background(), acp, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

func (e *env) names(t *testing.T, ns string, list client.ObjectList, opts ...client.ListOption) []string {
	t.Helper()
	if err := e.c.List(context.Background(), list, append(opts, client.InNamespace(ns))...); err != nil {
		t.Fatal(err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range items {
		out = append(out, o.(client.Object).GetName())
	}
	sort.Strings(out)
	return out
}

// inventory is name→UID of everything the providers (and the sim) made.
func (e *env) inventory(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	add := func(kind string, list client.ObjectList) {
		if err := e.c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		items, _ := meta.ExtractList(list)
		for _, o := range items {
			obj := o.(client.Object)
			out[kind+"/"+obj.GetName()] = string(obj.GetUID())
		}
	}
	infra := &unstructured.UnstructuredList{}
	infra.SetGroupVersionKind(metal3MachineGVK.GroupVersion().WithKind("Metal3MachineList"))
	add("Machine", &clusterv1.MachineList{})
	add("OpenshiftAssistedConfig", &bootstrapv1.OpenshiftAssistedConfigList{})
	add("Metal3Machine", infra)
	add("InfraEnv", &aiv1beta1.InfraEnvList{})
	add("Agent", &aiv1beta1.AgentList{})
	add("ClusterDeployment", &hivev1.ClusterDeploymentList{})
	add("AgentClusterInstall", &hiveext.AgentClusterInstallList{})
	return out
}

func (e *env) testRestart(t *testing.T) {
	ns := e.namespace(t, "restart")
	acp := e.cluster(t, ns, "c2", 2, nil)
	// A crash of a previous run between creating a control-plane
	// Machine's config and the Machine itself left this config behind.
	leftover := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c2-0",
		Labels:          map[string]string{clusterv1.ClusterNameLabel: "c2", clusterv1.MachineControlPlaneLabel: "", controlplanev1.ControlPlaneNameLabel: "c2"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(acp, controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane"))}},
		Spec: bootstrapv1.OpenshiftAssistedConfigSpec{PullSecretRef: &corev1.LocalObjectReference{Name: "c2-pull-secret"}}}
	e.create(t, leftover)
	e.workerMachine(t, ns, "c2", 0)
	e.workerMachine(t, ns, "c2", 1)

	stop := e.startProviders(t, ns)
	e.waitInstalling(t, ns, "c2")
	before := e.inventory(t, ns)
	if len(before) != 5*5+2 {
		t.Fatalf("before restart: %d objects, want 5 Machines, configs, Metal3Machines, InfraEnvs, Agents + CD + ACI: %v", len(before), before)
	}
	if before["OpenshiftAssistedConfig/c2-0"] != string(leftover.UID) {
		t.Fatalf("the leftover config was replaced instead of completed")
	}
	stop()

	e.startProviders(t, ns)
	consistently(t, "after restart, mid-installation", 3*time.Second, func() error {
		if now := e.inventory(t, ns); !equalMaps(now, before) {
			return fmt.Errorf("objects changed across restart:\nbefore %v\nafter  %v", before, now)
		}
		return nil
	})
	e.finishInstall(t, ns, "c2")
	e.waitReady(t, ns, "c2", 3)
	if now := e.inventory(t, ns); !equalMaps(now, before) {
		t.Fatalf("objects changed by the end:\nbefore %v\nafter  %v", before, now)
	}
}

func equalMaps(a, b map[string]string) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func (e *env) testBadInput(t *testing.T) {
	ns := e.namespace(t, "bad")
	e.startProviders(t, ns)
	cases := []struct {
		name   string
		mutate func(*controlplanev1.OpenshiftAssistedControlPlane)
		reason string
	}{
		{"nopull", func(a *controlplanev1.OpenshiftAssistedControlPlane) { a.Spec.Config.PullSecretRef = nil }, controlplanev1.ReasonPullSecretRefMissing},
		{"gonepull", func(a *controlplanev1.OpenshiftAssistedControlPlane) {
			a.Spec.Config.PullSecretRef = &corev1.LocalObjectReference{Name: "does-not-exist"}
		}, controlplanev1.ReasonPullSecretNotFound},
		{"badvip", func(a *controlplanev1.OpenshiftAssistedControlPlane) {
			a.Spec.Config.APIVIPs = []string{"192.168.111.300"}
		}, controlplanev1.ReasonInvalidAPIVIPs},
		{"samevip", func(a *controlplanev1.OpenshiftAssistedControlPlane) {
			a.Spec.Config.IngressVIPs = []string{"192.168.111.5"}
		}, controlplanev1.ReasonInvalidIngressVIPs},
		{"snovips", func(a *controlplanev1.OpenshiftAssistedControlPlane) { a.Spec.Replicas = ptr.To[int32](1) }, controlplanev1.ReasonReplicasMismatch},
		{"two", func(a *controlplanev1.OpenshiftAssistedControlPlane) { a.Spec.Replicas = ptr.To[int32](2) }, controlplanev1.ReasonReplicasMismatch},
	}
	for _, tc := range cases {
		e.cluster(t, ns, tc.name, 0, tc.mutate)
	}
	for _, tc := range cases {
		eventually(t, tc.name, func() error {
			acp := &controlplanev1.OpenshiftAssistedControlPlane{}
			if err := e.get(acp, ns, tc.name); err != nil {
				return err
			}
			c := meta.FindStatusCondition(acp.Status.Conditions, controlplanev1.ConditionSpecValid)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != tc.reason || c.Message == "" {
				return fmt.Errorf("SpecValid=%+v, want False/%s", c, tc.reason)
			}
			return nil
		})
	}
	// A bootstrap config without a pull secret says so.
	e.create(t, &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}},
		&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w", Labels: map[string]string{clusterv1.ClusterNameLabel: "nopull"}},
			Spec: clusterv1.MachineSpec{ClusterName: "nopull",
				Bootstrap:         clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: "w"}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: metal3MachineGVK.Group, Kind: "Metal3Machine", Name: "w"}}})
	eventually(t, "config without pull secret", func() error {
		cfg := &bootstrapv1.OpenshiftAssistedConfig{}
		if err := e.get(cfg, ns, "w"); err != nil {
			return err
		}
		if got := condition(cfg.Status.Conditions, bootstrapv1.ConditionReady); got != "False/"+bootstrapv1.ReasonPullSecretMissing {
			return fmt.Errorf("Ready=%s", got)
		}
		return nil
	})
	// Nothing was created on the assisted side, and no Machine.
	consistently(t, "nothing created for invalid control planes", time.Second, func() error {
		if n := e.names(t, ns, &hivev1.ClusterDeploymentList{}); len(n) != 0 {
			return fmt.Errorf("ClusterDeployments %v", n)
		}
		if n := e.names(t, ns, &hiveext.AgentClusterInstallList{}); len(n) != 0 {
			return fmt.Errorf("AgentClusterInstalls %v", n)
		}
		if n := e.names(t, ns, &clusterv1.MachineList{}, client.HasLabels{clusterv1.MachineControlPlaneLabel}); len(n) != 0 {
			return fmt.Errorf("control-plane Machines %v", n)
		}
		if n := e.names(t, ns, &aiv1beta1.InfraEnvList{}); len(n) != 0 {
			return fmt.Errorf("InfraEnvs %v", n)
		}
		return nil
	})
}

func (e *env) testCleanup(t *testing.T) {
	ctx := context.Background()
	var blocked *agent.CleanupBlockedError
	if err := assistedcontrolplane.Cleanup(ctx, e.cfg); !errors.As(err, &blocked) || blocked.Reason != "OpenshiftAssistedControlPlanesExist" {
		t.Fatalf("control-plane cleanup with control planes present: %v", err)
	}
	if err := assistedbootstrap.Cleanup(ctx, e.cfg); !errors.As(err, &blocked) || blocked.Reason != "OpenshiftAssistedConfigsExist" {
		t.Fatalf("bootstrap cleanup with configs present: %v", err)
	}
	for _, ns := range []string{"install", "restart", "bad"} {
		for _, o := range []client.Object{&controlplanev1.OpenshiftAssistedControlPlane{}, &bootstrapv1.OpenshiftAssistedConfig{}} {
			if err := e.c.DeleteAllOf(ctx, o, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
		}
	}
	eventually(t, "cleanup after the objects are gone", func() error {
		if err := assistedcontrolplane.Cleanup(ctx, e.cfg); err != nil {
			return err
		}
		return assistedbootstrap.Cleanup(ctx, e.cfg)
	})
	eventually(t, "our CRDs deleted", func() error {
		for _, n := range append(append([]string{}, crds.Bootstrap...), crds.ControlPlane...) {
			if err := e.get(&apiextensionsv1.CustomResourceDefinition{}, "", n); !apierrors.IsNotFound(err) {
				return fmt.Errorf("CRD %s: %v", n, err)
			}
		}
		return nil
	})
	// A CRD of the same name installed by someone else is never taken over.
	foreign, err := crds.Get(crds.ControlPlane...)
	if err != nil {
		t.Fatal(err)
	}
	e.create(t, foreign[0].DeepCopy())
	var fe *crds.ForeignCRDError
	if err := crds.Install(ctx, e.c, crds.ControlPlane...); !errors.As(err, &fe) {
		t.Fatalf("installing over a foreign CRD: %v", err)
	}
	if err := assistedcontrolplane.Cleanup(ctx, e.cfg); err != nil {
		t.Fatal(err)
	}
	if err := e.get(&apiextensionsv1.CustomResourceDefinition{}, "", crds.ControlPlane[0]); err != nil {
		t.Fatalf("cleanup must leave a foreign CRD alone: %v", err)
	}
}
