//go:build integration

package v1alpha1_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const validationNamespace = "validation"

// validHCD is the smallest HostedClusterDeployment the schema accepts: platform None,
// pinned to a cluster, one node pool.
const validHCD = `
apiVersion: hcpfleet.io/v1alpha1
kind: HostedClusterDeployment
metadata:
  name: valid
  namespace: validation
spec:
  hostingCluster: mgmt-1
  hostedCluster:
    spec:
      release:
        image: quay.io/openshift-release-dev/ocp-release:4.18.5-multi
      pullSecret:
        name: pull-secret
      dns:
        baseDomain: example.com
      networking:
        networkType: OVNKubernetes
        clusterNetwork:
        - cidr: 10.132.0.0/14
        serviceNetwork:
        - cidr: 172.31.0.0/16
      platform:
        type: None
      etcd:
        managementType: Managed
        managed:
          storage:
            type: PersistentVolume
      services:
      - service: APIServer
        servicePublishingStrategy: {type: LoadBalancer}
      - service: OAuthServer
        servicePublishingStrategy: {type: Route}
      - service: Konnectivity
        servicePublishingStrategy: {type: Route}
      - service: Ignition
        servicePublishingStrategy: {type: Route}
  nodePools:
  - name: valid-workers
    spec:
      clusterName: valid
      replicas: 1
      release:
        image: quay.io/openshift-release-dev/ocp-release:4.18.5-multi
      management:
        upgradeType: Replace
      platform:
        type: None
  olm:
    subscriptionDefaults:
      nodeSelector:
        node-role.kubernetes.io/infra: ""
      tolerations:
      - key: node-role.kubernetes.io/infra
        operator: Exists
        effect: NoSchedule
`

const validHostingConfig = `
apiVersion: hcpfleet.io/v1alpha1
kind: HostingConfig
metadata:
  name: valid
  namespace: validation
spec:
  operator:
    image: quay.io/hypershift/hypershift-operator:4.18
    imageOverrides:
      IMAGE_CLUSTER_API: registry.example.com/cluster-api:v1
  install:
    oidcStorage:
      bucket: oidc-bucket
      region: us-east-1
      credentialsSecret: {name: oidc}
    externalDNS:
      provider: aws
      credentialsSecret: {name: dns}
      domainFilter: hcp.example.com
    privatePlatform:
      type: AWS
      aws:
        region: us-east-1
        credentialsSecret: {name: privatelink}
  capacity:
    maxHostedClusters: 80
    aboveThreshold: 60
    perHostedControlPlane: {cpu: "5", memory: 18Gi}
  capiMode: Private
  olm:
    catalogs:
    - openShiftVersion: "4.18"
      redHatOperators: mirror.example.com/redhat/redhat-operator-index@sha256:1111111111111111111111111111111111111111111111111111111111111111
      certifiedOperators: mirror.example.com/redhat/certified-operator-index@sha256:2222222222222222222222222222222222222222222222222222222222222222
      communityOperators: mirror.example.com/redhat/community-operator-index@sha256:3333333333333333333333333333333333333333333333333333333333333333
      redHatMarketplace: mirror.example.com/redhat/redhat-marketplace-index@sha256:4444444444444444444444444444444444444444444444444444444444444444
    registryOverrides:
    - source: registry.redhat.io
      mirrors: [mirror.example.com]
    subscriptionDefaults:
      nodeSelector:
        hcpfleet.example.com/reaches-control-plane: "true"
        zone: eu-1a
      tolerations:
      - key: dedicated
        operator: Equal
        value: operators
        effect: NoExecute
        tolerationSeconds: 300
  agentProviders: {bootstrap: true, controlPlane: true}
  hostingNamespaces: [clusters, team-a-hcps]
`

