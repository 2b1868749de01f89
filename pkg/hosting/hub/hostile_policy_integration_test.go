//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// The tenant-policy rows' namespaces besides hostileNS (the built-in
// default policy): one the admin trusts with every field, and one per row
// whose TenantPolicy the row sets.
const (
	trustedNS  = "hostile-trusted"
	trustedNS2 = "hostile-trusted-2"
	tightNS    = "hostile-tight"
	quotaNS    = "hostile-quota"
	conflictNS = "hostile-conflict"
	forcedNS   = "hostile-forced"
	dnsNS1     = "hostile-dns-1"
	dnsNS2     = "hostile-dns-2"
)

// policyNamespaces are the namespaces policyRows use; TestHostileInputs
// makes them tenants and cleans them up.
var policyNamespaces = []string{trustedNS, trustedNS2, tightNS, quotaNS, conflictNS, forcedNS, dnsNS1, dnsNS2}

// setUpPolicies gives the policy rows' namespaces their TenantPolicies
// (the ones a row changes, it sets itself) and removes them at the end.
func setUpPolicies(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	set := func(ns string, mutate func(*v1alpha1.TenantPolicySpec)) {
		if err := fleettest.SetTenantPolicy(ctx, hubc, ns, mutate); err != nil {
			t.Fatal(err)
		}
	}
	// The trusted team may set every field, and (to show the render still
	// writes the real owner) hcp-fleet's own label keys.
	set(trustedNS, func(s *v1alpha1.TenantPolicySpec) {
		s.Fields.AllowAll, s.Fields.Labels = true, []string{"hcpfleet.io/*"}
	})
	// Another trusted team, which has none of the Secrets the first one
	// creates for its attack.
	set(trustedNS2, func(s *v1alpha1.TenantPolicySpec) { s.Fields.AllowAll = true })
	set(quotaNS, func(s *v1alpha1.TenantPolicySpec) { s.Quotas.MaxNodePoolReplicas = ptr.To[int32](3) })
	set(forcedNS, func(s *v1alpha1.TenantPolicySpec) {
		s.Forced.HostedClusterSpec = &apiextensionsv1.JSON{Raw: []byte(`{"nodeSelector":{"hcpfleet.io/tenant-nodes":"forced"}}`)}
		s.Forced.HostedClusterLabels = map[string]string{"cost-center": "forced"}
	})
	for _, ns := range []string{dnsNS1, dnsNS2} {
		set(ns, func(s *v1alpha1.TenantPolicySpec) { s.Hostnames = []string{"tenants.example.com"} })
	}
	set(conflictNS, func(*v1alpha1.TenantPolicySpec) {})
	second := &v1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "hostile-conflict-second"}, Spec: v1alpha1.TenantPolicySpec{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: conflictNS}}}}
	if err := hubc.Create(ctx, second); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var list v1alpha1.TenantPolicyList
		if err := hubc.List(ctx, &list); err != nil {
			t.Error(err)
			return
		}
		for i := range list.Items {
			if strings.HasPrefix(list.Items[i].Name, "tenant-hostile-") || list.Items[i].Name == second.Name {
				if err := hubc.Delete(ctx, &list.Items[i]); client.IgnoreNotFound(err) != nil {
					t.Error(err)
				}
			}
		}
	})
}

