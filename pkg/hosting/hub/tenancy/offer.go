package tenancy

import (
	"maps"
	"slices"
)

// Offer is what a Policy lets the tenants of its namespaces choose when
// they create a HostedClusterDeployment: what the console's create form
// offers (pkg/hosting/hub/consoleapi), since a tenant may read neither
// TenantPolicies nor the namespace labels that select one. It narrows a
// form; Check, at scheduling and at every delivery, stays the authority.
type Offer struct {
	// Policy names the governing policy, for the form to say whose rules
	// these are.
	Policy string `json:"policy"`
	// Refused says why the policy allows nothing (several TenantPolicies
	// select the namespace, or the one that does is invalid); "" otherwise.
	Refused string `json:"refused,omitempty"`
	// Platforms are the platform types allowed, sorted; Agent only with
	// the namespaces whose Agents may be claimed (without them Check
	// refuses it).
	Platforms []PlatformOffer `json:"platforms,omitempty"`
	// ReleaseRepositories are the repositories release images may come
	// from ("/*": any repository under that path).
	ReleaseRepositories []string `json:"releaseRepositories,omitempty"`
	// RequireDigest: release images by digest only.
	RequireDigest bool `json:"requireDigest,omitempty"`
	// MaxNodePoolReplicas bounds the namespace's node pools together; nil
	// when unbounded.
	MaxNodePoolReplicas *int32 `json:"maxNodePoolReplicas,omitempty"`
}

// PlatformOffer is one allowed platform type.
type PlatformOffer struct {
	Type            string   `json:"type"`
	AgentNamespaces []string `json:"agentNamespaces,omitempty"`
}

// Offer is what p lets tenants choose. A policy that refuses everything
// offers nothing but the reason.
func (p *Policy) Offer() Offer {
	o := Offer{Policy: p.Name, Refused: p.conflict}
	if p.conflict != "" {
		return o
	}
	for _, t := range slices.Sorted(maps.Keys(p.platforms)) {
		agents := p.platforms[t]
		if t == "Agent" && len(agents) == 0 {
			continue
		}
		if t != "Agent" {
			agents = nil
		}
		o.Platforms = append(o.Platforms, PlatformOffer{Type: t, AgentNamespaces: slices.Clone(agents)})
	}
	o.ReleaseRepositories = slices.Clone(p.repositories)
	o.RequireDigest = p.requireDigest
	o.MaxNodePoolReplicas = p.maxReplicas
	return o
}