// TestValidationRejects creates invalid objects (dry run) and checks that the
// apiserver rejects each one with a message that tells the user what is wrong.
func TestValidationRejects(t *testing.T) {
	ensureNamespace(t, validationNamespace)
	type edit func(obj map[string]any)
	set := func(value any, path ...string) edit {
		return func(obj map[string]any) { mustSet(t, obj, value, path...) }
	}
	del := func(path ...string) edit {
		return func(obj map[string]any) { unstructured.RemoveNestedField(obj, path...) }
	}
	// first edits the first item of the list at path: set to value, or deleted
	// when value is nil.
	first := func(value any, key string, path ...string) edit {
		return func(obj map[string]any) {
			items, _, _ := unstructured.NestedSlice(obj, path...)
			item := items[0].(map[string]any)
			if value == nil {
				delete(item, key)
			} else {
				item[key] = value
			}
			mustSet(t, obj, items, path...)
		}
	}
	pool := func(name, cluster string) map[string]any {
		return map[string]any{"name": name, "spec": map[string]any{
			"clusterName": cluster,
			"release":     map[string]any{"image": "quay.io/openshift-release-dev/ocp-release:4.18.5-multi"},
			"management":  map[string]any{"upgradeType": "Replace"},
			"platform":    map[string]any{"type": "None"},
		}}
	}
	var tooManyPools []any
	for i := range 31 {
		tooManyPools = append(tooManyPools, pool(fmt.Sprintf("p%d", i), "valid"))
	}

	cases := []struct {
		name  string
		base  string
		edits []edit
		want  string
	}{
		// HostedClusterDeployment.
		{"neither placement nor hosting cluster", validHCD,
			[]edit{del("spec", "hostingCluster")},
			"spec.placement or spec.hostingCluster is required"},
		{"node pool name not a DNS label", validHCD,
			[]edit{set([]any{pool("Workers_1", "valid")}, "spec", "nodePools")},
			"spec.nodePools[].name must be a lowercase RFC 1123 label"},
		{"node pool name too long", validHCD,
			[]edit{set([]any{pool(strings.Repeat("a", 64), "valid")}, "spec", "nodePools")},
			"spec.nodePools[0].name: Too long: may not be more than 63 bytes"},
		{"duplicate node pool names", validHCD,
			[]edit{set([]any{pool("workers", "valid"), pool("workers", "valid")}, "spec", "nodePools")},
			"spec.nodePools[].name must be unique"},
		{"too many node pools", validHCD,
			[]edit{set(tooManyPools, "spec", "nodePools")},
			"must have at most 30 items"},
		{"node pool for another cluster", validHCD,
			[]edit{set([]any{pool("workers", "other")}, "spec", "nodePools")},
			"spec.nodePools[].spec.clusterName must equal metadata.name"},
		{"hosting namespace not a namespace name", validHCD,
			[]edit{set("Clusters_1", "spec", "hostingNamespace")},
			"spec.hostingNamespace must be a valid namespace name"},
		{"hosting namespace empty", validHCD,
			[]edit{set("", "spec", "hostingNamespace")},
			"spec.hostingNamespace: Invalid value: \"\": spec.hostingNamespace in body should be at least 1 chars long"},
		{"hosting namespace and name too long together", validHCD,
			[]edit{set(strings.Repeat("n", 60), "spec", "hostingNamespace")},
			"spec.hostingNamespace and metadata.name are too long together"},
		{"name not a DNS label", validHCD,
			[]edit{set("demo.cluster", "metadata", "name"), del("spec", "nodePools")},
			"metadata.name must be a lowercase RFC 1123 label"},
		{"name of a hub namespace", validHCD,
			[]edit{set("open-cluster-management-hub", "metadata", "name"), del("spec", "nodePools")},
			"metadata.name open-cluster-management-hub is reserved: the hosted cluster is imported as a ManagedCluster of this name"},
		{"name of the hub's own ManagedCluster", validHCD,
			[]edit{set("local-cluster", "metadata", "name"), del("spec", "nodePools")},
			"metadata.name local-cluster is reserved"},
		{"name under hcp-fleet", validHCD,
			[]edit{set("hcp-fleet", "metadata", "name"), del("spec", "nodePools")},
			"metadata.name hcp-fleet is reserved"},
		{"hosting cluster not a ManagedCluster name", validHCD,
			[]edit{set("Mgmt_1", "spec", "hostingCluster")},
			"spec.hostingCluster must be the name of a ManagedCluster"},
		{"placement not a Placement name", validHCD,
			[]edit{set("my placement", "spec", "placement")},
			"spec.placement must be the name of a Placement"},
		{"release missing", validHCD,
			[]edit{del("spec", "hostedCluster", "spec", "release")},
			"spec.hostedCluster.spec.release: Required value"},
		{"release image empty", validHCD,
			[]edit{set("", "spec", "hostedCluster", "spec", "release", "image")},
			"spec.hostedCluster.spec.release.image is required"},
		{"node pool release image empty", validHCD,
			[]edit{func(obj map[string]any) {
				p := pool("workers", "valid")
				p["spec"].(map[string]any)["release"] = map[string]any{"image": ""}
				mustSet(t, obj, []any{p}, "spec", "nodePools")
			}},
			"spec.nodePools[].spec.release.image is required"},
		{"hosted cluster spec missing", validHCD,
			[]edit{del("spec", "hostedCluster", "spec")},
			"spec.hostedCluster.spec: Required value"},
		{"unknown deletion policy", validHCD,
			[]edit{set("Keep", "spec", "deletionPolicy")},
			`spec.deletionPolicy: Unsupported value: "Keep": supported values: "Delete", "Orphan"`},
		// Known HyperShift fields keep their schema under preserve-unknown-fields.
		{"known HyperShift field of the wrong type", validHCD,
			[]edit{set(int64(5), "spec", "hostedCluster", "spec", "dns", "baseDomain")},
			"spec.hostedCluster.spec.dns.baseDomain: Invalid value: \"integer\""},
		{"HyperShift's own rule still applies", validHCD,
			[]edit{func(obj map[string]any) {
				svcs, _, _ := unstructured.NestedSlice(obj, "spec", "hostedCluster", "spec", "services")
				mustSet(t, obj, svcs[:2], "spec", "hostedCluster", "spec", "services")
			}},
			"spec.services in body should have at least 4 items"},
		{"HyperShift enum in a node pool", validHCD,
			[]edit{func(obj map[string]any) {
				p := pool("workers", "valid")
				p["spec"].(map[string]any)["management"] = map[string]any{"upgradeType": "Sometimes"}
				mustSet(t, obj, []any{p}, "spec", "nodePools")
			}},
			`spec.nodePools[0].spec.management.upgradeType: Unsupported value: "Sometimes"`},

		// HostingConfig.
		{"max hosted clusters zero", validHostingConfig,
			[]edit{set(int64(0), "spec", "capacity", "maxHostedClusters")},
			"spec.capacity.maxHostedClusters: Invalid value: 0: spec.capacity.maxHostedClusters in body should be greater than or equal to 1"},
		{"threshold above max", validHostingConfig,
			[]edit{set(int64(90), "spec", "capacity", "aboveThreshold")},
			"spec.capacity.aboveThreshold must not be greater than spec.capacity.maxHostedClusters"},
		{"threshold above defaulted max", validHostingConfig,
			[]edit{del("spec", "capacity", "maxHostedClusters"), set(int64(81), "spec", "capacity", "aboveThreshold")},
			"spec.capacity.aboveThreshold must not be greater than spec.capacity.maxHostedClusters"},
		{"unknown CAPI mode", validHostingConfig,
			[]edit{set("Hybrid", "spec", "capiMode")},
			`spec.capiMode: Unsupported value: "Hybrid": supported values: "Standard", "Private", "Auto"`},
		{"image override key not IMAGE_*", validHostingConfig,
			[]edit{set(map[string]any{"CLUSTER_API": "registry.example.com/capi:v1"}, "spec", "operator", "imageOverrides")},
			"spec.operator.imageOverrides keys must be HyperShift operator image variables matching ^IMAGE_[A-Z0-9_]+$"},
		{"image override value empty", validHostingConfig,
			[]edit{set(map[string]any{"IMAGE_CLUSTER_API": ""}, "spec", "operator", "imageOverrides")},
			"spec.operator.imageOverrides.IMAGE_CLUSTER_API: Invalid value: \"\": spec.operator.imageOverrides.IMAGE_CLUSTER_API in body should be at least 1 chars long"},
		{"image override value with white space", validHostingConfig,
			[]edit{set(map[string]any{"IMAGE_CLUSTER_API": "registry.example.com/capi v1"}, "spec", "operator", "imageOverrides")},
			"must be an image pull spec without white space"},
		{"image overrides empty", validHostingConfig,
			[]edit{set(map[string]any{}, "spec", "operator", "imageOverrides")},
			"spec.operator.imageOverrides: Invalid value: 0: spec.operator.imageOverrides in body should have at least 1 properties"},
		{"operator image with white space", validHostingConfig,
			[]edit{set("quay.io/hypershift operator", "spec", "operator", "image")},
			"spec.operator.image must be an image pull spec without white space"},
		{"control plane provider without bootstrap", validHostingConfig,
			[]edit{set(false, "spec", "agentProviders", "bootstrap")},
			"spec.agentProviders.controlPlane requires spec.agentProviders.bootstrap"},
		{"private platform AWS without settings", validHostingConfig,
			[]edit{del("spec", "install", "privatePlatform", "aws")},
			"spec.install.privatePlatform.aws is required when type is AWS"},
		{"unknown private platform", validHostingConfig,
			[]edit{set("Azure", "spec", "install", "privatePlatform", "type")},
			`spec.install.privatePlatform.type: Unsupported value: "Azure"`},
		{"unknown external-dns provider", validHostingConfig,
			[]edit{set("cloudflare", "spec", "install", "externalDNS", "provider")},
			`spec.install.externalDNS.provider: Unsupported value: "cloudflare": supported values: "aws", "azure", "ibm-cloud"`},
		{"external-dns domain filter not a domain", validHostingConfig,
			[]edit{set("*.example.com", "spec", "install", "externalDNS", "domainFilter")},
			"spec.install.externalDNS.domainFilter must be a DNS domain"},
		{"OIDC bucket not an S3 bucket name", validHostingConfig,
			[]edit{set("My_Bucket", "spec", "install", "oidcStorage", "bucket")},
			"spec.install.oidcStorage.bucket must be an S3 bucket name"},
		{"OIDC credentials secret missing", validHostingConfig,
			[]edit{del("spec", "install", "oidcStorage", "credentialsSecret")},
			"spec.install.oidcStorage.credentialsSecret: Required value"},
		{"zero CPU baseline", validHostingConfig,
			[]edit{set("0", "spec", "capacity", "perHostedControlPlane", "cpu")},
			"spec.capacity.perHostedControlPlane.cpu must be greater than zero"},
		{"empty resource baseline", validHostingConfig,
			[]edit{set(map[string]any{}, "spec", "capacity", "perHostedControlPlane")},
			"spec.capacity.perHostedControlPlane: Invalid value: 0: spec.capacity.perHostedControlPlane in body should have at least 1 properties"},
		{"registry override without mirrors", validHostingConfig,
			[]edit{set([]any{map[string]any{"source": "registry.redhat.io", "mirrors": []any{}}}, "spec", "olm", "registryOverrides")},
			"spec.olm.registryOverrides[0].mirrors: Invalid value: 0: spec.olm.registryOverrides[0].mirrors in body should have at least 1 items"},
		{"duplicate registry override sources", validHostingConfig,
			[]edit{set([]any{
				map[string]any{"source": "registry.redhat.io", "mirrors": []any{"a.example.com"}},
				map[string]any{"source": "registry.redhat.io", "mirrors": []any{"b.example.com"}},
			}, "spec", "olm", "registryOverrides")},
			`spec.olm.registryOverrides[1]: Duplicate value: {"source":"registry.redhat.io"}`},
		// HyperShift's annotation is "src=dst,src=dst": a ',' or '=' would
		// split one override into others.
		{"registry override source with a separator", validHostingConfig,
			[]edit{first("registry.redhat.io,evil.example.com=x", "source", "spec", "olm", "registryOverrides")},
			"spec.olm.registryOverrides[].source must be a registry or repository without white space, ',' or '='"},
		{"registry override mirror with a separator", validHostingConfig,
			[]edit{first([]any{"mirror.example.com=evil.example.com"}, "mirrors", "spec", "olm", "registryOverrides")},
			"spec.olm.registryOverrides[].mirrors must be registries or repositories without white space, ',' or '='"},
		{"catalog image by tag", validHostingConfig,
			[]edit{first("registry.redhat.io/redhat/redhat-operator-index:v4.18", "redHatOperators", "spec", "olm", "catalogs")},
			"spec.olm.catalogs[].redHatOperators must be an image by digest (repository@sha256:<64 hex digits>): HyperShift takes catalog images by digest only"},
		{"catalog image with a short digest", validHostingConfig,
			[]edit{first("registry.redhat.io/redhat/community-operator-index@sha256:abc", "communityOperators", "spec", "olm", "catalogs")},
			"spec.olm.catalogs[].communityOperators must be an image by digest"},
		{"three of four catalog images", validHostingConfig,
			[]edit{first(nil, "redHatMarketplace", "spec", "olm", "catalogs")},
			"spec.olm.catalogs[] must set all four catalog images (redHatOperators, certifiedOperators, communityOperators, redHatMarketplace): HyperShift overrides all default catalogs or none"},
		{"catalogs for a full version", validHostingConfig,
			[]edit{first("4.18.5", "openShiftVersion", "spec", "olm", "catalogs")},
			"spec.olm.catalogs[].openShiftVersion must be an OpenShift minor version such as 4.18"},
		{"two catalog sets for one minor", validHostingConfig,
			[]edit{func(o map[string]any) {
				c, _, _ := unstructured.NestedSlice(o, "spec", "olm", "catalogs")
				_ = unstructured.SetNestedSlice(o, append(c, runtime.DeepCopyJSONValue(c[0])), "spec", "olm", "catalogs")
			}},
			`spec.olm.catalogs[1]: Duplicate value: {"openShiftVersion":"4.18"}`},
		{"subscription default node selector key not a label key", validHostingConfig,
			[]edit{set(map[string]any{"reaches control plane": "true"}, "spec", "olm", "subscriptionDefaults", "nodeSelector")},
			"subscriptionDefaults.nodeSelector keys must be label keys"},
		{"subscription default node selector value not a label value", validHCD,
			[]edit{set(map[string]any{"zone": "-eu"}, "spec", "olm", "subscriptionDefaults", "nodeSelector")},
			"subscriptionDefaults.nodeSelector values must be label values"},
		{"subscription default node selector empty", validHostingConfig,
			[]edit{set(map[string]any{}, "spec", "olm", "subscriptionDefaults", "nodeSelector")},
			"spec.olm.subscriptionDefaults.nodeSelector in body should have at least 1 properties"},
		{"subscription default toleration operator", validHostingConfig,
			[]edit{first("In", "operator", "spec", "olm", "subscriptionDefaults", "tolerations")},
			`spec.olm.subscriptionDefaults.tolerations[0].operator: Unsupported value: "In": supported values: "Exists", "Equal"`},
		{"subscription default toleration effect", validHCD,
			[]edit{first("NoRun", "effect", "spec", "olm", "subscriptionDefaults", "tolerations")},
			`spec.olm.subscriptionDefaults.tolerations[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`},
		{"subscription default toleration without key", validHostingConfig,
			[]edit{first(nil, "key", "spec", "olm", "subscriptionDefaults", "tolerations")},
			"subscriptionDefaults.tolerations[]: a toleration without key must have operator Exists"},
		{"subscription default toleration Exists with a value", validHostingConfig,
			[]edit{first("Exists", "operator", "spec", "olm", "subscriptionDefaults", "tolerations")},
			"subscriptionDefaults.tolerations[].value must be empty when operator is Exists"},
		{"subscription default toleration seconds without NoExecute", validHostingConfig,
			[]edit{first("NoSchedule", "effect", "spec", "olm", "subscriptionDefaults", "tolerations")},
			"subscriptionDefaults.tolerations[].tolerationSeconds needs effect NoExecute"},
		{"subscription default toleration key not a label key", validHCD,
			[]edit{first("node role", "key", "spec", "olm", "subscriptionDefaults", "tolerations")},
			"subscriptionDefaults.tolerations[].key must be a label key"},
		{"subscription default toleration value not a label value", validHostingConfig,
			[]edit{first("ops/team", "value", "spec", "olm", "subscriptionDefaults", "tolerations")},
			"subscriptionDefaults.tolerations[].value must be a label value"},
	}
	for _, ns := range reservedNamespaces {
		cases = append(cases, struct {
			name  string
			base  string
			edits []edit
			want  string
		}{"reserved hosting namespace " + ns, validHCD,
			[]edit{set(ns, "spec", "hostingNamespace")},
			"spec.hostingNamespace " + ns + " is reserved: default, kube-*, openshift, openshift-*, open-cluster-management*, hypershift and hcp-fleet*"})
	}
	cases = append(cases, []struct {
		name  string
		base  string
		edits []edit
		want  string
	}{
		{"reserved namespace allowed for hosted clusters", validHostingConfig,
			[]edit{set([]any{"clusters", "kube-system"}, "spec", "hostingNamespaces")},
			"spec.hostingNamespaces[1]: Invalid value: \"string\": kube-system is reserved and cannot hold hosted clusters"},
		{"reserved prefix allowed for hosted clusters", validHostingConfig,
			[]edit{set([]any{"hcp-fleet-agent"}, "spec", "hostingNamespaces")},
			"hcp-fleet-agent is reserved and cannot hold hosted clusters"},
		{"hosting namespace allowed not a namespace name", validHostingConfig,
			[]edit{set([]any{"Team_A"}, "spec", "hostingNamespaces")},
			"spec.hostingNamespaces[0]: Invalid value: \"string\": must be a valid namespace name"},
		{"hosting namespaces empty", validHostingConfig,
			[]edit{set([]any{}, "spec", "hostingNamespaces")},
			"spec.hostingNamespaces: Invalid value: 0: spec.hostingNamespaces in body should have at least 1 items"},
		{"hosting namespaces duplicated", validHostingConfig,
			[]edit{set([]any{"clusters", "clusters"}, "spec", "hostingNamespaces")},
			`spec.hostingNamespaces[1]: Duplicate value: "clusters"`},
		{"hosting namespace that extends another by -", validHostingConfig,
			[]edit{set([]any{"clusters", "team-a", "clusters-prod"}, "spec", "hostingNamespaces")},
			"spec.hostingNamespaces lists clusters together with a namespace that starts with clusters-: HyperShift runs the control plane of hosted cluster <name> in the namespace <hostingNamespace>-<name>"},
		{"hosting namespace that extends another by -, listed first", validHostingConfig,
			[]edit{set([]any{"a-b", "a"}, "spec", "hostingNamespaces")},
			"spec.hostingNamespaces lists a together with a namespace that starts with a-"},
		{"too many hosting namespaces", validHostingConfig,
			[]edit{set(tooManyNamespaces(65), "spec", "hostingNamespaces")},
			"must have at most 64 items"},
	}...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := mustObject(t, tc.base)
			for _, e := range tc.edits {
				e(obj.Object)
			}
			err := k8s.Create(context.Background(), obj, client.DryRunAll)
			if err == nil {
				t.Fatalf("the apiserver accepted it; want rejection with %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("rejected with\n  %v\nwant the message to contain\n  %q", err, tc.want)
			}
		})
	}
	if len(cases) < 15 {
		t.Fatalf("only %d invalid objects", len(cases))
	}
}

