//go:build integration

package addon_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"open-cluster-management.io/addon-framework/pkg/agent"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/assistedtest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/rbacmatrix"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// securityDoc holds the permission tables the identities are checked
// against.
const securityDoc = "../../docs/security.md"

// verbs asked about for every resource: the usual ones and the
// privilege-bearing special verbs.
var verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection",
	"bind", "escalate", "impersonate", "approve", "sign", "execute-as"}

// sensitive are resources asked about on every cluster whether or not a
// table mentions them: what an attacker would want.
var sensitive = []string{
	"secrets", "configmaps", "serviceaccounts", "serviceaccounts/token", "pods", "pods/exec", "namespaces", "nodes",
	"events", "events.k8s.io/events", "coordination.k8s.io/leases",
	"rbac.authorization.k8s.io/clusterroles", "rbac.authorization.k8s.io/clusterrolebindings",
	"rbac.authorization.k8s.io/roles", "rbac.authorization.k8s.io/rolebindings",
	"apiextensions.k8s.io/customresourcedefinitions", "apps/deployments", "apps/daemonsets",
	"admissionregistration.k8s.io/validatingwebhookconfigurations", "admissionregistration.k8s.io/mutatingwebhookconfigurations",
	"admissionregistration.k8s.io/validatingadmissionpolicies", "admissionregistration.k8s.io/validatingadmissionpolicybindings",
	"certificates.k8s.io/certificatesigningrequests", "certificates.k8s.io/certificatesigningrequests/approval",
	"certificates.k8s.io/certificatesigningrequests/status", "certificates.k8s.io/signers",
	"users", "groups", "authentication.k8s.io/tokenreviews", "authorization.k8s.io/subjectaccessreviews",
}

var hubResources = []string{
	"cluster.open-cluster-management.io/managedclusters", "cluster.open-cluster-management.io/managedclusters/status",
	"cluster.open-cluster-management.io/managedclustersets", "cluster.open-cluster-management.io/managedclustersets/join",
	"cluster.open-cluster-management.io/managedclustersetbindings", "cluster.open-cluster-management.io/placements",
	"cluster.open-cluster-management.io/placementdecisions", "cluster.open-cluster-management.io/addonplacementscores",
	"work.open-cluster-management.io/manifestworks",
	"addon.open-cluster-management.io/managedclusteraddons", "addon.open-cluster-management.io/managedclusteraddons/status",
	"addon.open-cluster-management.io/clustermanagementaddons", "addon.open-cluster-management.io/addondeploymentconfigs",
	"hcpfleet.io/hostedclusterdeployments", "hcpfleet.io/hostedclusterdeployments/status", "hcpfleet.io/hostingconfigs", "hcpfleet.io/tenantpolicies",
	"hcpfleet.io/hostedclusterextensions", "hcpfleet.io/hostedclusterextensions/status", "apps/controllerrevisions",
	"hcpfleet.io/releaserollouts", "hcpfleet.io/releaserollouts/status",
	"hcpfleet.io/hostedclusterinventories", "hcpfleet.io/hostedclusterinventories/status",
	// The adoption request (docs/operations.md): the adopter creates it,
	// the agent answers it in its own cluster namespace, the hub reads it;
	// a tenant may neither write nor read it.
	"hcpfleet.io/hostedclusteradoptions", "hcpfleet.io/hostedclusteradoptions/status",
	"hcpfleet.io/hostedclusterrelocations", "hcpfleet.io/hostedclusterrelocations/status",
	// ACM's, on hubs that serve it (the import's KlusterletAddonConfigs).
	"agent.open-cluster-management.io/klusterletaddonconfigs",
}

// spokeResources are probed on a management cluster besides the sensitive
// ones: what the agent there writes or an attacker there would want.
var spokeResources = []string{
	"services", "persistentvolumeclaims", "scheduling.k8s.io/priorityclasses", "apps/statefulsets",
	"cluster.open-cluster-management.io/clusterclaims", "work.open-cluster-management.io/appliedmanifestworks",
	"hypershift.openshift.io/hostedclusters", "hypershift.openshift.io/nodepools", "route.openshift.io/routes",
	"kubevirt.io/virtualmachines", "storage.k8s.io/storageclasses",
}

// Namespaces on a management cluster where the agent binds its namespaced
// grants (pkg/kubeutil.BindSelf), as it does when it works there: a hosting
// namespace (the janitor, the kubeconfig export) and a hosted control-plane
// namespace (the CAPI providers and migration).
const (
	hostingNamespace      = "clusters"
	controlPlaneNamespace = "clusters-demo"
	// extensionNamespace is a hosted control-plane namespace where the
	// extension engine works (its grants apart from the CAPI ones, so that
	// each table row says whose it is).
	extensionNamespace = "clusters-ext"
)

