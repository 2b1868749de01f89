package tenancy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/keypolicy"
)

// DefaultReleaseRepository is where the built-in policy takes release images
// from: the official OpenShift release payloads, signed by Red Hat.
const DefaultReleaseRepository = "quay.io/openshift-release-dev/ocp-release"

// DefaultMaxReferencedObjectBytes bounds a referenced Secret or ConfigMap
// when the policy does not: 256 KiB, a quarter of what the API server
// stores, so that twenty copies in a ManifestWork still fit in etcd's limit.
const DefaultMaxReferencedObjectBytes = 256 << 10

// defaultPlatforms are the platforms of the built-in policy: None and
// KubeVirt, which claim nothing outside the hosted cluster's own namespaces.
// Agent needs the admin to name the Agents' namespaces; cloud platforms need
// the admin's credentials and roles.
var defaultPlatforms = []v1alpha1.PlatformPolicy{{Type: "None"}, {Type: "KubeVirt"}}

// reservedLabelDomains: a HostedCluster or NodePool label key of one of these
// domains (or a subdomain) is refused unless the policy allows it: HyperShift
// (hypershift.openshift.io/hosted-cluster-size), OCM, Kubernetes, OpenShift
// and hcp-fleet act on them.
var reservedLabelDomains = []string{"hypershift.openshift.io", "hcpfleet.io", "kubernetes.io", "k8s.io", "open-cluster-management.io", "openshift.io"}

// Policy is a TenantPolicy compiled for checking, or the built-in default.
type Policy struct {
	// Name says where it comes from, for messages: "TenantPolicy x" or
	// "the built-in default tenant policy".
	Name string
	// conflict, when set, refuses everything: the namespace is selected by
	// more than one TenantPolicy.
	conflict string

	allowAll     bool
	hostedFields fieldSet
	poolFields   fieldSet
	labels       keypolicy.Patterns

	repositories  []string
	requireDigest bool
	platforms     map[string][]string // type → agent namespaces
	hostnames     []string

	maxReplicas *int32
	maxBytes    int64

	forced    v1alpha1.ForcedFields
	overrides []v1alpha1.UpgradeOverride

	// cordonToleration: spec.allowCordonToleration.
	cordonToleration bool
	// importOptOut: spec.allowImportOptOut.
	importOptOut bool
}

// AllowsImportOptOut says whether the policy lets its namespaces'
// HostedClusterDeployments turn their import off (spec.import: Disabled);
// never for a conflicting or the built-in policy.
func (p *Policy) AllowsImportOptOut() bool {
	return p != nil && p.conflict == "" && p.importOptOut
}

// AllowsCordonToleration says whether the policy lets its namespaces'
// HostedClusterDeployments tolerate a cordon (with their Placement's
// toleration); never for a conflicting or the built-in policy.
func (p *Policy) AllowsCordonToleration() bool {
	return p != nil && p.conflict == "" && p.cordonToleration
}

// Builtin is the policy of a namespace no TenantPolicy governs: safe for an
// untrusted tenant (docs/security.md).
func Builtin() *Policy {
	p, _ := Compile("the built-in default tenant policy", v1alpha1.TenantPolicySpec{})
	return p
}

// conflicting is the policy of a namespace several TenantPolicies select.
func conflicting(namespace string, names []string) *Policy {
	return &Policy{Name: "TenantPolicies " + strings.Join(names, ", "),
		conflict: fmt.Sprintf("namespace %s is selected by more than one TenantPolicy (%s), so none governs it and nothing of it is delivered until the fleet admin resolves the overlap",
			namespace, strings.Join(names, ", "))}
}

