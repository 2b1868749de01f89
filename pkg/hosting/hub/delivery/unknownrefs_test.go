package delivery

import (
	"slices"
	"testing"
)

func TestUnknownReferences(t *testing.T) {
	ref := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		kind SpecKind
		spec map[string]any
		want []string
	}{{
		name: "known references only",
		kind: KindHostedCluster,
		spec: map[string]any{
			"pullSecret": ref("name", "pull"),
			"etcd":       map[string]any{"unmanaged": map[string]any{"tls": map[string]any{"clientSecret": ref("name", "etcd")}}},
			"configuration": map[string]any{"oauth": map[string]any{"identityProviders": []any{
				map[string]any{"name": "idp", "openID": map[string]any{"clientSecret": ref("name", "oidc")}},
			}}},
			// A field newer than our types that is not a reference.
			"newerThanOurTypes": map[string]any{"x": int64(1), "mode": map[string]any{"type": "Fast"}},
		},
	}, {
		name: "a new field at the top",
		kind: KindHostedCluster,
		spec: map[string]any{"pullSecret": ref("name", "pull"), "billingSecret": ref("name", "clusters-other-admin-kubeconfig")},
		want: []string{"billingSecret"},
	}, {
		name: "new fields under known objects and lists",
		kind: KindHostedCluster,
		spec: map[string]any{
			"platform": map[string]any{"type": "OpenStack", "openstack": map[string]any{
				"identityRef": ref("name", "clouds", "cloudName", "openstack"),
				"caBundle":    ref("name", "ca", "key", "ca.crt"),
			}},
			"configuration": map[string]any{"oauth": map[string]any{"identityProviders": []any{
				map[string]any{"name": "a"},
				map[string]any{"name": "b", "newIdP": map[string]any{"clientSecret": ref("name", "s")}},
			}}},
		},
		want: []string{"configuration.oauth.identityProviders[1].newIdP.clientSecret", "platform.openstack.caBundle"},
	}, {
		name: "deep inside an unknown object, and in an unknown list",
		kind: KindHostedCluster,
		spec: map[string]any{
			"addOns":           map[string]any{"monitoring": map[string]any{"remoteWrite": map[string]any{"auth": ref("name", "rw", "key", "token", "optional", "true")}}},
			"extraCredentials": []any{ref("name", "one"), ref("name", "two"), "not an object"},
		},
		want: []string{"addOns.monitoring.remoteWrite.auth", "extraCredentials[0]", "extraCredentials[1]"},
	}, {
		// The identity provider's name is not a reference: its type knows
		// it (and knows "name" as a string).
		name: "known objects that merely have a name",
		kind: KindHostedCluster,
		spec: map[string]any{
			"configuration": map[string]any{"oauth": map[string]any{"identityProviders": []any{map[string]any{"name": "only-a-name"}}}},
			"platform":      map[string]any{"powervs": map[string]any{"subnet": map[string]any{"name": "subnet-a"}}},
		},
	}, {
		name: "an object where our types want a string",
		kind: KindHostedCluster,
		spec: map[string]any{"release": map[string]any{"image": ref("name", "release-pull")}},
		want: []string{"release.image"},
	}, {
		name: "a namespace on a classified reference",
		kind: KindHostedCluster,
		spec: map[string]any{
			"pullSecret":            ref("name", "pull", "namespace", "team-b"),
			"sshKey":                ref("name", "ssh", "namespace", ""),
			"additionalTrustBundle": ref("name", "ca"),
		},
		want: []string{"pullSecret.namespace"},
	}, {
		name: "node pool",
		kind: KindNodePool,
		spec: map[string]any{
			"config":       []any{ref("name", "mc"), ref("name", "other", "namespace", "clusters")},
			"tuningConfig": []any{ref("name", "tuned")},
			"platform": map[string]any{
				"kubevirt": map[string]any{"additionalNetworks": []any{ref("name", "ns/nad")}},
				"powervs":  map[string]any{"image": map[string]any{"name": "rhcos"}},
			},
			"ignitionSecret": ref("name", "clusters-other-ignition"),
		},
		want: []string{"config[1].namespace", "ignitionSecret"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnknownReferences(tc.spec, tc.kind); !slices.Equal(got, tc.want) {
				t.Errorf("UnknownReferences = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSpecUnknownReferences(t *testing.T) {
	s := testSpec(t)
	if got := s.UnknownReferences(); len(got) != 0 {
		t.Errorf("the test spec: %v", got)
	}
	s.HostedCluster["spec"].(map[string]any)["newCredentials"] = map[string]any{"name": "x"}
	s.NodePools = append(s.NodePools, map[string]any{"name": "b", "spec": map[string]any{"newConfig": []any{map[string]any{"name": "y"}}}})
	want := []string{"spec.hostedCluster.spec.newCredentials", "spec.nodePools[1].spec.newConfig[0]"}
	if got := s.UnknownReferences(); !slices.Equal(got, want) {
		t.Errorf("UnknownReferences = %q, want %q", got, want)
	}
}
