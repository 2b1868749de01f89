package migration

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/proxy"
)

// This file holds the pure functions over CAPI objects: the private copy of a
// standard object, the order to create and delete a set in, the ownerReference
// edits of objects that merely point at CAPI objects ("referrers": AgentCluster,
// AgentMachine, Secrets, …) and the comparison the health check uses.

// objKey names an object within the hosted control-plane namespace.
type objKey struct {
	Group, Kind, Name string
}

func keyOf(u *unstructured.Unstructured) objKey {
	return objKey{Group: u.GroupVersionKind().Group, Kind: u.GetKind(), Name: u.GetName()}
}

func (k objKey) String() string { return k.Kind + "." + k.Group + "/" + k.Name }

// privateKey is the key of the private copy of a standard object.
func privateKey(k objKey) objKey {
	g, _ := groups.ToPrivate.Group(k.Group)
	return objKey{Group: g, Kind: k.Kind, Name: k.Name}
}

// PrivateCopy returns the object to create in the private group for a standard
// CAPI object: the same document translated by the proxy's rules (apiVersion,
// apiGroup references, ownerReferences and managedFields in the CAPI family),
// so that migrated objects look exactly like objects written through the
// proxy; server-owned metadata (uid, resourceVersion, generation,
// creationTimestamp, managedFields, deletion fields) dropped; spec, status,
// labels, annotations and finalizers kept as they are; and every
// ownerReference to a copied CAPI owner re-pointed at the owner's copy, whose
// UID is in copies (keyed by the owner's standard UID). An ownerReference to an
// owner that is not being copied keeps its UID (it was already dangling or
// points outside the CAPI family).
//
// Status is part of the returned object; the caller writes it through the
// status subresource after the create (the create ignores it).
func PrivateCopy(orig *unstructured.Unstructured, copies map[types.UID]types.UID) (*unstructured.Unstructured, error) {
	raw, err := json.Marshal(orig.Object)
	if err != nil {
		return nil, err
	}
	tr, err := proxy.TranslateJSON(raw, groups.ToPrivate, proxy.ScopeCAPI)
	if err != nil {
		return nil, fmt.Errorf("translating %s: %w", keyOf(orig), err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(tr); err != nil {
		return nil, err
	}
	if !groups.IsPrivate(out.GroupVersionKind().Group) {
		return nil, fmt.Errorf("%s is not in a standard CAPI group", keyOf(orig))
	}
	stripServerMetadata(out)
	refs := out.GetOwnerReferences()
	for i := range refs {
		gv, err := schema.ParseGroupVersion(refs[i].APIVersion)
		if err != nil || !groups.IsPrivate(gv.Group) {
			continue
		}
		if uid, ok := copies[refs[i].UID]; ok {
			refs[i].UID = uid
		}
	}
	if len(refs) > 0 {
		out.SetOwnerReferences(refs)
	}
	return out, nil
}

func stripServerMetadata(u *unstructured.Unstructured) {
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
}

// kindRank breaks ties in CreationOrder for objects that no ownerReference
// orders: a Cluster before what belongs to it, Machines last.
func kindRank(kind string) int {
	switch kind {
	case "Cluster":
		return 0
	case "MachineDeployment", "MachinePool":
		return 2
	case "MachineSet":
		return 3
	case "Machine":
		return 4
	default:
		return 1
	}
}

// CreationOrder sorts objects so that every owner (by ownerReference UID
// within the set) comes before its dependents; ties by kind rank, kind and
// name, so the order is deterministic. The reverse is the deletion order:
// dependents before owners, so that nothing a garbage collector might cascade
// to is left behind. An ownerReference cycle is an error.
func CreationOrder(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	byUID := map[types.UID]int{}
	for i, o := range objs {
		byUID[o.GetUID()] = i
	}
	sorted := slices.Clone(objs)
	slices.SortFunc(sorted, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(kindRank(a.GetKind()), kindRank(b.GetKind())), cmp.Compare(a.GetKind(), b.GetKind()), cmp.Compare(a.GetName(), b.GetName()))
	})
	const (
		unvisited = iota
		visiting
		done
	)
	mark := make([]int, len(objs))
	out := make([]*unstructured.Unstructured, 0, len(objs))
	var visit func(i int) error
	visit = func(i int) error {
		switch mark[i] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("ownerReference cycle through %s", keyOf(objs[i]))
		}
		mark[i] = visiting
		owners := objs[i].GetOwnerReferences()
		slices.SortFunc(owners, func(a, b metav1.OwnerReference) int { return cmp.Compare(a.Name, b.Name) })
		for _, ref := range owners {
			if j, ok := byUID[ref.UID]; ok {
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		mark[i] = done
		out = append(out, objs[i])
		return nil
	}
	for _, o := range sorted {
		if err := visit(byUID[o.GetUID()]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func isCAPIRef(ref metav1.OwnerReference, private bool) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false
	}
	if private {
		return groups.IsPrivate(gv.Group)
	}
	return groups.IsStandard(gv.Group)
}

// WithPrivateOwners is the first ownerReference edit of a referrer (an object
// outside the CAPI groups owned by a CAPI object): next to every reference to
// a copied standard owner it adds one to the owner's private copy (UID from
// copies), with controller unset — only one reference may be the controller —
// and the same blockOwnerDeletion. With both references present the object
// always has a live owner, whichever way the migration ends, so the garbage
// collector never takes it. Idempotent; changed is false when nothing was
// added.
func WithPrivateOwners(refs []metav1.OwnerReference, copies map[types.UID]types.UID) (out []metav1.OwnerReference, changed bool) {
	have := map[types.UID]bool{}
	for _, r := range refs {
		have[r.UID] = true
	}
	for _, r := range refs {
		out = append(out, r)
		if !isCAPIRef(r, false) {
			continue
		}
		uid, ok := copies[r.UID]
		if !ok || have[uid] {
			continue
		}
		av, _ := groups.ToPrivate.APIVersion(r.APIVersion)
		out = append(out, metav1.OwnerReference{APIVersion: av, Kind: r.Kind, Name: r.Name, UID: uid, BlockOwnerDeletion: r.BlockOwnerDeletion})
		changed = true
	}
	return out, changed
}

// FinalOwners is the last ownerReference edit of a referrer, once the
// migration is committed: every standard CAPI reference that has a private
// twin (same kind and name, private apiVersion) is dropped and the twin takes
// its place and its controller flag, so the result is the original list with
// the CAPI owners re-pointed. Idempotent.
func FinalOwners(refs []metav1.OwnerReference) (out []metav1.OwnerReference, changed bool) {
	twin := func(std metav1.OwnerReference) int {
		av, _ := groups.ToPrivate.APIVersion(std.APIVersion)
		return slices.IndexFunc(refs, func(r metav1.OwnerReference) bool {
			return r.APIVersion == av && r.Kind == std.Kind && r.Name == std.Name
		})
	}
	used := map[int]bool{}
	for _, r := range refs {
		if !isCAPIRef(r, false) {
			continue
		}
		if j := twin(r); j >= 0 {
			used[j] = true
		}
	}
	for i, r := range refs {
		if used[i] {
			continue // emitted in place of its standard twin
		}
		if isCAPIRef(r, false) {
			if j := twin(r); j >= 0 {
				p := refs[j]
				p.Controller = r.Controller
				out = append(out, p)
				changed = true
				continue
			}
		}
		out = append(out, r)
	}
	return out, changed
}

// WithoutPrivateOwners undoes WithPrivateOwners on rollback: every reference
// into the private groups goes (an unmigrated cluster's objects have none of
// their own). Idempotent.
func WithoutPrivateOwners(refs []metav1.OwnerReference) (out []metav1.OwnerReference, changed bool) {
	for _, r := range refs {
		if isCAPIRef(r, true) {
			changed = true
			continue
		}
		out = append(out, r)
	}
	return out, changed
}

// CopyDifferences lists how a private copy differs from what PrivateCopy
// makes of its original (ignoring server-owned metadata). Empty means equal:
// spec, status, labels, annotations, finalizers and ownerReferences (with the
// copies' UIDs). ignorePaused leaves out spec.paused, which the migration sets
// on the standard Cluster and gives back on the copy at commit.
func CopyDifferences(orig, copied *unstructured.Unstructured, copies map[types.UID]types.UID, ignorePaused bool) ([]string, error) {
	want, err := PrivateCopy(orig, copies)
	if err != nil {
		return nil, err
	}
	got := copied.DeepCopy()
	stripServerMetadata(got)
	if ignorePaused {
		unstructured.RemoveNestedField(want.Object, "spec", "paused")
		unstructured.RemoveNestedField(got.Object, "spec", "paused")
	}
	var diffs []string
	for _, f := range []string{"spec", "status"} {
		if !equality.Semantic.DeepEqual(want.Object[f], got.Object[f]) {
			diffs = append(diffs, f)
		}
	}
	if !equalStringMaps(want.GetLabels(), got.GetLabels()) {
		diffs = append(diffs, "labels")
	}
	if !equalStringMaps(want.GetAnnotations(), got.GetAnnotations()) {
		diffs = append(diffs, "annotations")
	}
	if !slices.Equal(want.GetFinalizers(), got.GetFinalizers()) {
		diffs = append(diffs, "finalizers")
	}
	if !equality.Semantic.DeepEqual(want.GetOwnerReferences(), got.GetOwnerReferences()) {
		diffs = append(diffs, "ownerReferences")
	}
	for i, d := range diffs {
		diffs[i] = keyOf(copied).String() + " " + d
	}
	return diffs, nil
}

func equalStringMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
