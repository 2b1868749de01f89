package feature

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/migration"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/proxy"
)

func TestMigrationCondition(t *testing.T) {
	hc := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "clusters", Name: name} }
	for _, tc := range []struct {
		name   string
		all    []migration.Progress
		status metav1.ConditionStatus
		reason string
		parts  []string
	}{
		{"nothing", nil, metav1.ConditionFalse, "NoneNeeded", []string{"no legacy hosted clusters"}},
		{"migrating", []migration.Progress{
			{HostedCluster: hc("a"), Phase: migration.PhaseMigrating, Step: migration.StepCopy},
			{HostedCluster: hc("b"), Phase: migration.PhasePending},
		}, metav1.ConditionTrue, "Migrating", []string{"migrating clusters/a", "step copy (4 of 8)", "0 migrated, 1 waiting, 0 failed"}},
		{"waiting only", []migration.Progress{{HostedCluster: hc("b"), Phase: migration.PhasePending}},
			metav1.ConditionTrue, "Migrating", []string{"1 legacy hosted cluster(s) waiting"}},
		{"rolling back", []migration.Progress{{HostedCluster: hc("a"), Phase: migration.PhaseRollingBack, Step: migration.StepHealthCheck, Reason: "health-check: timed out"}},
			metav1.ConditionTrue, "RollingBack", []string{"rolling back", "clusters/a", "timed out"}},
		{"failed beside migrated", []migration.Progress{
			{HostedCluster: hc("a"), Phase: migration.PhaseMigrated},
			{HostedCluster: hc("b"), Phase: migration.PhaseFailed, Reason: "preflight: boom"},
		}, metav1.ConditionFalse, "MigrationFailed", []string{"clusters/b (preflight: boom)", "1 migrated, 0 waiting, 1 failed", migration.AnnotationMigrationFailed}},
		{"complete", []migration.Progress{{HostedCluster: hc("a"), Phase: migration.PhaseMigrated}},
			metav1.ConditionFalse, "Complete", []string{"1 hosted cluster(s) on the private CAPI types"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := MigrationCondition(tc.all)
			if c.Type != ConditionMigration || c.Status != tc.status || c.Reason != tc.reason {
				t.Errorf("got %s %s %s: %s", c.Type, c.Status, c.Reason, c.Message)
			}
			for _, p := range tc.parts {
				if !strings.Contains(c.Message, p) {
					t.Errorf("message %q lacks %q", c.Message, p)
				}
			}
		})
	}
}

func TestSidecarFrom(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "hcp-fleet-agent", Name: "hcp-fleet-agent"}}
	d.Spec.Template.Spec.Containers = []corev1.Container{
		{Name: "other", Image: "x"},
		{Name: "agent", Image: "registry.example.com/agent:v1", Command: []string{"/agent"}, Args: []string{"run", "--foo"}},
	}
	s, err := SidecarFrom(d)
	if err != nil {
		t.Fatal(err)
	}
	// The agent's image and entrypoint, but the proxy subcommand: none of
	// the agent's own arguments.
	if s.Image != "registry.example.com/agent:v1" || !slices.Equal(s.Command, []string{"/agent"}) || !slices.Equal(s.Args, []string{proxy.SidecarCommand}) {
		t.Errorf("sidecar %+v", s)
	}
	d.Spec.Template.Spec.Containers[1].Name = "renamed"
	if _, err := SidecarFrom(d); err == nil || !strings.Contains(err.Error(), `no container "agent"`) {
		t.Errorf("no agent container: %v", err)
	}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "only"}}
	if _, err := SidecarFrom(d); err == nil || !strings.Contains(err.Error(), "no image") {
		t.Errorf("no image: %v", err)
	}
}
