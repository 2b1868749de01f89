package proxy

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

// TranslateDiscovery translates a discovery document: APIGroupList (/apis),
// APIGroup (/apis/<group>), APIResourceList (/apis/<group>/<version>) and
// the aggregated APIGroupDiscoveryList (apidiscovery.k8s.io v2 and v2beta1,
// which share this JSON shape). Any other document is returned unchanged.
//
// When translating to standard, groups that are already standard on the
// cluster (the platform's own CAPI, which the proxy makes unreachable by
// routing every standard path to the private group) are removed, so clients
// see each CAPI group exactly once: ours, under its standard name.
//
// Discovery documents are small and rare, so this decodes into generic maps
// and re-encodes; the apiserver's ETag stays valid as a cache validator
// because the translation is deterministic.
func TranslateDiscovery(body []byte, dir groups.Direction) ([]byte, error) {
	if !dir.ContainsSource(body) && (dir != groups.ToStandard || !bytes.Contains(body, []byte(groups.Standard))) {
		return body, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return body, err
	}
	d := discoveryTranslator{dir: dir}
	switch doc["kind"] {
	case "APIGroupList":
		doc["groups"] = d.filter(doc["groups"], func(g map[string]any) bool { return d.group(g) })
	case "APIGroup":
		d.group(doc)
	case "APIResourceList":
		d.str(doc, "groupVersion", dir.APIVersion)
		for _, r := range list(doc["resources"]) {
			d.str(r, "group", dir.Group)
		}
	case "APIGroupDiscoveryList":
		doc["items"] = d.filter(doc["items"], func(item map[string]any) bool {
			md, _ := item["metadata"].(map[string]any)
			if md == nil {
				return true
			}
			if d.hide(md["name"]) {
				return false
			}
			d.str(md, "name", dir.Group)
			for _, v := range list(item["versions"]) {
				for _, r := range list(v["resources"]) {
					if rk, ok := r["responseKind"].(map[string]any); ok {
						d.str(rk, "group", dir.Group)
					}
					for _, sr := range list(r["subresources"]) {
						if rk, ok := sr["responseKind"].(map[string]any); ok {
							d.str(rk, "group", dir.Group)
						}
					}
				}
			}
			return true
		})
	default:
		return body, nil
	}
	if !d.changed {
		return body, nil
	}
	return json.Marshal(doc)
}

type discoveryTranslator struct {
	dir     groups.Direction
	changed bool
}

// hide reports whether a group entry must disappear: a standard group seen
// while translating to standard.
func (d *discoveryTranslator) hide(name any) bool {
	n, _ := name.(string)
	return d.dir == groups.ToStandard && groups.IsStandard(n)
}

// group translates an APIGroup object; false means drop it.
func (d *discoveryTranslator) group(g map[string]any) bool {
	if d.hide(g["name"]) {
		return false
	}
	d.str(g, "name", d.dir.Group)
	for _, v := range list(g["versions"]) {
		d.str(v, "groupVersion", d.dir.APIVersion)
	}
	if pv, ok := g["preferredVersion"].(map[string]any); ok {
		d.str(pv, "groupVersion", d.dir.APIVersion)
	}
	return true
}

func (d *discoveryTranslator) str(m map[string]any, key string, f func(string) (string, bool)) {
	s, ok := m[key].(string)
	if !ok {
		return
	}
	if out, ok := f(s); ok {
		m[key] = out
		d.changed = true
	}
}

// filter keeps the elements of a JSON array for which keep is true.
func (d *discoveryTranslator) filter(v any, keep func(map[string]any) bool) any {
	arr, ok := v.([]any)
	if !ok {
		return v
	}
	out := arr[:0:0]
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if ok && !keep(m) {
			d.changed = true
			continue
		}
		out = append(out, e)
	}
	return out
}

func list(v any) []map[string]any {
	arr, _ := v.([]any)
	out := make([]map[string]any, 0, len(arr))
	for _, e := range arr {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// TranslateOpenAPIV3 translates an OpenAPI v3 document: the index
// (/openapi/v3, whose `paths` keys and serverRelativeURLs name groups) or a
// group document (/openapi/v3/apis/<group>/<version>, whose paths and
// x-kubernetes-group-version-kind name it). Group names are replaced as whole
// tokens in every key and string (groups.Direction.Text); schema component
// names use reverse-DNS (io.x-k8s.cluster...) and stay as they are, which is
// fine since they are only referenced inside the same document. When
// translating to standard, index entries of the platform's standard groups are
// dropped, as in discovery.
func TranslateOpenAPIV3(body []byte, dir groups.Direction, index bool) ([]byte, error) {
	if !dir.ContainsSource(body) {
		return body, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return body, err
	}
	if m, ok := doc.(map[string]any); ok && index && dir == groups.ToStandard {
		if paths, ok := m["paths"].(map[string]any); ok {
			for k := range paths {
				if g, ok := openAPIGroup(k); ok && groups.IsStandard(g) {
					delete(paths, k)
				}
			}
		}
	}
	return json.Marshal(textWalk(doc, dir))
}

// openAPIGroup extracts the group of an OpenAPI v3 index key "apis/<g>/<v>".
func openAPIGroup(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "apis/")
	if !ok {
		return "", false
	}
	g, _, _ := strings.Cut(rest, "/")
	return g, true
}

func textWalk(v any, dir groups.Direction) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			nk, _ := dir.Text(k)
			out[nk] = textWalk(e, dir)
		}
		return out
	case []any:
		for i := range t {
			t[i] = textWalk(t[i], dir)
		}
		return t
	case string:
		s, _ := dir.Text(t)
		return s
	default:
		return v
	}
}