// checkLeastPrivilege asks the hub's and a management cluster's API servers
// what each hcp-fleet identity may do, over every cell of verbs ×
// resources × namespaces × names, and compares each answer with the tables
// in docs/security.md. A grant broader than the table, or a table row the
// server denies, fails. The add-on must be running on the first management
// cluster (its agent's grants exist only then); TestAddOnLifecycle calls it.
func checkLeastPrivilege(t *testing.T, c *clients) {
	cluster := fleet.Managed[0].Name
	other := fleet.Managed[1].Name
	c.agentReady(t, cluster)
	doc, err := os.ReadFile(securityDoc)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"<cluster>": cluster, "<hub>": addon.DefaultHubNamespace, "<agent>": addon.DefaultInstallNamespace, "<tenant>": "tenant-a",
		// The default HostingConfig allows the default hosting namespace.
		"<hosting namespaces>": v1alpha1.DefaultHostingNamespace,
		"<hosting namespace>":  hostingNamespace, "<control-plane namespace>": controlPlaneNamespace,
		"<extension namespace>": extensionNamespace,
		"<agent CRDs>":          strings.Join(agentCRDs(t), ","),
	}
	// A tenant team as the admin sets one up: hcp-fleet:tenant bound in its
	// namespace (manifests/hub).
	ctx := context.Background()
	if _, err := c.hubKube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "hcp-fleet-tenant"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hcp-fleet:tenant"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "team-a"}}}
	if _, err := c.hubKube.RbacV1().RoleBindings("tenant-a").Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// A fleet operator who may cordon: hcp-fleet:cordon bound cluster-wide.
	cordoners := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "hcp-fleet-cordon"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hcp-fleet:cordon"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "fleet-operators"}}}
	if _, err := c.hubKube.RbacV1().ClusterRoleBindings().Create(ctx, cordoners, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// A fleet operator who may relocate: hcp-fleet:relocate bound cluster-wide.
	relocators := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "hcp-fleet-relocate"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hcp-fleet:relocate"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "fleet-relocators"}}}
	if _, err := c.hubKube.RbacV1().ClusterRoleBindings().Create(ctx, relocators, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// A fleet operator who may adopt: hcp-fleet:adopt bound cluster-wide.
	adopters := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "hcp-fleet-adopt"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hcp-fleet:adopt"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "fleet-adopters"}}}
	if _, err := c.hubKube.RbacV1().ClusterRoleBindings().Create(ctx, adopters, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Run("ManifestWorks are read only by their cluster's agents", func(t *testing.T) { checkManifestWorkReaders(t, c, cluster, other) })
	t.Run("the hub runs as its ServiceAccount", func(t *testing.T) {
		review, err := kubernetes.NewForConfigOrDie(product.HubIdentity()).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := review.Status.UserInfo.Username, serviceaccount.MakeUsername(hcpfleet.HubNamespace, hcpfleet.HubServiceAccount); got != want {
			t.Errorf("the hub runs as %q, want %q", got, want)
		}
	})
	bindAsAgent(t, fleet.Managed[0].Config(), map[string]string{hostingNamespace: addon.AgentHostingNamespaceRole, controlPlaneNamespace: addon.AgentCAPINamespaceRole,
		extensionNamespace: addon.AgentExtensionNamespaceRole})
	hubProbes := append(slices.Clone(sensitive), hubResources...)
	for _, tc := range []matrixCase{{
		heading: "### The hub",
		id: rbacmatrix.Identity{User: serviceaccount.MakeUsername(hcpfleet.HubNamespace, hcpfleet.HubServiceAccount),
			Groups: append(serviceaccount.MakeGroupNames(hcpfleet.HubNamespace), user.AllAuthenticated)},
		cfg:        fleet.Hub.Config(),
		resources:  hubProbes,
		namespaces: []string{cluster, addon.DefaultHubNamespace, "tenant-a", "kube-system"},
	}, {
		heading:    "### A tenant",
		id:         rbacmatrix.Identity{User: "alice", Groups: []string{"team-a", "system:authenticated"}},
		cfg:        fleet.Hub.Config(),
		resources:  hubProbes,
		namespaces: []string{"tenant-a", "tenant-b", cluster, addon.DefaultHubNamespace, "kube-system"},
	}, {
		heading:    "### A cordoning operator",
		id:         rbacmatrix.Identity{User: "olga", Groups: []string{"fleet-operators", "system:authenticated"}},
		cfg:        fleet.Hub.Config(),
		resources:  hubProbes,
		namespaces: []string{"tenant-a", cluster, addon.DefaultHubNamespace, "kube-system"},
	}, {
		heading:    "### A relocating operator",
		id:         rbacmatrix.Identity{User: "rita", Groups: []string{"fleet-relocators", "system:authenticated"}},
		cfg:        fleet.Hub.Config(),
		resources:  hubProbes,
		namespaces: []string{"tenant-a", cluster, addon.DefaultHubNamespace, "kube-system"},
	}, {
		heading:    "### An adopting operator",
		id:         rbacmatrix.Identity{User: "ada", Groups: []string{"fleet-adopters", "system:authenticated"}},
		cfg:        fleet.Hub.Config(),
		resources:  hubProbes,
		namespaces: []string{"tenant-a", cluster, addon.DefaultHubNamespace, "kube-system"},
	}, {
		heading:    "### The agent on the hub",
		id:         rbacmatrix.Identity{User: agent.DefaultUser(cluster, addon.Name, addon.AgentName), Groups: agent.DefaultGroups(cluster, addon.Name)},
		cfg:        fleet.Hub.Config(),
		resources:  hubProbes,
		namespaces: []string{cluster, other, addon.DefaultHubNamespace, "tenant-a", "kube-system"},
	}, {
		// The agent's ServiceAccount (manifests/agent/01-serviceaccount.yaml)
		// and the groups the API server gives every ServiceAccount.
		heading: "### The agent on a management cluster",
		id: rbacmatrix.Identity{User: agentSA,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + addon.DefaultInstallNamespace, "system:authenticated"}},
		cfg:        fleet.Managed[0].Config(),
		resources:  append(slices.Clone(sensitive), spokeResources...),
		namespaces: []string{addon.DefaultInstallNamespace, "hypershift", hostingNamespace, controlPlaneNamespace, extensionNamespace, "kube-system", "default"},
		// Its own names, asked about for every resource; the names a row
		// lists (the CRDs it installs, ...), for that row's resource only.
		names:   []string{"hcp-fleet-agent", "operator", "hypershift-operator", addon.AgentCAPINamespaceRole},
		perName: true,
	},
		executorCase("### The delivery executor", addon.ExecutorDelivery),
		executorCase("### The relocation executor", addon.ExecutorRelocation),
		executorCase("### The extension executor", addon.ExecutorExtension),
	} {
		t.Run(strings.TrimPrefix(tc.heading, "### "), func(t *testing.T) {
			table, err := rbacmatrix.Parse(strings.NewReader(string(doc)), tc.heading, vars)
			if err != nil {
				t.Fatal(err)
			}
			cfg := rest.CopyConfig(tc.cfg)
			cfg.QPS, cfg.Burst = -1, 0 // thousands of reviews
			kube := kubernetes.NewForConfigOrDie(cfg)
			matrix := rbacmatrix.Matrix{Verbs: verbs, Namespaces: tc.namespaces, Names: append([]string{"probe-foreign-name", addon.Name}, tc.names...),
				Resources: resources(t, kube.Discovery(), table, tc.resources), NamesPerResource: tc.perName}
			cells := matrix.Cells(table)
			broader, narrower, err := rbacmatrix.Diff(context.Background(), kube, tc.id, table, cells)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d cells asked", tc.id.User, len(cells))
			if len(broader) > 0 {
				t.Errorf("%s may do more than docs/security.md %q says (%d cells):\n  %s", tc.id.User, tc.heading, len(broader),
					strings.Join(rbacmatrix.Summarize(broader), "\n  "))
			}
			if len(narrower) > 0 {
				t.Errorf("docs/security.md %q promises what %s may not do (%d cells):\n  %s", tc.heading, tc.id.User, len(narrower),
					strings.Join(rbacmatrix.Summarize(narrower), "\n  "))
			}
		})
	}
}

// matrixCase is one identity's table in docs/security.md and where to ask
// about it.
type matrixCase struct {
	heading    string
	id         rbacmatrix.Identity
	cfg        *rest.Config
	resources  []string
	namespaces []string
	names      []string
	perName    bool
}

// executorCase asks the first management cluster about executor name
// (manifests/agent/10-executor-*), a ServiceAccount of the agent's
// namespace, as about the agent: the same resources and namespaces.
func executorCase(heading, name string) matrixCase {
	return matrixCase{
		heading: heading,
		id: rbacmatrix.Identity{User: serviceaccount.MakeUsername(addon.DefaultInstallNamespace, name),
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + addon.DefaultInstallNamespace, "system:authenticated"}},
		cfg:        fleet.Managed[0].Config(),
		resources:  append(slices.Clone(sensitive), spokeResources...),
		namespaces: []string{addon.DefaultInstallNamespace, "hypershift", hostingNamespace, controlPlaneNamespace, extensionNamespace, "kube-system", "default"},
		names:      []string{name},
		perName:    true,
	}
}

