package hub

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// The release's images come from the AddOnDeploymentConfig OCM resolved, so
// that an upgrade is a config change the rollout strategy gates: the agent
// image replaces the hub's flag, the operator image becomes the default
// spec.operator.image the agent is handed.
func TestRenderAgentFromReleaseConfig(t *testing.T) {
	v := values()
	v.ADC.CustomizedVariables = []addonv1alpha1.CustomizedVariable{
		{Name: addon.AgentImageVariable, Value: "example.com/agent:v2"},
		{Name: addon.HyperShiftOperatorImageVariable, Value: "example.com/hypershift:v2"},
	}
	objs, err := RenderAgent(v)
	if err != nil {
		t.Fatal(err)
	}
	if img := agentImage(t, objs); img != "example.com/agent:v2" {
		t.Errorf("agent image %s, want the release config's", img)
	}
	if got := handedSpec(t, objs); got["operator"].(map[string]any)["image"] != "example.com/hypershift:v2" || got["capiMode"] != "Auto" {
		t.Errorf("handed spec %v: want the release's operator image added to the HostingConfig's", got)
	}

	// A HostingConfig that names its own images wins over the release.
	v.HostingConfigSpec = `{"agentImage":"example.com/agent:pinned","operator":{"image":"example.com/hypershift:pinned"}}`
	objs, err = RenderAgent(v)
	if err != nil {
		t.Fatal(err)
	}
	if img := agentImage(t, objs); img != "example.com/agent:pinned" {
		t.Errorf("agent image %s, want the HostingConfig's", img)
	}
	if got := handedSpec(t, objs); got["operator"].(map[string]any)["image"] != "example.com/hypershift:pinned" {
		t.Errorf("handed spec %v: want the HostingConfig's operator image", got)
	}

	// Without the variables: the hub's flag, and no operator image added.
	objs, err = RenderAgent(values())
	if err != nil {
		t.Fatal(err)
	}
	if img := agentImage(t, objs); img != "example.com/agent:v1" {
		t.Errorf("agent image %s, want the hub's default", img)
	}
	if got := handedSpec(t, objs); got["operator"] != nil {
		t.Errorf("handed spec %v: want no operator image without a release variable", got)
	}
}

// A cluster the rollout has not reached keeps what it runs: while the live
// AddOnDeploymentConfig differs from what the addon-manager resolved for
// the cluster, nothing is rendered.
func TestRenderAgentWaitsForTheRollout(t *testing.T) {
	v := values()
	v.ADCHash = "resolved-before-the-release-changed"
	_, err := RenderAgent(v)
	if err == nil || !strings.Contains(err.Error(), "not rendered until the rollout strategy reaches this cluster") {
		t.Fatalf("want the render held back, got %v", err)
	}
}

func agentImage(t *testing.T, objs []runtime.Object) string {
	t.Helper()
	for _, d := range find[*appsv1.Deployment](objs) {
		if d.Name == AgentDeployment {
			return d.Spec.Template.Spec.Containers[0].Image
		}
	}
	t.Fatal("no agent Deployment")
	return ""
}

func handedSpec(t *testing.T, objs []runtime.Object) map[string]any {
	t.Helper()
	for _, cm := range find[*corev1.ConfigMap](objs) {
		if cm.Name == addon.HostingConfigMap {
			spec := map[string]any{}
			if err := json.Unmarshal([]byte(cm.Data[addon.HostingConfigKey]), &spec); err != nil {
				t.Fatal(err)
			}
			return spec
		}
	}
	t.Fatal("no HostingConfig ConfigMap")
	return nil
}

// The hub applies only the image variables, as its own field manager, and
// writes nothing when they are current. (Creating the config is a
// server-side apply the fake clientset cannot do; the local fleet's hub
// does it at start, TestReleaseRolloutFollowsTheStrategy.)
func TestApplyReleaseConfig(t *testing.T) {
	ctx := context.Background()
	images := ReleaseImages{Agent: "example.com/agent:v1", HyperShiftOperator: "example.com/hypershift:v1"}
	client := addonfake.NewSimpleClientset(&addonv1alpha1.AddOnDeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hcp-fleet", Name: addon.ReleaseConfigName},
		Spec: addonv1alpha1.AddOnDeploymentConfigSpec{
			AgentInstallNamespace: addon.DefaultInstallNamespace,
			NodePlacement:         &addonv1alpha1.NodePlacement{NodeSelector: map[string]string{"infra": ""}},
			CustomizedVariables:   releaseVariables(images),
		},
	})
	if err := ApplyReleaseConfig(ctx, client, "hcp-fleet", images); err != nil {
		t.Fatal(err)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("an unchanged release wrote: %s", a.GetVerb())
		}
	}
	images.Agent = "example.com/agent:v2"
	client.ClearActions()
	_ = ApplyReleaseConfig(ctx, client, "hcp-fleet", images) // the fake cannot apply; the request is what counts
	var patch clienttesting.PatchAction
	for _, a := range client.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok {
			patch = p
		}
	}
	if patch == nil || patch.GetPatchType() != types.ApplyPatchType {
		t.Fatalf("a new release image was not server-side applied: %v", client.Actions())
	}
	var sent struct {
		Spec map[string]json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(patch.GetPatch(), &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.Spec) != 1 || sent.Spec["customizedVariables"] == nil {
		t.Errorf("the apply names more than the variables: %s", patch.GetPatch())
	}
}

func TestReleaseVariablesSkipEmptyImages(t *testing.T) {
	if vars := releaseVariables(ReleaseImages{Agent: "a"}); len(vars) != 1 || vars[0].Name != addon.AgentImageVariable {
		t.Errorf("variables %+v", vars)
	}
	if err := ApplyReleaseConfig(context.Background(), addonfake.NewSimpleClientset(), "hcp-fleet", ReleaseImages{}); err != nil {
		t.Errorf("no images: %v", err)
	}
}
