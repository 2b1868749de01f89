package feature

import (
	"context"
	"fmt"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedbootstrap"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedcontrolplane"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/proxy"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// Cleanup is the feature's part of the add-on's pre-delete hook. It removes
// what we installed and nothing else, and only when that loses nothing:
//
//   - the agent providers' CRDs, unless OpenshiftAssistedConfigs or
//     OpenshiftAssistedControlPlanes exist (each provider's own Cleanup);
//   - the CAPI CRDs we installed (standard or private), unless any object of
//     any of them exists. Deleting a CRD deletes every object of its kind,
//     and a fleet admin who removes the add-on from a management cluster
//     expects its hosted clusters' machines to survive, not vanish; so the
//     hook fails and says which object is in the way, and is retried;
//   - then the RoleBindings of the agent's CAPI-namespace grants.
//
// CRDs someone else installed (the platform's standard CAPI CRDs) are never
// touched. The HyperShift operator's cleanup runs before this one (it
// refuses while HostedClusters exist), so on a cluster that hosted nothing
// any more the CAPI objects are normally gone already.
func Cleanup(ctx context.Context, env *agent.Env) error {
	c, err := client.New(env.Managed, client.Options{Scheme: agent.Scheme})
	if err != nil {
		return err
	}
	ours, err := ownCRDs(ctx, c)
	if err != nil {
		return err
	}

	// The providers' CRDs are in the mode's groups: in Private mode their
	// cleanup goes through the proxy, like the providers themselves.
	cfg := env.Managed
	if anyPrivate(ours) {
		pcfg, stop, err := startProxy(env.Managed)
		if err != nil {
			return err
		}
		defer stop()
		cfg = pcfg
	}
	if err := assistedcontrolplane.Cleanup(ctx, cfg); err != nil {
		return err
	}
	if err := assistedbootstrap.Cleanup(ctx, cfg); err != nil {
		return err
	}

	for i := range ours {
		if obj, err := anyObject(ctx, c, &ours[i]); err != nil {
			return err
		} else if obj != "" {
			return &agent.CleanupBlockedError{Reason: "CAPIObjectsExist", Message: fmt.Sprintf(
				"%s %s (and maybe more) still exists; the CAPI CRDs hcp-fleet installed are removed once no object of theirs is left, "+
					"because deleting a CRD deletes all its objects", ours[i].Spec.Names.Kind, obj)}
		}
	}
	for i := range ours {
		if err := c.Delete(ctx, &ours[i], client.Preconditions{UID: &ours[i].UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting CRD %s: %w", ours[i].Name, err)
		}
	}
	// The CAPI-namespace grants the providers and the migration bound to the
	// agent where they worked.
	return kubeutil.UnbindSelf(ctx, c, addon.AgentCAPINamespaceRole)
}

// ownCRDs lists the CAPI CRDs pkg/capi/crds installed: our managed-by label
// and its mode label.
func ownCRDs(ctx context.Context, c client.Reader) ([]apiextensionsv1.CustomResourceDefinition, error) {
	mode, err := labels.NewRequirement(crds.ModeLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	sel := labels.SelectorFromSet(labels.Set{crds.ManagedByLabel: crds.ManagedByValue}).Add(*mode)
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing CRDs: %w", err)
	}
	var out []apiextensionsv1.CustomResourceDefinition
	for _, crd := range list.Items {
		if crds.IsOurs(&crd) {
			out = append(out, crd)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func anyPrivate(ours []apiextensionsv1.CustomResourceDefinition) bool {
	for _, crd := range ours {
		if crd.Labels[crds.ModeLabel] == "private" {
			return true
		}
	}
	return false
}

// anyObject returns "namespace/name" of one object of the CRD's kind, or "".
func anyObject(ctx context.Context, c client.Reader, crd *apiextensionsv1.CustomResourceDefinition) (string, error) {
	version := ""
	for _, v := range crd.Spec.Versions {
		if v.Served {
			version = v.Name
			if v.Storage {
				break
			}
		}
	}
	if version == "" {
		return "", nil // serves nothing: no object can be reached (or lost) through it
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.ListKind})
	if err := c.List(ctx, list, client.Limit(1)); err != nil {
		return "", fmt.Errorf("listing %s: %w", crd.Name, err)
	}
	if len(list.Items) == 0 {
		return "", nil
	}
	o := list.Items[0]
	if o.Namespace == "" {
		return o.Name, nil
	}
	return o.Namespace + "/" + o.Name, nil
}

// startProxy serves the CAPI API proxy on a free loopback port and returns
// the client config to reach it and the function that stops it.
func startProxy(cfg *rest.Config) (*rest.Config, func(), error) {
	lis, err := proxy.Listen("127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	srv, err := proxy.NewServer(cfg)
	if err != nil {
		_ = lis.Close()
		return nil, nil, err
	}
	go func() { _ = srv.Serve(lis) }()
	return proxy.ClientConfig(lis.Addr().String()), func() { _ = srv.Close() }, nil
}
