//go:build integration

package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/poll"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/consoleapi"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
	olmhub "github.com/hcp-fleet/hcp-fleet/pkg/olm/hub"
)

// The tenant is user alice in group team-a, bound to hcp-fleet:tenant in
// namespace team-a only (manifests/hub/50-tenant-clusterrole.yaml);
// team-b's deployment is one she must not see.
const (
	tenantNS    = "team-a"
	otherNS     = "team-b"
	tenantUser  = "alice"
	rolloutName = "hold-4-18"
	cordonedMC  = "cluster-2"
	pluginName  = "hcp-fleet"
	enableEnv   = "HCPFLEET_CONSOLE_TEST"
	pageTimeout = 4 * time.Minute
)

var (
	env   *fleettest.Env
	admin client.Client
	// repo is the repository root (the test runs in test/console).
	repo = filepath.Join("..", "..")
)

func TestMain(m *testing.M) {
	// Under `make test` the browser test does not run, and starts no
	// fleet: `make console-test` builds the plugin and sets enableEnv.
	if os.Getenv(enableEnv) == "" {
		os.Exit(m.Run())
	}
	fleettest.Main(m, 2, func(e *fleettest.Env) {
		env = e
		var err error
		if admin, err = client.New(e.Fleet.Hub.Config(), client.Options{Scheme: hub.Scheme}); err != nil {
			panic(err)
		}
		if err := setUp(context.Background()); err != nil {
			panic(fmt.Sprintf("setting up the fleet: %v", err))
		}
	})
}

// setUp enables the add-on on both management clusters, creates the two
// tenants' namespaces with a HostedClusterDeployment each, waits until both
// are bound, then cordons cluster-2 (after binding, so that the cordon only
// shows, and changes no placement).
func setUp(ctx context.Context) error {
	if err := hcpfleet.EnableOnAll(ctx, env.Fleet); err != nil {
		return err
	}
	if err := hcpfleet.WaitHostsReady(ctx, env.Fleet, admin, os.Stdout, 5*time.Minute); err != nil {
		return err
	}
	for _, ns := range []string{tenantNS, otherNS} {
		if err := fleettest.Tenant(ctx, admin, ns); err != nil {
			return err
		}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hcp-fleet-tenant"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hcp-fleet:tenant"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: ns}}}
		if err := admin.Create(ctx, rb); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		if err := admin.Create(ctx, fleettest.HCD(ns, hcdName(ns))); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	err := poll.Wait(5*time.Minute, func(ctx context.Context) error {
		for _, ns := range []string{tenantNS, otherNS} {
			h := &v1alpha1.HostedClusterDeployment{}
			if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: hcdName(ns)}, h); err != nil {
				return err
			}
			if h.Status.HostingCluster == "" || h.Status.KubeconfigSecret == nil {
				return fmt.Errorf("%s/%s: not bound or no kubeconfig yet (phase %s)", ns, h.Name, h.Phase())
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// A paused ReleaseRollout in the tenant's namespace: it shows on the
	// rollouts page and moves nothing.
	rr := &v1alpha1.ReleaseRollout{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: rolloutName},
		Spec: v1alpha1.ReleaseRolloutSpec{Release: v1alpha1.RolloutRelease{Image: fleettest.Release}, Paused: true,
			// The typed client sends a zero IntOrString as "", which the
			// CRD refuses; the default is 1.
			MaxUnavailable: intstr.FromInt32(1)}}
	if err := admin.Create(ctx, rr); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	// OCM's controllers write the ManagedCluster too: retried on conflict.
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := admin.Get(ctx, types.NamespacedName{Name: cordonedMC}, mc); err != nil {
			return err
		}
		mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: hosting.TaintUnschedulable, Effect: clusterv1.TaintEffectNoSelect})
		return admin.Update(ctx, mc)
	})
}

func hcdName(ns string) string { return strings.TrimPrefix(ns, "team-") + "-cluster" }

// createdHCD is the deployment the tenant creates with the form.
const createdHCD = "formed-cluster"

// publishReleases serves Hive's ClusterImageSets on the hub, as ACM does,
// with one release the built-in tenant policy allows and one from another
// registry, which it does not.
func publishReleases(ctx context.Context, t *testing.T) {
	t.Helper()
	env.ServeClusterImageSets(t)
	for name, image := range map[string]string{
		"img4.18.5-multi-appsub": fleettest.Release,
		"elsewhere-4.18.5":       "registry.example.com/ocp-release:4.18.5-multi",
	} {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"releaseImage": image}}}
		u.SetGroupVersionKind(olmhub.ClusterImageSetGVK)
		u.SetName(name)
		if err := admin.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// page is one page the browser visits, the selectors whose presence says