// policyRows are the tenant-policy rows of the catalogue: what a tenant
// may set is what its namespace's TenantPolicy (or the built-in default)
// allows, and nothing it may not reaches a management cluster.
func policyRows(v *victim) []hostileRow {
	var rows []hostileRow
	add := func(r hostileRow) { rows = append(rows, r) }
	refused := func(name, input, want string, mutate func(spec map[string]any)) {
		add(hostileRow{name: "policy/" + name, input: input,
			expect: "Scheduled=False PolicyViolation: " + want + "; nothing on any management cluster",
			check:  func(t *testing.T) string { return policyRefused(t, hcd(hostileNS, "p-"+name, mutate), want) }})
	}
	hc := func(path string, value any) func(map[string]any) {
		return func(spec map[string]any) { setPath(hcSpec(spec), path, value) }
	}
	pool := func(path string, value any) func(map[string]any) {
		return func(spec map[string]any) { setPath(nodePool(spec)["spec"].(map[string]any), path, value) }
	}

	// Fields the built-in default does not let a tenant set.
	refused("etcd-unmanaged", "spec.hostedCluster.spec.etcd: Unmanaged, its client Secret the victim's copy "+v.copyName,
		"spec.hostedCluster.spec.etcd.unmanaged.endpoint is not a field tenants may set",
		hc("etcd", map[string]any{"managementType": "Unmanaged", "unmanaged": map[string]any{"endpoint": "https://etcd.hostile:2379",
			"tls": map[string]any{"clientSecret": map[string]any{"name": v.copyName}}}}))
	refused("infra-id", "spec.hostedCluster.spec.infraID: the victim's", "spec.hostedCluster.spec.infraID is not a field",
		hc("infraID", "victim-abcde"))
	refused("issuer-url", "spec.hostedCluster.spec.issuerURL: the victim's OIDC issuer", "spec.hostedCluster.spec.issuerURL is not a field",
		hc("issuerURL", "https://oidc.example.com/victim"))
	refused("node-selector", "spec.hostedCluster.spec.nodeSelector: the management cluster's masters",
		"spec.hostedCluster.spec.nodeSelector.node-role.kubernetes.io/master is not a field",
		hc("nodeSelector", map[string]any{"node-role.kubernetes.io/master": ""}))
	refused("tolerations", "spec.hostedCluster.spec.tolerations: another tenant's dedicated nodes",
		"spec.hostedCluster.spec.tolerations[0].key is not a field",
		hc("tolerations", []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "hostile-b", "effect": "NoSchedule"}}))
	refused("pod-labels", "spec.hostedCluster.spec.labels (on every control-plane pod)", "spec.hostedCluster.spec.labels.app is not a field",
		hc("labels", map[string]any{"app": "victim-etcd"}))
	refused("control-plane-release", "spec.hostedCluster.spec.controlPlaneRelease.image from another registry",
		"spec.hostedCluster.spec.controlPlaneRelease.image is not a field", hc("controlPlaneRelease", map[string]any{"image": "evil.example.com/cpo:4.18.5"}))
	refused("kms", "spec.hostedCluster.spec.secretEncryption: KMS with the management cluster's credentials",
		"spec.hostedCluster.spec.secretEncryption.kms.provider is not a field",
		hc("secretEncryption", map[string]any{"type": "kms", "kms": map[string]any{"provider": "IBMCloud"}}))
	refused("future-field", "spec.hostedCluster.spec.futureField (newer than the pinned HyperShift API)",
		"spec.hostedCluster.spec.futureField.enabled is not a field", hc("futureField", map[string]any{"enabled": true}))
	refused("nodeport-port", "spec.services[APIServer].servicePublishingStrategy.nodePort.port: another tenant's port",
		"spec.hostedCluster.spec.services[0].servicePublishingStrategy.nodePort.port is not a field",
		func(spec map[string]any) {
			hcSpec(spec)["services"].([]any)[0].(map[string]any)["servicePublishingStrategy"].(map[string]any)["nodePort"].(map[string]any)["port"] = int64(30443)
		})
	refused("route-hostname", "spec.services[OAuthServer] route hostname: the victim's OAuth name",
		"spec.hostedCluster.spec.services[1].servicePublishingStrategy.route.hostname is not a field",
		func(spec map[string]any) {
			hcSpec(spec)["services"].([]any)[1].(map[string]any)["servicePublishingStrategy"].(map[string]any)["route"] = map[string]any{"hostname": "oauth.victim.example.com"}
		})
	refused("kubevirt-networks", "spec.nodePools[].spec.platform.kubevirt.additionalNetworks: a network of hostile-b",
		"spec.nodePools[0].spec.platform.kubevirt.additionalNetworks[0].name is not a field",
		pool("platform", map[string]any{"type": "KubeVirt", "kubevirt": map[string]any{"additionalNetworks": []any{map[string]any{"name": "hostile-b/net"}}}}))
	// Values the policy decides.
	refused("release-registry", "spec.hostedCluster.spec.release.image from evil.example.com",
		"release image evil.example.com/ocp-release:4.18.5-multi is not from a repository the built-in default tenant policy allows",
		hc("release", map[string]any{"image": "evil.example.com/ocp-release:4.18.5-multi"}))
	refused("release-lookalike", "release image from quay.io/openshift-release-dev/ocp-release-evil (a lookalike repository)",
		"is not from a repository", hc("release", map[string]any{"image": "quay.io/openshift-release-dev/ocp-release-evil:4.18.5-multi"}))
	refused("nodepool-release", "spec.nodePools[].spec.release.image from evil.example.com",
		"spec.nodePools[0].spec.release.image: release image evil.example.com/ocp-release:4.18.5-multi",
		pool("release", map[string]any{"image": "evil.example.com/ocp-release:4.18.5-multi"}))
	refused("agent-namespace", "spec.hostedCluster.spec.platform: Agent, agentNamespace hostile-b-hosts (another team's bare-metal hosts)",
		"Agents of namespace hostile-b-hosts on the management cluster are not ones the built-in default tenant policy lets this namespace claim",
		hc("platform", map[string]any{"type": "Agent", "agent": map[string]any{"agentNamespace": "hostile-b-hosts"}}))
	refused("cloud-platform", "spec.hostedCluster.spec.platform: OpenStack with an identityRef",
		"platform OpenStack is not one the built-in default tenant policy allows",
		hc("platform", map[string]any{"type": "OpenStack", "openstack": map[string]any{"identityRef": map[string]any{"name": "victim-admin-kubeconfig", "cloudName": "openstack"}}}))
	refused("size-label", "spec.hostedCluster.labels: hypershift.openshift.io/hosted-cluster-size=large",
		"label hypershift.openshift.io/hosted-cluster-size is of a reserved domain",
		func(spec map[string]any) {
			spec["hostedCluster"].(map[string]any)["labels"] = map[string]any{"hypershift.openshift.io/hosted-cluster-size": "large"}
		})
	refused("label-spoof", "spec.hostedCluster.labels and spec.nodePools[].labels: hcpfleet.io/hcd-namespace=hostile-b, hcd-name=victim",
		"label hcpfleet.io/hcd-name is of a reserved domain",
		func(spec map[string]any) {
			spoof := map[string]any{hosting.LabelHCDNamespace: victimNS, hosting.LabelHCDName: victimName}
			spec["hostedCluster"].(map[string]any)["labels"] = spoof
			nodePool(spec)["labels"] = spoof
		})

	// A policy that allows every field still refuses references the hub
	// would not copy, and resolves every one in the tenant's namespace.
	add(hostileRow{name: "policy/trusted-future-reference", input: "trusted team (allowAll): spec.futureAuth.kubeconfig.name: victim-admin-kubeconfig (a reference newer than the pinned API)",
		expect: "Scheduled=False PolicyViolation: a reference the hub does not know how to copy",
		check: func(t *testing.T) string {
			return policyRefused(t, hcd(trustedNS, "future-ref", hc("futureAuth", map[string]any{"kubeconfig": map[string]any{"name": "victim-admin-kubeconfig"}})),
				"spec.hostedCluster.spec.futureAuth.kubeconfig: a reference the hub does not know how to copy")
		}})
	add(hostileRow{name: "policy/trusted-reference-namespace", input: "trusted team (allowAll): spec.pullSecret: {name: victim-secret, namespace: hostile-b}",
		expect: "Scheduled=False PolicyViolation naming spec.pullSecret.namespace",
		check: func(t *testing.T) string {
			return policyRefused(t, hcd(trustedNS, "ref-ns", hc("pullSecret", map[string]any{"name": victimSecret, "namespace": victimNS})),
				"spec.hostedCluster.spec.pullSecret.namespace: a reference the hub does not know how to copy")
		}})
	add(hostileRow{name: "policy/trusted-uncopied-refs-missing", input: "trusted team: etcd.unmanaged.tls.clientSecret = the victim's copy, webhookTokenAuthenticator.kubeConfig = victim-admin-kubeconfig (neither in its namespace)",
		expect: "Delivered=False ReferencedObjectNotFound naming both, in its own namespace",
		check: func(t *testing.T) string {
			return notFound(t, hcd(trustedNS2, "steal-missing", stealRefs(v)), "Secret "+trustedNS2+"/"+v.copyName+" (spec.hostedCluster.spec.etcd.unmanaged.tls.clientSecret.name)")
		}})
	add(hostileRow{name: "policy/trusted-uncopied-refs", input: "the same, with Secrets of those names in its own namespace",
		expect: "Delivered=True; on the host both references name its own salted copies, never the victim's copy or HyperShift's admin kubeconfig",
		check:  func(t *testing.T) string { return stealWithOwnSecrets(t, v) }})
	add(hostileRow{name: "policy/trusted-label-spoof", input: "trusted team allowed hcpfleet.io/* labels: hcpfleet.io/hcd-namespace=hostile-b, hcd-name=victim on the HostedCluster",
		expect: "Delivered=True; the HostedCluster carries the real owner's labels",
		check:  func(t *testing.T) string { return trustedLabelSpoof(t) }})

	// Overrides and load are the admin's.
	add(hostileRow{name: "policy/allow-upgrade-annotation", input: "metadata.annotations: " + "hcpfleet.io/allow-upgrade-to" + " = its own release",
		expect: "Delivered=True; no hypershift.openshift.io/force-upgrade-to on the HostedCluster",
		check:  func(t *testing.T) string { return upgradeAnnotationIgnored(t) }})
	add(hostileRow{name: "policy/referenced-too-large", input: "spec.pullSecret: a 300 KiB Secret (the default limit is 256 KiB)",
		expect: "Delivered=False ReferencedObjectTooLarge; nothing on the host",
		check:  func(t *testing.T) string { return tooLarge(t) }})
	add(hostileRow{name: "policy/two-policies", input: "a namespace selected by two TenantPolicies",
		expect: "Scheduled=False PolicyViolation: selected by more than one TenantPolicy",
		check: func(t *testing.T) string {
			return policyRefused(t, hcd(conflictNS, "two"), "namespace "+conflictNS+" is selected by more than one TenantPolicy")
		}})
	add(hostileRow{name: "policy/replica-quota", input: "maxNodePoolReplicas 3: a second HCD of 2 replicas",
		expect: "the first binds; the second Scheduled=False PolicyViolation (4 above 3)",
		check:  func(t *testing.T) string { return replicaQuota(t) }})
	add(hostileRow{name: "policy/hostname-taken", input: "two namespaces allowed tenants.example.com; both ask for api.shared.tenants.example.com",
		expect: "the first binds; the second Scheduled=False PolicyViolation (published by another)",
		check:  func(t *testing.T) string { return hostnameTaken(t) }})
	add(hostileRow{name: "policy/forced", input: "policy forces nodeSelector hcpfleet.io/tenant-nodes=forced and label cost-center=forced",
		expect: "Delivered=True; the HostedCluster carries both",
		check:  func(t *testing.T) string { return forcedFields(t) }})
	add(hostileRow{name: "policy/tightened", input: "a delivered HCD, then its policy requires digests, then the tenant changes it",
		expect: "Delivered=False PolicyViolation; the HostedCluster keeps running as delivered, the change does not reach it",
		check:  func(t *testing.T) string { return tightened(t) }})
	return rows
}

