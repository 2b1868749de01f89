package groups

import "testing"

func TestGroup(t *testing.T) {
	for in, want := range map[string]string{
		"cluster.x-k8s.io":                "cluster.hypershift.openshift.io",
		"infrastructure.cluster.x-k8s.io": "infrastructure.cluster.hypershift.openshift.io",
		"a.b.cluster.x-k8s.io":            "a.b.cluster.hypershift.openshift.io",
		"xcluster.x-k8s.io":               "",
		"cluster.x-k8s.io.example.com":    "",
		"x-k8s.io":                        "",
		"hypershift.openshift.io":         "",
		"":                                "",
	} {
		got, ok := ToPrivate.Group(in)
		if (want == "") == ok || ok && got != want {
			t.Errorf("ToPrivate.Group(%q) = %q, %v; want %q", in, got, ok, want)
		}
		if ok {
			back, ok := ToStandard.Group(got)
			if !ok || back != in {
				t.Errorf("round trip of %q gave %q", in, back)
			}
		}
	}
	// the private family never contains HyperShift's own groups
	for _, g := range []string{"hypershift.openshift.io", "scheduling.hypershift.openshift.io", "certificates.hypershift.openshift.io"} {
		if IsPrivate(g) || IsStandard(g) {
			t.Errorf("%s taken for a CAPI group", g)
		}
	}
}

func TestAPIVersionAndCRDName(t *testing.T) {
	cases := []struct {
		f        func(string) (string, bool)
		in, want string
	}{
		{ToPrivate.APIVersion, "cluster.x-k8s.io/v1beta2", "cluster.hypershift.openshift.io/v1beta2"},
		{ToPrivate.APIVersion, "v1", "v1"},
		{ToPrivate.APIVersion, "apps/v1", "apps/v1"},
		{ToStandard.APIVersion, "bootstrap.cluster.hypershift.openshift.io/v1beta1", "bootstrap.cluster.x-k8s.io/v1beta1"},
		{ToPrivate.CRDName, "machines.cluster.x-k8s.io", "machines.cluster.hypershift.openshift.io"},
		{ToPrivate.CRDName, "agentmachines.capi-provider.agent-install.openshift.io", "agentmachines.capi-provider.agent-install.openshift.io"},
		{ToStandard.CRDName, "ipaddresses.ipam.cluster.hypershift.openshift.io", "ipaddresses.ipam.cluster.x-k8s.io"},
	}
	for _, c := range cases {
		if got, _ := c.f(c.in); got != c.want {
			t.Errorf("%q: got %q want %q", c.in, got, c.want)
		}
	}
}

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		`clusters.cluster.hypershift.openshift.io "c1" not found`:         `clusters.cluster.x-k8s.io "c1" not found`,
		`/apis/cluster.hypershift.openshift.io/v1beta2`:                   `/apis/cluster.x-k8s.io/v1beta2`,
		`cluster.hypershift.openshift.io`:                                 `cluster.x-k8s.io`,
		`a cluster.hypershift.openshift.io.example b`:                     `a cluster.hypershift.openshift.io.example b`,
		`xcluster.hypershift.openshift.io`:                                `xcluster.hypershift.openshift.io`,
		`cluster.hypershift.openshift.io-x`:                               `cluster.hypershift.openshift.io-x`,
		`cluster.hypershift.openshift.io/cluster.hypershift.openshift.io`: `cluster.x-k8s.io/cluster.x-k8s.io`,
		`no groups here`: `no groups here`,
	} {
		got, changed := ToStandard.Text(in)
		if got != want || changed != (in != want) {
			t.Errorf("Text(%q) = %q, %v; want %q", in, got, changed, want)
		}
		if back, _ := ToPrivate.Text(got); back != in {
			t.Errorf("Text round trip of %q gave %q", in, back)
		}
	}
	// Label keys of the standard family are not touched towards private.
	if got, _ := ToStandard.Text("cluster.x-k8s.io/cluster-name"); got != "cluster.x-k8s.io/cluster-name" {
		t.Errorf("label key changed: %q", got)
	}
}
