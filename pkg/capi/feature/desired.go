package feature

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

// AppliedHashAnnotation holds the hash of the CRD as we last applied it, so
// that a reconcile that would apply the same thing writes nothing.
const AppliedHashAnnotation = "hcpfleet.io/capi-crd-hash"

// ProviderSet is which OpenShift Agent CAPI providers run.
type ProviderSet struct {
	Bootstrap    bool
	ControlPlane bool
}

// Any reports whether any provider runs.
func (p ProviderSet) Any() bool { return p.Bootstrap || p.ControlPlane }

// String names the set for messages, e.g. "bootstrap and control-plane".
func (p ProviderSet) String() string {
	switch {
	case p.Bootstrap && p.ControlPlane:
		return "bootstrap and control-plane"
	case p.Bootstrap:
		return "bootstrap"
	case p.ControlPlane:
		return "control-plane"
	default:
		return "no"
	}
}

// Settings is what the CAPI feature takes from a HostingConfig spec.
type Settings struct {
	// Mode is the requested CAPI mode; empty means Auto.
	Mode crds.Mode
	// Providers are the agent providers to run.
	Providers ProviderSet
	// AWS: the cluster can host AWS hosted clusters (HostingConfigSpec.HostsAWS).
	AWS bool
}

// SettingsFrom reads the CAPI settings of a HostingConfig spec. The control
// plane provider without the bootstrap provider is rejected by the API (CEL);
// should it get here anyway, the control plane brings the bootstrap provider
// along, because its machines cannot boot without it.
func SettingsFrom(spec *v1alpha1.HostingConfigSpec) Settings {
	s := Settings{Mode: crds.Mode(spec.CAPIMode), AWS: spec.HostsAWS()}
	if s.Mode == "" {
		s.Mode = crds.ModeAuto
	}
	if ap := spec.AgentProviders; ap != nil {
		s.Providers = ProviderSet{Bootstrap: ap.Bootstrap || ap.ControlPlane, ControlPlane: ap.ControlPlane}
	}
	return s
}

// CRDOptions are the CAPI CRD sets to install: the core, and the
// infrastructure providers of every platform the agent advertises to the
// scheduler (pkg/hosting/agent/capacity.Platforms), since the HyperShift operator
// creates the CAPI objects of a hosted cluster's platform: Agent and KubeVirt
// always, AWS when the cluster can host AWS. (The None platform has no CAPI
// infrastructure.) A platform turned off later leaves its CRDs: deleting a
// CRD deletes every object of its kind.
func (s Settings) CRDOptions() crds.Options {
	opts := crds.Options{Providers: []crds.Provider{crds.ProviderAgent, crds.ProviderKubeVirt}}
	if s.AWS {
		opts.Providers = append(opts.Providers, crds.ProviderAWS)
	}
	return opts
}

// withAppliedHash returns copies of the CRDs with AppliedHashAnnotation set
// to a hash of everything we apply.
func withAppliedHash(in []*apiextensionsv1.CustomResourceDefinition) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(in))
	for _, crd := range in {
		c := crd.DeepCopy()
		delete(c.Annotations, AppliedHashAnnotation)
		b, err := json.Marshal(struct {
			Labels      map[string]string
			Annotations map[string]string
			Spec        apiextensionsv1.CustomResourceDefinitionSpec
		}{c.Labels, c.Annotations, c.Spec})
		if err != nil {
			return nil, fmt.Errorf("hashing CRD %s: %w", c.Name, err)
		}
		sum := sha256.Sum256(b)
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[AppliedHashAnnotation] = hex.EncodeToString(sum[:8])
		out = append(out, c)
	}
	return out, nil
}

// needsApply returns the desired CRDs that are absent, differ from what we
// last applied, or are not (or no longer) ours — the Installer decides about
// the latter and never writes someone else's. live is the CRDs on the
// cluster by name (metadata only is enough).
func needsApply(desired []*apiextensionsv1.CustomResourceDefinition, live map[string]metav1.Object) []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range desired {
		l, ok := live[crd.Name]
		if ok && crds.IsOurs(l) && l.GetAnnotations()[AppliedHashAnnotation] == crd.Annotations[AppliedHashAnnotation] {
			continue
		}
		out = append(out, crd)
	}
	return out
}

// inFamily reports whether a CRD name belongs to a CAPI group (standard or
// private), the ones Decide looks at.
func inFamily(crdName string) bool {
	_, group, ok := strings.Cut(crdName, ".")
	return ok && (groups.IsStandard(group) || groups.IsPrivate(group))
}

// agentInfraGroup is the Agent infrastructure provider's group, outside the
// CAPI family (groups leaves it alone), whose CRDs we install too.
const agentInfraGroup = "capi-provider.agent-install.openshift.io"

// relevant reports whether the feature looks at a CRD: one it may install
// (CAPI family, Agent infrastructure provider), one the agent providers
// need, or HyperShift's HostedCluster CRD (the migration watches
// HostedClusters).
func relevant(crdName string) bool {
	_, group, _ := strings.Cut(crdName, ".")
	return inFamily(crdName) || group == agentInfraGroup || crdName == hostedClusterCRD ||
		slices.Contains(providerPrerequisites(ProviderSet{Bootstrap: true, ControlPlane: true}), crdName)
}

// providerPrerequisites are the CRDs the agent providers read and write that
// assisted-service and hive install (MCE ships them); the providers cannot
// start without them.
func providerPrerequisites(p ProviderSet) []string {
	var out []string
	if p.Bootstrap {
		out = append(out, "infraenvs.agent-install.openshift.io", "agents.agent-install.openshift.io",
			"agentclusterinstalls.extensions.hive.openshift.io", "clusterdeployments.hive.openshift.io")
	}
	if p.ControlPlane {
		out = append(out, "clusterimagesets.hive.openshift.io")
	}
	sort.Strings(out)
	return out
}

// missing returns the names not in have.
func missing(names []string, have map[string]metav1.Object) []string {
	var out []string
	for _, n := range names {
		if _, ok := have[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}
