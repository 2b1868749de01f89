//go:build integration

// Package olm installs hcp-fleet on a local fleet's hub the way OLM
// does, with OLM's own code, and checks that the installed hub works:
//
//   - OLM's CRDs (of the operator-framework/api version olm-operator is built
//     with) and a real olm-operator process (hack/olm: OLM's cmd/olm from the
//     module proxy) on the hub;
//   - an OperatorGroup and the InstallPlan steps OLM's catalog-operator would
//     resolve for bundle/ (hack/olm/olm-installplan runs OLM's resolver: the
//     CSV, the bundle's other objects, and the ServiceAccount and RBAC that
//     OLM derives from the install strategy), executed in order as the
//     catalog-operator's ExecutePlan does (no catalog-operator here: it
//     needs catalog pods);
//   - the CSV reaches Succeeded through olm-operator's own checks
//     (requirements, RBAC, Deployment availability), with the hub
//     Deployment that olm-operator created from the install strategy run by
//     the hub's kubelet stand-in under the bundle's ServiceAccount; the local
//     fleet runs no hub of its own (hcpfleet.Options.HubFromDeployment);
//   - that hub enables the add-on on a management cluster and schedules a
//     HostedClusterDeployment there.
//
// It runs hack/olm/build.sh for olm-operator (instant once built on a
// machine; $HCPFLEET_OLM_DIR names a directory built elsewhere instead) and
// fails when that build fails.
package olm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/poll"
	"github.com/hcp-fleet/hcp-fleet/manifests"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

const (
	bundleDir   = "../../bundle"
	examplesDir = "../../examples"
	// OLMDirEnv, when set, names a directory like the one
	// hack/olm/build.sh prints (olm, olm-installplan and crds/), used
	// instead of running the script.
	OLMDirEnv = "HCPFLEET_OLM_DIR"
	// olmNamespace is where olm-operator would run on a cluster.
	olmNamespace = "olm"
	// scheduledHCD is the example the hub from the CSV must schedule.
	scheduledHCD = "demo-agent"
	stepTimeout  = 3 * time.Minute
)

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(hosting.AddHubAPIs(scheme))
	utilruntime.Must(operatorsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(operatorsv1.AddToScheme(scheme))
}