// policyRefused creates u and waits for Scheduled=False PolicyViolation
// naming want; it must stay unbound with no ManifestWork, and no HostedCluster
// of it may exist on any management cluster.
func policyRefused(t *testing.T, u *unstructured.Unstructured, want string) string {
	t.Helper()
	res := unscheduled(t, u, v1alpha1.ReasonPolicyViolation, want)
	notOnHosts(t, u.GetNamespace(), u.GetName())
	return res + "; on no host"
}

// notOnHosts: no management cluster has a HostedCluster of namespace/name.
func notOnHosts(t *testing.T, namespace, name string) {
	t.Helper()
	for host, c := range hosts {
		list, err := c.Resource(hcGVR).List(context.Background(), metav1.ListOptions{
			LabelSelector: hosting.LabelHCDNamespace + "=" + namespace + "," + hosting.LabelHCDName + "=" + name})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) > 0 {
			t.Fatalf("HostedCluster %s/%s of %s/%s exists on %s", list.Items[0].GetNamespace(), list.Items[0].GetName(), namespace, name, host)
		}
	}
}

// stealRefs points two references HyperShift reads from the shared hosting
// namespace, which hubs before TenantPolicy did not copy, at the victim's
// copy and at HyperShift's admin kubeconfig of the victim.
func stealRefs(v *victim) func(map[string]any) {
	return func(spec map[string]any) {
		s := hcSpec(spec)
		s["etcd"] = map[string]any{"managementType": "Unmanaged", "unmanaged": map[string]any{"endpoint": "https://etcd.hostile:2379",
			"tls": map[string]any{"clientSecret": map[string]any{"name": v.copyName}}}}
		s["configuration"] = map[string]any{"authentication": map[string]any{
			"webhookTokenAuthenticator": map[string]any{"kubeConfig": map[string]any{"name": victimName + "-admin-kubeconfig"}}}}
	}
}

