package importer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/keypolicy"
)

// DefaultImportedClusterLabels is the hub's default --imported-cluster-labels:
// none. The labels ACM and MCE users put on ManagedClusters (env, team,
// region) are what the admin's Placements and Policies select on, and a
// Policy may deliver hub secrets into every cluster labeled env=prod: a
// tenant whose hosted cluster could claim that label would receive them.
// The fleet admin opts in to the keys tenants may set ("team", "*").
const DefaultImportedClusterLabels = ""

// reservedDomains: a label key whose prefix is one of these domains or a
// subdomain of one is never copied from a HostedClusterDeployment, whatever
// the admin allows: OCM (cluster sets, add-on feature labels, claims), this
// project (management-cluster, the import's bookkeeping), Kubernetes and
// OpenShift act on them.
var reservedDomains = []string{"open-cluster-management.io", "hcpfleet.io", "kubernetes.io", "k8s.io", "openshift.io"}

// reservedKeys are the unprefixed labels OCM and ACM set on ManagedClusters
// themselves (the cluster's name, and the ManagedClusterInfo labels: cloud,
// vendor, cluster ID, OpenShift version, local-cluster, managed-by); a tenant
// must not claim them.
var reservedKeys = []string{
	"name", "vendor", "cloud", "clusterID", "local-cluster", "managed-by",
	"openshiftVersion", "openshiftVersion-major", "openshiftVersion-major-minor",
}

// Reserved reports whether a label key is never copied from a
// HostedClusterDeployment to its ManagedCluster.
func Reserved(key string) bool {
	if !strings.Contains(key, "/") {
		return slices.Contains(reservedKeys, key)
	}
	return keypolicy.InDomain(key, reservedDomains...)
}

// LabelPolicy says which labels of a HostedClusterDeployment its
// ManagedCluster carries. The zero value copies none.
type LabelPolicy struct {
	patterns keypolicy.Patterns
}

// ParseLabelPolicy parses a comma-separated list of label keys and patterns
// (path.Match syntax, where * never crosses the /): "team" one key,
// "example.com/*" every key of a prefix, "*" every key without a prefix,
// "*/*" every key with one. Empty: no label is copied. Reserved keys are
// never copied, even when listed.
func ParseLabelPolicy(s string) (LabelPolicy, error) {
	patterns, err := keypolicy.Parse(s)
	if err != nil {
		return LabelPolicy{}, fmt.Errorf("label %w", err)
	}
	return LabelPolicy{patterns: patterns}, nil
}

// Allows reports whether key is copied: not reserved, and matched by one of
// the policy's patterns.
func (p LabelPolicy) Allows(key string) bool {
	return !Reserved(key) && p.patterns.Match(key)
}

// Filter splits labels into the ones copied and the sorted keys of the ones
// dropped.
func (p LabelPolicy) Filter(labels map[string]string) (copied map[string]string, dropped []string) {
	copied = map[string]string{}
	for k, v := range labels {
		if p.Allows(k) {
			copied[k] = v
		} else {
			dropped = append(dropped, k)
		}
	}
	slices.Sort(dropped)
	return copied, dropped
}

// maxDroppedKeys bounds the keys named in a condition message.
const maxDroppedKeys = 10

// droppedMessage names the label keys (never their values) not copied to
// the ManagedCluster, reserved ones apart, or is empty.
func droppedMessage(dropped []string) string {
	var reserved, notAllowed []string
	for _, k := range dropped {
		if Reserved(k) {
			reserved = append(reserved, k)
		} else {
			notAllowed = append(notAllowed, k)
		}
	}
	var parts []string
	if len(reserved) > 0 {
		parts = append(parts, "reserved: "+keyList(reserved))
	}
	if len(notAllowed) > 0 {
		parts = append(parts, "not allowed by the hub's --imported-cluster-labels: "+keyList(notAllowed))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; labels not copied to the ManagedCluster (" + strings.Join(parts, "; ") + ")"
}

func keyList(keys []string) string {
	if len(keys) > maxDroppedKeys {
		return fmt.Sprintf("%s and %d more", strings.Join(keys[:maxDroppedKeys], ", "), len(keys)-maxDroppedKeys)
	}
	return strings.Join(keys, ", ")
}