// TestInstalledByOLM: OLM installs the bundle (CSV Succeeded), the hub runs
// from the CSV's Deployment under the bundle's RBAC, and schedules a
// HostedClusterDeployment.
func TestInstalledByOLM(t *testing.T) {
	ctx := t.Context()
	olmBuilt := buildOLM(ctx)
	began := time.Now()
	lap := began
	phase := func(what string) {
		t.Logf("%-62s %5.1fs", what, time.Since(lap).Seconds())
		lap = time.Now()
	}

	fleet, err := localfleet.Start(ctx, localfleet.Options{
		ManagementClusters: 1, StatusSyncInterval: time.Second, AddOnLeaseSyncInterval: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("fleet logs: %s (LOCALFLEET_KEEP=1 keeps them)", fleet.LogDir)
		}
		fleet.Stop()
	})
	phase("local fleet (hub + 1 management cluster)")
	olmDir, err := olmBuilt()
	if err != nil {
		t.Fatal(err)
	}
	phase("olm-operator built (hack/olm/build.sh, cached per machine)")
	hub, err := client.New(fleet.Hub.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	applier, err := localfleet.NewApplier(fleet.Hub.Config())
	if err != nil {
		t.Fatal(err)
	}

	// OLM: its CRDs, its namespace, olm-operator as a cluster administrator.
	crds, err := localfleet.ReadManifestDir(os.DirFS(olmDir), "crds")
	if err != nil {
		t.Fatal(err)
	}
	if err := applier.Apply(ctx, crds...); err != nil {
		t.Fatal(err)
	}
	// The monitoring kinds an OpenShift hub serves, which the bundle's
	// ServiceMonitor and PrometheusRule need.
	monitoring, err := localfleet.ReadManifestDir(os.DirFS("."), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if err := applier.Apply(ctx, monitoring...); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Minute, "monitoring.coreos.com served", func(ctx context.Context) error {
		rules := &unstructured.UnstructuredList{}
		rules.SetGroupVersionKind(schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRuleList"})
		return hub.List(ctx, rules)
	})
	// The console's kinds, which the bundle's ConsolePlugin needs: OpenShift's
	// own CRDs, from the openshift/api module.
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/openshift/api").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/openshift/api: %v", err)
	}
	console, err := localfleet.ReadManifestDir(os.DirFS(filepath.Join(strings.TrimSpace(string(out)), "console", "v1")), "zz_generated.crd-manifests")
	if err != nil {
		t.Fatal(err)
	}
	if err := applier.Apply(ctx, console...); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Minute, "console.openshift.io served", func(ctx context.Context) error {
		plugins := &unstructured.UnstructuredList{}
		plugins.SetGroupVersionKind(schema.GroupVersionKind{Group: "console.openshift.io", Version: "v1", Kind: "ConsolePluginList"})
		return hub.List(ctx, plugins)
	})
	createNamespace(t, hub, olmNamespace)
	olm := startOLMOperator(t, filepath.Join(olmDir, "olm"), fleet)
	phase("OLM CRDs, the monitoring and console CRDs and olm-operator")

	// What the cluster administrator does: a namespace and an OperatorGroup
	// that the CSV's install modes allow; then what OLM's catalog-operator
	// does for a Subscription: its InstallPlan's steps.
	namespace := suggestedNamespace(t)
	steps := installPlanSteps(t, filepath.Join(olmDir, "olm-installplan"), namespace)
	csv := stepCSV(t, steps)
	createNamespace(t, hub, namespace)
	og := operatorGroup(t, csv, namespace)
	if err := hub.Create(ctx, og); err != nil {
		t.Fatal(err)
	}
	executePlan(t, applier, hub, steps, namespace, csv.Name)
	// What the admin applies after OLM (docs/install.md): the hub objects
	// of kinds a bundle cannot carry. Their RBAC and ServiceAccount are
	// not among them: OLM made those from the bundle.
	if err := applier.Apply(ctx, postInstallObjects(t)...); err != nil {
		t.Fatal(err)
	}
	// What OpenShift's service-ca operator does for the console's Service
	// (annotation service.beta.openshift.io/serving-cert-secret-name): its
	// serving certificate Secret, which the asset server mounts.
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("hcp-fleet-console."+namespace+".svc", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "hcp-fleet-console-cert"},
		Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM}}); err != nil {
		t.Fatal(err)
	}
	phase("OperatorGroup, the InstallPlan's steps, the post-install objects")

	// Only the hub OLM installs runs: none in-process, none from manifests/.
	product, err := hcpfleet.Start(fleet, hcpfleet.Options{HubFromDeployment: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(product.Stop)
	eventually(t, olm, stepTimeout, "CSV "+csv.Name+" Succeeded", func(ctx context.Context) error {
		got := &operatorsv1alpha1.ClusterServiceVersion{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: namespace, Name: csv.Name}, got); err != nil {
			return err
		}
		if got.Status.Phase != operatorsv1alpha1.CSVPhaseSucceeded {
			return fmt.Errorf("phase %q (%s): %s", got.Status.Phase, got.Status.Reason, got.Status.Message)
		}
		return nil
	})
	phase("CSV Succeeded")
	checkInstallStrategy(t, hub, csv, namespace)

	// The hub from the CSV at work: the add-on on the management cluster,
	// then a HostedClusterDeployment scheduled onto it.
	if err := hcpfleet.EnableOnAll(ctx, fleet); err != nil {
		t.Fatal(err)
	}
	host := fleet.Managed[0].Name
	eventually(t, olm, stepTimeout, "hcp-fleet add-on ready on "+host, func(ctx context.Context) error {
		if err := fleet.Err(); err != nil {
			return err
		}
		return hcpfleet.HostReady(ctx, hub, host)
	})
	phase("add-on Available on " + host + ", HyperShift operator installed")
	if _, err := hcpfleet.ApplyDir(ctx, fleet, examplesDir); err != nil {
		t.Fatal(err)
	}
	var hcdNamespace string
	examples, _ := localfleet.ReadManifestDir(os.DirFS(examplesDir), ".")
	for _, o := range examples {
		if o.GetKind() == "HostedClusterDeployment" && o.GetName() == scheduledHCD {
			hcdNamespace = o.GetNamespace()
		}
	}
	eventually(t, olm, stepTimeout, "HostedClusterDeployment "+scheduledHCD+" scheduled", func(ctx context.Context) error {
		hcd := &v1alpha1.HostedClusterDeployment{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: hcdNamespace, Name: scheduledHCD}, hcd); err != nil {
			return err
		}
		c := meta.FindStatusCondition(hcd.Status.Conditions, v1alpha1.ConditionScheduled)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("condition Scheduled: %+v", c)
		}
		if hcd.Status.HostingCluster != host {
			return fmt.Errorf("status.hostingCluster %q, want %q", hcd.Status.HostingCluster, host)
		}
		return nil
	})
	phase("HostedClusterDeployment scheduled by the hub from the CSV")
	t.Logf("%-62s %5.1fs", "total", time.Since(began).Seconds())
}