func stealWithOwnSecrets(t *testing.T, v *victim) string {
	ctx := context.Background()
	for _, name := range []string{v.copyName, victimName + "-admin-kubeconfig"} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: trustedNS, Name: name}, StringData: map[string]string{"kubeconfig": "attacker's"}}
		if err := hubc.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	createHCD(t, hcd(trustedNS, "steal", stealRefs(v)))
	h, _ := awaitCondition(t, trustedNS, "steal", v1alpha1.ConditionDelivered, metav1.ConditionTrue, v1alpha1.ReasonApplied)
	got, err := hosts[h.Status.HostingCluster].Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, "steal", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	etcd, _, _ := unstructured.NestedString(got.Object, "spec", "etcd", "unmanaged", "tls", "clientSecret", "name")
	webhook, _, _ := unstructured.NestedString(got.Object, "spec", "configuration", "authentication", "webhookTokenAuthenticator", "kubeConfig", "name")
	for field, name := range map[string]string{"etcd client Secret": etcd, "webhook kubeconfig": webhook} {
		if name == v.copyName || name == victimName+"-admin-kubeconfig" || !strings.HasPrefix(name, "steal-") {
			t.Fatalf("the HostedCluster's %s is %q: not a copy of its own", field, name)
		}
		sec, err := hosts[h.Status.HostingCluster].Resource(scGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if l := sec.GetLabels(); l[hosting.LabelHCDNamespace] != trustedNS || l[hosting.LabelHCDName] != "steal" {
			t.Fatalf("copy %s labels %v", name, l)
		}
	}
	return fmt.Sprintf("Delivered=True; references name its copies %s and %s", etcd, webhook)
}

