package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

// Scope is what kind of resource a request addresses. It decides how a body
// without its own apiVersion (a merge patch, an apply patch without TypeMeta)
// is classified.
type Scope int

const (
	// ScopeOther is any resource outside the CAPI families: built-in types
	// and other CRDs. Only references to CAPI objects in their metadata (and
	// in Events) are translated; their data is never touched.
	ScopeOther Scope = iota
	// ScopeCAPI is a resource in a CAPI group.
	ScopeCAPI
	// ScopeCRD is apiextensions.k8s.io CustomResourceDefinitions: CAPI reads its
	// own CRDs (contract labels, storage versions), so CRD names and groups of
	// the CAPI family are translated too.
	ScopeCRD
)

func (s Scope) String() string {
	switch s {
	case ScopeCAPI:
		return "capi"
	case ScopeCRD:
		return "crd"
	default:
		return "other"
	}
}

// ErrInvalidJSON is returned for bodies the scanner cannot parse; the HTTP
// layer then passes such a body on untouched for the apiserver to judge.
var ErrInvalidJSON = errors.New("invalid JSON")

// TranslateJSON translates one JSON document (an object, a list, a Table, a
// Status, a merge or apply patch) between the standard and the private CAPI
// groups. It returns doc itself when nothing needs to change.
//
// What is translated, per Kubernetes object ("root") in the document — the
// document itself, each element of a top-level `items`, each `rows[].object`
// of a Table, and the `object` of a watch event:
//   - in a CAPI object (its apiVersion is in the source family, or it has no
//     apiVersion and the request addressed a CAPI resource): every string value
//     of a key `apiVersion` (group/version) or `apiGroup` (group) anywhere in
//     it. CAPI's own types carry references only under those two keys
//     (ObjectReference, ContractVersionedObjectReference, ClusterClass
//     template references, TypedLocalObjectReference), and apiserver-written
//     ones (ownerReferences, managedFields) use apiVersion too;
//   - in any object: metadata.ownerReferences[].apiVersion and
//     metadata.managedFields[].apiVersion, so that a Secret owned by a CAPI
//     Cluster keeps a resolvable owner for the garbage collector at rest;
//   - in an Event: involvedObject/related/regarding .apiVersion;
//   - in a Status: details.group, and group names inside message,
//     details.name and details.causes[].message (groups.Direction.Text);
//   - in a CustomResourceDefinition (or its metadata in ScopeCRD):
//     metadata.name and spec.group.
//
// Nothing else is touched: keys, numbers, label and annotation keys and
// values (`cluster.x-k8s.io/cluster-name` is a label key, not a group),
// finalizers, and any data of non-CAPI objects (a ConfigMap holding a CAPI
// manifest keeps it verbatim). Bytes outside the rewritten strings are copied
// as they are, so formatting and key order survive.
func TranslateJSON(doc []byte, dir groups.Direction, scope Scope) ([]byte, error) {
	out, _, err := translate(doc, dir, scope, false)
	return out, err
}

// TranslateWatchEvent translates one watch event ({"type":..,"object":..}).
// drop is true when the event concerns an object that must stay invisible
// through the proxy (a standard CAPI CRD of another owner, which the private
// one replaces).
func TranslateWatchEvent(frame []byte, dir groups.Direction, scope Scope) (out []byte, drop bool, err error) {
	res, err := translateDoc(frame, dir, scope, true)
	if err != nil {
		return frame, false, err
	}
	return res.out, res.dropDoc, nil
}

func translate(doc []byte, dir groups.Direction, scope Scope, watch bool) ([]byte, result, error) {
	res, err := translateDoc(doc, dir, scope, watch)
	if err != nil {
		return doc, res, err
	}
	return res.out, res, nil
}

// result carries the output and what happened, for tests and metrics.
type result struct {
	out     []byte
	edits   int
	dropped int
	dropDoc bool
}

// cond is when an edit applies, decided once the enclosing object's
// apiVersion and kind are known (they may come after the edited field).
type cond uint8

const (
	always cond = 1 << iota
	ifCAPI
	ifEvent
	ifStatus
	ifCRD
)

// how is what an edit does to the string.
type how uint8

const (
	asAPIVersion how = iota
	asGroup
	asText
	asCRDName
)