// olmOperator is the running olm-operator process.
type olmOperator struct {
	log  string
	done chan struct{}
	err  error
}

// exited reports why olm-operator ended, if it did.
func (o *olmOperator) exited() error {
	select {
	case <-o.done:
		return fmt.Errorf("olm-operator exited: %v (log: %s)", o.err, o.log)
	default:
		return nil
	}
}

// startOLMOperator runs olm-operator against the hub as a cluster
// administrator, as OLM's own deployment runs it, watching every namespace,
// with no OpenShift ClusterOperator status; its log goes to the fleet's log
// directory. It is stopped when the test ends.
func startOLMOperator(t *testing.T, binary string, fleet *localfleet.Fleet) *olmOperator {
	t.Helper()
	o := &olmOperator{log: filepath.Join(fleet.LogDir, "olm-operator.log"), done: make(chan struct{})}
	out, err := os.Create(o.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--namespace="+olmNamespace, "--writeStatusName=")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+fleet.Hub.KubeconfigPath)
	cmd.Stdout, cmd.Stderr = out, out
	// Never outlive the test process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		o.err = cmd.Wait()
		_ = out.Close()
		close(o.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-o.done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-o.done
		}
	})
	return o
}

// postInstallKinds are the kinds of manifests/hub that OLM cannot install
// from a bundle (its catalog-operator creates only CRDs, RBAC,
// ServiceAccounts, Services, Secrets, ConfigMaps and a few monitoring and
// console kinds); hack/bundle leaves them out and the admin applies them.
var postInstallKinds = map[string]bool{
	"Namespace": true, "ClusterManagementAddOn": true, "Placement": true, "ManagedClusterSetBinding": true, "HostingConfig": true,
}

func postInstallObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := localfleet.ReadManifestDir(manifests.Hub, "hub")
	if err != nil {
		t.Fatal(err)
	}
	var post []*unstructured.Unstructured
	for _, o := range objs {
		if postInstallKinds[o.GetKind()] {
			post = append(post, o)
		}
	}
	return post
}

// suggestedNamespace is the namespace the bundle's CSV asks to be installed
// in (operatorframework.io/suggested-namespace, the console's default), else
// the hub's default namespace (what the CSV's description asks for).
func suggestedNamespace(t *testing.T) string {
	t.Helper()
	objs, err := localfleet.ReadManifestDir(os.DirFS(bundleDir), "manifests")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == operatorsv1alpha1.ClusterServiceVersionKind {
			if ns := o.GetAnnotations()["operatorframework.io/suggested-namespace"]; ns != "" {
				return ns
			}
			return hcpfleet.HubNamespace
		}
	}
	t.Fatalf("no ClusterServiceVersion in %s/manifests", bundleDir)
	return ""
}

// installPlanSteps resolves the bundle's InstallPlan steps for namespace
// with OLM's resolver (hack/olm/olm-installplan).
func installPlanSteps(t *testing.T, binary, namespace string) []operatorsv1alpha1.StepResource {
	t.Helper()
	cmd := exec.Command(binary, "--bundle="+bundleDir, "--namespace="+namespace)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", binary, err, stderr.String())
	}
	var steps []operatorsv1alpha1.StepResource
	if err := json.Unmarshal(out, &steps); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range steps {
		names = append(names, s.Kind+"/"+s.Name)
	}
	t.Logf("InstallPlan steps (OLM's resolver): %s", strings.Join(names, ", "))
	return steps
}

