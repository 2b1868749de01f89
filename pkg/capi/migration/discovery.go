package migration

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

// gvkInfo is a namespaced kind the migration lists.
type gvkInfo = schema.GroupVersionKind

// kinds are the namespaced kinds the apiserver serves, sorted into what the
// migration copies (standard CAPI), creates (private CAPI) and edits
// (referrers: everything else that can carry an ownerReference).
type kinds struct {
	standard, private, referrers []gvkInfo
	// privateOf maps a standard kind to its private form, when served with
	// the same version.
	privateOf map[gvkInfo]gvkInfo
}

func (k *kinds) find(group, kind string) (gvkInfo, bool) {
	for _, g := range slices.Concat(k.standard, k.private) {
		if g.Group == group && g.Kind == kind {
			return g, true
		}
	}
	return gvkInfo{}, false
}

// discoverKinds asks the apiserver. A group that fails discovery is an error
// when it is a CAPI group (the migration must see all of them) and for
// referrers too: an object we cannot see might hold an ownerReference that
// would dangle after cleanup.
func discoverKinds(dc discovery.DiscoveryInterface) (*kinds, error) {
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	k := &kinds{privateOf: map[gvkInfo]gvkInfo{}}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, res := range l.APIResources {
			if strings.Contains(res.Name, "/") || !slices.Contains(res.Verbs, "list") {
				continue
			}
			gvk := gv.WithKind(res.Kind)
			switch {
			case groups.IsStandard(gv.Group):
				k.standard = append(k.standard, gvk)
			case groups.IsPrivate(gv.Group):
				k.private = append(k.private, gvk)
			case res.Name == "events" || !slices.Contains(res.Verbs, "patch"):
			default:
				k.referrers = append(k.referrers, gvk)
			}
		}
	}
	for _, s := range k.standard {
		g, _ := groups.ToPrivate.Group(s.Group)
		p := schema.GroupVersionKind{Group: g, Version: s.Version, Kind: s.Kind}
		if slices.Contains(k.private, p) {
			k.privateOf[s] = p
		}
	}
	return k, nil
}

// listAll lists every object of the kinds in ns.
func listAll(ctx context.Context, r client.Reader, ns string, gvks []gvkInfo) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, gvk := range gvks {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.List(ctx, l, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing %s in %s: %w", gvk, ns, err)
		}
		for i := range l.Items {
			o := &l.Items[i]
			o.SetGroupVersionKind(gvk)
			out = append(out, o)
		}
	}
	return out, nil
}
