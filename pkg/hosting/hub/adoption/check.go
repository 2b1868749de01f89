package adoption

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// AnnotationAdoptedFrom, on a HostedClusterDeployment, names the
// HostedCluster ("<cluster>/<namespace>/<name>") a fleet admin adopted into
// it; the takeover delivery is keyed on it. Only status writers may set it:
// the ValidatingAdmissionPolicy hcp-fleet-bound-to
// (manifests/hub/40-boundto-admissionpolicy.yaml) refuses anyone else, as
// for hcpfleet.io/bound-to, since a tenant who set it could take over
// another team's hosted cluster.
const AnnotationAdoptedFrom = hcdstatus.AnnotationAdoptedFrom

// Reasons a HostedCluster cannot be adopted (docs/operations.md, the
// table of checks).
const (
	// ReasonNotListed: the management cluster's inventory does not list it.
	ReasonNotListed = "NotListed"
	// ReasonInventoryTruncated: not listed, but the inventory is cut at
	// v1alpha1.MaxInventoryHostedClusters, so the hub cannot tell.
	ReasonInventoryTruncated = "InventoryTruncated"
	// ReasonManagedByDeployment: a HostedClusterDeployment that exists
	// delivered it; it moves only by relocation.
	ReasonManagedByDeployment = "ManagedByDeployment"
	// ReasonNameMismatch: the deployment would have another name than the
	// HostedCluster, and the delivery names the HostedCluster after it.
	ReasonNameMismatch = "NameMismatch"
	// ReasonDeploymentExists: the deployment to create exists already.
	ReasonDeploymentExists = "DeploymentExists"
	// ReasonNoInfraID: the HostedCluster reports no infraID to keep.
	ReasonNoInfraID = "NoInfraID"
	// ReasonInfraIDTaken: another hosted cluster of the fleet has its
	// infraID.
	ReasonInfraIDTaken = v1alpha1.ReasonInfraIDTaken
	// ReasonHostingNamespaceNotAllowed: its namespace is not a hosting
	// namespace the management cluster's HostingConfig allows.
	ReasonHostingNamespaceNotAllowed = v1alpha1.ReasonHostingNamespaceNotAllowed
	// ReasonControlPlaneNamespaceConflict: its namespaces clash with a
	// deployment bound to the management cluster.
	ReasonControlPlaneNamespaceConflict = v1alpha1.ReasonControlPlaneNamespaceConflict
)

// Request names the HostedCluster to adopt and the deployment to adopt it
// into.
type Request struct {
	// Cluster is the management cluster the HostedCluster runs on.
	Cluster string `json:"managementCluster"`
	// Namespace and Name are the HostedCluster's on that cluster.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// IntoNamespace and IntoName are the HostedClusterDeployment's on the
	// hub; IntoName "" is the HostedCluster's name.
	IntoNamespace string `json:"intoNamespace"`
	IntoName      string `json:"intoName"`
}

// Inputs is what Check decides on, read from the hub.
type Inputs struct {
	// Inventories are the management clusters' HostedClusterInventories
	// (the one named v1alpha1.InventoryName in each cluster namespace;
	// others are ignored).
	Inventories []v1alpha1.HostedClusterInventory
	// Deployments are every HostedClusterDeployment of the fleet.
	Deployments []v1alpha1.HostedClusterDeployment
	// HostingConfig is the spec of the HostingConfig the cluster's add-on
	// runs with (hostmodel.HostingConfigOf); nil: the API defaults.
	HostingConfig *v1alpha1.HostingConfigSpec
	// HostingConfigName names it in messages.
	HostingConfigName string
}