type edit struct {
	start, end int // the string token, quotes included
	root       int
	when       cond
	how        how
	escaped    bool
}

type root struct {
	parent     int
	apiVersion string
	hasAV      bool
	kind       string
	name       string
	elem       int // index in the items array, -1 if not an element
	watchObj   bool
}

type span struct{ start, end int }

// ctx is where the scanner is, relative to the innermost root.
type ctx uint8

const (
	cRootTop ctx = iota
	cMetadata
	cOwnerRefs    // inside metadata.ownerReferences
	cOwnerRef     // one ownerReference
	cManaged      // inside metadata.managedFields
	cManagedEntry // one managedFields entry
	cEventRef     // involvedObject / related / regarding
	cDetails      // Status details
	cCauses       // Status details.causes
	cCause        // one cause
	cSpec         // spec
	cRows         // top-level rows of a Table
	cRow          // one row
	cItems        // top-level items
	cOther
)

const maxDepth = 10000

type scanner struct {
	in    []byte
	pos   int
	dir   groups.Direction
	scope Scope
	watch bool
	roots []root
	edits []edit
	depth int
	// the top-level items array, for dropping hidden elements
	items  []span
	commas []int
}

func translateDoc(doc []byte, dir groups.Direction, scope Scope, watch bool) (result, error) {
	s := &scanner{in: doc, dir: dir, scope: scope, watch: watch}
	s.roots = append(s.roots, root{parent: -1, elem: -1})
	s.ws()
	if err := s.value(cRootTop, 0); err != nil {
		return result{out: doc}, err
	}
	s.ws()
	if s.pos != len(s.in) {
		return result{out: doc}, fmt.Errorf("%w: trailing data at offset %d", ErrInvalidJSON, s.pos)
	}
	return s.apply(), nil
}

func (s *scanner) errf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format+" at offset %d", append([]any{ErrInvalidJSON}, append(args, s.pos)...)...)
}

