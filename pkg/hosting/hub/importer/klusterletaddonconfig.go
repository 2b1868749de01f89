package importer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// ACM enables its add-ons on a managed cluster (application manager,
// policy controllers, search collector) from the cluster's
// KlusterletAddonConfig (agent.open-cluster-management.io/v1, in the
// cluster's namespace, named like it: stolostron/klusterlet-addon-controller
// and its CRD). ACM's own import and the MCE HyperShift add-on create one
// per imported hosted cluster; so does the import, where the hub serves that
// API (ACM is installed), with the add-ons of --klusterlet-addons. On a hub
// without ACM nothing is written; discovery is asked once per
// KlusterletAddonConfigRecheck, and when the API appears every imported
// hosted cluster gets one (and when it goes, nothing is read of it).
//
// The KlusterletAddonConfig is owned by the ManagedCluster (garbage
// collected with it) and labelled with the HostedClusterDeployment's name;
// one that exists and is not ours (the admin's, ACM's) is left alone. It is
// created when missing (a create, never a forced apply over one the cache
// has not seen yet) and applied when the add-on set changed (the annotation
// hcpfleet.io/klusterlet-addon-config carries a hash of what was applied),
// so an admin's edit of an enabled flag stays until the set changes.

// KlusterletAddonConfigGVK is ACM's KlusterletAddonConfig.
var KlusterletAddonConfigGVK = schema.GroupVersionKind{Group: "agent.open-cluster-management.io", Version: "v1", Kind: "KlusterletAddonConfig"}

// KlusterletAddons are the add-ons a KlusterletAddonConfig turns on or off
// (its spec sections; the CRD requires each of them).
var KlusterletAddons = []string{"applicationManager", "certPolicyController", "iamPolicyController", "policyController", "searchCollector"}

// DefaultKlusterletAddons are those the MCE HyperShift add-on and ACM's
// import enable on a hosted cluster (iamPolicyController is deprecated).
const DefaultKlusterletAddons = "applicationManager,certPolicyController,policyController,searchCollector"

// AnnotationKlusterletAddonConfig holds the hash of the applied spec.
const AnnotationKlusterletAddonConfig = "hcpfleet.io/klusterlet-addon-config"

// DefaultKlusterletAddonConfigRecheck is how often a hub without
// KlusterletAddonConfig looks for it again (one discovery request).
const DefaultKlusterletAddonConfigRecheck = time.Minute

