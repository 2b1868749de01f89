package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// ReleaseFieldManager is the field manager of the release's variables in
// the release AddOnDeploymentConfig; an admin's fields of it (node
// placement, registries, proxy) are left alone.
const ReleaseFieldManager = "hcp-fleet-release"

// ReleaseImages are the images this hub release ships for the management
// clusters. An empty image is not written: its variable is left to the
// admin, and without one the agent's built-in default applies.
type ReleaseImages struct {
	Agent              string
	HyperShiftOperator string
}

// releaseVariables are the customized variables holding images.
func releaseVariables(images ReleaseImages) []addonv1alpha1.CustomizedVariable {
	var vars []addonv1alpha1.CustomizedVariable
	if images.Agent != "" {
		vars = append(vars, addonv1alpha1.CustomizedVariable{Name: addon.AgentImageVariable, Value: images.Agent})
	}
	if images.HyperShiftOperator != "" {
		vars = append(vars, addonv1alpha1.CustomizedVariable{Name: addon.HyperShiftOperatorImageVariable, Value: images.HyperShiftOperator})
	}
	return vars
}

// releaseCurrent reports whether the config already holds every variable.
func releaseCurrent(have []addonv1alpha1.CustomizedVariable, want []addonv1alpha1.CustomizedVariable) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// ReleaseDefaultsFieldManager owns the release config's
// agentInstallNamespace, applied once when the hub creates the config. It is
// a manager of its own so that the release applies, which name only the
// variables, never release that field (an AddOnDeploymentConfig would then
// default it to OCM's shared namespace and move the agent).
const ReleaseDefaultsFieldManager = "hcp-fleet-release-defaults"

// ApplyReleaseConfig writes this release's images into the release
// AddOnDeploymentConfig in namespace ns, server-side applying only the image
// variables under ReleaseFieldManager, so the admin may keep node placement,
// registries or proxy in the same object. A missing config is first created
// with the agent's usual install namespace (ReleaseDefaultsFieldManager). It
// writes nothing when the images are already there.
func ApplyReleaseConfig(ctx context.Context, client addonclient.Interface, ns string, images ReleaseImages) error {
	want := releaseVariables(images)
	if len(want) == 0 {
		return nil
	}
	adcs := client.AddonV1alpha1().AddOnDeploymentConfigs(ns)
	have, err := adcs.Get(ctx, addon.ReleaseConfigName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if err := apply(ctx, client, ns, ReleaseDefaultsFieldManager, map[string]any{"agentInstallNamespace": addon.DefaultInstallNamespace}); err != nil {
			return err
		}
	case err != nil:
		return err
	case releaseCurrent(have.Spec.CustomizedVariables, want):
		return nil
	}
	return apply(ctx, client, ns, ReleaseFieldManager, map[string]any{"customizedVariables": want})
}

// apply server-side applies spec to the release config as manager.
func apply(ctx context.Context, client addonclient.Interface, ns, manager string, spec map[string]any) error {
	patch, err := json.Marshal(map[string]any{
		"apiVersion": addonv1alpha1.GroupVersion.String(), "kind": "AddOnDeploymentConfig",
		"metadata": map[string]any{"name": addon.ReleaseConfigName, "namespace": ns},
		"spec":     spec,
	})
	if err != nil {
		return err
	}
	if _, err := client.AddonV1alpha1().AddOnDeploymentConfigs(ns).Patch(ctx, addon.ReleaseConfigName, types.ApplyPatchType, patch, metav1.PatchOptions{FieldManager: manager}); err != nil {
		return fmt.Errorf("applying AddOnDeploymentConfig %s/%s as %s: %w", ns, addon.ReleaseConfigName, manager, err)
	}
	return nil
}
