package delivery

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/delivery/refschema"
)

// Kind of a referenced object.
const (
	KindSecret    = "Secret"
	KindConfigMap = "ConfigMap"
)

// Class is what the delivery does with a reference-shaped field of a
// HostedClusterSpec or NodePoolSpec (references.go classifies every one).
type Class string

const (
	// ClassSecret names a Secret HyperShift reads from the HostedCluster's
	// namespace: the hub reads it from the HostedClusterDeployment's
	// namespace and delivers a renamed copy into the hosting namespace.
	ClassSecret Class = KindSecret
	// ClassConfigMap is ClassSecret for a ConfigMap.
	ClassConfigMap Class = KindConfigMap
	// ClassNotLocal names something that is not a Secret or ConfigMap of
	// the HostedCluster's namespace (another kind, an object elsewhere); it
	// passes through as written.
	ClassNotLocal Class = "NotLocal"
)

// classification of one reference-shaped field.
type classification struct {
	class Class
	// why, for ClassNotLocal: what the name refers to instead.
	why string
}

var (
	secret    = classification{class: ClassSecret}
	configMap = classification{class: ClassConfigMap}
)

func notLocal(why string) classification { return classification{class: ClassNotLocal, why: why} }

// refPath is a copied reference: a path of a reference object (its name in
// .name) split into steps, with "[]" and "{}" steps of their own.
type refPath struct {
	kind  string
	steps []string
}

