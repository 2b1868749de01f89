package extension

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// Problem is why an object of an extension may not be applied.
type Problem struct {
	Phase   string
	Object  string
	Message string
}

func (p Problem) Error() string {
	if p.Object == "" {
		return fmt.Sprintf("phase %s: %s", p.Phase, p.Message)
	}
	return fmt.Sprintf("phase %s: %s: %s", p.Phase, p.Object, p.Message)
}

// productGroupSuffixes are API groups no extension may write anywhere:
// HyperShift's, Cluster API's (HyperShift's machines), OCM's, Package
// Operator's and hcp-fleet's own.
var productGroupSuffixes = []string{"hypershift.openshift.io", "cluster.x-k8s.io", "open-cluster-management.io",
	"package-operator.run", "hcpfleet.io"}

// controlPlaneKinds are what a phase without class may write into a hosted
// control-plane namespace on the management cluster, and nothing else: a
// workload next to the control plane and what it needs to run and be
// reached. The agent's RBAC there (manifests/agent, ClusterRole
// open-cluster-management:hcp-fleet:agent:extension-namespace) grants
// exactly these. Not Secrets (the namespace holds the control plane's keys),
// RBAC, NetworkPolicies (HyperShift's isolation), quotas, Endpoints or
// DaemonSets; a hosted-cluster phase may write any of them into the hosted
// cluster.
var controlPlaneKinds = map[string]bool{
	"/ConfigMap": true, "/Service": true, "/ServiceAccount": true, "/PersistentVolumeClaim": true,
	"apps/Deployment": true, "apps/StatefulSet": true, "batch/Job": true, "batch/CronJob": true,
	"autoscaling/HorizontalPodAutoscaler": true, "route.openshift.io/Route": true,
}

// ControlPlaneKinds lists what a phase without class may write, for
// messages and the docs.
func ControlPlaneKinds() []string {
	out := make([]string, 0, len(controlPlaneKinds))
	for k := range controlPlaneKinds {
		out = append(out, strings.TrimPrefix(k, "/"))
	}
	slices.Sort(out)
	return out
}

// podTemplatePaths are where the pod spec of workload kinds is.
var podTemplatePaths = map[string][]string{
	"/Pod":                   {"spec"},
	"apps/Deployment":        {"spec", "template", "spec"},
	"apps/StatefulSet":       {"spec", "template", "spec"},
	"apps/ReplicaSet":        {"spec", "template", "spec"},
	"batch/Job":              {"spec", "template", "spec"},
	"batch/CronJob":          {"spec", "jobTemplate", "spec", "template", "spec"},
	"/ReplicationController": {"spec", "template", "spec"},
}

// Validate checks every object of phases and returns what may not be
// applied. The hub refuses to deliver an extension with problems; the agent
// checks again before it writes anything, since it must not trust what
// reaches it more than the tenant who wrote it. Cluster scope (only the
// management cluster's API server knows it) is checked by the agent.
func Validate(phases []v1alpha1.ExtensionPhase) []Problem {
	var problems []Problem
	seen := map[string]string{}
	serviceAccounts := map[string]bool{"": true, "default": true}
	var decoded [][]Object
	for _, phase := range phases {
		var objs []Object
		for i, o := range phase.Objects {
			obj, err := Decode(phase, o)
			if err != nil {
				problems = append(problems, Problem{Phase: phase.Name, Object: fmt.Sprintf("objects[%d]", i), Message: err.Error()})
				continue
			}
			objs = append(objs, obj)
			if phase.Class == v1alpha1.PhaseClassControlPlane && obj.Ref.Group == "" && obj.Ref.Kind == "ServiceAccount" {
				serviceAccounts[obj.Ref.Name] = true
			}
		}
		decoded = append(decoded, objs)
	}
	for i, phase := range phases {
		for _, obj := range decoded[i] {
			for _, msg := range objectProblems(phase.Class, obj, serviceAccounts) {
				problems = append(problems, Problem{Phase: phase.Name, Object: obj.Ref.String(), Message: msg})
			}
			if other, ok := seen[obj.Ref.Key()]; ok {
				problems = append(problems, Problem{Phase: phase.Name, Object: obj.Ref.String(),
					Message: "appears more than once (also in phase " + other + "); an object belongs to one phase"})
			}
			seen[obj.Ref.Key()] = phase.Name
		}
	}
	return problems
}