// ParseKlusterletAddons parses --klusterlet-addons.
func ParseKlusterletAddons(s string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(KlusterletAddons, name) {
			return nil, fmt.Errorf("%q is not a KlusterletAddonConfig add-on (%s)", name, strings.Join(KlusterletAddons, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// DesiredKlusterletAddonConfig is the KlusterletAddonConfig, as applied, of
// the ManagedCluster mc imported for hcd, enabling the add-ons enabled.
// Pure.
func DesiredKlusterletAddonConfig(hcd *v1alpha1.HostedClusterDeployment, mc *clusterv1.ManagedCluster, enabled []string) map[string]any {
	spec := map[string]any{}
	for _, a := range KlusterletAddons {
		spec[a] = map[string]any{"enabled": slices.Contains(enabled, a)}
	}
	data, _ := json.Marshal(spec)
	sum := sha256.Sum256(data)
	return map[string]any{
		"apiVersion": KlusterletAddonConfigGVK.GroupVersion().String(), "kind": KlusterletAddonConfigGVK.Kind,
		"metadata": map[string]any{
			"name": mc.Name, "namespace": mc.Name, "labels": ownLabels(hcd),
			"annotations": map[string]string{AnnotationKlusterletAddonConfig: hex.EncodeToString(sum[:8])},
			"ownerReferences": []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "ManagedCluster",
				Name: mc.Name, UID: mc.UID}},
		},
		"spec": spec,
	}
}

// klusterletAddonConfigUpToDate: live (metadata) already is what applying
// desired would make it.
func klusterletAddonConfigUpToDate(live metav1.Object, desired map[string]any) bool {
	metadata, _ := desired["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]string)
	owners, _ := metadata["ownerReferences"].([]metav1.OwnerReference)
	if live.GetAnnotations()[AnnotationKlusterletAddonConfig] != annotations[AnnotationKlusterletAddonConfig] {
		return false
	}
	for _, o := range owners {
		if !slices.ContainsFunc(live.GetOwnerReferences(), func(l metav1.OwnerReference) bool { return l.UID == o.UID }) {
			return false
		}
	}
	return true
}

// addonConfigAPI tracks whether the hub serves KlusterletAddonConfig: it
// asks discovery every recheck (one request); when the API appears it
// wakes every imported HostedClusterDeployment once, and when it goes (ACM
// uninstalled) it stops the cache's informer of it, whose list would fail
// and hold every read of the kind.
type addonConfigAPI struct {
	discovery interface {
		ServerResourcesForGroupVersion(string) (*metav1.APIResourceList, error)
	}
	informers interface {
		RemoveInformer(context.Context, client.Object) error
	}
	reader  client.Reader
	recheck time.Duration
	served  atomic.Bool
	events  chan event.GenericEvent
}

// Start implements manager.Runnable.
func (a *addonConfigAPI) Start(ctx context.Context) error {
	t := time.NewTicker(a.recheck)
	defer t.Stop()
	for {
		served := a.lookUp()
		switch was := a.served.Swap(served); {
		case served && !was:
			if err := a.wakeImported(ctx); err != nil {
				return err
			}
		case !served && was:
			if err := a.informers.RemoveInformer(ctx, klusterletAddonConfigMetadata()); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "stopping the KlusterletAddonConfig informer")
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// lookUp: a failed lookup (no such group, or discovery failing) is "not
// served", tried again next time.
func (a *addonConfigAPI) lookUp() bool {
	list, err := a.discovery.ServerResourcesForGroupVersion(KlusterletAddonConfigGVK.GroupVersion().String())
	if err != nil || list == nil {
		return false
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Kind == KlusterletAddonConfigGVK.Kind })
}

func klusterletAddonConfigMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(KlusterletAddonConfigGVK)
	return m
}

func (a *addonConfigAPI) wakeImported(ctx context.Context) error {
	var list v1alpha1.HostedClusterDeploymentList
	if err := a.reader.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing HostedClusterDeployments to give them KlusterletAddonConfigs")
		return nil
	}
	for i := range list.Items {
		if !controllerutil.ContainsFinalizer(&list.Items[i], Finalizer) {
			continue
		}
		select {
		case a.events <- event.GenericEvent{Object: &list.Items[i]}:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// klusterletAddonConfigRetry rechecks a KlusterletAddonConfig whose cluster
// namespace OCM has not created yet (namespaces are not watched).
const klusterletAddonConfigRetry = 5 * time.Second

// klusterletAddonConfigRead bounds the cached read of one.
const klusterletAddonConfigRead = 10 * time.Second

// ensureKlusterletAddonConfig applies mc's KlusterletAddonConfig where the
// hub serves it; it says how soon to look again when it could not yet.
func (r *Reconciler) ensureKlusterletAddonConfig(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, mc *clusterv1.ManagedCluster) (time.Duration, error) {
	if r.addonConfigs == nil || !r.addonConfigs.served.Load() || mc.UID == "" {
		return 0, nil
	}
	desired := DesiredKlusterletAddonConfig(hcd, mc, r.klusterletAddons)
	live := klusterletAddonConfigMetadata()
	// Bounded: a cache read of a kind the hub stopped serving (ACM
	// uninstalled, not yet noticed by addonConfigAPI) waits for an informer
	// that never syncs; the import must go on meanwhile.
	getCtx, cancel := context.WithTimeout(ctx, klusterletAddonConfigRead)
	err := r.client.Get(getCtx, types.NamespacedName{Namespace: mc.Name, Name: mc.Name}, live)
	cancel()
	switch {
	case err == nil && !ours(live, hcd):
		return 0, nil // the admin's or ACM's own
	case err == nil && klusterletAddonConfigUpToDate(live, desired):
		return 0, nil
	case err != nil && !apierrors.IsNotFound(err):
		ctrl.LoggerFrom(ctx).Error(err, "reading the KlusterletAddonConfig", "namespace", mc.Name)
		return klusterletAddonConfigRetry, nil
	}
	target := &unstructured.Unstructured{}
	if err == nil {
		// Ours, and the add-on set or the owner changed.
		target.SetGroupVersionKind(KlusterletAddonConfigGVK)
		target.SetNamespace(mc.Name)
		target.SetName(mc.Name)
		err = apply(ctx, r.client, target, desired)
	} else {
		// Created, never applied: one that exists and the cache has not
		// seen yet (the admin's, made just now) must not be taken over by
		// a forced apply.
		data, jerr := json.Marshal(desired)
		if jerr != nil {
			return 0, jerr
		}
		if jerr := json.Unmarshal(data, &target.Object); jerr != nil {
			return 0, jerr
		}
		err = r.client.Create(ctx, target, client.FieldOwner(FieldManager))
		if apierrors.IsAlreadyExists(err) {
			return klusterletAddonConfigRetry, nil // the cache catches up
		}
	}
	if apierrors.IsNotFound(err) {
		// The cluster namespace is OCM's to create, right after the
		// ManagedCluster.
		return klusterletAddonConfigRetry, nil
	}
	if err != nil {
		return 0, fmt.Errorf("writing KlusterletAddonConfig %s/%s: %w", mc.Name, mc.Name, err)
	}
	return 0, nil
}