func (s *scanner) ws() {
	for s.pos < len(s.in) {
		switch s.in[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value scans one JSON value in context c of root r.
func (s *scanner) value(c ctx, r int) error {
	if s.pos >= len(s.in) {
		return s.errf("unexpected end")
	}
	switch s.in[s.pos] {
	case '{':
		return s.object(c, r)
	case '[':
		return s.array(c, r)
	case '"':
		_, _, err := s.str()
		return err
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	default:
		return s.number()
	}
}

func (s *scanner) lit(l string) error {
	if len(s.in)-s.pos < len(l) || string(s.in[s.pos:s.pos+len(l)]) != l {
		return s.errf("invalid literal")
	}
	s.pos += len(l)
	return nil
}

func (s *scanner) number() error {
	start := s.pos
	if s.pos < len(s.in) && s.in[s.pos] == '-' {
		s.pos++
	}
	digits := func() int {
		n := 0
		for s.pos < len(s.in) && s.in[s.pos] >= '0' && s.in[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if s.pos < len(s.in) && s.in[s.pos] == '0' {
		s.pos++
	} else if digits() == 0 {
		s.pos = start
		return s.errf("invalid value")
	}
	if s.pos < len(s.in) && s.in[s.pos] == '.' {
		s.pos++
		if digits() == 0 {
			return s.errf("invalid number")
		}
	}
	if s.pos < len(s.in) && (s.in[s.pos] == 'e' || s.in[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.in) && (s.in[s.pos] == '+' || s.in[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			return s.errf("invalid number")
		}
	}
	return nil
}

// str scans a string token; it returns the token's span (quotes included)
// and whether it contains escapes.
func (s *scanner) str() (int, bool, error) {
	start := s.pos
	s.pos++ // opening quote
	escaped := false
	for s.pos < len(s.in) {
		c := s.in[s.pos]
		switch {
		case c == '"':
			s.pos++
			return start, escaped, nil
		case c == '\\':
			escaped = true
			if s.pos+1 >= len(s.in) {
				return 0, false, s.errf("unterminated string")
			}
			switch s.in[s.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				if s.pos+6 > len(s.in) {
					return 0, false, s.errf("short \\u escape")
				}
				for _, h := range s.in[s.pos+2 : s.pos+6] {
					isHex := h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F'
					if !isHex {
						return 0, false, s.errf("invalid \\u escape")
					}
				}
				s.pos += 6
			default:
				return 0, false, s.errf("invalid escape")
			}
		case c < 0x20:
			return 0, false, s.errf("control character in string")
		default:
			s.pos++
		}
	}
	return 0, false, s.errf("unterminated string")
}

// decode returns the value of the string token in[start:end].
func (s *scanner) decode(start, end int, escaped bool) string {
	if !escaped {
		return string(s.in[start+1 : end-1])
	}
	var v string
	if err := json.Unmarshal(s.in[start:end], &v); err != nil {
		return "" // cannot happen: str validated the token
	}
	return v
}

// rawEq compares an unescaped token with a constant without allocating.
func (s *scanner) rawEq(start, end int, want string) bool {
	return string(s.in[start+1:end-1]) == want
}

func (s *scanner) keyIs(start, end int, escaped bool, want string) bool {
	if !escaped {
		return s.rawEq(start, end, want)
	}
	return s.decode(start, end, true) == want
}

func (s *scanner) object(c ctx, r int) error {
	if s.depth++; s.depth > maxDepth {
		return s.errf("nesting too deep")
	}
	defer func() { s.depth-- }()
	s.pos++ // {
	s.ws()
	if s.pos < len(s.in) && s.in[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		s.ws()
		if s.pos >= len(s.in) || s.in[s.pos] != '"' {
			return s.errf("expected object key")
		}
		ks, kesc, err := s.str()
		if err != nil {
			return err
		}
		ke := s.pos
		s.ws()
		if s.pos >= len(s.in) || s.in[s.pos] != ':' {
			return s.errf("expected ':'")
		}
		s.pos++
		s.ws()
		if err := s.member(c, r, ks, ke, kesc); err != nil {
			return err
		}
		s.ws()
		if s.pos >= len(s.in) {
			return s.errf("unterminated object")
		}
		if s.in[s.pos] == ',' {
			s.pos++
			continue
		}
		if s.in[s.pos] == '}' {
			s.pos++
			return nil
		}
		return s.errf("expected ',' or '}'")
	}
}

// member scans the value of key (in[ks:ke]) in an object at context c.
func (s *scanner) member(c ctx, r int, ks, ke int, kesc bool) error {
	key := func(want string) bool { return s.keyIs(ks, ke, kesc, want) }
	isStr := s.pos < len(s.in) && s.in[s.pos] == '"'
	isObj := s.pos < len(s.in) && s.in[s.pos] == '{'
	isArr := s.pos < len(s.in) && s.in[s.pos] == '['

	// Strings that may be edited or that classify the root.
	if isStr {
		vs, vesc, err := s.str()
		if err != nil {
			return err
		}
		ve := s.pos
		switch {
		case key("apiVersion"):
			when := ifCAPI
			switch c {
			case cRootTop:
				rt := &s.roots[r]
				rt.apiVersion, rt.hasAV = s.decode(vs, ve, vesc), true
			case cOwnerRef, cManagedEntry:
				when = always
			case cEventRef:
				when = ifEvent | ifCAPI
			}
			s.candidate(vs, ve, vesc, r, when, asAPIVersion)
		case key("apiGroup"):
			s.candidate(vs, ve, vesc, r, ifCAPI, asGroup)
		case c == cRootTop && key("kind"):
			s.roots[r].kind = s.decode(vs, ve, vesc)
		case c == cRootTop && key("message"), c == cCause && key("message"), c == cDetails && key("name"):
			s.candidate(vs, ve, vesc, r, ifStatus, asText)
		case c == cDetails && key("group"):
			s.candidate(vs, ve, vesc, r, ifStatus, asGroup)
		case c == cMetadata && key("name"):
			s.roots[r].name = s.decode(vs, ve, vesc)
			s.candidate(vs, ve, vesc, r, ifCRD, asCRDName)
		case c == cSpec && key("group"):
			s.candidate(vs, ve, vesc, r, ifCRD, asGroup)
		}
		return nil
	}

	next := cOther
	child := -1
	switch c {
	case cRootTop:
		switch {
		case isObj && key("metadata"):
			next = cMetadata
		case isObj && key("spec"):
			next = cSpec
		case isObj && key("details"):
			next = cDetails
		case isObj && (key("involvedObject") || key("related") || key("regarding")):
			next = cEventRef
		case r == 0 && s.watch && isObj && key("object"):
			child = s.newRoot(r, -1, true)
			next = cRootTop
		case r == 0 && !s.watch && isArr && key("items"):
			next = cItems
		case (r == 0 && !s.watch || s.roots[r].watchObj) && isArr && key("rows"):
			next = cRows // a Table, also as a watch event's object (kubectl get -w)
		}
	case cMetadata:
		switch {
		case isArr && key("ownerReferences"):
			next = cOwnerRefs
		case isArr && key("managedFields"):
			next = cManaged
		}
	case cDetails:
		if isArr && key("causes") {
			next = cCauses
		}
	case cRow:
		if isObj && key("object") {
			child = s.newRoot(r, -1, false)
			next = cRootTop
		}
	}
	if child >= 0 {
		return s.value(next, child)
	}
	return s.value(next, r)
}

func (s *scanner) newRoot(parent, elem int, watchObj bool) int {
	s.roots = append(s.roots, root{parent: parent, elem: elem, watchObj: watchObj})
	return len(s.roots) - 1
}

func (s *scanner) array(c ctx, r int) error {
	if s.depth++; s.depth > maxDepth {
		return s.errf("nesting too deep")
	}
	defer func() { s.depth-- }()
	s.pos++ // [
	s.ws()
	if s.pos < len(s.in) && s.in[s.pos] == ']' {
		s.pos++
		return nil
	}
	var elemCtx ctx
	switch c {
	case cOwnerRefs:
		elemCtx = cOwnerRef
	case cManaged:
		elemCtx = cManagedEntry
	case cCauses:
		elemCtx = cCause
	case cRows:
		elemCtx = cRow
	default:
		elemCtx = cOther
	}
	for i := 0; ; i++ {
		s.ws()
		isObj := s.pos < len(s.in) && s.in[s.pos] == '{'
		switch {
		case c == cItems:
			start := s.pos
			if isObj {
				child := s.newRoot(0, i, false)
				if err := s.value(cRootTop, child); err != nil {
					return err
				}
			} else if err := s.value(cOther, r); err != nil {
				return err
			}
			s.items = append(s.items, span{start, s.pos})
		case isObj && elemCtx != cOther:
			if err := s.value(elemCtx, r); err != nil {
				return err
			}
		default:
			if err := s.value(cOther, r); err != nil {
				return err
			}
		}
		s.ws()
		if s.pos >= len(s.in) {
			return s.errf("unterminated array")
		}
		if s.in[s.pos] == ',' {
			if c == cItems {
				s.commas = append(s.commas, s.pos)
			}
			s.pos++
			continue
		}
		if s.in[s.pos] == ']' {
			s.pos++
			return nil
		}
		return s.errf("expected ',' or ']'")
	}
}

// candidate records a possible edit. Values that cannot contain a source
// group are skipped here, which keeps the common case allocation-free.
func (s *scanner) candidate(vs, ve int, escaped bool, r int, when cond, h how) {
	if !escaped && !s.dir.ContainsSource(s.in[vs+1:ve-1]) {
		return
	}
	s.edits = append(s.edits, edit{start: vs, end: ve, root: r, when: when, how: h, escaped: escaped})
}

// isCAPI reports whether root r is a CAPI object of the source family.
func (s *scanner) isCAPI(r int) bool {
	for r >= 0 {
		rt := &s.roots[r]
		if rt.hasAV {
			g := rt.apiVersion
			if i := strings.IndexByte(g, '/'); i >= 0 {
				return s.dir.IsSource(g[:i])
			}
			return false
		}
		if rt.parent < 0 {
			return s.scope == ScopeCAPI
		}
		r = rt.parent
	}
	return false
}

func (s *scanner) isCRD(r int) bool {
	k := s.roots[r].kind
	if k == "CustomResourceDefinition" {
		return true
	}
	return s.scope == ScopeCRD && (k == "" || k == "PartialObjectMetadata")
}

// hidden reports whether root r must not be shown through the proxy: a
// CRD of the standard family seen while translating to standard belongs to
// someone else (ours are private), and showing it would give clients two CRDs
// with one name.
func (s *scanner) hidden(r int) bool {
	if r == 0 || s.dir != groups.ToStandard || !s.isCRD(r) {
		return false
	}
	n := s.roots[r].name
	if i := strings.IndexByte(n, '.'); i >= 0 {
		return groups.IsStandard(n[i+1:])
	}
	return false
}

func (s *scanner) applies(e *edit) bool {
	w := e.when
	return w&always != 0 ||
		w&ifCAPI != 0 && s.isCAPI(e.root) ||
		w&ifEvent != 0 && s.roots[e.root].kind == "Event" ||
		w&ifStatus != 0 && s.roots[e.root].kind == "Status" ||
		w&ifCRD != 0 && s.isCRD(e.root)
}

func (s *scanner) rewrite(e *edit) (string, bool) {
	v := s.decode(e.start, e.end, e.escaped)
	var out string
	var ok bool
	switch e.how {
	case asAPIVersion:
		out, ok = s.dir.APIVersion(v)
	case asGroup:
		out, ok = s.dir.Group(v)
	case asText:
		out, ok = s.dir.Text(v)
	case asCRDName:
		out, ok = s.dir.CRDName(v)
	}
	if !ok {
		return "", false
	}
	if !e.escaped {
		// v had no escapes and the mapping only swaps DNS names: still no
		// character that needs escaping.
		return `"` + out + `"`, true
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", false
	}
	return string(b), true
}

type repl struct {
	start, end int
	with       string
}

func (s *scanner) apply() result {
	res := result{out: s.in}
	// Hidden roots: a hidden watch object drops the whole event; hidden list
	// elements are cut out together with the right commas.
	var dropElem []bool
	hiddenRoot := make([]bool, len(s.roots))
	for r := 1; r < len(s.roots); r++ {
		if !s.hidden(r) {
			continue
		}
		hiddenRoot[r] = true
		rt := s.roots[r]
		if rt.watchObj {
			res.dropDoc = true
			return res
		}
		if rt.elem >= 0 && rt.elem < len(s.items) {
			if dropElem == nil {
				dropElem = make([]bool, len(s.items))
			}
			dropElem[rt.elem] = true
		}
	}
	var reps []repl
	ei := 0
	addEditsBefore := func(limit int) {
		for ; ei < len(s.edits) && s.edits[ei].start < limit; ei++ {
			e := &s.edits[ei]
			if hiddenRoot[e.root] || !s.applies(e) {
				continue
			}
			if w, ok := s.rewrite(e); ok {
				reps = append(reps, repl{e.start, e.end, w})
				res.edits++
			}
		}
	}
	if dropElem != nil {
		keptBefore := false
		for i, sp := range s.items {
			if i > 0 {
				// comma i-1 sits between element i-1 and i: keep it only
				// between two kept elements.
				if dropElem[i] || !keptBefore {
					addEditsBefore(s.commas[i-1])
					reps = append(reps, repl{s.commas[i-1], s.commas[i-1] + 1, ""})
				}
			}
			if dropElem[i] {
				addEditsBefore(sp.start)
				reps = append(reps, repl{sp.start, sp.end, ""})
				res.dropped++
				// skip edits inside the dropped element
				for ei < len(s.edits) && s.edits[ei].start < sp.end {
					ei++
				}
			} else {
				keptBefore = true
			}
		}
	}
	addEditsBefore(len(s.in) + 1)
	if len(reps) == 0 {
		return res
	}
	sortRepls(reps)
	var b bytes.Buffer
	b.Grow(len(s.in) + 64)
	last := 0
	for _, rp := range reps {
		b.Write(s.in[last:rp.start])
		b.WriteString(rp.with)
		last = rp.end
	}
	b.Write(s.in[last:])
	res.out = b.Bytes()
	return res
}

// sortRepls orders replacements by position (insertion sort: they arrive
// almost sorted, only comma cuts interleave).
func sortRepls(r []repl) {
	for i := 1; i < len(r); i++ {
		for j := i; j > 0 && r[j].start < r[j-1].start; j-- {
			r[j], r[j-1] = r[j-1], r[j]
		}
	}
}
