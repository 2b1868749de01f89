// Package keypolicy matches label and annotation keys against the patterns
// a fleet admin lists in a hub flag (--imported-cluster-labels,
// --hosted-cluster-annotations), and tells keys of a reserved domain.
package keypolicy

import (
	"fmt"
	"path"
	"strings"
)

// Patterns is a parsed list of keys and path.Match patterns. The zero value
// matches nothing.
type Patterns struct {
	patterns []string
}

// Parse parses a comma-separated list of keys and patterns (path.Match
// syntax, where * never crosses the /): "team" one key, "example.com/*"
// every key of a prefix, "*" every key without a prefix, "*/*" every key
// with one. Empty: nothing matches.
func Parse(s string) (Patterns, error) {
	var p Patterns
	for _, pattern := range strings.Split(s, ",") {
		pattern = strings.TrimSpace(pattern)
		if pattern == "" {
			continue
		}
		if _, err := path.Match(pattern, ""); err != nil {
			return Patterns{}, fmt.Errorf("pattern %q: %w", pattern, err)
		}
		p.patterns = append(p.patterns, pattern)
	}
	return p, nil
}

// Match reports whether one of the patterns matches key.
func (p Patterns) Match(key string) bool {
	for _, pattern := range p.patterns {
		if ok, _ := path.Match(pattern, key); ok {
			return true
		}
	}
	return false
}

// InDomain reports whether key's prefix (before the /) is, case-insensitively,
// one of domains or a subdomain of one. A key without a prefix is in none.
func InDomain(key string, domains ...string) bool {
	prefix, _, found := strings.Cut(key, "/")
	if !found {
		return false
	}
	prefix = strings.ToLower(prefix)
	for _, d := range domains {
		if prefix == d || strings.HasSuffix(prefix, "."+d) {
			return true
		}
	}
	return false
}