// its data (or the API server's refusal) arrived, and what the user then
// does on it.
type page struct {
	Name    string   `json:"name"`
	Path    string   `json:"path"`
	WaitFor []string `json:"waitFor"`
	Actions []action `json:"actions,omitempty"`
}

// action is one step of a user on a page, in order: replace an input's
// text (Fill: selector, text), choose an option of a select (Select:
// selector, value), click, or wait for selectors (the positive signal that
// the step's answer arrived).
type action struct {
	Fill    []string `json:"fill,omitempty"`
	Select  []string `json:"select,omitempty"`
	Click   string   `json:"click,omitempty"`
	WaitFor []string `json:"waitFor,omitempty"`
}

type visit struct {
	Name       string `json:"name"`
	Text       string `json:"text"`
	Screenshot string `json:"screenshot"`
	Error      string `json:"error"`
}

// TestPluginAsAdminAndTenant loads the built plugin in headless Chromium as
// the hub admin and as a tenant, and checks what each page shows: the admin
// sees every management cluster (cluster-2 cordoned) with the hosted
// clusters on it and every namespace's deployments; the tenant sees its own
// namespace's deployment, and the API server's refusal for management
// clusters, all namespaces and the other tenant's deployment.
func TestPluginAsAdminAndTenant(t *testing.T) {
	if env == nil {
		t.Skipf("the console browser test runs under `make console-test` (%s=1, after `make console`)", enableEnv)
	}
	ctx := context.Background()
	a, b := &v1alpha1.HostedClusterDeployment{}, &v1alpha1.HostedClusterDeployment{}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: tenantNS, Name: hcdName(tenantNS)}, a); err != nil {
		t.Fatal(err)
	}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: otherNS, Name: hcdName(otherNS)}, b); err != nil {
		t.Fatal(err)
	}
	aDetails := "/hcpfleet/ns/" + tenantNS + "/hostedclusterdeployments/" + a.Name
	bDetails := "/hcpfleet/ns/" + otherNS + "/hostedclusterdeployments/" + b.Name
	// Absolute: the browser runs in console/.
	shots, err := filepath.Abs(filepath.Join(repo, "bin", "console-screenshots"))
	if err != nil {
		t.Fatal(err)
	}
	// The plugin comes from the shipped asset server, as the console's
	// proxy fetches it from the ConsolePlugin's Service.
	dist, err := filepath.Abs(filepath.Join(repo, "console", "dist"))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	assets, err := StartAssetServer(repo, t.TempDir(), dist)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(assets.Stop)
	t.Logf("hcp-fleet-console built and serving in %s", time.Since(began).Round(time.Millisecond))
	plugin := assets.Proxy("/api/plugins/" + pluginName + "/")
	pool := a.Spec.NodePools[0].Name
	// The create form (tenant, below) offers the releases ClusterImageSets
	// publish that the tenant's policy (the built-in one: the official
	// repository) allows. Published before any page, as they decide the
	// rollout's state too.
	publishReleases(ctx, t)
	// The rollouts page shows the hub's word on the rollout: wait until it
	// has settled. Until the release was published the hub held the
	// rollout invalid, and it looks again on any change in the namespace, so
	// a state read earlier could change between two pages: touch the
	// rollout and wait for the one state it keeps (its only hosted cluster
	// already runs the release).
	rolloutKey := types.NamespacedName{Namespace: tenantNS, Name: rolloutName}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rr := &v1alpha1.ReleaseRollout{}
		if err := admin.Get(ctx, rolloutKey, rr); err != nil {
			return err
		}
		metav1.SetMetaDataAnnotation(&rr.ObjectMeta, "test.hcpfleet.io/releases-published", "true")
		return admin.Update(ctx, rr)
	}); err != nil {
		t.Fatal(err)
	}
	rolloutState := v1alpha1.ReasonRolloutCompleted
	poll.Until(t, 2*time.Minute, "the ReleaseRollout "+rolloutState, func(ctx context.Context) error {
		rr := &v1alpha1.ReleaseRollout{}
		if err := admin.Get(ctx, rolloutKey, rr); err != nil {
			return err
		}
		for _, c := range rr.Status.Conditions {
			if c.Type == v1alpha1.ConditionRolloutProgressing && c.Reason == rolloutState {
				return nil
			}
		}
		return fmt.Errorf("not %s yet: %+v", rolloutState, rr.Status)
	})

	// The hub's console endpoint, served with the hub's identity (its
	// shipped RBAC) and asked, through the ConsolePlugin's proxy, with a
	// token of the page's user: the API server authenticates tokens, not
	// impersonation, so the admin and alice each have a ServiceAccount
	// standing for them with the same rights (cluster-admin; hcp-fleet:tenant
	// in team-a).
	hubAPI := startConsoleAPI(t)
	adminToken := serviceAccountToken(ctx, t, "default", "console-admin", &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "console-admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "console-admin"}}})
	tenantToken := serviceAccountToken(ctx, t, tenantNS, tenantUser, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: "console-" + tenantUser},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hcp-fleet:tenant"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: tenantNS, Name: tenantUser}}})
	hubProxy := func(token string) http.Handler {
		h, err := HubProxy(pluginName, hubAPI.URL, hubAPI.Client(), token)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}

	t.Run("admin", func(t *testing.T) {
		got := browse(t, Identity{}, "admin", shots, plugin, hubProxy(adminToken), []page{
			{"fleet", "/hcpfleet/fleet", []string{"[data-test=host-cluster-1]", "[data-test=cordoned]", "[data-test=hosts] a"}, nil},
			{"hcds", "/hcpfleet/all-namespaces/hostedclusterdeployments", []string{"[data-test=hcd-" + a.Name + "]", "[data-test=hcd-" + b.Name + "]"}, nil},
			{"hcd", aDetails, []string{"[data-test=condition-Scheduled]", "[data-test=events]", "[data-test=explanation-decision]"}, nil},
			{"rollouts", "/hcpfleet/all-namespaces/rollouts", []string{"[data-test=rollout-" + rolloutName + "]", "[data-test=none-hostedclusterextensions]"}, nil},
		})
		contains(t, got["rollouts"], rolloutName, tenantNS, fleettest.Release, rolloutState, "No HostedClusterExtensions.")
		contains(t, got["fleet"], "cluster-1", "cluster-2", "Cordoned", "Available", tenantNS+"/"+a.Name, otherNS+"/"+b.Name)
		contains(t, got["hcds"], a.Name, b.Name, a.Status.HostingCluster)
		contains(t, got["hcd"], a.Status.HostingCluster, a.Status.KubeconfigSecret.Name, "Scheduled", a.Name+"-workers",
			"Scheduled is True", "management cluster "+a.Status.HostingCluster)
		// The scheduler's explanation from the hub: where it is bound, the
		// candidates (cluster-1 is one whatever the cordon of cluster-2
		// did to the Placement's decisions) and explain's text.
		contains(t, got["hcd"], "Why not there", "Bound to "+a.Status.HostingCluster, "cluster-1", "DECISION: ")
	})

	createPath := "/hcpfleet/ns/" + tenantNS + "/create-hostedclusterdeployment"
	createReady := []string{"[data-test=create-form]", `[data-test=create-release] option[value="` + fleettest.Release + `"]`,
		"[data-test=create-placement] option[value=hosts]", "[data-test=create-platform] option[value=None]"}
	create := func(name string, answer string) []action {
		return []action{
			{Fill: []string{"[data-test=create-name]", name}},
			{Select: []string{"[data-test=create-platform]", "None"}},
			{Fill: []string{"[data-test=create-baseDomain]", "example.com"}},
			{Fill: []string{"[data-test=create-pullSecret]", `{"auths":{}}`}},
			{Click: "[data-test=create-submit]"},
			{WaitFor: []string{answer}},
		}
	}

	t.Run("tenant", func(t *testing.T) {
		got := browse(t, Identity{User: tenantUser, Groups: []string{tenantNS, "system:authenticated"}}, "tenant", shots, plugin, hubProxy(tenantToken), []page{
			{"fleet", "/hcpfleet/fleet", []string{"[data-test=load-error]"}, nil},
			{"hcds", "/hcpfleet/ns/" + tenantNS + "/hostedclusterdeployments", []string{"[data-test=hcd-" + a.Name + "]"}, nil},
			{"hcds-all", "/hcpfleet/all-namespaces/hostedclusterdeployments", []string{"[data-test=load-error]"}, nil},
			{"hcd", aDetails, []string{"[data-test=condition-Scheduled]", "[data-test=events]", "[data-test=explanation-decision]"}, nil},
			{"hcd-other", bDetails, []string{"[data-test=load-error]"}, nil},
			{"rollouts", "/hcpfleet/ns/" + tenantNS + "/rollouts", []string{"[data-test=rollout-" + rolloutName + "]", "[data-test=none-hostedclusterextensions]"}, nil},
			{"rollouts-all", "/hcpfleet/all-namespaces/rollouts", []string{"[data-test=section-releaserollouts] [data-test=load-error]",
				"[data-test=section-hostedclusterextensions] [data-test=load-error]"}, nil},
			// The tenant scales its node pool from 2 to 3: the page patches
			// the deployment as alice, and says so once the API server
			// accepted it.
			{"hcd-scale", aDetails, []string{"[data-test=scale-input-" + pool + "]"}, []action{
				{Fill: []string{"[data-test=scale-input-" + pool + "]", "3"}},
				{Click: "[data-test=scale-" + pool + "]"},
				{WaitFor: []string{"[data-test=scaled-" + pool + "]"}},
			}},
			// The tenant creates a deployment with the form (as alice,
			// who may not read the policy or the ClusterImageSets), then
			// one named like her existing one, which the API server
			// refuses; the list shows the new one.
			{"create", createPath, createReady, create(createdHCD, "[data-test=created]")},
			{"create-refused", createPath, createReady, create(a.Name, "[data-test=create-error]")},
			{"hcds-created", "/hcpfleet/ns/" + tenantNS + "/hostedclusterdeployments", []string{"[data-test=hcd-" + createdHCD + "]"}, nil},
		})
		contains(t, got["fleet"], `User "alice" cannot list resource "managedclusters"`)
		absent(t, got["fleet"], "cluster-1", "Cordoned")
		contains(t, got["hcds"], a.Name, a.Status.HostingCluster)
		absent(t, got["hcds"], b.Name)
		contains(t, got["hcds-all"], `cannot list resource "hostedclusterdeployments"`)
		contains(t, got["hcd"], a.Status.KubeconfigSecret.Name, "Scheduled", "Scheduled is True")
		// The tenant, who may not list the management clusters, gets the
		// scheduler's explanation from the hub.
		contains(t, got["hcd"], "Why not there", "Bound to "+a.Status.HostingCluster, "cluster-1", "DECISION: ")
		absent(t, got["hcd"], b.Name)
		contains(t, got["hcd-other"], `cannot get resource "hostedclusterdeployments"`)
		absent(t, got["hcd-other"], b.Status.KubeconfigSecret.Name)
		contains(t, got["rollouts"], rolloutName, rolloutState)
		contains(t, got["rollouts-all"], `cannot list resource "releaserollouts"`, `cannot list resource "hostedclusterextensions"`)
		contains(t, got["hcd-scale"], "requested 3")
		contains(t, got["create"], "Created "+createdHCD, "the built-in default tenant policy")
		contains(t, got["create-refused"], `hostedclusterdeployments.hcpfleet.io "`+a.Name+`" already exists`)
		contains(t, got["hcds-created"], createdHCD, a.Name)
		// What the form sent reached the hub as alice's: the deployment on
		// the offered release and Placement, and its pull secret, owned by
		// it.
		created := &v1alpha1.HostedClusterDeployment{}
		if err := admin.Get(ctx, types.NamespacedName{Namespace: tenantNS, Name: createdHCD}, created); err != nil {
			t.Fatal(err)
		}
		if created.Spec.Placement != "hosts" || created.Spec.HostedCluster.Spec.Release.Image != fleettest.Release ||
			created.Spec.HostedCluster.Spec.PullSecret.Name != createdHCD+"-pull-secret" {
			t.Errorf("created %+v", created.Spec)
		}
		secret := &corev1.Secret{}
		if err := admin.Get(ctx, types.NamespacedName{Namespace: tenantNS, Name: createdHCD + "-pull-secret"}, secret); err != nil {
			t.Fatal(err)
		}
		if refs := secret.OwnerReferences; len(refs) != 1 || refs[0].UID != created.UID || secret.Type != corev1.SecretTypeDockerConfigJson {
			t.Errorf("pull secret %s owned by %+v, want %s's uid %s", secret.Type, refs, createdHCD, created.UID)
		}
		// The patch reached the hub as the tenant's: the spec says 3.
		poll.Until(t, time.Minute, "the scaled node pool in the spec", func(ctx context.Context) error {
			h := &v1alpha1.HostedClusterDeployment{}
			if err := admin.Get(ctx, types.NamespacedName{Namespace: tenantNS, Name: a.Name}, h); err != nil {
				return err
			}
			if r := h.Spec.NodePools[0].Spec.Replicas; r == nil || *r != 3 {
				return fmt.Errorf("spec.nodePools[0].spec.replicas %v, want 3", r)
			}
			return nil
		})
	})
}