// checkManifestWorkReaders: the ManifestWorks in a cluster namespace carry
// the Secrets delivered to that cluster. Besides the fleet admin and the
// hub (the tables above), only that cluster's own OCM agents may read them
// — OCM's grant to the cluster's group, which is checked here for one
// cluster's and denied for another's.
func checkManifestWorkReaders(t *testing.T, c *clients, cluster, other string) {
	t.Helper()
	for _, tc := range []struct {
		cluster string
		want    bool
	}{{cluster, true}, {other, false}} {
		// The identity OCM registration gives a cluster's agents.
		group := "system:open-cluster-management:" + tc.cluster
		for _, verb := range []string{"get", "list"} {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:   group + ":agent",
				Groups: []string{group, "system:open-cluster-management:managed-clusters", "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: "work.open-cluster-management.io",
					Resource: "manifestworks", Namespace: cluster},
			}}
			got, err := c.hubKube.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.Allowed != tc.want {
				t.Errorf("%s: %s ManifestWorks in %s: allowed=%v, want %v", group, verb, cluster, got.Status.Allowed, tc.want)
			}
		}
	}
}

// resources is what to probe: the given list and every resource a table
// row names (a "group/*" row by a sample resource of the group), each with
// its scope as the server's discovery says (namespaced when unknown, which
// asks about more cells, not fewer).
func resources(t *testing.T, dc discovery.DiscoveryInterface, table rbacmatrix.Table, names []string) []rbacmatrix.Resource {
	t.Helper()
	for _, r := range table {
		res := r.Resource
		if res == "*" {
			res = "probe-any-resource"
		}
		if r.Group != "" {
			res = r.Group + "/" + res
		}
		names = append(names, res)
	}
	clusterScoped := map[string]bool{}
	lists, _ := dc.ServerPreferredResources()
	for _, l := range lists {
		group, _, _ := strings.Cut(l.GroupVersion, "/")
		if !strings.Contains(l.GroupVersion, "/") {
			group = ""
		}
		for _, r := range l.APIResources {
			if !r.Namespaced {
				clusterScoped[group+"|"+r.Name] = true
			}
		}
	}
	seen := map[rbacmatrix.Resource]bool{}
	var out []rbacmatrix.Resource
	for _, n := range names {
		var r rbacmatrix.Resource
		r.Group, n = rbacmatrix.SplitResource(n)
		r.Resource, r.Subresource, _ = strings.Cut(n, "/")
		r.Namespaced = !clusterScoped[r.Group+"|"+r.Resource]
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// agentSA is the agent's user on a management cluster: its ServiceAccount
// (manifests/agent/01-serviceaccount.yaml).
var agentSA = "system:serviceaccount:" + addon.DefaultInstallNamespace + ":" + addon.AgentName

// bindAsAgent binds the agent's namespaced grants the way the agent does
// when it works in a namespace (pkg/kubeutil.BindSelf, as the agent's
// ServiceAccount): ClusterRole bindings[ns] in each namespace ns — for the
// matrix, the hosting-namespace grants in hostingNamespace and the
// CAPI-namespace grants in controlPlaneNamespace, so that it sees the most
// the agent may hold there. That the agent may create exactly these
// RoleBindings is part of what is checked. They and the namespaces the test
// made go when the test ends.
func bindAsAgent(t *testing.T, admin *rest.Config, bindings map[string]string) {
	t.Helper()
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(admin)
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: agentSA,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + addon.DefaultInstallNamespace, "system:authenticated"}}
	asAgent, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for ns, role := range bindings {
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		switch {
		case err == nil:
			t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
		case !apierrors.IsAlreadyExists(err):
			t.Fatal(err)
		}
		// What BindSelf waits for is a grant of that role, as the agent's
		// own Binder asks (the extension engine's role lists no Secrets).
		probe := authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"}
		if role == addon.AgentExtensionNamespaceRole {
			probe = authorizationv1.ResourceAttributes{Verb: "patch", Resource: "configmaps"}
		}
		if err := kubeutil.BindSelf(ctx, asAgent, ns, role, probe); err != nil {
			t.Fatalf("the agent binding its grants in %s: %v", ns, err)
		}
		t.Cleanup(func() { _ = kube.RbacV1().RoleBindings(ns).Delete(context.Background(), role, metav1.DeleteOptions{}) })
	}
}

// agentCRDs are the CRDs the agent can install.
func agentCRDs(t *testing.T) []string {
	t.Helper()
	names, err := assistedtest.InstallableCRDNames()
	if err != nil {
		t.Fatal(err)
	}
	return names
}
