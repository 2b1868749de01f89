// Package namespacegc is the agent's namespace janitor on a management
// cluster. The hub delivers a hosted cluster's namespace with update strategy
// CreateOnly and the label hosting.LabelCreatedNamespace, and orphans it when
// the ManifestWork goes, because other hosted clusters may share it. The
// janitor deletes such a namespace once nothing lives in it any more.
//
// It is conservative: it never touches a namespace without the label, keeps
// one it is unsure about, waits until a namespace has stayed empty for a grace
// period (so it does not race a new delivery into it), re-checks with live
// reads right before deleting, and deletes with a resourceVersion
// precondition.
package namespacegc

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// ConfigMaps Kubernetes and OpenShift put into every namespace.
var defaultConfigMaps = map[string]bool{
	"kube-root-ca.crt":         true, // kube-controller-manager's root CA publisher
	"openshift-service-ca.crt": true, // OpenShift's service CA operator
}

// Annotations that mark a Secret the platform generates for a ServiceAccount:
// legacy token Secrets (and OpenShift's dockercfg Secrets before 4.16) carry
// the first, OpenShift's internal-registry pull Secrets from 4.16 the second.
var serviceAccountSecretAnnotations = []string{
	corev1.ServiceAccountNameKey,
	"openshift.io/internal-registry-auth-token.service-account",
}

// Contents is what the janitor found in a candidate namespace. A field left
// empty because that kind was not looked at yet counts as empty: the caller
// decides after each kind and stops at the first that keeps the namespace.
type Contents struct {
	// HostedClusters and NodePools name those in the namespace.
	HostedClusters []string
	NodePools      []string
	// ConfigMaps and Secrets in the namespace (metadata only).
	ConfigMaps []metav1.PartialObjectMetadata
	Secrets    []metav1.PartialObjectMetadata
	// Truncated names the kinds whose list was cut short (more objects than
	// one page): what was not seen may be anything.
	Truncated []string
	// AppliedManifestWorks are all of them on the management cluster.
	AppliedManifestWorks []workv1.AppliedManifestWork
}

// Decision says whether to delete a namespace, and if not, why.
type Decision struct {
	Delete bool
	// Reasons the namespace stays (none when Delete).
	Reasons []string
}

func (d Decision) String() string {
	if d.Delete {
		return "empty"
	}
	return strings.Join(d.Reasons, "; ")
}

// maxReasons bounds the reasons kept, so a namespace full of objects does
// not make a huge log line.
const maxReasons = 5

// Decide tells whether namespace ns, holding c, may be deleted at now. An
// AppliedManifestWork younger than pendingWindow that lists no applied
// resources yet may be about to deliver into any namespace (the work agent
// creates it before it applies anything), so it keeps every namespace.
func Decide(ns *corev1.Namespace, c Contents, now time.Time, pendingWindow time.Duration) Decision {
	var reasons []string
	keep := func(format string, args ...any) {
		if len(reasons) < maxReasons {
			reasons = append(reasons, fmt.Sprintf(format, args...))
		}
	}
	if ns.Labels[hosting.LabelCreatedNamespace] != "true" {
		keep("not labelled %s=true: hcp-fleet did not create it", hosting.LabelCreatedNamespace)
	}
	if ns.DeletionTimestamp != nil {
		keep("already terminating")
	}
	for _, name := range c.HostedClusters {
		keep("HostedCluster %s", name)
	}
	for _, name := range c.NodePools {
		keep("NodePool %s", name)
	}
	for i := range c.ConfigMaps {
		if cm := &c.ConfigMaps[i]; !defaultConfigMaps[cm.Name] || delivered(cm.Labels) {
			keep("ConfigMap %s", cm.Name)
		}
	}
	for i := range c.Secrets {
		if s := &c.Secrets[i]; !serviceAccountSecret(s.Annotations) || delivered(s.Labels) {
			keep("Secret %s", s.Name)
		}
	}
	for _, kind := range c.Truncated {
		keep("more %s than one list page: not all were looked at", kind)
	}
	for i := range c.AppliedManifestWorks {
		w := &c.AppliedManifestWorks[i]
		if r, ok := appliedIn(w, ns.Name); ok {
			keep("AppliedManifestWork %s applied %s", w.Name, r)
			continue
		}
		if len(w.Status.AppliedResources) == 0 && w.DeletionTimestamp == nil && now.Sub(w.CreationTimestamp.Time) < pendingWindow {
			keep("AppliedManifestWork %s has not reported what it applies yet", w.Name)
		}
	}
	return Decision{Delete: len(reasons) == 0, Reasons: reasons}
}

// delivered tells whether labels mark an object the hub delivered for a
// HostedClusterDeployment.
func delivered(labels map[string]string) bool {
	_, ns := labels[hosting.LabelHCDNamespace]
	_, name := labels[hosting.LabelHCDName]
	return ns || name
}

func serviceAccountSecret(annotations map[string]string) bool {
	for _, a := range serviceAccountSecretAnnotations {
		if annotations[a] != "" {
			return true
		}
	}
	return false
}

// appliedIn returns a resource w applied in namespace ns, or ns itself (a
// ManifestWork that still delivers the namespace still wants it).
func appliedIn(w *workv1.AppliedManifestWork, ns string) (string, bool) {
	for _, r := range w.Status.AppliedResources {
		switch {
		case r.Namespace == ns:
			return fmt.Sprintf("%s %s/%s", resourceName(r), r.Namespace, r.Name), true
		case r.Namespace == "" && r.Group == "" && r.Resource == "namespaces" && r.Name == ns:
			return "the namespace itself", true
		}
	}
	return "", false
}

func resourceName(r workv1.AppliedManifestResourceMeta) string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

// namespacesOf lists the namespaces w applied something in (or applied), so
// a change to w looks at them again.
func namespacesOf(w *workv1.AppliedManifestWork) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range w.Status.AppliedResources {
		ns := r.Namespace
		if ns == "" && r.Group == "" && r.Resource == "namespaces" {
			ns = r.Name
		}
		if ns != "" && !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	return out
}
