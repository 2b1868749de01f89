package scheduling

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// Names that key shared state on management clusters and in the clouds
// behind them are the hub's to derive or check fleet-wide: a tenant's choice
// of one must never reach another tenant's hosted cluster.
//
//   - spec.infraID keys a hosted cluster's cloud resources and OIDC
//     documents: the hub derives it from the HostedClusterDeployment's UID
//     when the tenant leaves it empty (DeriveInfraID), and refuses one a
//     tenant sets that another HostedClusterDeployment has first
//     (InfraIDTaken).
//   - HyperShift runs a hosted cluster's control plane in the namespace
//     <hostingNamespace>-<name> (ControlPlaneNamespace): on one management
//     cluster it must be neither a hosting namespace the HostingConfig
//     allows nor another bound hosted cluster's control-plane or hosting
//     namespace, and its hosting namespace no other bound hosted cluster's
//     control-plane namespace (a HostingConfig changed from [a] to [a-b]
//     leaves b-c bound in a while c comes to a-b; from [clusters] to
//     [clusters-prod], prod bound in clusters while others come to its
//     control-plane namespace). The scheduler's RejectControlPlaneNamespace
//     filter; the delivery checks again for bound ones.

// IndexInfraID indexes HostedClusterDeployments by their effective infraID
// (EffectiveInfraID).
const IndexInfraID = "hcpfleet.infraID"

// IndexNamespaces indexes bound HostedClusterDeployments by the namespaces
// they use on their management cluster: NamespaceIndexKey(status.hostingCluster,
// key) for each key of namespaceHoldings.
const IndexNamespaces = "hcpfleet.namespaces"

// infraIDSuffixLength is how many characters of a hash of the UID a derived
// infraID ends with, as HyperShift's own infraIDs end with 5 random ones.
const infraIDSuffixLength = 5

// maxInfraIDLength is the longest infraID HyperShift's HostedCluster API
// accepts (spec.infraID: MaxLength 253).
const maxInfraIDLength = 253

// lowerBase32 spells a hash with lowercase letters and digits only, which an
// infraID allows.
var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// DeriveInfraID is the infraID the hub gives a hosted cluster whose
// HostedClusterDeployment leaves spec.hostedCluster.spec.infraID empty:
// "<name>-<5 lowercase base32 characters of a hash of the UID>". The UID
// makes it fleet-unique (another HostedClusterDeployment of the same name,
// in another namespace or created again after this one, gets another), the
// name keeps it readable in the cloud's consoles, and a pure function of
// the object keeps it the same across hub restarts and replicas. Within
// HyperShift's limits: lowercase alphanumerics and '-', starting and ending
// with an alphanumeric, at most 253 characters.
func DeriveInfraID(name string, uid types.UID) string {
	sum := sha256.Sum256([]byte(uid))
	suffix := lowerBase32.EncodeToString(sum[:])[:infraIDSuffixLength]
	name = strings.TrimRight(name[:min(len(name), maxInfraIDLength-1-infraIDSuffixLength)], "-.")
	name = strings.ReplaceAll(name, ".", "-")
	if name == "" {
		return suffix
	}
	return name + "-" + suffix
}

// TenantInfraID is the infraID hcd's tenant set (spec.hostedCluster.spec.infraID).
func TenantInfraID(hcd *v1alpha1.HostedClusterDeployment) string {
	return hcd.Spec.HostedCluster.Spec.InfraID
}

// EffectiveInfraID is the infraID hcd's hosted cluster is delivered with: the
// tenant's, else the derived one. (A HostedCluster an older hub delivered
// without one carries the infraID HyperShift generated, which the hub does
// not know.)
func EffectiveInfraID(hcd *v1alpha1.HostedClusterDeployment) string {
	if id := TenantInfraID(hcd); id != "" {
		return id
	}
	// An adopted one keeps the infraID its HostedCluster ran with.
	if id, _ := hcdstatus.AdoptedIdentity(hcd.Annotations); id != "" {
		return id
	}
	// The identity UID: a restored deployment keeps its infraID.
	return DeriveInfraID(hcd.Name, hcdstatus.IdentityUID(hcd))
}

