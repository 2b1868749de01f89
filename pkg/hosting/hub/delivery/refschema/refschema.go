// Package refschema finds the fields of an API type that refer to another
// object by name, from the Go type itself rather than from a hand-kept list,
// so that a field HyperShift (or the OpenShift config API it embeds) adds is
// found the day the pinned module moves.
//
// The rule. A struct type is reference-shaped when, after flattening
// embedded and `json:",inline"` structs into their parent:
//
//   - it has a JSON field "name" of a string type (not a pointer: a name
//     that may be absent is not the point of the struct), and
//   - every JSON field it has is one of [Keys], and
//   - every field's Go type (through pointers) is a string or a bool, and
//   - it does not marshal itself (json.Marshaler or encoding.TextMarshaler).
//
// This covers corev1.LocalObjectReference, SecretReference,
// SecretKeySelector, ConfigMapKeySelector, ObjectReference,
// TypedLocalObjectReference and TypedObjectReference,
// configv1.SecretNameReference, ConfigMapNameReference and
// ConfigMapFileReference, and HyperShift's own {name, key} and
// {name, cloudName} references. It leaves out cloud resource references
// such as {id, name}: their name is not an object's. It errs on the side of
// finding too much: a {name} struct that names something other than a
// Secret or ConfigMap is found too, and classified by hand as not local.
//
// The same rule read on unstructured data is [LooksLikeReference].
package refschema

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Keys are the JSON fields a reference-shaped struct may have: those of the
// Kubernetes and OpenShift reference types (ObjectReference,
// TypedObjectReference, the key selectors), and cloudName, which
// HyperShift's OpenStack identity reference carries next to the Secret's
// name.
var Keys = []string{
	"apiGroup", "apiVersion", "cloudName", "fieldPath", "key", "kind", "name",
	"namespace", "optional", "resourceVersion", "uid",
}

// Steps of a Path beyond field names.
const (
	// ListStep after a field name steps into every item of a list.
	ListStep = "[]"
	// MapStep after a field name steps into every value of a map.
	MapStep = "{}"
)

// Field is one reference-shaped field of a type.
type Field struct {
	// Path is the JSON path of the reference object from the walked type:
	// "pullSecret", "config[]", "configuration.apiServer.clientCA".
	Path string
	// Type is the reference's Go type, package path and name:
	// "k8s.io/api/core/v1.LocalObjectReference".
	Type string
}

// Find walks t (a struct, or a pointer to one) and returns every
// reference-shaped field in it, sorted by path. It steps through pointers,
// into list items ("[]") and map values ("{}"), and stops at references and
// at types that marshal themselves. A type met again below itself is not
// walked again (no API type here is recursive; the guard keeps Find total).
func Find(t reflect.Type) []Field {
	var out []Field
	find(t, "", map[reflect.Type]bool{}, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func find(t reflect.Type, path string, onPath map[reflect.Type]bool, out *[]Field) {
	t = deref(t)
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return // []byte is base64 data
		}
		find(t.Elem(), path+ListStep, onPath, out)
		return
	case reflect.Map:
		find(t.Elem(), path+MapStep, onPath, out)
		return
	case reflect.Struct:
	default:
		return
	}
	if IsReference(t) {
		*out = append(*out, Field{Path: path, Type: TypeName(t)})
		return
	}
	if MarshalsItself(t) || onPath[t] {
		return
	}
	onPath[t] = true
	defer delete(onPath, t)
	for _, f := range JSONFields(t) {
		p := f.Name
		if path != "" {
			p = path + "." + f.Name
		}
		find(f.Type, p, onPath, out)
	}
}

// TypeName is t's package path and name, or its Go syntax when unnamed.
func TypeName(t reflect.Type) string {
	if t.PkgPath() == "" || t.Name() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

// IsReference reports whether t (through pointers) is a reference-shaped
// struct, by the rule in the package documentation.
func IsReference(t reflect.Type) bool {
	t = deref(t)
	if t.Kind() != reflect.Struct || MarshalsItself(t) {
		return false
	}
	fields := JSONFields(t)
	hasName := false
	for _, f := range fields {
		if !slices.Contains(Keys, f.Name) {
			return false
		}
		switch deref(f.Type).Kind() {
		case reflect.String:
			if f.Name == "name" {
				hasName = deref(f.Type) == f.Type
			}
		case reflect.Bool:
		default:
			return false
		}
	}
	return hasName
}

// LooksLikeReference is the rule of [IsReference] read on unstructured
// data: an object with a string "name" and no key outside [Keys], whose
// values are all strings or booleans.
func LooksLikeReference(obj map[string]any) bool {
	if _, ok := obj["name"].(string); !ok {
		return false
	}
	for k, v := range obj {
		if !slices.Contains(Keys, k) {
			return false
		}
		switch v.(type) {
		case string, bool:
		default:
			return false
		}
	}
	return true
}

// JSONField is a field of a struct as encoding/json sees it.
type JSONField struct {
	Name string
	Type reflect.Type
}

var fieldCache sync.Map // reflect.Type -> []JSONField

// JSONFields are the JSON fields of the struct t, with the fields of
// embedded structs (and of fields tagged `json:",inline"`, the Kubernetes
// convention) in place of the struct, skipping unexported fields and
// fields tagged "-". An outer field shadows an inlined one of the same name,
// as in encoding/json.
func JSONFields(t reflect.Type) []JSONField {
	if v, ok := fieldCache.Load(t); ok {
		return v.([]JSONField)
	}
	var fields []JSONField
	seen := map[string]bool{}
	var inlined []reflect.Type
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		inline := name == "" && (sf.Anonymous || slices.Contains(strings.Split(opts, ","), "inline"))
		if inline && deref(sf.Type).Kind() == reflect.Struct {
			inlined = append(inlined, deref(sf.Type))
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		seen[name] = true
		fields = append(fields, JSONField{Name: name, Type: sf.Type})
	}
	for _, it := range inlined {
		for _, f := range JSONFields(it) {
			if !seen[f.Name] {
				seen[f.Name] = true
				fields = append(fields, f)
			}
		}
	}
	fieldCache.Store(t, fields)
	return fields
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// MarshalsItself reports whether t encodes itself to JSON: metav1.Time,
// resource.Quantity, intstr.IntOrString, runtime.RawExtension and the like
// are values, not structs to walk.
func MarshalsItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonMarshaler) || p.Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || p.Implements(textMarshaler)
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