func trustedLabelSpoof(t *testing.T) string {
	ctx := context.Background()
	createHCD(t, hcd(trustedNS, "spoof", func(spec map[string]any) {
		spec["hostedCluster"].(map[string]any)["labels"] = map[string]any{hosting.LabelHCDNamespace: victimNS, hosting.LabelHCDName: victimName}
	}))
	h, _ := awaitCondition(t, trustedNS, "spoof", v1alpha1.ConditionDelivered, metav1.ConditionTrue, v1alpha1.ReasonApplied)
	o, err := hosts[h.Status.HostingCluster].Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, "spoof", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := o.GetLabels(); l[hosting.LabelHCDNamespace] != trustedNS || l[hosting.LabelHCDName] != "spoof" {
		t.Fatalf("HostedCluster labels %v", l)
	}
	return "Delivered=True; the HostedCluster is labelled " + trustedNS + "/spoof"
}

func upgradeAnnotationIgnored(t *testing.T) string {
	ctx := context.Background()
	u := hcd(hostileNS, "p-allow-upgrade")
	u.SetAnnotations(map[string]string{"hcpfleet.io/allow-upgrade-to": fleettest.Release})
	createHCD(t, u)
	h, _ := awaitCondition(t, hostileNS, "p-allow-upgrade", v1alpha1.ConditionDelivered, metav1.ConditionTrue, v1alpha1.ReasonApplied)
	got, err := hosts[h.Status.HostingCluster].Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, "p-allow-upgrade", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := got.GetAnnotations()[olm.AnnotationForceUpgradeTo]; ok {
		t.Fatalf("the HostedCluster carries %s=%s", olm.AnnotationForceUpgradeTo, f)
	}
	return "Delivered=True; no " + olm.AnnotationForceUpgradeTo
}

func tooLarge(t *testing.T) string {
	ctx := context.Background()
	big := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hostileNS, Name: "big-pull"},
		Data: map[string][]byte{".dockerconfigjson": []byte(strings.Repeat("x", 300<<10))}}
	if err := hubc.Create(ctx, big); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	createHCD(t, hcd(hostileNS, "p-too-large", func(spec map[string]any) { hcSpec(spec)["pullSecret"] = map[string]any{"name": "big-pull"} }))
	_, c := awaitCondition(t, hostileNS, "p-too-large", v1alpha1.ConditionDelivered, metav1.ConditionFalse, v1alpha1.ReasonReferencedObjectTooLarge,
		"Secret "+hostileNS+"/big-pull (spec.hostedCluster.spec.pullSecret.name)", "more than the 262144")
	notOnHosts(t, hostileNS, "p-too-large")
	return "Delivered=False ReferencedObjectTooLarge: " + excerpt(c.Message, "Secret") + "; on no host"
}

