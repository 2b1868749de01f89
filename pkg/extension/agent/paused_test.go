package agent

import (
	"context"
	"flag"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
)

// TestObserve: a paused release reads an object and never writes it:
// absent is Pending, another owner's is Refused, its own is probed.
func TestObserve(t *testing.T) {
	ctx := context.Background()
	release := extension.Release{UID: "uid-1", AvailabilityProbes: []v1alpha1.ExtensionProbeSet{{
		Selector: v1alpha1.ExtensionProbeSelector{Kind: v1alpha1.ExtensionGroupKind{Kind: "ConfigMap"}},
		Probes:   []v1alpha1.ExtensionProbe{{CEL: &v1alpha1.CELProbe{Rule: "self.data.ready == 'yes'", Message: "not ready"}}}}}}
	cm := func(name, uid, ready string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "clusters-a"}, "data": map[string]any{"ready": ready}}}
		if uid != "" {
			u.SetLabels(map[string]string{extension.LabelExtensionUID: uid})
		}
		return u
	}
	c := fake.NewClientBuilder().WithObjects(cm("foreign", "", "yes"), cm("ours", "uid-1", "yes"), cm("unready", "uid-1", "no")).Build()
	for name, want := range map[string]v1alpha1.ExtensionObjectState{"absent": v1alpha1.ObjectStatePending, "foreign": v1alpha1.ObjectStateRefused,
		"ours": v1alpha1.ObjectStateAvailable, "unready": v1alpha1.ObjectStateUnavailable} {
		o := extension.Object{Ref: extension.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "clusters-a", Name: name}}
		if got := observe(ctx, c, o, release); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// TestTeardownTimeoutFlag: the feature's flag sets the engine's guest
// teardown bound; unset, it is the 2-minute default.
func TestTeardownTimeoutFlag(t *testing.T) {
	for args, want := range map[string]time.Duration{"": 2 * time.Minute, "--extension-guest-teardown-timeout=7s": 7 * time.Second} {
		f := Feature(Options{})
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		f.Flags(fs)
		var argv []string
		if args != "" {
			argv = []string{args}
		}
		if err := fs.Parse(argv); err != nil {
			t.Fatal(err)
		}
		if got := fs.Lookup("extension-guest-teardown-timeout").Value.(flag.Getter).Get().(time.Duration); got != want {
			t.Fatalf("%q: %s, want %s", args, got, want)
		}
	}
}