func stepCSV(t *testing.T, steps []operatorsv1alpha1.StepResource) *operatorsv1alpha1.ClusterServiceVersion {
	t.Helper()
	for _, s := range steps {
		if s.Kind == operatorsv1alpha1.ClusterServiceVersionKind {
			csv := &operatorsv1alpha1.ClusterServiceVersion{}
			if err := json.Unmarshal([]byte(s.Manifest), csv); err != nil {
				t.Fatal(err)
			}
			return csv
		}
	}
	t.Fatal("the InstallPlan has no ClusterServiceVersion step")
	return nil
}

// operatorGroup is the OperatorGroup an administrator creates for the CSV:
// own namespace when its install modes allow it, else all namespaces.
func operatorGroup(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion, namespace string) *operatorsv1.OperatorGroup {
	t.Helper()
	supported := map[operatorsv1alpha1.InstallModeType]bool{}
	for _, m := range csv.Spec.InstallModes {
		supported[m.Type] = m.Supported
	}
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "hcp-fleet"}}
	switch {
	case supported[operatorsv1alpha1.InstallModeTypeOwnNamespace]:
		og.Spec.TargetNamespaces = []string{namespace}
	case supported[operatorsv1alpha1.InstallModeTypeAllNamespaces]:
	default:
		t.Fatalf("CSV %s supports neither OwnNamespace nor AllNamespaces: %+v", csv.Name, csv.Spec.InstallModes)
	}
	return og
}

// executePlan creates the steps' objects as the catalog-operator's
// ExecutePlan does, kind by kind: every object labeled olm.managed=true
// (olm-operator watches only those), namespaced ones in the install
// namespace (the resolver leaves the namespace of some ServiceAccounts
// empty), the bundle's namespaced objects (Services, ConfigMaps, Secrets)
// owned by the CSV, and the CSV's UID filled into the owner references the
// resolver leaves without one (the RBAC it derives from the install
// strategy). Server-side apply stands for its create-or-update; the CRDs and
// the CSV go first (Established before what follows), as their UID is needed.
func executePlan(t *testing.T, applier *localfleet.Applier, hub client.Client, steps []operatorsv1alpha1.StepResource, namespace string, csvName string) {
	t.Helper()
	ctx := t.Context()
	var first, rest []*unstructured.Unstructured
	for _, s := range steps {
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(s.Manifest), &obj.Object); err != nil {
			t.Fatalf("step %s: %v", s, err)
		}
		// The resolver encodes the RBAC it derives without its type; the
		// step names it (BundleSecret is OLM's name for a bundle's Secret).
		kind := s.Kind
		if kind == "BundleSecret" {
			kind = "Secret"
		}
		obj.SetGroupVersionKind(schema.GroupVersionKind{Group: s.Group, Version: s.Version, Kind: kind})
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["olm.managed"] = "true"
		obj.SetLabels(labels)
		switch obj.GetKind() {
		case "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PriorityClass":
			obj.SetNamespace("")
		default:
			obj.SetNamespace(namespace)
		}
		switch obj.GetKind() {
		case "CustomResourceDefinition", operatorsv1alpha1.ClusterServiceVersionKind:
			first = append(first, obj)
		default:
			rest = append(rest, obj)
		}
	}
	if err := applier.Apply(ctx, first...); err != nil {
		t.Fatal(err)
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: namespace, Name: csvName}, csv); err != nil {
		t.Fatal(err)
	}
	owner := metav1.OwnerReference{
		APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: operatorsv1alpha1.ClusterServiceVersionKind,
		Name: csv.Name, UID: csv.UID, BlockOwnerDeletion: ptr.To(false), Controller: ptr.To(false),
	}
	for _, obj := range rest {
		refs := obj.GetOwnerReferences()
		switch obj.GetKind() {
		case "Service", "ConfigMap", "Secret":
			if !ownedByCSV(obj) {
				refs = append(refs, owner)
			}
		}
		for i := range refs {
			if refs[i].Kind == operatorsv1alpha1.ClusterServiceVersionKind && refs[i].Name == csv.Name {
				refs[i].UID = csv.UID
			}
		}
		obj.SetOwnerReferences(refs)
	}
	if err := applier.Apply(ctx, rest...); err != nil {
		t.Fatal(err)
	}
}

