package scheduling

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// TestAcrossMove: a HostedClusterDeployment's ManifestWork in several
// clusters' namespaces is a binding only when a backup caught a relocation:
// bound where the annotation says, every other one the relocation's copy
// of it or a paused source; anything else stays ambiguous.
func TestAcrossMove(t *testing.T) {
	const name, pause = "hcd-team-a.app", "relocate-team-a.app"
	work := func(cluster, n string, annotations map[string]string) workv1.ManifestWork {
		return workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: n, Annotations: annotations}}
	}
	copyOf := func(source string) map[string]string {
		return map[string]string{hosting.AnnotationRelocationCopy: source}
	}
	for _, c := range []struct {
		name    string
		works   []workv1.ManifestWork
		boundTo string
		want    string
		others  []string
	}{
		{"before the switch: the copy", []workv1.ManifestWork{work("c1", name, nil), work("c1", pause, nil), work("c2", name, copyOf("c1"))}, "c1", "c1", []string{"c2"}},
		{"after the switch: the paused source", []workv1.ManifestWork{work("c1", name, nil), work("c1", pause, nil), work("c2", name, copyOf("c1"))}, "c2", "c2", []string{"c1"}},
		{"no annotation", []workv1.ManifestWork{work("c1", name, nil), work("c2", name, copyOf("c1"))}, "", "", nil},
		{"a copy of another cluster", []workv1.ManifestWork{work("c1", name, nil), work("c2", name, copyOf("c3"))}, "c1", "", nil},
		{"a stale ManifestWork, no relocation's", []workv1.ManifestWork{work("c1", name, nil), work("c2", name, nil)}, "c1", "", nil},
		{"the annotation's cluster holds none", []workv1.ManifestWork{work("c2", name, copyOf("c1")), work("c3", name, copyOf("c1"))}, "c1", "", nil},
		{"an extension's ManifestWork does not count", []workv1.ManifestWork{work("c1", name, nil), work("c2", "ext-team-a.app", nil), work("c2", name, copyOf("c1"))}, "c1", "c1", []string{"c2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, others := acrossMove(c.works, name, pause, c.boundTo)
			if got != c.want || !slices.Equal(others, c.others) {
				t.Fatalf("acrossMove = %q, %v; want %q, %v", got, others, c.want, c.others)
			}
		})
	}
}
