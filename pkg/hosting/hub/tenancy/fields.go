package tenancy

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// hostedClusterFields are the paths of a HyperShift HostedClusterSpec every
// tenant may set (docs/security.md gives each field's class and why). A path
// allows everything under it. What is not here is refused unless the
// TenantPolicy's spec.fields names it: cloud platforms and their
// credentials, the hosted cluster's identity (infraID, clusterID,
// issuerURL, serviceAccountSigningKey), unmanaged etcd, KMS encryption,
// control-plane placement on the management cluster (nodeSelector,
// tolerations, labels), hostnames and node ports, feature gates, and every
// field newer than the HyperShift API hcp-fleet pins.
var hostedClusterFields = []string{
	"release.image", // and its value: Policy.releaseAllowed
	"channel",
	"updateService",
	"platform.type", // and its value: the policy's platforms
	"platform.kubevirt.baseDomainPassthrough",
	"platform.kubevirt.generateID",
	"platform.kubevirt.credentials", // a reference: resolved in the tenant's namespace
	"platform.agent.agentNamespace", // and its value: the platform's agentNamespaces
	"dns.baseDomain",
	"dns.baseDomainPrefix",
	"controllerAvailabilityPolicy",
	"infrastructureAvailabilityPolicy",
	"networking",
	"autoscaling",
	"etcd.managementType",
	"etcd.managed",
	"services[].service",
	"services[].servicePublishingStrategy.type",
	"services[].servicePublishingStrategy.nodePort.address",
	"pullSecret",
	"sshKey",
	"configuration.apiServer",
	"configuration.authentication",
	"configuration.oauth",
	"configuration.image",
	"configuration.proxy",
	"configuration.scheduler",
	"configuration.operatorhub",
	"configuration.network",
	"auditWebhook",
	"imageContentSources",
	"additionalTrustBundle",
	"secretEncryption.type",
	"secretEncryption.aescbc",
	"fips",
	"pausedUntil",
	"olmCatalogPlacement",
	"capabilities",
}

// nodePoolFields are the paths of a HyperShift NodePoolSpec every tenant may
// set. KubeVirt's nodeSelector and additionalNetworks (virtual machines on
// the management cluster's nodes, networks of other namespaces) and cloud
// platforms are not.
var nodePoolFields = []string{
	"clusterName",
	"replicas",
	"autoScaling",
	"release.image",
	"platform.type",
	"platform.kubevirt.compute",
	"platform.kubevirt.rootVolume",
	"platform.kubevirt.networkInterfaceMultiqueue",
	"platform.kubevirt.attachDefaultNetwork",
	"platform.agent.agentLabelSelector",
	"management",
	"config",
	"tuningConfig",
	"nodeDrainTimeout",
	"nodeVolumeDetachTimeout",
	"nodeLabels",
	"taints",
	"pausedUntil",
	"arch",
}

// hostnameFields are the HostedClusterSpec paths that publish a DNS name:
// tenant-settable only under the policy's spec.hostnames, and unique across
// the fleet.
var hostnameFields = []string{
	"services[].servicePublishingStrategy.route.hostname",
	"services[].servicePublishingStrategy.loadBalancer.hostname",
	"kubeAPIServerDNSName",
	"configuration.ingress.domain",
}

// fieldSet is a set of allowed paths: each is split into its steps, and a
// leaf is allowed when one of them is a prefix of the leaf's steps.
type fieldSet [][]string

func newFieldSet(paths ...[]string) fieldSet {
	var s fieldSet
	for _, group := range paths {
		for _, p := range group {
			s = append(s, strings.Split(p, "."))
		}
	}
	return s
}

// allows reports whether the leaf at steps may be set. A path's step
// without "[]" also allows the items of a list of that name ("config"
// allows config[].name).
func (s fieldSet) allows(steps []string) bool {
	for _, p := range s {
		if len(p) <= len(steps) && slices.EqualFunc(p, steps[:len(p)], func(want, got string) bool {
			return want == got || want == strings.TrimSuffix(got, "[]")
		}) {
			return true
		}
	}
	return false
}

// validPath reports a problem with an admin's path, or "".
func validPath(p string) string {
	if p == "" {
		return "an empty path"
	}
	for _, step := range strings.Split(p, ".") {
		name := strings.TrimSuffix(step, "[]")
		if name == "" || strings.ContainsAny(name, "[]* ") {
			return fmt.Sprintf("path %q: each step is a field name, optionally followed by [] for a list's items", p)
		}
	}
	return ""
}

// leaf is one value a tenant set: its steps for matching ("services[]",
// "service") and its field for messages ("services[0].service").
type leaf struct {
	steps []string
	field string
	value any
}

// leaves lists every value under obj: scalars, and empty objects and lists
// (a tenant may set "{}" to switch something on). Sorted by field.
func leaves(obj any) []leaf {
	var out []leaf
	var walk func(v any, steps []string, field string)
	walk = func(v any, steps []string, field string) {
		switch t := v.(type) {
		case map[string]any:
			if len(t) == 0 && len(steps) > 0 {
				out = append(out, leaf{steps: slices.Clone(steps), field: field, value: t})
			}
			for k, child := range t {
				walk(child, append(steps, k), join(field, k))
			}
		case []any:
			if len(t) == 0 {
				out = append(out, leaf{steps: slices.Clone(steps), field: field, value: t})
			}
			last := len(steps) - 1
			for i, child := range t {
				item := slices.Clone(steps)
				item[last] += "[]"
				walk(child, item, fmt.Sprintf("%s[%d]", field, i))
			}
		default:
			out = append(out, leaf{steps: slices.Clone(steps), field: field, value: t})
		}
	}
	walk(obj, nil, "")
	sort.Slice(out, func(i, j int) bool { return out[i].field < out[j].field })
	return out
}

func join(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

// matches reports whether a leaf's steps are exactly path.
func matches(steps []string, path string) bool {
	return slices.Equal(steps, strings.Split(path, "."))
}