// Plan is Check's answer: the deployment the adoption would create, or
// why there is none.
type Plan struct {
	Request
	// Release, Platform, InfraID and Available are what the inventory
	// reports of the HostedCluster (nothing but the names of one an HCD
	// delivered).
	Release   string `json:"release,omitempty"`
	Platform  string `json:"platform,omitempty"`
	InfraID   string `json:"infraID,omitempty"`
	Available string `json:"available,omitempty"`
	// HostingNamespace is the deployment's spec.hostingNamespace: the
	// HostedCluster's namespace, kept.
	HostingNamespace string `json:"hostingNamespace,omitempty"`
	// OrphanOf names the deleted HostedClusterDeployment whose labels it
	// still carries (left by deletionPolicy Orphan); nil otherwise.
	OrphanOf *v1alpha1.InventoryDeployment `json:"orphanOf,omitempty"`
	// Unchecked says what the hub checks only with the agent's report of
	// the whole spec (docs/operations.md), which this plan has not got.
	Unchecked []string `json:"unchecked,omitempty"`
	// Reason and Message say why it cannot be adopted; empty when it can.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Adoptable reports whether p found nothing against the adoption.
func (p *Plan) Adoptable() bool { return p.Reason == "" }

func (p *Plan) refuse(reason, format string, args ...any) *Plan {
	p.Reason, p.Message = reason, fmt.Sprintf(format, args...)
	return p
}

// Check decides whether req can be adopted on in: every check of
// docs/operations.md's table that the inventories and deployments answer,
// in its order, the first failing one reported. Pure.
func Check(req Request, in Inputs) *Plan {
	if req.IntoName == "" {
		req.IntoName = req.Name
	}
	p := &Plan{Request: req}
	inv := inventoryOf(in.Inventories, req.Cluster)
	if inv == nil {
		return p.refuse(ReasonNotListed, "management cluster %s has no HostedClusterInventory %s on the hub: is the hcp-fleet agent running there?",
			req.Cluster, v1alpha1.InventoryName)
	}
	e := entry(inv, req.Namespace, req.Name)
	if e == nil {
		if inv.Status.Truncated {
			return p.refuse(ReasonInventoryTruncated, "HostedCluster %s/%s is not among the %d its agent lists, and the list is cut there",
				req.Namespace, req.Name, len(inv.Status.HostedClusters))
		}
		return p.refuse(ReasonNotListed, "the agent of %s reports no HostedCluster %s/%s (kubectl hcpfleet status lists the unmanaged ones)",
			req.Cluster, req.Namespace, req.Name)
	}
	p.Release, p.Platform, p.InfraID, p.Available = e.Release, e.Platform, e.InfraID, string(e.Available)
	p.HostingNamespace = req.Namespace
	if d := e.Deployment; d != nil {
		if owner := deployment(in.Deployments, d.Namespace, d.Name); owner != nil {
			if string(hcdstatus.IdentityUID(owner)) != d.UID {
				return p.refuse(ReasonManagedByDeployment, "HostedClusterDeployment %s/%s delivered it and exists again with another UID (restored from a backup): "+
					"it is that deployment's to take over, not to adopt into another", d.Namespace, d.Name)
			}
			return p.refuse(ReasonManagedByDeployment, "HostedClusterDeployment %s/%s manages it; it moves only by relocation", d.Namespace, d.Name)
		}
		p.OrphanOf = d.DeepCopy()
	}
	if req.IntoName != req.Name {
		return p.refuse(ReasonNameMismatch, "the HostedClusterDeployment must be named %s, as the HostedCluster: the hub delivers a HostedCluster named after "+
			"its deployment, and another name would be another control plane", req.Name)
	}
	if deployment(in.Deployments, req.IntoNamespace, req.IntoName) != nil {
		return p.refuse(ReasonDeploymentExists, "HostedClusterDeployment %s/%s exists already", req.IntoNamespace, req.IntoName)
	}
	if e.Deployment != nil {
		p.Unchecked = append(p.Unchecked, "the infraID's uniqueness: the inventory reports none for a HostedCluster an HCD delivered")
	} else if e.InfraID == "" {
		return p.refuse(ReasonNoInfraID, "the agent reports no spec.infraID for it (HyperShift sets one when it first reconciles): nothing to keep yet")
	} else if why := infraIDTaken(req, e.InfraID, in); why != "" {
		return p.refuse(ReasonInfraIDTaken, "%s", why)
	}
	if !in.HostingConfig.AllowsHostingNamespace(req.Namespace) {
		return p.refuse(ReasonHostingNamespaceNotAllowed, "its namespace %s is not a hosting namespace %s allows (%s): the hub delivers nothing there",
			req.Namespace, configName(in), strings.Join(in.HostingConfig.AllowedHostingNamespaces(), ", "))
	}
	if why := namespaceConflict(req, in); why != "" {
		return p.refuse(ReasonControlPlaneNamespaceConflict, "%s", why)
	}
	p.Unchecked = append(p.Unchecked, "the TenantPolicy of "+req.IntoNamespace+" over the HostedCluster's and its NodePools' specs, which only the agent's answer carries")
	return p
}

// infraIDTaken says why infraID id, of the HostedCluster req names, is
// another hosted cluster's in the fleet, or "" when it is not.
func infraIDTaken(req Request, id string, in Inputs) string {
	for i := range in.Deployments {
		if scheduling.EffectiveInfraID(&in.Deployments[i]) == id {
			// Not named: it may be another tenant's.
			return fmt.Sprintf("its infraID %s is the infraID of a HostedClusterDeployment: two hosted clusters must never share cloud resources and OIDC documents", id)
		}
	}
	for _, inv := range in.Inventories {
		if inv.Name != v1alpha1.InventoryName {
			continue
		}
		for _, o := range inv.Status.HostedClusters {
			if o.InfraID == id && (inv.Namespace != req.Cluster || o.Namespace != req.Namespace || o.Name != req.Name) {
				return fmt.Sprintf("its infraID %s is also the infraID of HostedCluster %s/%s on management cluster %s: "+
					"two hosted clusters must never share cloud resources and OIDC documents", id, o.Namespace, o.Name, inv.Namespace)
			}
		}
	}
	return ""
}

// namespaceConflict says why the namespaces the HostedCluster uses clash
// with what the cluster allows or a deployment bound there holds, as
// scheduling.ControlPlaneConflict says for a deployment; "" when none.
func namespaceConflict(req Request, in Inputs) string {
	cp := scheduling.ControlPlaneNamespace(req.Namespace, req.Name)
	if slices.Contains(in.HostingConfig.AllowedHostingNamespaces(), cp) {
		return fmt.Sprintf("its control-plane namespace %s (HyperShift's <namespace>-<name>) is a hosting namespace %s allows", cp, configName(in))
	}
	clashes := []struct{ key, what string }{
		{scheduling.HostedClusterKey(req.Namespace, req.Name), "a HostedCluster " + req.Namespace + "/" + req.Name + " is delivered by"},
		{scheduling.ControlPlaneKey(cp), "its control-plane namespace " + cp + " is the control-plane namespace of"},
		{scheduling.HostingKey(cp), "its control-plane namespace " + cp + " is the hosting namespace of"},
		{scheduling.ControlPlaneKey(req.Namespace), "its namespace " + req.Namespace + " is the control-plane namespace of"},
	}
	for i := range in.Deployments {
		d := &in.Deployments[i]
		if d.Status.HostingCluster != req.Cluster {
			continue
		}
		held := scheduling.Occupies(d)
		for _, c := range clashes {
			if slices.Contains(held, c.key) {
				// Not named: it may be another tenant's.
				return c.what + " another HostedClusterDeployment bound to " + req.Cluster
			}
		}
	}
	return ""
}

func configName(in Inputs) string {
	if in.HostingConfigName == "" {
		return "the default HostingConfig"
	}
	return "HostingConfig " + in.HostingConfigName
}

func inventoryOf(invs []v1alpha1.HostedClusterInventory, cluster string) *v1alpha1.HostedClusterInventory {
	for i := range invs {
		if invs[i].Namespace == cluster && invs[i].Name == v1alpha1.InventoryName {
			return &invs[i]
		}
	}
	return nil
}

func entry(inv *v1alpha1.HostedClusterInventory, namespace, name string) *v1alpha1.InventoryHostedCluster {
	for i := range inv.Status.HostedClusters {
		if e := &inv.Status.HostedClusters[i]; e.Namespace == namespace && e.Name == name {
			return e
		}
	}
	return nil
}

func deployment(hcds []v1alpha1.HostedClusterDeployment, namespace, name string) *v1alpha1.HostedClusterDeployment {
	for i := range hcds {
		if hcds[i].Namespace == namespace && hcds[i].Name == name {
			return &hcds[i]
		}
	}
	return nil
}