// TestValidationAccepts checks that the base objects of TestValidationRejects and a few
// variations of them are valid, so every rejection above is due to its one edit.
func TestValidationAccepts(t *testing.T) {
	ensureNamespace(t, validationNamespace)
	cases := []struct {
		name string
		base string
		edit func(obj map[string]any)
	}{
		{"minimal HostedClusterDeployment", validHCD, nil},
		{"placement only", validHCD, func(obj map[string]any) {
			unstructured.RemoveNestedField(obj, "spec", "hostingCluster")
			mustSet(t, obj, "hosting-clusters", "spec", "placement")
		}},
		{"placement and pinned cluster", validHCD, func(obj map[string]any) {
			mustSet(t, obj, "hosting-clusters", "spec", "placement")
		}},
		{"no node pools", validHCD, func(obj map[string]any) {
			unstructured.RemoveNestedField(obj, "spec", "nodePools")
		}},
		{"longest name that fits the hosted control plane namespace", validHCD, func(obj map[string]any) {
			name := strings.Repeat("n", 62-len("clusters"))
			mustSet(t, obj, name, "metadata", "name")
			unstructured.RemoveNestedField(obj, "spec", "nodePools")
		}},
		{"name next to the hub's reserved ones", validHCD, func(obj map[string]any) {
			mustSet(t, obj, "hypershift-demo", "metadata", "name")
			unstructured.RemoveNestedField(obj, "spec", "nodePools")
		}},
		{"name starting with kube but not kube-", validHCD, func(obj map[string]any) {
			mustSet(t, obj, "kubevirt-lab", "metadata", "name")
			unstructured.RemoveNestedField(obj, "spec", "nodePools")
		}},
		{"full HostingConfig", validHostingConfig, nil},
		{"empty HostingConfig", validHostingConfig, func(obj map[string]any) {
			obj["spec"] = map[string]any{}
		}},
		{"HostingConfig without spec", validHostingConfig, func(obj map[string]any) {
			delete(obj, "spec")
		}},
		{"threshold equal to max", validHostingConfig, func(obj map[string]any) {
			mustSet(t, obj, int64(80), "spec", "capacity", "aboveThreshold")
		}},
		{"bootstrap provider only", validHostingConfig, func(obj map[string]any) {
			mustSet(t, obj, false, "spec", "agentProviders", "controlPlane")
		}},
		{"HostedClusterDeployment opting out of the fleet's subscription defaults", validHCD, func(obj map[string]any) {
			mustSet(t, obj, map[string]any{}, "spec", "olm", "subscriptionDefaults")
		}},
		{"subscription defaults: tolerate every taint, no selector", validHostingConfig, func(obj map[string]any) {
			mustSet(t, obj, map[string]any{"tolerations": []any{map[string]any{"operator": "Exists"}}}, "spec", "olm", "subscriptionDefaults")
		}},
		{"hosting namespaces that share a prefix without -", validHostingConfig, func(obj map[string]any) {
			mustSet(t, obj, []any{"a", "ab", "b-a", "clusters", "clusters2"}, "spec", "hostingNamespaces")
		}},
		{"most hosting namespaces", validHostingConfig, func(obj map[string]any) {
			mustSet(t, obj, tooManyNamespaces(64), "spec", "hostingNamespaces")
		}},
	}
	for _, ns := range allowedNamespaces {
		cases = append(cases, struct {
			name string
			base string
			edit func(obj map[string]any)
		}{"hosting namespace " + ns, validHCD, func(obj map[string]any) {
			mustSet(t, obj, ns, "spec", "hostingNamespace")
		}}, struct {
			name string
			base string
			edit func(obj map[string]any)
		}{"hosting namespace " + ns + " allowed by a HostingConfig", validHostingConfig, func(obj map[string]any) {
			mustSet(t, obj, []any{ns}, "spec", "hostingNamespaces")
		}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := mustObject(t, tc.base)
			if tc.edit != nil {
				tc.edit(obj.Object)
			}
			if err := k8s.Create(context.Background(), obj, client.DryRunAll); err != nil {
				t.Fatalf("rejected: %v", err)
			}
		})
	}
}

