//go:build integration

package addon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	addonhub "github.com/hcp-fleet/hcp-fleet/pkg/addon/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/operator"
)

// A release whose HyperShift operator image crash-loops stops a Progressive
// rollout at its first cluster (issue 37, item 2 through OCM's rollout): the
// real addon-manager counts a cluster done from its add-on ManifestWork's
// Available, which the work's condition rules make "the agent rolled out and
// the operator is healthy with this configuration". With maxConcurrency 1
// and no minSuccessTime the second cluster would follow at once if the first
// were counted done; it keeps the old release while the first is unhealthy,
// and follows once a good release reaches the first.
func TestProgressiveRolloutStopsAtAnUnhealthyOperator(t *testing.T) {
	ctx := context.Background()
	c := newClients(t)
	clusters := []string{"cluster-1", "cluster-2"}
	for _, cl := range clusters {
		c.label(t, cl, hcpfleet.HostLabel, ptrTo("true"))
	}
	// The strategy changes before the clusters settle, not just before the
	// release does: the addon-manager reads the ClusterManagementAddOn and
	// the AddOnDeploymentConfig from separate informers, so a release
	// changed right after the strategy may be rolled out under the old
	// strategy (All) to both clusters at once. Nothing the addon-manager
	// writes names the strategy it saw; settling both clusters under the
	// new one is the signal that it has seen it.
	c.setRolloutStrategy(t, `{"type":"Progressive","progressive":{"maxConcurrency":1}}`)
	t.Cleanup(func() { c.setRolloutStrategy(t, `{"type":"All"}`) })
	for _, cl := range clusters {
		c.agentReady(t, cl)
	}
	oldHash := c.releaseApplied(t, clusters)
	adc, err := c.addons.AddonV1alpha1().AddOnDeploymentConfigs(addon.DefaultHubNamespace).Get(ctx, addon.ReleaseConfigName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldVariables := adc.Spec.CustomizedVariables

	// The upgraded hub's release brings a broken operator image.
	if err := addonhub.ApplyReleaseConfig(ctx, c.addons, addon.DefaultHubNamespace, addonhub.ReleaseImages{
		Agent: hcpfleet.AgentImage, HyperShiftOperator: hcpfleet.BrokenHyperShiftOperatorImage,
	}); err != nil {
		t.Fatal(err)
	}
	// ApplyReleaseConfig only adds; the test puts the old variables back.
	t.Cleanup(func() { c.applyReleaseVariables(t, oldVariables) })

	start := time.Now()
	var first, second string
	eventually(t, 2*time.Minute, "one cluster got the new release config", func(ctx context.Context) error {
		for _, cl := range clusters {
			ref, err := c.releaseRef(ctx, cl)
			if err != nil {
				return err
			}
			if ref.DesiredConfig.SpecHash != oldHash[cl] {
				first = cl
			}
		}
		if first == "" {
			return fmt.Errorf("no cluster has the new release config yet")
		}
		return nil
	})
	for _, cl := range clusters {
		if cl != first {
			second = cl
		}
	}
	// The positive signals, in the order they happen: the agent on the
	// first cluster runs the broken operator and says so; the work agent
	// evaluated the add-on work's rules at its new generation (Applied, not
	// Available, because of the operator); the addon-manager keeps the
	// cluster Progressing and the install progression at one cluster.
	eventually(t, 2*time.Minute, first+" runs the broken operator, its add-on work is applied and not Available", func(ctx context.Context) error {
		mca, err := c.addons.AddonV1alpha1().ManagedClusterAddOns(first).Get(ctx, addon.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		op := meta.FindStatusCondition(mca.Status.Conditions, addon.ConditionHyperShiftOperatorInstalled)
		if op == nil || op.Status != metav1.ConditionFalse || !strings.Contains(op.Message, hcpfleet.BrokenHyperShiftOperatorImage) {
			return fmt.Errorf("the agent does not report the broken operator yet: %+v", op)
		}
		work, err := c.deployWork(ctx, first)
		if err != nil {
			return err
		}
		applied := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied)
		available := meta.FindStatusCondition(work.Status.Conditions, workv1.WorkAvailable)
		if applied == nil || applied.Status != metav1.ConditionTrue || applied.ObservedGeneration != work.Generation ||
			available == nil || available.Status != metav1.ConditionFalse || available.ObservedGeneration != work.Generation {
			return fmt.Errorf("work %s generation %d: Applied %+v, Available %+v", work.Name, work.Generation, applied, available)
		}
		cm := manifestCondition(work, "configmaps", addon.HostingConfigMap, workv1.ManifestAvailable)
		if cm == nil || cm.Status != metav1.ConditionFalse || !strings.Contains(cm.Message, "has not reported the HyperShift operator healthy") {
			return fmt.Errorf("the HostingConfig ConfigMap's rule: %+v", cm)
		}
		if p := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing); p == nil ||
			p.Status != metav1.ConditionTrue || p.Reason != addonv1alpha1.ProgressingReasonProgressing {
			return fmt.Errorf("Progressing %+v", p)
		}
		cma, err := c.addons.AddonV1alpha1().ClusterManagementAddOns().Get(ctx, addon.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(cma.Status.InstallProgressions) != 1 {
			return fmt.Errorf("install progressions %+v", cma.Status.InstallProgressions)
		}
		if p := meta.FindStatusCondition(cma.Status.InstallProgressions[0].Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing); p == nil ||
			!strings.HasPrefix(p.Message, "1/2 progressing") {
			return fmt.Errorf("install progression %+v", p)
		}
		return nil
	})
	t.Logf("%s held unhealthy %s after the release changed", first, time.Since(start).Round(time.Millisecond))
	ref, err := c.releaseRef(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if ref.DesiredConfig.SpecHash != oldHash[second] {
		t.Fatalf("%s got the new release config while the operator on %s crash-loops: %+v", second, first, ref.DesiredConfig)
	}

	// A fixed release (the old operator image, named explicitly) reaches
	// the first cluster as another config change; once its operator is
	// healthy the rollout moves on to the second.
	c.applyReleaseVariables(t, append(withoutVariable(oldVariables, addon.HyperShiftOperatorImageVariable),
		addonv1alpha1.CustomizedVariable{Name: addon.HyperShiftOperatorImageVariable, Value: operator.DefaultImage}))
	eventually(t, 3*time.Minute, "both clusters applied the fixed release", func(ctx context.Context) error {
		for _, cl := range clusters {
			ref, err := c.releaseRef(ctx, cl)
			if err != nil {
				return err
			}
			if ref.DesiredConfig.SpecHash == oldHash[cl] || ref.LastAppliedConfig == nil || !equality.Semantic.DeepEqual(ref.LastAppliedConfig, ref.DesiredConfig) {
				return fmt.Errorf("%s: desired %+v, last applied %+v", cl, ref.DesiredConfig, ref.LastAppliedConfig)
			}
		}
		return nil
	})
}

// setRolloutStrategy sets the rollout strategy of the add-on's placement.
func (c *clients) setRolloutStrategy(t *testing.T, strategy string) {
	t.Helper()
	patch := []byte(`{"spec":{"installStrategy":{"type":"Placements","placements":[{"name":"hcp-fleet-hosts","namespace":"hcp-fleet","rolloutStrategy":` + strategy + `}]}}}`)
	if _, err := c.addons.AddonV1alpha1().ClusterManagementAddOns().Patch(context.Background(), addon.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// applyReleaseVariables server-side applies exactly these variables as the
// hub's release field manager (ApplyReleaseConfig never removes one).
func (c *clients) applyReleaseVariables(t *testing.T, vars []addonv1alpha1.CustomizedVariable) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{
		"apiVersion": addonv1alpha1.GroupVersion.String(), "kind": "AddOnDeploymentConfig",
		"metadata": map[string]any{"name": addon.ReleaseConfigName, "namespace": addon.DefaultHubNamespace},
		"spec":     map[string]any{"customizedVariables": vars},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.addons.AddonV1alpha1().AddOnDeploymentConfigs(addon.DefaultHubNamespace).Patch(context.Background(), addon.ReleaseConfigName,
		types.ApplyPatchType, patch, metav1.PatchOptions{FieldManager: addonhub.ReleaseFieldManager}); err != nil {
		t.Fatal(err)
	}
}

func withoutVariable(vars []addonv1alpha1.CustomizedVariable, name string) []addonv1alpha1.CustomizedVariable {
	var out []addonv1alpha1.CustomizedVariable
	for _, v := range vars {
		if v.Name != name {
			out = append(out, v)
		}
	}
	return out
}

// deployWork is the add-on's deploy ManifestWork in a cluster namespace.
func (c *clients) deployWork(ctx context.Context, cluster string) (*workv1.ManifestWork, error) {
	works, err := c.works.WorkV1().ManifestWorks(cluster).List(ctx, metav1.ListOptions{LabelSelector: addonv1alpha1.AddonLabelKey + "=" + addon.Name})
	if err != nil {
		return nil, err
	}
	for i := range works.Items {
		if strings.HasPrefix(works.Items[i].Name, "addon-"+addon.Name+"-deploy-") {
			return &works.Items[i], nil
		}
	}
	return nil, fmt.Errorf("no deploy ManifestWork of %s in %s", addon.Name, cluster)
}

// manifestCondition is a condition of the work's manifest of resource and
// name.
func manifestCondition(work *workv1.ManifestWork, resource, name, conditionType string) *metav1.Condition {
	for _, m := range work.Status.ResourceStatus.Manifests {
		if m.ResourceMeta.Resource == resource && m.ResourceMeta.Name == name {
			return meta.FindStatusCondition(m.Conditions, conditionType)
		}
	}
	return nil
}