// Compile checks spec and compiles it. A policy that does not compile
// governs as if it refused everything (Check reports why), never as if it
// allowed more.
func Compile(name string, spec v1alpha1.TenantPolicySpec) (*Policy, error) {
	p := &Policy{Name: name, allowAll: spec.Fields.AllowAll, hostnames: spec.Hostnames,
		maxReplicas: spec.Quotas.MaxNodePoolReplicas, forced: spec.Forced, overrides: spec.UpgradeOverrides,
		cordonToleration: spec.AllowCordonToleration, importOptOut: spec.AllowImportOptOut,
		maxBytes: DefaultMaxReferencedObjectBytes}
	var problems []string
	for _, path := range append(slices.Clone(spec.Fields.HostedCluster), spec.Fields.NodePool...) {
		if msg := validPath(path); msg != "" {
			problems = append(problems, "spec.fields: "+msg)
		}
	}
	hosted := [][]string{hostedClusterFields, spec.Fields.HostedCluster}
	if len(spec.Hostnames) > 0 {
		hosted = append(hosted, hostnameFields)
	}
	p.hostedFields = newFieldSet(hosted...)
	p.poolFields = newFieldSet(nodePoolFields, spec.Fields.NodePool)
	labels, err := keypolicy.Parse(strings.Join(spec.Fields.Labels, ","))
	if err != nil {
		problems = append(problems, "spec.fields.labels: "+err.Error())
	}
	p.labels = labels

	p.repositories = []string{DefaultReleaseRepository}
	if r := spec.ReleaseImages; r != nil {
		p.repositories, p.requireDigest = r.Repositories, r.RequireDigest
	}
	platforms := spec.Platforms
	if len(platforms) == 0 {
		platforms = defaultPlatforms
	}
	p.platforms = map[string][]string{}
	for _, pl := range platforms {
		p.platforms[pl.Type] = pl.AgentNamespaces
	}
	if spec.ReferencedObjects.MaxSizeBytes != nil {
		p.maxBytes = *spec.ReferencedObjects.MaxSizeBytes
	}
	for _, f := range []struct {
		field string
		raw   []byte
	}{{"spec.forced.hostedClusterSpec", rawOf(spec.Forced.HostedClusterSpec)}, {"spec.forced.nodePoolSpec", rawOf(spec.Forced.NodePoolSpec)}} {
		if f.raw == nil {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(f.raw, &m); err != nil {
			problems = append(problems, f.field+": not an object")
		}
	}
	if len(problems) > 0 {
		msg := fmt.Sprintf("%s is invalid (%s), so it allows nothing", name, strings.Join(problems, "; "))
		return &Policy{Name: name, conflict: msg}, fmt.Errorf("%s", msg)
	}
	return p, nil
}

// MaxReferencedObjectBytes is the largest referenced Secret or ConfigMap
// (its data) the policy allows.
func (p *Policy) MaxReferencedObjectBytes() int64 { return p.maxBytes }

// UpgradeOverride is the release image the policy lets the
// HostedClusterDeployment namespace/name go to although installed operators
// do not support its minor, or "".
func (p *Policy) UpgradeOverride(namespace, name string) string {
	for _, o := range p.overrides {
		if o.Namespace == namespace && o.Name == name {
			return o.ReleaseImage
		}
	}
	return ""
}

// Forced is what the admin sets over every HostedCluster and NodePool.
func (p *Policy) Forced() Forced {
	f := Forced{Labels: p.forced.HostedClusterLabels, Annotations: p.forced.HostedClusterAnnotations}
	_ = json.Unmarshal(rawOf(p.forced.HostedClusterSpec), &f.HostedClusterSpec)
	_ = json.Unmarshal(rawOf(p.forced.NodePoolSpec), &f.NodePoolSpec)
	return f
}

// releaseAllowed says why image may not run, or "".
// ReleaseAllowed says why the policy refuses image as a release image of
// its namespaces' hosted clusters ("" when it allows it); the release
// rollout asks before it moves any of them there.
func (p *Policy) ReleaseAllowed(image string) string { return p.releaseAllowed(image) }

func (p *Policy) releaseAllowed(image string) string {
	repo, digest := splitImage(image)
	if p.requireDigest && digest == "" {
		return fmt.Sprintf("release image %s is referenced by tag; %s requires a digest (@sha256:…)", image, p.Name)
	}
	for _, allowed := range p.repositories {
		if repo == allowed {
			return ""
		}
		if prefix, ok := strings.CutSuffix(allowed, "/*"); ok && strings.HasPrefix(repo, prefix+"/") {
			return ""
		}
	}
	return fmt.Sprintf("release image %s is not from a repository %s allows (%s)", image, p.Name, orNone(p.repositories))
}

// splitImage splits a pull spec into its repository and digest: the tag
// (after the last ":" of the last path element) and digest are not part of
// the repository.
func splitImage(image string) (repo, digest string) {
	repo, digest, _ = strings.Cut(image, "@")
	slash := strings.LastIndex(repo, "/")
	if colon := strings.LastIndex(repo, ":"); colon > slash {
		repo = repo[:colon]
	}
	return repo, digest
}

// hostnameAllowed says why hostname may not be published, or "".
func (p *Policy) hostnameAllowed(hostname string) string {
	h := strings.ToLower(strings.TrimSuffix(hostname, "."))
	for _, d := range p.hostnames {
		d = strings.ToLower(strings.TrimPrefix(strings.TrimSuffix(d, "."), "*."))
		if h == d || strings.HasSuffix(h, "."+d) {
			return ""
		}
	}
	return fmt.Sprintf("hostname %s is not under a domain %s allows (%s)", hostname, p.Name, orNone(p.hostnames))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
