package proxy

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

// TranslateJSONPatch translates the values of an RFC 6902 JSON patch
// (application/json-patch+json). A patch value carries no apiVersion of its
// own; its meaning comes from the path it is written to. So each value is
// placed back where its path points, inside a synthetic document
// (`/metadata/ownerReferences/0` becomes {"metadata":{"ownerReferences":[V]}}),
// run through TranslateJSON with the same rules as a whole object, and cut
// out again. The wrapper's bytes are never edited, so the cut is exact.
func TranslateJSONPatch(body []byte, dir groups.Direction, scope Scope) ([]byte, error) {
	if !dir.ContainsSource(body) {
		return body, nil
	}
	var ops []map[string]json.RawMessage
	if err := json.Unmarshal(body, &ops); err != nil {
		return body, err
	}
	changed := false
	for _, op := range ops {
		v, ok := op["value"]
		if !ok || !dir.ContainsSource(v) {
			continue
		}
		var path string
		if err := json.Unmarshal(op["path"], &path); err != nil {
			continue
		}
		prefix, suffix := wrapperFor(path)
		doc := make([]byte, 0, len(prefix)+len(v)+len(suffix))
		doc = append(append(append(doc, prefix...), v...), suffix...)
		out, err := TranslateJSON(doc, dir, scope)
		if err != nil {
			return body, err
		}
		nv := out[len(prefix) : len(out)-len(suffix)]
		if !bytes.Equal(nv, v) {
			op["value"] = json.RawMessage(append([]byte{}, nv...))
			changed = true
		}
	}
	if !changed {
		return body, nil
	}
	return json.Marshal(ops)
}

// wrapperFor builds the JSON around a value written at a JSON pointer.
// Numeric tokens and "-" are treated as array positions.
func wrapperFor(pointer string) (prefix, suffix string) {
	if pointer == "" {
		return "", ""
	}
	var p, s strings.Builder
	var closers []string
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if tok == "-" || isIndex(tok) {
			p.WriteString("[")
			closers = append(closers, "]")
			continue
		}
		k, _ := json.Marshal(tok)
		p.WriteString("{")
		p.Write(k)
		p.WriteString(":")
		closers = append(closers, "}")
	}
	for i := len(closers) - 1; i >= 0; i-- {
		s.WriteString(closers[i])
	}
	return p.String(), s.String()
}

func isIndex(tok string) bool {
	if tok == "" {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return false
		}
	}
	return true
}
