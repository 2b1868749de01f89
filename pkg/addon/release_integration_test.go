//go:build integration

package addon_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	addonhub "github.com/hcp-fleet/hcp-fleet/pkg/addon/hub"
)

// An hcp-fleet upgrade is a change of the release config, which OCM's
// addon-manager rolls out as the ClusterManagementAddOn's rolloutStrategy
// says (issue 37, item 1): with Progressive, maxConcurrency 1 and a
// minSuccessTime longer than the test, exactly one management cluster gets
// the new agent image; the other keeps the old one until the strategy lets
// it go.
func TestReleaseRolloutFollowsTheStrategy(t *testing.T) {
	ctx := context.Background()
	c := newClients(t)
	clusters := []string{"cluster-1", "cluster-2"}
	for _, cl := range clusters {
		c.label(t, cl, hcpfleet.HostLabel, ptrTo("true"))
	}
	// Progressive before the clusters settle, not just before the release
	// changes (see TestProgressiveRolloutStopsAtAnUnhealthyOperator: the
	// addon-manager may otherwise roll the release out under All). Without
	// minSuccessTime yet, so a rollout left by an earlier test finishes.
	// The release config is the default AddOnDeploymentConfig only when the
	// placement names none.
	c.setRolloutStrategy(t, `{"type":"Progressive","progressive":{"maxConcurrency":1}}`)
	t.Cleanup(func() { c.setRolloutStrategy(t, `{"type":"All"}`) })
	for _, cl := range clusters {
		c.agentReady(t, cl)
	}

	// The hub wrote its release config at start.
	adc, err := c.addons.AddonV1alpha1().AddOnDeploymentConfigs(addon.DefaultHubNamespace).Get(ctx, addon.ReleaseConfigName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldImages := addonhub.ReleaseImages{Agent: hcpfleet.AgentImage}
	if !hasVariable(adc, addon.AgentImageVariable, oldImages.Agent) {
		t.Fatalf("release config variables %+v, want %s=%s", adc.Spec.CustomizedVariables, addon.AgentImageVariable, oldImages.Agent)
	}
	// Not OCM's shared namespace, which an AddOnDeploymentConfig defaults.
	if adc.Spec.AgentInstallNamespace != addon.DefaultInstallNamespace {
		t.Errorf("release config agentInstallNamespace %q, want %q", adc.Spec.AgentInstallNamespace, addon.DefaultInstallNamespace)
	}
	oldHash := c.releaseApplied(t, clusters)

	// Adding minSuccessTime now is safe from that race: under the strategy
	// the addon-manager already runs, the second cluster could only follow
	// once the first has rolled out, long after this change is seen.
	c.setRolloutStrategy(t, `{"type":"Progressive","progressive":{"maxConcurrency":1,"minSuccessTime":"1h"}}`)
	// The upgraded hub writes its images (what ApplyReleaseConfig does at
	// its start); the kubelet stand-in runs the agent for any tag.
	newImages := addonhub.ReleaseImages{Agent: strings.TrimSuffix(hcpfleet.AgentImage, ":latest") + ":next"}
	if err := addonhub.ApplyReleaseConfig(ctx, c.addons, addon.DefaultHubNamespace, newImages); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := addonhub.ApplyReleaseConfig(context.Background(), c.addons, addon.DefaultHubNamespace, oldImages); err != nil {
			t.Error(err)
		}
	})

	start := time.Now()
	var first, second string
	eventually(t, 2*time.Minute, "one cluster runs the new agent image and has applied the new release config", func(ctx context.Context) error {
		for _, cl := range clusters {
			ref, err := c.releaseRef(ctx, cl)
			if err != nil {
				return err
			}
			if ref.DesiredConfig.SpecHash == oldHash[cl] || ref.LastAppliedConfig == nil || !equality.Semantic.DeepEqual(ref.LastAppliedConfig, ref.DesiredConfig) {
				continue
			}
			if img := c.deployment(t, cl).Spec.Template.Spec.Containers[0].Image; img != newImages.Agent {
				return fmt.Errorf("%s applied the new release config but runs %s", cl, img)
			}
			first = cl
		}
		if first == "" {
			return fmt.Errorf("no cluster has the new release config applied yet")
		}
		return nil
	})
	t.Logf("first cluster %s upgraded %s after the release changed", first, time.Since(start).Round(time.Millisecond))
	for _, cl := range clusters {
		if cl != first {
			second = cl
		}
	}
	// The addon-manager saw the first cluster done: the
	// ClusterManagementAddOn's install progression counts it. Only then is
	// the second cluster's state an answer of the strategy.
	eventually(t, time.Minute, "the install progression counts one cluster done", func(ctx context.Context) error {
		cma, err := c.addons.AddonV1alpha1().ClusterManagementAddOns().Get(ctx, addon.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		// One placement, hcp-fleet-hosts: one install progression.
		if len(cma.Status.InstallProgressions) != 1 {
			return fmt.Errorf("install progressions %+v", cma.Status.InstallProgressions)
		}
		p := cma.Status.InstallProgressions[0]
		cond := meta.FindStatusCondition(p.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing)
		if cond == nil || !strings.HasPrefix(cond.Message, "1/2 ") {
			return fmt.Errorf("install progression %+v", p.Conditions)
		}
		return nil
	})
	ref, err := c.releaseRef(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if ref.DesiredConfig.SpecHash != oldHash[second] {
		t.Errorf("%s got the new release config while %s was within minSuccessTime: %+v", second, first, ref.DesiredConfig)
	}
	if img := c.deployment(t, second).Spec.Template.Spec.Containers[0].Image; img != oldImages.Agent {
		t.Errorf("%s runs %s while %s was within minSuccessTime, want %s", second, img, first, oldImages.Agent)
	}

	// The admin lets the rest go: the second cluster follows.
	c.setRolloutStrategy(t, `{"type":"All"}`)
	eventually(t, 2*time.Minute, second+" runs the new agent image", func(ctx context.Context) error {
		if img := c.deployment(t, second).Spec.Template.Spec.Containers[0].Image; img != newImages.Agent {
			return fmt.Errorf("image %s", img)
		}
		return nil
	})
}

// releaseRef is the cluster's resolved AddOnDeploymentConfig reference, which
// must be the release config.
// releaseApplied waits until every cluster applied the release config OCM
// resolved for it and returns each one's spec hash.
func (c *clients) releaseApplied(t *testing.T, clusters []string) map[string]string {
	t.Helper()
	hashes := map[string]string{}
	for _, cl := range clusters {
		eventually(t, time.Minute, cl+" applied the release config", func(ctx context.Context) error {
			ref, err := c.releaseRef(ctx, cl)
			if err != nil {
				return err
			}
			if ref.LastAppliedConfig == nil || !equality.Semantic.DeepEqual(ref.LastAppliedConfig, ref.DesiredConfig) {
				return fmt.Errorf("desired %+v, last applied %+v", ref.DesiredConfig, ref.LastAppliedConfig)
			}
			hashes[cl] = ref.DesiredConfig.SpecHash
			return nil
		})
	}
	return hashes
}

func (c *clients) releaseRef(ctx context.Context, cluster string) (*addonv1alpha1.ConfigReference, error) {
	mca, err := c.addons.AddonV1alpha1().ManagedClusterAddOns(cluster).Get(ctx, addon.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	for i, ref := range mca.Status.ConfigReferences {
		if ref.Resource != "addondeploymentconfigs" || ref.DesiredConfig == nil {
			continue
		}
		if ref.DesiredConfig.Name != addon.ReleaseConfigName || ref.DesiredConfig.Namespace != addon.DefaultHubNamespace {
			return nil, fmt.Errorf("%s: AddOnDeploymentConfig %s/%s, want the release config", cluster, ref.DesiredConfig.Namespace, ref.DesiredConfig.Name)
		}
		return &mca.Status.ConfigReferences[i], nil
	}
	return nil, fmt.Errorf("%s: no AddOnDeploymentConfig resolved yet", cluster)
}

func hasVariable(adc *addonv1alpha1.AddOnDeploymentConfig, name, value string) bool {
	for _, v := range adc.Spec.CustomizedVariables {
		if v.Name == name && v.Value == value {
			return true
		}
	}
	return false
}