// copied are the Secret and ConfigMap references of a table, sorted by path
// so that References keeps the same first field from one call to the next.
func copied(table map[string]classification) []refPath {
	paths := make([]string, 0, len(table))
	for p, c := range table {
		if c.class == ClassSecret || c.class == ClassConfigMap {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	out := make([]refPath, 0, len(paths))
	for _, p := range paths {
		out = append(out, refPath{kind: string(table[p].class), steps: splitPath(p)})
	}
	return out
}

// splitPath splits "a.b[].c{}.d" into a, b, [], c, {}, d.
func splitPath(path string) []string {
	var steps []string
	for _, s := range strings.Split(path, ".") {
		var suffixes []string
		for {
			if rest, ok := strings.CutSuffix(s, refschema.ListStep); ok {
				s, suffixes = rest, append([]string{refschema.ListStep}, suffixes...)
			} else if rest, ok := strings.CutSuffix(s, refschema.MapStep); ok {
				s, suffixes = rest, append([]string{refschema.MapStep}, suffixes...)
			} else {
				break
			}
		}
		steps = append(append(steps, s), suffixes...)
	}
	return steps
}

var (
	hostedClusterCopied = copied(hostedClusterClasses)
	nodePoolCopied      = copied(nodePoolClasses)
)

// Reference is one Secret or ConfigMap a HostedClusterDeployment refers to.
type Reference struct {
	Kind string
	Name string
	// Field is where, for messages: spec.hostedCluster.spec.pullSecret.name.
	Field string
}

// copyHashLength is how many hex digits of the SHA-256 of the whole
// (namespace, HostedClusterDeployment, UID, kind, name) tuple end a copy's
// name: 64 bits, so that no two tuples share a name by accident and no
// tenant can find a second tuple that takes another's (the readable part
// pins all but a handful of candidates).
const copyHashLength = 16

// CopyName is the name, in the hosting namespace, of the copy of the
// Secret or ConfigMap (kind) refName that the HostedClusterDeployment
// hcdNamespace/hcdName with UID hcdUID refers to. It starts with a readable
// "<hcd>-<refName>" (a refName already prefixed "<hcd>-" is not prefixed
// again), cut to fit, and ends with a hash of the whole tuple, so it is
// injective: HCD "a" referring to "b-c" and HCD "a-b" referring to "c", or
// two HCDs of the same name in different hub namespaces sharing a hosting
// namespace, never write over each other's copies. The UID, which the API
// server picks at random when the HCD is created, salts the hash: nobody
// can compute another HCD's copy names in advance to claim them first on a
// management cluster, or to point a reference of their own at them.
// Deterministic, and a valid object name (DNS subdomain of at most 253
// characters) for valid inputs.
func CopyName(hcdNamespace, hcdName string, hcdUID types.UID, kind, refName string) string {
	// NUL cannot occur in any of the five, so the joined string is
	// unambiguous.
	return copyName(hcdName, refName, hcdNamespace+"\x00"+hcdName+"\x00"+string(hcdUID)+"\x00"+kind+"\x00"+refName)
}

// LegacyCopyName is the name hubs before RenderVersion 5 gave a copy:
// CopyName without the UID. A ManifestWork written by such a hub keeps its
// copies under these names (Spec.KeptCopies, Spec.KeepDelivered); new HCDs
// never get one.
func LegacyCopyName(hcdNamespace, hcdName, kind, refName string) string {
	return copyName(hcdName, refName, hcdNamespace+"\x00"+hcdName+"\x00"+kind+"\x00"+refName)
}

// copyName is "<hcdName>-<refName>" (refName alone when it starts so), cut
// to fit, ending with copyHashLength hex digits of the SHA-256 of tuple.
func copyName(hcdName, refName, tuple string) string {
	sum := sha256.Sum256([]byte(tuple))
	suffix := "-" + hex.EncodeToString(sum[:])[:copyHashLength]
	readable := hcdName + "-" + refName
	if strings.HasPrefix(refName, hcdName+"-") {
		readable = refName
	}
	if room := maxNameLength - len(suffix); len(readable) > room {
		readable = strings.TrimRight(readable[:room], "-.")
	}
	return readable + suffix
}

// keptCopies are the copies of refs that an existing ManifestWork delivers
// (delivered: "Kind/name" of each of its manifests) under their
// LegacyCopyName.
func keptCopies(s Spec, refs []Reference, delivered map[string]bool) map[string]string {
	var kept map[string]string
	for _, r := range refs {
		if legacy := LegacyCopyName(s.Namespace, s.Name, r.Kind, r.Name); delivered[r.Kind+"/"+legacy] {
			if kept == nil {
				kept = map[string]string{}
			}
			kept[r.Kind+"/"+r.Name] = legacy
		}
	}
	return kept
}

// maxNameLength is the longest object name (a DNS subdomain), as in
// hosting.BoundedName.
const maxNameLength = 253

// walk calls visit for every object at steps under obj, with its field path
// for messages.
func walk(obj any, steps []string, field string, visit func(field string, ref map[string]any)) {
	if len(steps) == 0 {
		if m, ok := obj.(map[string]any); ok {
			visit(field, m)
		}
		return
	}
	switch step := steps[0]; step {
	case refschema.ListStep:
		items, _ := obj.([]any)
		for i, item := range items {
			walk(item, steps[1:], fmt.Sprintf("%s[%d]", field, i), visit)
		}
	case refschema.MapStep:
		m, _ := obj.(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walk(m[k], steps[1:], fmt.Sprintf("%s[%s]", field, k), visit)
		}
	default:
		m, _ := obj.(map[string]any)
		if child, ok := m[step]; ok {
			walk(child, steps[1:], field+"."+step, visit)
		}
	}
}

// references lists the Secret and ConfigMap references in spec, an
// unstructured HostedClusterSpec or NodePoolSpec; with rename, it also
// points each at its copy in place: the copy's name, and, where the
// reference has a namespace, the hosting namespace the copy lives in
// (UnknownReferences reports a namespace set by the tenant; this keeps a
// spec delivered anyway from pointing anywhere but at the copy).
func references(spec map[string]any, paths []refPath, field string, rename func(kind, name string) string, hostingNamespace string) []Reference {
	var refs []Reference
	for _, p := range paths {
		walk(spec, p.steps, field, func(f string, ref map[string]any) {
			name, _ := ref["name"].(string)
			if name == "" {
				return
			}
			refs = append(refs, Reference{Kind: p.kind, Name: name, Field: f + ".name"})
			if rename != nil {
				ref["name"] = rename(p.kind, name)
				if _, ok := ref["namespace"]; ok {
					ref["namespace"] = hostingNamespace
				}
			}
		})
	}
	return refs
}

// uniqueRefs drops repeated kind/name pairs, keeping the first field, sorted.
func uniqueRefs(refs []Reference) []Reference {
	seen := map[string]bool{}
	var out []Reference
	for _, r := range refs {
		if k := r.Kind + "/" + r.Name; !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}