func ownedByCSV(obj *unstructured.Unstructured) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == operatorsv1alpha1.ClusterServiceVersionKind {
			return true
		}
	}
	return false
}

// checkInstallStrategy checks what olm-operator made of the install
// strategy: each Deployment it owns, available, running as the strategy's
// ServiceAccount, whose every role binding is one OLM made for this CSV.
func checkInstallStrategy(t *testing.T, hub client.Client, csv *operatorsv1alpha1.ClusterServiceVersion, namespace string) {
	t.Helper()
	ctx := t.Context()
	specs := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(specs) == 0 {
		t.Fatalf("CSV %s has no deployments in its install strategy", csv.Name)
	}
	crbs := &rbacv1.ClusterRoleBindingList{}
	if err := hub.List(ctx, crbs); err != nil {
		t.Fatal(err)
	}
	rbs := &rbacv1.RoleBindingList{}
	if err := hub.List(ctx, rbs); err != nil {
		t.Fatal(err)
	}
	for _, spec := range specs {
		d := &appsv1.Deployment{}
		if err := hub.Get(ctx, types.NamespacedName{Namespace: namespace, Name: spec.Name}, d); err != nil {
			t.Fatalf("the install strategy's Deployment: %v", err)
		}
		if d.Labels["olm.owner"] != csv.Name || d.Labels["olm.owner.kind"] != operatorsv1alpha1.ClusterServiceVersionKind || d.Labels["olm.deployment-spec-hash"] == "" {
			t.Errorf("Deployment %s was not made by olm-operator for CSV %s: labels %v", d.Name, csv.Name, d.Labels)
		}
		c := deploymentCondition(d, appsv1.DeploymentAvailable)
		if c == nil || c.Status != corev1.ConditionTrue || d.Status.ObservedGeneration != d.Generation {
			t.Errorf("Deployment %s: Available %+v, observedGeneration %d of %d", d.Name, c, d.Status.ObservedGeneration, d.Generation)
		}
		sa := d.Spec.Template.Spec.ServiceAccountName
		if sa == "" || sa == "default" {
			t.Errorf("Deployment %s runs as ServiceAccount %q, not one of the bundle's", d.Name, sa)
			continue
		}
		bound := 0
		for _, b := range crbs.Items {
			if boundTo(b.Subjects, namespace, sa) {
				bound++
				checkOLMOwned(t, "ClusterRoleBinding "+b.Name, b.Labels, csv.Name)
			}
		}
		for _, b := range rbs.Items {
			if boundTo(b.Subjects, namespace, sa) {
				bound++
				checkOLMOwned(t, "RoleBinding "+b.Namespace+"/"+b.Name, b.Labels, csv.Name)
			}
		}
		if bound == 0 {
			t.Errorf("no role is bound to ServiceAccount %s/%s", namespace, sa)
		}
		t.Logf("Deployment %s (by olm-operator) runs as %s/%s, bound by %d bindings OLM made for %s", d.Name, namespace, sa, bound, csv.Name)
	}
}

func checkOLMOwned(t *testing.T, what string, labels map[string]string, csvName string) {
	t.Helper()
	if labels["olm.owner"] != csvName || labels["olm.owner.kind"] != operatorsv1alpha1.ClusterServiceVersionKind {
		t.Errorf("%s binds the hub's ServiceAccount but is not OLM's for CSV %s: labels %v", what, csvName, labels)
	}
}

func boundTo(subjects []rbacv1.Subject, namespace, sa string) bool {
	for _, s := range subjects {
		if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == namespace && s.Name == sa {
			return true
		}
	}
	return false
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

func createNamespace(t *testing.T, hub client.Client, name string) {
	t.Helper()
	if err := client.IgnoreAlreadyExists(hub.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it returns nil; it fails the test with cond's
// last error when timeout passes or at once when olm-operator exits.
func eventually(t *testing.T, olm *olmOperator, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := olm.exited(); err != nil {
			return false, err
		}
		last = cond(ctx)
		return last == nil, nil
	})
	if err != nil {
		if last != nil && !errors.Is(err, last) {
			err = fmt.Errorf("%w; last: %w", err, last)
		}
		t.Fatalf("%s: not after %s: %v (olm-operator log: %s)", what, timeout, err, olm.log)
	}
}
