package addon

import (
	"reflect"
	"testing"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

func TestCredentialRefs(t *testing.T) {
	ref := func(name, key string) v1alpha1.CredentialsSecretReference {
		return v1alpha1.CredentialsSecretReference{Name: name, Key: key}
	}
	for _, tc := range []struct {
		name string
		spec *v1alpha1.HostingConfigSpec
		want []CredentialRef
	}{
		{"nil spec", nil, nil},
		{"no install options", &v1alpha1.HostingConfigSpec{}, nil},
		{"all three, key defaulted", &v1alpha1.HostingConfigSpec{Install: &v1alpha1.InstallOptions{
			PrivatePlatform: &v1alpha1.PrivatePlatformConfig{Type: v1alpha1.PrivatePlatformAWS, AWS: &v1alpha1.AWSPrivatePlatform{CredentialsSecret: ref("aws", "")}},
			ExternalDNS:     &v1alpha1.ExternalDNSConfig{CredentialsSecret: ref("dns", "azure.json")},
			OIDCStorage:     &v1alpha1.OIDCStorageS3{CredentialsSecret: ref("oidc", "")},
		}}, []CredentialRef{
			{OIDCStorageCredentials, "oidc", "credentials"},
			{ExternalDNSCredentials, "dns", "azure.json"},
			{PrivatePlatformCredentials, "aws", "credentials"},
		}},
		{"private platform None uses no credentials", &v1alpha1.HostingConfigSpec{Install: &v1alpha1.InstallOptions{
			PrivatePlatform: &v1alpha1.PrivatePlatformConfig{Type: v1alpha1.PrivatePlatformNone},
		}}, nil},
	} {
		if got := CredentialRefs(tc.spec); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: CredentialRefs = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestHostingConfigNamespaceAllowed(t *testing.T) {
	for _, tc := range []struct {
		ns, hub string
		allowed []string
		want    bool
	}{
		{"hcp-fleet", "", nil, true},
		{"hcp-fleet", "other-hub", nil, false},
		{"other-hub", "other-hub", nil, true},
		{"hcp-demo", "", nil, false},
		{"hcp-demo", "", []string{"team-a", "hcp-demo"}, true},
		{"team-b", "", []string{"team-a"}, false},
		{"", "", []string{""}, false},
	} {
		if got := HostingConfigNamespaceAllowed(tc.ns, tc.hub, tc.allowed); got != tc.want {
			t.Errorf("HostingConfigNamespaceAllowed(%q, %q, %q) = %v, want %v", tc.ns, tc.hub, tc.allowed, got, tc.want)
		}
	}
}
