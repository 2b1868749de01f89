package migration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

// gvkInfo is a namespaced kind the migration lists.
type gvkInfo = schema.GroupVersionKind

// ReferrerGroups and ReferrerCoreResources are the kinds outside the CAPI
// groups whose objects the migration re-points at the private copies when
// they carry an ownerReference to a CAPI object ("referrers"): every kind of
// the listed groups (the Agent infrastructure provider's AgentCluster,
// AgentMachine, AgentMachineTemplate, which are not in the CAPI family and so
// are not copied) and the listed core kinds (the Secrets CAPI writes and
// owns: bootstrap data, kubeconfigs; ConfigMaps). These are the kinds that
// carry CAPI ownerReferences in a HyperShift control-plane namespace.
//
// The list is fixed on purpose: finding referrers means listing, and listing
// every kind would need list on every resource of the management cluster
// (a shared cluster: all its Secrets, everyone's custom resources). The
// migration lists these kinds only in the control-plane namespace it
// migrates, metadata only (it never reads a Secret's data).
//
// Limitation: an object of any other kind whose only owner is a standard CAPI
// object is not re-pointed; when cleanup removes the standard object the
// garbage collector deletes it (or, with other owners, it keeps a dangling
// reference). Add the kind here (and its list and patch to the agent's
// ClusterRole) if a provider ever writes one.
var (
	ReferrerGroups        = []string{"capi-provider.agent-install.openshift.io"}
	ReferrerCoreResources = []string{"secrets", "configmaps"}
)

// IsReferrerResource reports whether the migration looks for ownerReferences
// to CAPI objects on the resource (group, plural name). Pure.
func IsReferrerResource(group, resource string) bool {
	if group == "" {
		return slices.Contains(ReferrerCoreResources, resource)
	}
	return slices.Contains(ReferrerGroups, group)
}

// kinds are the namespaced kinds the apiserver serves, sorted into what the
// migration copies (standard CAPI), creates (private CAPI) and edits
// (referrers: the fixed IsReferrerResource kinds that are served).
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

// discoverKinds asks the apiserver. A CAPI or referrer group failing
// discovery is an error (the migration must see every CAPI kind and every
// referrer kind); another group failing (an aggregated API that is down) is
// none of its business.
func discoverKinds(dc discovery.DiscoveryInterface) (*kinds, error) {
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil {
		var failed *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &failed) {
			return nil, fmt.Errorf("discovery: %w", err)
		}
		for gv, gerr := range failed.Groups {
			if gv.Group == "" || groups.IsStandard(gv.Group) || groups.IsPrivate(gv.Group) || slices.Contains(ReferrerGroups, gv.Group) {
				return nil, fmt.Errorf("discovery of %s: %w", gv, gerr)
			}
		}
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
			case IsReferrerResource(gv.Group, res.Name) && slices.Contains(res.Verbs, "patch"):
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

// listMeta lists the metadata of every object of the kinds in ns: for
// referrers, whose ownerReferences are all the migration reads or writes (a
// Secret's data never leaves the apiserver).
func listMeta(ctx context.Context, r client.Reader, ns string, gvks []gvkInfo) ([]*metav1.PartialObjectMetadata, error) {
	var out []*metav1.PartialObjectMetadata
	for _, gvk := range gvks {
		l := &metav1.PartialObjectMetadataList{}
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