// Precedes orders HostedClusterDeployments that claim one name: the one
// created first holds it, ties broken by namespace and name. Whoever comes
// later can never take a name from one that is already there, whatever it
// sets.
func Precedes(a, b *v1alpha1.HostedClusterDeployment) bool {
	at, bt := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !at.Equal(bt) {
		return at.Before(bt)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// heldByAnother reports whether one of others (HostedClusterDeployments
// claiming the same name as hcd) other than hcd itself holds it.
func heldByAnother(hcd *v1alpha1.HostedClusterDeployment, others []v1alpha1.HostedClusterDeployment) bool {
	return slices.ContainsFunc(others, func(o v1alpha1.HostedClusterDeployment) bool {
		return o.UID != hcd.UID && Precedes(&o, hcd)
	})
}

// InfraIDTaken says why hcd may not have its infraID, or "" when it may:
// a HostedClusterDeployment the hub knows, created before it, has the same
// effective infraID. The other one is not named (it may be another
// tenant's). c must have IndexInfraID (AddIndexes).
func InfraIDTaken(ctx context.Context, c client.Reader, hcd *v1alpha1.HostedClusterDeployment) (string, error) {
	id := TenantInfraID(hcd)
	if id == "" {
		// Derived from the UID: nobody takes it but by chance, and a
		// tenant's later copy of it is refused, not this one.
		id = EffectiveInfraID(hcd)
	}
	var list v1alpha1.HostedClusterDeploymentList
	if err := c.List(ctx, &list, client.MatchingFields{IndexInfraID: id}, client.UnsafeDisableDeepCopy); err != nil {
		return "", err
	}
	if !heldByAnother(hcd, list.Items) {
		return "", nil
	}
	return InfraIDTakenMessage(id), nil
}

// InfraIDTakenMessage is the message of ReasonInfraIDTaken.
func InfraIDTakenMessage(id string) string {
	return fmt.Sprintf("spec.hostedCluster.spec.infraID %s is the infraID of another HostedClusterDeployment that came first; "+
		"an infraID keys a hosted cluster's cloud resources and OIDC documents, so two must never share one: "+
		"leave it empty (the hub derives a fleet-unique one) or choose another", id)
}

// ControlPlaneNamespace is the namespace HyperShift runs the control plane
// of HostedCluster namespace/name in (its manifests.HostedControlPlaneNamespace:
// "<namespace>-<name>", dots in the name turned into dashes).
func ControlPlaneNamespace(hostingNamespace, name string) string {
	return hostingNamespace + "-" + strings.ReplaceAll(name, ".", "-")
}

// ControlPlaneKey and HostingKey name a namespace a bound hosted cluster
// uses on its management cluster, as its control plane's or as its hosting
// namespace, in Candidate.Occupied. They have no "/", which every
// HostedClusterKey and NodePoolKey has, and ':' appears in no namespace
// name, so they never equal one of theirs.
func ControlPlaneKey(namespace string) string { return "controlplane:" + namespace }

// HostingKey: see ControlPlaneKey.
func HostingKey(namespace string) string { return "hosting:" + namespace }

// NamespaceIndexKey is the IndexNamespaces key of a namespace use (key) on
// a management cluster.
func NamespaceIndexKey(cluster, key string) string {
	return cluster + "/" + key
}

// namespaceHoldings are the namespace uses (ControlPlaneKey, HostingKey) a
// hosted cluster in hostingNamespace holds once bound.
func namespaceHoldings(hostingNamespace, name string) []string {
	return []string{ControlPlaneKey(ControlPlaneNamespace(hostingNamespace, name)), HostingKey(hostingNamespace)}
}

// namespaceClash is a namespace use that, held by another bound hosted
// cluster, clashes with one in hostingNamespace; what says how, to be
// followed by who holds it.
type namespaceClash struct {
	key, what string
}

// namespaceClashes are the namespace uses another bound hosted cluster must
// not hold for one in hostingNamespace to be bound there. Pure.
func namespaceClashes(hostingNamespace, name string) []namespaceClash {
	cp := ControlPlaneNamespace(hostingNamespace, name)
	return []namespaceClash{
		{ControlPlaneKey(cp), fmt.Sprintf("the control-plane namespace %s (HyperShift's <hostingNamespace>-<name>) is the control-plane namespace of", cp)},
		{HostingKey(cp), fmt.Sprintf("the control-plane namespace %s (HyperShift's <hostingNamespace>-<name>) is the hosting namespace of", cp)},
		{ControlPlaneKey(hostingNamespace), fmt.Sprintf("the hosting namespace %s is the control-plane namespace of", hostingNamespace)},
	}
}

// controlPlaneIsHostingNamespace says why the control-plane namespace of a
// hosted cluster in hostingNamespace would be one of the hosting namespaces
// the policy allows, or "" when it is not. Pure.
func controlPlaneIsHostingNamespace(hostingNamespace, name string, allowed []string, configName string) string {
	cp := ControlPlaneNamespace(hostingNamespace, name)
	if !slices.Contains(allowed, cp) {
		return ""
	}
	return fmt.Sprintf("the control-plane namespace %s (HyperShift's <hostingNamespace>-<name>) is a hosting namespace %s allows", cp, configName)
}

// ControlPlaneConflict says why hcd, bound to cluster, may not have its
// control-plane namespace there, or "" when it may: it is a hosting
// namespace the cluster's HostingConfig allows (allowed, named configName),
// or one of its namespaces clashes with one another HostedClusterDeployment
// bound there that came first uses (namespaceClashes). The other one is not
// named. c must have IndexNamespaces (AddIndexes).
func ControlPlaneConflict(ctx context.Context, c client.Reader, hcd *v1alpha1.HostedClusterDeployment, cluster string, allowed []string, configName string) (string, error) {
	req := RequestFor(hcd)
	if why := controlPlaneIsHostingNamespace(req.HostingNamespace, req.Name, allowed, configName); why != "" {
		return why, nil
	}
	for _, clash := range namespaceClashes(req.HostingNamespace, req.Name) {
		var list v1alpha1.HostedClusterDeploymentList
		if err := c.List(ctx, &list, client.MatchingFields{IndexNamespaces: NamespaceIndexKey(cluster, clash.key)}, client.UnsafeDisableDeepCopy); err != nil {
			return "", err
		}
		if heldByAnother(hcd, list.Items) {
			return clash.what + " another HostedClusterDeployment bound to management cluster " + cluster, nil
		}
	}
	return "", nil
}

// indexFuncs are the indexes AddIndexes registers on HostedClusterDeployments.
var indexFuncs = map[string]client.IndexerFunc{
	IndexInfraID: func(o client.Object) []string {
		return []string{EffectiveInfraID(o.(*v1alpha1.HostedClusterDeployment))}
	},
	IndexNamespaces: func(o client.Object) []string {
		hcd := o.(*v1alpha1.HostedClusterDeployment)
		if hcd.Status.HostingCluster == "" {
			return nil
		}
		req := RequestFor(hcd)
		var keys []string
		for _, k := range namespaceHoldings(req.HostingNamespace, req.Name) {
			keys = append(keys, NamespaceIndexKey(hcd.Status.HostingCluster, k))
		}
		return keys
	},
}
