package rbacmatrix

import (
	"strings"
	"testing"
)

const doc = `
# Security

### The hub

| resource | namespaces | names | verbs | why |
|---|---|---|---|---|
| ` + "`secrets`" + ` | all | | get, list | read |
| coordination.k8s.io/leases | <hub> | | get, update | leader |
| rbac.authorization.k8s.io/clusterroles | cluster-scoped | agent-role | bind | grant |
| cluster.x-k8s.io/* | all | any | get | capi |
| apps/deployments | hypershift | operator | delete | own |
| addon.open-cluster-management.io/managedclusteraddons/status | <cluster> | hcp-fleet | patch | report |

Text after the table.

| other | table |
|---|---|
| x | y |
`

func TestParseAndAllows(t *testing.T) {
	tab, err := Parse(strings.NewReader(doc), "### The hub", map[string]string{"<hub>": "hcp-fleet", "<cluster>": "cluster-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab) != 6 {
		t.Fatalf("%d rows, want 6: %+v", len(tab), tab)
	}
	for _, tc := range []struct {
		cell Cell
		want bool
	}{
		{Cell{Verb: "get", Resource: "secrets", Namespace: "kube-system"}, true},
		{Cell{Verb: "get", Resource: "secrets"}, true},
		{Cell{Verb: "delete", Resource: "secrets", Namespace: "x"}, false},
		{Cell{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "hcp-fleet"}, true},
		{Cell{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "other"}, false},
		{Cell{Verb: "update", Group: "coordination.k8s.io", Resource: "leases"}, false},
		{Cell{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "agent-role"}, true},
		{Cell{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "cluster-admin"}, false},
		{Cell{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, false},
		{Cell{Verb: "get", Group: "cluster.x-k8s.io", Resource: "machines", Namespace: "a"}, true},
		{Cell{Verb: "delete", Group: "apps", Resource: "deployments", Namespace: "hypershift", Name: "operator"}, true},
		{Cell{Verb: "delete", Group: "apps", Resource: "deployments", Namespace: "hypershift", Name: "other"}, false},
		{Cell{Verb: "get", Group: "cluster.x-k8s.io", Resource: "machines", Subresource: "status", Namespace: "a"}, false},
		{Cell{Verb: "patch", Group: "addon.open-cluster-management.io", Resource: "managedclusteraddons", Subresource: "status", Namespace: "cluster-1", Name: "hcp-fleet"}, true},
		{Cell{Verb: "patch", Group: "addon.open-cluster-management.io", Resource: "managedclusteraddons", Namespace: "cluster-1", Name: "hcp-fleet"}, false},
	} {
		if got := tab.Allows(tc.cell); got != tc.want {
			t.Errorf("Allows(%s) = %v, want %v", tc.cell, got, tc.want)
		}
	}
	if _, err := Parse(strings.NewReader(doc), "### Missing", nil); err == nil {
		t.Error("a missing heading is an error")
	}
	cells := Matrix{Verbs: []string{"get"}, Resources: []Resource{{Resource: "secrets", Namespaced: true}, {Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}},
		Namespaces: []string{"a"}}.Cells(tab)
	// secrets: ns "" and "a" × names "", agent-role, hcp-fleet, operator; clusterroles: ns "" × 4 names.
	if len(cells) != 12 {
		t.Errorf("%d cells, want 12: %v", len(cells), cells)
	}
}

func TestSummarize(t *testing.T) {
	var cells []Cell
	for _, ns := range []string{"", "a", "b"} {
		for _, name := range []string{"", "x"} {
			for _, v := range []string{"list", "get"} {
				cells = append(cells, Cell{Verb: v, Resource: "secrets", Namespace: ns, Name: name})
			}
		}
	}
	cells = append(cells, Cell{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "admin"})
	got := Summarize(cells)
	want := []string{
		"rbac.authorization.k8s.io/clusterroles [admin]: bind — cluster-wide",
		"secrets [any name, x]: get,list — a, b, cluster-wide",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Summarize:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestListsAndNamesPerResource: a resource cell may list resources (a row
// each), a placeholder may stand for a list of names, and NamesPerResource
// asks about a row's names for its resource only.
func TestListsAndNamesPerResource(t *testing.T) {
	const lists = `
### Lists

| resource | namespaces | names | verbs | why |
|---|---|---|---|---|
| cluster.x-k8s.io/*, ipam.cluster.x-k8s.io/* | all | | get | read |
| apiextensions.k8s.io/customresourcedefinitions | cluster-scoped | <crds>, extra | delete | own |
`
	tab, err := Parse(strings.NewReader(lists), "### Lists", map[string]string{"<crds>": "a.x, b.x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab) != 3 || tab[1].Group != "ipam.cluster.x-k8s.io" || strings.Join(tab[2].Names, " ") != "a.x b.x extra" {
		t.Fatalf("rows %+v", tab)
	}
	m := Matrix{Verbs: []string{"get"}, Resources: []Resource{{Resource: "secrets", Namespaced: true},
		{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}}, Names: []string{"foreign"}}
	// Every name everywhere: 2 resources × 1 namespace ("") × 5 names.
	if n := len(m.Cells(tab)); n != 10 {
		t.Errorf("%d cells, want 10", n)
	}
	// Per resource: secrets × {"", foreign}; CRDs × {"", foreign, a.x, b.x, extra}.
	m.NamesPerResource = true
	if n := len(m.Cells(tab)); n != 7 {
		t.Errorf("%d cells per resource, want 7", n)
	}
}