func replicaQuota(t *testing.T) string {
	createHCD(t, hcd(quotaNS, "q1"))
	awaitCondition(t, quotaNS, "q1", v1alpha1.ConditionScheduled, metav1.ConditionTrue, v1alpha1.ReasonScheduled)
	res := policyRefused(t, hcd(quotaNS, "q2"), "4 node-pool replicas in namespace "+quotaNS+" with this HostedClusterDeployment's 2, above the 3")
	return "q1 bound; q2 " + res
}

func hostnameTaken(t *testing.T) string {
	name := func(spec map[string]any) { hcSpec(spec)["kubeAPIServerDNSName"] = "api.shared.tenants.example.com" }
	createHCD(t, hcd(dnsNS1, "first", name))
	awaitCondition(t, dnsNS1, "first", v1alpha1.ConditionScheduled, metav1.ConditionTrue, v1alpha1.ReasonScheduled)
	res := policyRefused(t, hcd(dnsNS2, "second", name), "api.shared.tenants.example.com is published by another HostedClusterDeployment already")
	return "first bound; second " + res
}

func forcedFields(t *testing.T) string {
	ctx := context.Background()
	createHCD(t, hcd(forcedNS, "forced"))
	h, _ := awaitCondition(t, forcedNS, "forced", v1alpha1.ConditionDelivered, metav1.ConditionTrue, v1alpha1.ReasonApplied)
	got, err := hosts[h.Status.HostingCluster].Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, "forced", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sel, _, _ := unstructured.NestedStringMap(got.Object, "spec", "nodeSelector")
	if sel["hcpfleet.io/tenant-nodes"] != "forced" || got.GetLabels()["cost-center"] != "forced" {
		t.Fatalf("HostedCluster nodeSelector %v, labels %v", sel, got.GetLabels())
	}
	return "Delivered=True; nodeSelector and label forced on the HostedCluster"
}

func tightened(t *testing.T) string {
	ctx := context.Background()
	createHCD(t, hcd(tightNS, "tight"))
	h, _ := awaitCondition(t, tightNS, "tight", v1alpha1.ConditionDelivered, metav1.ConditionTrue, v1alpha1.ReasonApplied)
	host := h.Status.HostingCluster
	if err := fleettest.SetTenantPolicy(ctx, hubc, tightNS, func(s *v1alpha1.TenantPolicySpec) {
		s.ReleaseImages = &v1alpha1.ReleaseImagePolicy{Repositories: []string{"quay.io/openshift-release-dev/ocp-release"}, RequireDigest: true}
	}); err != nil {
		t.Fatal(err)
	}
	awaitCondition(t, tightNS, "tight", v1alpha1.ConditionDelivered, metav1.ConditionFalse, v1alpha1.ReasonPolicyViolation,
		"referenced by tag", "what was delivered before keeps running as it is")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("HostedClusterDeployment"))
	u.SetNamespace(tightNS)
	u.SetName("tight")
	if err := hubc.Patch(ctx, u, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"hostedCluster":{"labels":{"changed":"yes"}}}}`))); err != nil {
		t.Fatal(err)
	}
	_, c := awaitCondition(t, tightNS, "tight", v1alpha1.ConditionDelivered, metav1.ConditionFalse, v1alpha1.ReasonPolicyViolation, "referenced by tag")
	got, err := hosts[host].Resource(hcGVR).Namespace(v1alpha1.DefaultHostingNamespace).Get(ctx, "tight", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the delivered HostedCluster is gone: %v", err)
	}
	if got.GetLabels()["changed"] != "" || got.GetDeletionTimestamp() != nil {
		t.Fatalf("the change reached the HostedCluster, or it is being deleted: labels %v", got.GetLabels())
	}
	return "Delivered=False PolicyViolation for the new generation: " + excerpt(c.Message, "release image") + "; the HostedCluster runs unchanged"
}

// setPath sets value at the dot-separated path under m, making maps on the
// way.
func setPath(m map[string]any, path string, value any) {
	steps := strings.Split(path, ".")
	for _, s := range steps[:len(steps)-1] {
		next, ok := m[s].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[s] = next
		}
		m = next
	}
	m[steps[len(steps)-1]] = value
}