// browse serves the host page, the built plugin, the hub proxy as id and
// the hub's console endpoint through hubAPI (with id's token),
// and has the browser visit pages; it returns each page's text by name.
func browse(t *testing.T, id Identity, who, shots string, plugin, hubAPI http.Handler, pages []page) map[string]string {
	t.Helper()
	for _, dir := range []string{"console/dist/plugin-manifest.json", "console/dist-host/host.js"} {
		if _, err := os.Stat(filepath.Join(repo, dir)); err != nil {
			t.Fatalf("%v: run `make console` first", err)
		}
	}
	kube, err := KubeProxy(env.Fleet.Hub.Config(), id)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(HostHandler(repo, pluginName, kube, plugin, hubAPI))
	defer srv.Close()

	in, err := json.Marshal(pages)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(pages)+1)*pageTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "test/browser.mjs", srv.URL, who, shots)
	cmd.Dir = filepath.Join(repo, "console")
	cmd.Env = append(os.Environ(), fmt.Sprintf("CONSOLE_TEST_PAGE_TIMEOUT_MS=%d", pageTimeout.Milliseconds()))
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	began := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("browser: %v\n%s", err, stderr.String())
	}
	t.Logf("browser as %s: %d pages in %s", who, len(pages), time.Since(began).Round(time.Millisecond))
	var visits []visit
	if err := json.Unmarshal(stdout.Bytes(), &visits); err != nil {
		t.Fatalf("browser report: %v\n%s", err, stdout.String())
	}
	got := map[string]string{}
	for _, v := range visits {
		if v.Error != "" {
			t.Errorf("%s %s: %s\npage text:\n%s", who, v.Name, v.Error, v.Text)
		}
		got[v.Name] = v.Text
	}
	return got
}

