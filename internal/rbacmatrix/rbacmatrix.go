// Package rbacmatrix checks what an identity may do against a written table:
// it asks the API server (SubjectAccessReview) about every cell of a matrix
// of verbs × resources × namespaces × names and compares each answer with
// the table's. A cell the server allows and the table does not is a grant
// broader than documented; the reverse is a table that promises too much.
// The tables live in docs/security.md, so the documentation is the
// assertion. Tests only.
package rbacmatrix

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Row is one line of a permission table: the verbs an identity has on a
// resource in some namespaces, for some names.
type Row struct {
	// Group ("" for core) and Resource ("*": every resource of the group;
	// "r/sub": a subresource).
	Group, Resource string
	// Namespaces: nil for a cluster-scoped resource; ["*"] for every
	// namespace (a cluster-wide grant); else the namespaces, placeholders
	// already substituted.
	Namespaces []string
	// Names the grant is limited to (resourceNames); nil: any.
	Names []string
	Verbs []string
}

// Table is an identity's permission table.
type Table []Row

// Parse reads the first markdown table after the line holding heading in
// r. Its columns are: resources (`group/resource`, `resource` for the core
// group, backquotes optional; a comma list is one row per resource),
// namespaces (`cluster-scoped`, `all`, or a comma list), names (empty or
// `any`: any; else a comma list), verbs (a comma list) and any further
// columns (why), which are ignored. vars replaces placeholders such as
// `<cluster>` in namespaces and names; a value with commas stands for a
// list.
func Parse(r io.Reader, heading string, vars map[string]string) (Table, error) {
	sc := bufio.NewScanner(r)
	found, inTable := false, false
	var t Table
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !found {
			found = strings.Contains(line, heading)
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(strings.ReplaceAll(cells[i], "`", ""))
		}
		if !inTable { // the header
			inTable = true
			continue
		}
		if strings.HasPrefix(cells[0], "---") || strings.HasPrefix(cells[0], ":--") {
			continue
		}
		if len(cells) < 4 {
			return nil, fmt.Errorf("%s: row %q has %d columns, want at least 4", heading, line, len(cells))
		}
		for _, res := range list(cells[0], nil) {
			row := Row{Verbs: list(cells[3], vars)}
			row.Group, row.Resource = SplitResource(res)
			switch cells[1] {
			case "cluster-scoped":
			case "all":
				row.Namespaces = []string{"*"}
			default:
				row.Namespaces = list(cells[1], vars)
			}
			if cells[2] != "" && cells[2] != "any" {
				row.Names = list(cells[2], vars)
			}
			t = append(t, row)
		}
	}
	if !found {
		return nil, fmt.Errorf("no heading %q", heading)
	}
	if len(t) == 0 {
		return nil, fmt.Errorf("%s: no table rows", heading)
	}
	return t, sc.Err()
}

// dotlessGroups are the API groups without a dot in their name; any other
// first segment without one is a core resource (with a subresource).
var dotlessGroups = map[string]bool{"apps": true, "batch": true, "policy": true, "autoscaling": true}

// SplitResource splits "group/resource[/subresource]" (or
// "resource[/subresource]" in the core group) into group and the rest.
func SplitResource(s string) (group, resource string) {
	if g, res, ok := strings.Cut(s, "/"); ok && (strings.Contains(g, ".") || dotlessGroups[g]) {
		return g, res
	}
	return "", s
}

