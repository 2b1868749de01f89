package delivery

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/keypolicy"
)

// DefaultHostedClusterAnnotations is the hub's default
// --hosted-cluster-annotations: the annotations of a reserved domain a
// tenant may still set on its HostedCluster. Only
// hypershift.openshift.io/cleanup-cloud-resources: "hypershift destroy" sets
// it, and it only makes HyperShift remove the cloud resources the hosted
// cluster itself created (load balancers, volumes) when it is deleted. Every
// other HyperShift annotation overrides images, certificates, security or
// resources of the control plane the management-cluster admin runs, so the
// fleet admin opts in to those.
const DefaultHostedClusterAnnotations = "hypershift.openshift.io/cleanup-cloud-resources"

// restrictedAnnotationDomains: an annotation key whose prefix is one of these
// domains or a subdomain of one is copied onto the HostedCluster only when
// the admin allows it: HyperShift reads powerful knobs from them
// (control-plane-operator-image, image-overrides,
// disable-pki-reconciliation, resource-request-override.…), and this
// project, Kubernetes and OCM act on theirs.
var restrictedAnnotationDomains = []string{"hypershift.openshift.io", "hcpfleet.io", "kubernetes.io", "k8s.io", "open-cluster-management.io"}

// ownedAnnotationKeys are the HostedCluster annotations hcp-fleet writes or
// reads back itself (the agent's CAPI migration state, mirrored into the
// HostedClusterDeployment's status); a tenant never sets them.
var ownedAnnotationKeys = []string{"hypershift.openshift.io/migration-in-progress", "hypershift.openshift.io/migration-failed"}

// OwnedAnnotation reports whether an annotation key belongs to hcp-fleet on
// the HostedCluster and is never copied from a HostedClusterDeployment,
// whatever the admin allows: keys of hcpfleet.io itself (not its
// subdomains) and ownedAnnotationKeys.
func OwnedAnnotation(key string) bool {
	if slices.Contains(ownedAnnotationKeys, key) {
		return true
	}
	prefix, _, found := strings.Cut(key, "/")
	return found && strings.EqualFold(prefix, "hcpfleet.io")
}

// RestrictedAnnotation reports whether an annotation key is copied only
// when the admin allows it.
func RestrictedAnnotation(key string) bool {
	return keypolicy.InDomain(key, restrictedAnnotationDomains...)
}

// AnnotationPolicy says which annotations of spec.hostedCluster.metadata
// reach the HostedCluster: every key outside the restricted domains (a
// tenant's own: "team", "example.com/owner"), and the restricted keys the
// admin allows; never an owned key. The zero value allows no restricted key.
type AnnotationPolicy struct {
	allowed keypolicy.Patterns
}

// ParseAnnotationPolicy parses the admin's comma-separated list of
// restricted annotation keys and patterns that may pass (keypolicy.Parse:
// "hypershift.openshift.io/cleanup-cloud-resources",
// "hypershiftsim.hcpfleet.io/*").
func ParseAnnotationPolicy(s string) (AnnotationPolicy, error) {
	p, err := keypolicy.Parse(s)
	if err != nil {
		return AnnotationPolicy{}, fmt.Errorf("annotation %w", err)
	}
	return AnnotationPolicy{allowed: p}, nil
}

// Allows reports whether key is copied onto the HostedCluster.
func (p AnnotationPolicy) Allows(key string) bool {
	if OwnedAnnotation(key) {
		return false
	}
	return !RestrictedAnnotation(key) || p.allowed.Match(key)
}

// Filter splits annotations into the ones copied (nil when none) and the
// sorted keys of the ones dropped.
func (p AnnotationPolicy) Filter(annotations map[string]string) (copied map[string]string, dropped []string) {
	for k, v := range annotations {
		if !p.Allows(k) {
			dropped = append(dropped, k)
			continue
		}
		if copied == nil {
			copied = map[string]string{}
		}
		copied[k] = v
	}
	slices.Sort(dropped)
	return copied, dropped
}

// maxDroppedAnnotations bounds the keys named in a condition message.
const maxDroppedAnnotations = 10

// droppedAnnotationsMessage names the annotation keys (never their values)
// not copied onto the HostedCluster or a NodePool, or is empty.
func droppedAnnotationsMessage(dropped []string) string {
	if len(dropped) == 0 {
		return ""
	}
	keys := strings.Join(dropped, ", ")
	if len(dropped) > maxDroppedAnnotations {
		keys = fmt.Sprintf("%s and %d more", strings.Join(dropped[:maxDroppedAnnotations], ", "), len(dropped)-maxDroppedAnnotations)
	}
	return "; annotations not copied to the HostedCluster or its NodePools (reserved, or not allowed by the hub's --hosted-cluster-annotations): " + keys
}