func contains(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("page does not show %q; it shows:\n%s", w, text)
		}
	}
}

func absent(t *testing.T, text string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(text, w) {
			t.Errorf("page shows %q; it must not:\n%s", w, text)
		}
	}
}

// HostHandler serves the test host as the console serves itself and its
// plugins: the host page for every app path, its script and PatternFly's
// styles under /static/, the plugin under /api/plugins/<name>/ (assets: a
// proxy to the asset server, as the console proxies to the plugin's
// Service), the hub under /api/kubernetes/, and the hub's console endpoint
// under the ConsolePlugin's proxy alias hub.
func HostHandler(repo, plugin string, kube, assets, hub http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/api/kubernetes/", kube)
	mux.Handle("/api/proxy/plugin/"+plugin+"/hub/", hub)
	mux.Handle("/api/plugins/"+plugin+"/", assets)
	mux.Handle("/static/patternfly/", http.StripPrefix("/static/patternfly/",
		http.FileServer(http.Dir(filepath.Join(repo, "console", "node_modules", "@patternfly", "patternfly")))))
	mux.Handle("/static/", http.StripPrefix("/static/", http.FileServer(http.Dir(filepath.Join(repo, "console", "dist-host")))))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(repo, "console", "test", "host", "index.html"))
	})
	return mux
}

// startConsoleAPI serves the hub's console endpoint (consoleapi) over TLS
// with the hub's own identity and the local fleet hub's settings.
func startConsoleAPI(t *testing.T) *httptest.Server {
	t.Helper()
	hubCfg, err := hcpfleet.HubConfig(context.Background(), env.Fleet)
	if err != nil {
		t.Fatal(err)
	}
	reader, err := client.New(hubCfg, client.Options{Scheme: hub.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	settings := fleetview.HubSettings{Strategy: scheduling.StrategySpread, ConfigNamespaces: hostmodel.ConfigNamespaces{Hub: addon.DefaultHubNamespace}}
	h, err := consoleapi.NewHandler(hubCfg, reader, settings)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// serviceAccountToken creates ServiceAccount namespace/name with binding
// and returns a token of it.
func serviceAccountToken(ctx context.Context, t *testing.T, namespace, name string, binding client.Object) string {
	t.Helper()
	for _, o := range []client.Object{&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}, binding} {
		if err := admin.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	kube, err := kubernetes.NewForConfig(env.Fleet.Hub.Config())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}