func objectProblems(class v1alpha1.PhaseClass, obj Object, serviceAccounts map[string]bool) []string {
	var out []string
	u, ref := obj.Object, obj.Ref
	if ref.Kind == "" || ref.Version == "" {
		return []string{"apiVersion and kind are required"}
	}
	if u.GetGenerateName() != "" {
		out = append(out, "generateName is not supported: objects are applied by name")
	}
	if errs := validation.IsDNS1123Subdomain(ref.Name); ref.Name == "" || len(errs) > 0 {
		out = append(out, "metadata.name must be a DNS subdomain name")
	}
	if ref.Namespace != "" {
		if errs := validation.IsDNS1123Label(ref.Namespace); len(errs) > 0 {
			out = append(out, "metadata.namespace must be a namespace name")
		}
	}
	for _, suffix := range productGroupSuffixes {
		if ref.Group == suffix || strings.HasSuffix(ref.Group, "."+suffix) {
			out = append(out, "belongs to HyperShift, Cluster API, open-cluster-management, Package Operator or hcp-fleet, which an extension may not write")
		}
	}
	if len(u.GetOwnerReferences()) > 0 || len(u.GetFinalizers()) > 0 {
		out = append(out, "metadata.ownerReferences and metadata.finalizers are set by the extension engine only")
	}
	switch obj.Collision {
	case v1alpha1.CollisionProtectionPrevent:
	case v1alpha1.CollisionProtectionIfNoController:
		if class != v1alpha1.PhaseClassHostedCluster {
			out = append(out, "collisionProtection IfNoController is allowed in hosted-cluster phases only: an extension never adopts objects in the control-plane namespace")
		}
	default:
		out = append(out, fmt.Sprintf("collisionProtection %q is not one of Prevent, IfNoController", obj.Collision))
	}
	if class == v1alpha1.PhaseClassHostedCluster {
		return out
	}
	// The control-plane namespace on the management cluster.
	if ref.Namespace != "" {
		out = append(out, "metadata.namespace must be empty in a phase without class: its objects go into the hosted cluster's control-plane namespace on the management cluster and nowhere else")
	}
	if !controlPlaneKinds[ref.Group+"/"+ref.Kind] {
		out = append(out, "may not be written on the management cluster: a phase without class may write only "+
			strings.Join(ControlPlaneKinds(), ", ")+"; a hosted-cluster phase may write it into the hosted cluster")
	}
	if path, ok := podTemplatePaths[ref.Group+"/"+ref.Kind]; ok {
		out = append(out, podSpecProblems(u, path, serviceAccounts)...)
	}
	return out
}

// podSpecProblems keeps a workload next to the control plane from running
// as one of the control plane's service accounts or reaching into the node.
func podSpecProblems(u *unstructured.Unstructured, path []string, serviceAccounts map[string]bool) []string {
	spec, found, err := unstructured.NestedMap(u.Object, path...)
	if err != nil {
		return []string{"the pod template is malformed"}
	}
	if !found {
		return nil
	}
	var out []string
	for _, key := range []string{"serviceAccountName", "serviceAccount"} {
		if sa, _ := spec[key].(string); !serviceAccounts[sa] {
			out = append(out, fmt.Sprintf("%s %q is not a ServiceAccount of this extension: a workload next to the control plane runs as its own service account or the default one", key, sa))
		}
	}
	for _, key := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		if b, _ := spec[key].(bool); b {
			out = append(out, key+" is not allowed next to the control plane")
		}
	}
	if volumes, _ := spec["volumes"].([]any); len(volumes) > 0 {
		for _, v := range volumes {
			if m, _ := v.(map[string]any); m != nil && m["hostPath"] != nil {
				out = append(out, "hostPath volumes are not allowed next to the control plane")
				break
			}
		}
	}
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		containers, _ := spec[list].([]any)
		for _, c := range containers {
			m, _ := c.(map[string]any)
			if privileged, _, _ := unstructured.NestedBool(m, "securityContext", "privileged"); privileged {
				out = append(out, "privileged containers are not allowed next to the control plane")
			}
		}
	}
	return out
}