func list(s string, vars map[string]string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if v, ok := vars[p]; ok {
			out = append(out, list(v, nil)...)
			continue
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Cell is one question: may the identity do Verb on Resource (Group,
// Resource, Subresource) named Name in Namespace ("" = cluster-scoped, or
// across all namespaces)?
type Cell struct {
	Verb, Group, Resource, Subresource, Namespace, Name string
}

// resource is the cell's resource as the tables write it:
// "[group/]resource[/subresource]".
func (c Cell) resource() string {
	r := c.Resource
	if c.Group != "" {
		r = c.Group + "/" + r
	}
	if c.Subresource != "" {
		r += "/" + c.Subresource
	}
	return r
}

func (c Cell) String() string {
	where := "cluster-wide"
	if c.Namespace != "" {
		where = "in " + c.Namespace
	}
	name := "any name"
	if c.Name != "" {
		name = c.Name
	}
	return fmt.Sprintf("%s %s %s (%s)", c.Verb, c.resource(), where, name)
}

// Allows reports whether the table allows cell.
func (t Table) Allows(c Cell) bool {
	res := c.Resource
	if c.Subresource != "" {
		res += "/" + c.Subresource
	}
	for _, r := range t {
		wildcard := r.Resource == "*" && c.Subresource == "" // "*" covers resources, not subresources
		if r.Group != c.Group || (r.Resource != res && !wildcard) {
			continue
		}
		if !slices.Contains(r.Verbs, c.Verb) && !slices.Contains(r.Verbs, "*") {
			continue
		}
		if r.Names != nil && !slices.Contains(r.Names, c.Name) {
			continue
		}
		switch {
		case r.Namespaces == nil: // cluster-scoped: any namespace value matches, as RBAC's ClusterRole does
		case slices.Contains(r.Namespaces, "*"):
		case c.Namespace != "" && slices.Contains(r.Namespaces, c.Namespace):
		default:
			continue
		}
		return true
	}
	return false
}

// Resource is a resource to probe.
type Resource struct {
	Group, Resource, Subresource string
	Namespaced                   bool
}

// Matrix is what to ask about.
type Matrix struct {
	Verbs      []string
	Resources  []Resource
	Namespaces []string // for namespaced resources; "" (across all) is always asked
	Names      []string // "" (any) is always asked
	// NamesPerResource asks about the names a table row lists only for that
	// row's resource (besides Names), not for every resource: for a table
	// with many names, whose every combination would be too many cells.
	NamesPerResource bool
}

// Cells expands the matrix. Names the table limits grants to are asked
// about too, so that a resourceNames grant is seen for what it is.
func (m Matrix) Cells(t Table) []Cell {
	all := names(m.Names, t, func(Row) bool { return true })
	var cells []Cell
	for _, r := range m.Resources {
		asked := all
		if m.NamesPerResource {
			res := r.Resource
			if r.Subresource != "" {
				res += "/" + r.Subresource
			}
			asked = names(m.Names, t, func(row Row) bool {
				return row.Group == r.Group && (row.Resource == res || (row.Resource == "*" && r.Subresource == ""))
			})
		}
		nss := []string{""}
		if r.Namespaced {
			nss = append(nss, m.Namespaces...)
		}
		for _, ns := range nss {
			for _, name := range asked {
				for _, v := range m.Verbs {
					cells = append(cells, Cell{Verb: v, Group: r.Group, Resource: r.Resource, Subresource: r.Subresource, Namespace: ns, Name: name})
				}
			}
		}
	}
	return cells
}

// names is "" (any), extra and the names of the rows of t that match.
func names(extra []string, t Table, match func(Row) bool) []string {
	out := append([]string{""}, extra...)
	for _, r := range t {
		if match(r) {
			out = append(out, r.Names...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Identity is who is asked about.
type Identity struct {
	User   string
	Groups []string
}

// Diff asks the API server behind kube about every cell for id and returns
// the cells where its answer differs from the table's: broader (allowed,
// not in the table) and narrower (in the table, denied).
func Diff(ctx context.Context, kube kubernetes.Interface, id Identity, t Table, cells []Cell) (broader, narrower []Cell, err error) {
	type answer struct {
		cell    Cell
		allowed bool
		err     error
	}
	work := make(chan Cell)
	answers := make(chan answer)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User: id.User, Groups: id.Groups,
					ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: c.Verb, Group: c.Group, Resource: c.Resource,
						Subresource: c.Subresource, Namespace: c.Namespace, Name: c.Name},
				}}
				got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
				a := answer{cell: c, err: err}
				if err == nil {
					a.allowed = got.Status.Allowed
				}
				answers <- a
			}
		}()
	}
	go func() {
		defer close(work)
		for _, c := range cells {
			select {
			case work <- c:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(answers) }()
	for a := range answers {
		switch {
		case a.err != nil:
			if err == nil {
				err = fmt.Errorf("asking about %s: %w", a.cell, a.err)
			}
		case a.allowed && !t.Allows(a.cell):
			broader = append(broader, a.cell)
		case !a.allowed && t.Allows(a.cell):
			narrower = append(narrower, a.cell)
		}
	}
	sortCells(broader)
	sortCells(narrower)
	return broader, narrower, err
}

func sortCells(cs []Cell) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].String() < cs[j].String() })
}

// Summarize folds cells into short lines, one per resource and set of
// verbs: "<resource> [<names>]: <verbs> — <where>", for a readable failure.
func Summarize(cells []Cell) []string {
	type at struct{ res, ns, name string }
	verbs := map[at][]string{}
	for _, c := range cells {
		k := at{c.resource(), c.Namespace, c.Name}
		verbs[k] = append(verbs[k], c.Verb)
	}
	type line struct{ res, verbs, name string }
	where := map[line][]string{}
	for k, v := range verbs {
		sort.Strings(v)
		ns := k.ns
		if ns == "" {
			ns = "cluster-wide"
		}
		l := line{k.res, strings.Join(v, ","), k.name}
		where[l] = append(where[l], ns)
	}
	type folded struct{ res, verbs, where string }
	names := map[folded][]string{}
	for l, nss := range where {
		sort.Strings(nss)
		name := l.name
		if name == "" {
			name = "any name"
		}
		f := folded{l.res, l.verbs, strings.Join(nss, ", ")}
		names[f] = append(names[f], name)
	}
	out := make([]string, 0, len(names))
	for f, ns := range names {
		sort.Strings(ns)
		out = append(out, fmt.Sprintf("%s [%s]: %s — %s", f.res, strings.Join(ns, ", "), f.verbs, f.where))
	}
	sort.Strings(out)
	return out
}