// TestSchedulingIsPermanent checks the rules that keep a scheduled hosted cluster
// where it is, on both the spec and the status side.
func TestSchedulingIsPermanent(t *testing.T) {
	ctx := context.Background()
	ensureNamespace(t, validationNamespace)
	obj := mustObject(t, validHCD)
	obj.SetName("sticky")
	mustSet(t, obj.Object, []any{}, "spec", "nodePools")
	mustSet(t, obj.Object, "hosting-clusters", "spec", "placement")
	if err := k8s.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	mergePatch := func(patch string) error {
		return k8s.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))
	}
	statusPatch := func(patch string) error {
		return k8s.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))
	}
	expectErr := func(step string, err error, want string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: accepted; want rejection with %q", step, want)
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: rejected with %v; want %q", step, err, want)
		}
	}
	expectOK := func(step string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}

	// Before scheduling, the pin can still be corrected.
	expectOK("changing the pin before scheduling", mergePatch(`{"spec":{"hostingCluster":"mgmt-2"}}`))
	expectErr("changing the hosting namespace", mergePatch(`{"spec":{"hostingNamespace":"elsewhere"}}`),
		"spec.hostingNamespace is immutable")

	// A scheduler that computed its binding from a stale spec (pin mgmt-1) is refused.
	expectErr("binding a cluster other than the pinned one", statusPatch(`{"status":{"hostingCluster":"mgmt-1"}}`),
		"spec.hostingCluster is mgmt-2 but the hosted cluster is scheduled to mgmt-1")
	expectOK("binding the pinned cluster", statusPatch(`{"status":{"hostingCluster":"mgmt-2"}}`))

	// After scheduling.
	expectErr("re-pinning after scheduling", mergePatch(`{"spec":{"hostingCluster":"mgmt-3"}}`),
		"spec.hostingCluster is mgmt-3 but the hosted cluster is scheduled to mgmt-2: scheduling is permanent")
	expectErr("rebinding", statusPatch(`{"status":{"hostingCluster":"mgmt-3"}}`),
		"status.hostingCluster is set once and changes only")
	expectErr("unbinding", statusPatch(`{"status":{"hostingCluster":null}}`),
		"status.hostingCluster is set once and changes only")
	expectOK("dropping the pin (the placement remains)", mergePatch(`{"spec":{"hostingCluster":null}}`))
	expectErr("pinning another cluster after scheduling", mergePatch(`{"spec":{"hostingCluster":"mgmt-1"}}`),
		"spec.hostingCluster is mgmt-1 but the hosted cluster is scheduled to mgmt-2")
	expectOK("pinning the scheduled cluster", mergePatch(`{"spec":{"hostingCluster":"mgmt-2"}}`))
	expectOK("other status updates", statusPatch(`{"status":{"manifestWork":"sticky","observedGeneration":1}}`))

	// A relocation's rebind: only with the Scheduled condition's reason
	// Relocated (the scheduler's, for a switched HostedClusterRelocation).
	expectOK("dropping the pin again", mergePatch(`{"spec":{"hostingCluster":null}}`))
	scheduled := func(cluster, reason string) string {
		return `{"status":{"hostingCluster":"` + cluster + `","conditions":[{"type":"Scheduled","status":"True","reason":"` + reason +
			`","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`
	}
	expectErr("rebinding with reason Scheduled", statusPatch(scheduled("mgmt-3", "Scheduled")), "status.hostingCluster is set once and changes only")
	expectOK("rebinding with reason Relocated", statusPatch(scheduled("mgmt-3", "Relocated")))
}

func mustSet(t *testing.T, obj map[string]any, value any, path ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(obj, value, path...); err != nil {
		t.Fatalf("setting %v: %v", path, err)
	}
}

func tooManyNamespaces(n int) []any {
	out := make([]any, 0, n)
	for i := range n {
		out = append(out, fmt.Sprintf("team-%d", i))
	}
	return out
}
