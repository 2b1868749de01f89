// Package groups is the one place that knows how the standard Cluster API
// groups map to HyperShift's private copies of them.
//
// The HyperShift "private CAPI types" enhancement (openshift/enhancements#1927) moves every
// `*.cluster.x-k8s.io` group to `*.cluster.hypershift.openshift.io`:
//
//	cluster.x-k8s.io                 <-> cluster.hypershift.openshift.io
//	infrastructure.cluster.x-k8s.io  <-> infrastructure.cluster.hypershift.openshift.io
//	<anything>.cluster.x-k8s.io      <-> <anything>.cluster.hypershift.openshift.io
//
// The mapping is a bijection between the two sets of group names, so every
// translation here has an exact inverse; the CRD rewriter (pkg/capi/crds) and
// the API proxy (pkg/capi/proxy) both go through these functions, and the
// proxy's fuzz test checks the round trip.
//
// Provider groups outside `cluster.x-k8s.io` (for example the Agent provider's
// `capi-provider.agent-install.openshift.io`) are not part of the mapping: the
// platform does not install them, so they never conflict, and the enhancement
// leaves them alone.
package groups

import (
	"bytes"
	"strings"
)

const (
	// Standard is the upstream Cluster API core group.
	Standard = "cluster.x-k8s.io"
	// Private is HyperShift's private copy of the core group.
	Private = "cluster.hypershift.openshift.io"
)

// Direction says which way a translation goes.
type Direction int

const (
	// ToPrivate rewrites standard groups into private ones (client → apiserver).
	ToPrivate Direction = iota
	// ToStandard rewrites private groups into standard ones (apiserver → client).
	ToStandard
)

// String names the direction for messages.
func (d Direction) String() string {
	if d == ToPrivate {
		return "to-private"
	}
	return "to-standard"
}

// Reverse is the opposite direction.
func (d Direction) Reverse() Direction {
	if d == ToPrivate {
		return ToStandard
	}
	return ToPrivate
}

// from and to are the group suffixes a direction reads and writes.
func (d Direction) from() string {
	if d == ToPrivate {
		return Standard
	}
	return Private
}

func (d Direction) to() string {
	if d == ToPrivate {
		return Private
	}
	return Standard
}

// Source is the base group a direction translates from (Standard for ToPrivate).
func (d Direction) Source() string { return d.from() }

// Target is the base group a direction translates to (Private for ToPrivate).
func (d Direction) Target() string { return d.to() }

// IsStandard reports whether g is a standard Cluster API group
// (`cluster.x-k8s.io` or `*.cluster.x-k8s.io`).
func IsStandard(g string) bool { return inFamily(g, Standard) }

// IsPrivate reports whether g is a private Cluster API group
// (`cluster.hypershift.openshift.io` or `*.cluster.hypershift.openshift.io`).
func IsPrivate(g string) bool { return inFamily(g, Private) }

// IsSource reports whether g is a group this direction rewrites.
func (d Direction) IsSource(g string) bool { return inFamily(g, d.from()) }

func inFamily(g, base string) bool {
	if len(g) == len(base) {
		return g == base
	}
	return len(g) > len(base) && strings.HasSuffix(g, base) && g[len(g)-len(base)-1] == '.'
}

// Group translates a group name. ok is false (and g is returned unchanged)
// when g is not a source group of d.
func (d Direction) Group(g string) (string, bool) {
	from := d.from()
	if !inFamily(g, from) {
		return g, false
	}
	return g[:len(g)-len(from)] + d.to(), true
}

// APIVersion translates an apiVersion ("group/version"); core versions ("v1")
// and non-CAPI groups are returned unchanged with ok false.
func (d Direction) APIVersion(av string) (string, bool) {
	i := strings.IndexByte(av, '/')
	if i < 0 {
		return av, false
	}
	g, ok := d.Group(av[:i])
	if !ok {
		return av, false
	}
	return g + av[i:], true
}

// CRDName translates a CustomResourceDefinition name ("<plural>.<group>").
func (d Direction) CRDName(name string) (string, bool) {
	i := strings.IndexByte(name, '.')
	if i < 0 {
		return name, false
	}
	g, ok := d.Group(name[i+1:])
	if !ok {
		return name, false
	}
	return name[:i+1] + g, true
}

// Text translates group names that appear as whole DNS tokens inside free
// text, such as the message of an apiserver Status
// (`clusters.cluster.hypershift.openshift.io "c1" not found`) or a Warning
// header. A token is the base group preceded by the start of the text, a dot
// or a character that cannot be part of a DNS label, and followed by the end
// of the text or a character that is neither a DNS label character nor a dot.
// So `clusters.cluster.hypershift.openshift.io` and `/apis/cluster...io/v1`
// are translated, while label keys in the other family and longer names
// such as `cluster.hypershift.openshift.io.example` are not.
func (d Direction) Text(s string) (string, bool) {
	from, to := d.from(), d.to()
	i := strings.Index(s, from)
	if i < 0 {
		return s, false
	}
	var b strings.Builder
	last, changed := 0, false
	for i >= 0 {
		end := i + len(from)
		if tokenStart(s, i) && tokenEnd(s, end) {
			if !changed {
				b.Grow(len(s) + 16)
				changed = true
			}
			b.WriteString(s[last:i])
			b.WriteString(to)
			last = end
		}
		next := strings.Index(s[i+1:], from)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	if !changed {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// ContainsSource is a cheap pre-check: whether the bytes mention the base
// group this direction rewrites at all. Bodies that do not are passed on
// without being parsed.
func (d Direction) ContainsSource(b []byte) bool {
	if d == ToPrivate {
		return bytes.Contains(b, standardBytes)
	}
	return bytes.Contains(b, privateBytes)
}

var (
	standardBytes = []byte(Standard)
	privateBytes  = []byte(Private)
)

func labelChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func tokenStart(s string, i int) bool { return i == 0 || !labelChar(s[i-1]) }

func tokenEnd(s string, end int) bool {
	return end == len(s) || (!labelChar(s[end]) && s[end] != '.')
}
