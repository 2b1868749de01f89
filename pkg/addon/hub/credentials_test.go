package hub

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

func TestCredentials(t *testing.T) {
	secret := func(name string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "hcp-fleet", Name: name}, Data: data}
	}
	a := &AgentAddon{kube: fake.NewClientset(
		secret("oidc", map[string][]byte{"credentials": []byte("oidc-creds")}),
		secret("dns", map[string][]byte{"marker-key-aws": []byte("marker-value-x"), "marker-key-azure": []byte("marker-value-y")}),
		secret("empty", map[string][]byte{"credentials": {}}),
	)}
	spec := func(oidc, dns, aws string) []byte {
		return []byte(`{"install":{"oidcStorage":{"bucket":"b","region":"r","credentialsSecret":{"name":"` + oidc + `"}},` +
			`"externalDNS":{"provider":"aws","domainFilter":"d","credentialsSecret":{"name":"` + dns + `","key":"credentials"}},` +
			`"privatePlatform":{"type":"AWS","aws":{"region":"r","credentialsSecret":{"name":"` + aws + `"}}}}}`)
	}

	copies, problems, err := a.credentials(context.Background(), "hcp-fleet", "hcp-fleet/default", spec("oidc", "dns", "missing"))
	if err != nil {
		t.Fatal(err)
	}
	want := []CredentialCopy{{Credential: addon.OIDCStorageCredentials, Source: addon.CredentialRef{Name: "oidc", Key: "credentials"}.Source("hcp-fleet"), Data: []byte("oidc-creds")}}
	if !reflect.DeepEqual(copies, want) {
		t.Errorf("copies %+v, want %+v", copies, want)
	}
	wantProblems := []string{
		`spec.install.externalDNS.credentialsSecret of HostingConfig hcp-fleet/default: Secret hcp-fleet/dns has no key named by spec.install.externalDNS.credentialsSecret.key (or the default)`,
		`spec.install.privatePlatform.aws.credentialsSecret of HostingConfig hcp-fleet/default: Secret hcp-fleet/missing does not exist on the hub`,
	}
	if !reflect.DeepEqual(problems, wantProblems) {
		t.Errorf("problems\n%q\nwant\n%q", problems, wantProblems)
	}
	// Key names and values stay out of the problems (they end up in
	// conditions).
	for _, p := range problems {
		if strings.Contains(p, "marker-") {
			t.Errorf("problem names a Secret key or value: %q", p)
		}
	}

	_, problems, _ = a.credentials(context.Background(), "hcp-fleet", "hcp-fleet/default", spec("empty", "oidc", "oidc"))
	if want := []string{`spec.install.oidcStorage.credentialsSecret of HostingConfig hcp-fleet/default: Secret hcp-fleet/empty has an empty value under the key named by spec.install.oidcStorage.credentialsSecret.key (or the default)`}; !reflect.DeepEqual(problems, want) {
		t.Errorf("problems %q, want %q", problems, want)
	}

	copies, problems, err = a.credentials(context.Background(), "hcp-fleet", "hcp-fleet/default", []byte(`{"capiMode":"Auto"}`))
	if err != nil || len(copies) != 0 || len(problems) != 0 {
		t.Errorf("a spec without references: %v %v %v", copies, problems, err)
	}
}

type recordingRenderer struct{ triggered []string }

func (r *recordingRenderer) Trigger(cluster, addonName string) {
	r.triggered = append(r.triggered, cluster+"/"+addonName)
}

func TestRenderTrigger(t *testing.T) {
	r := &recordingRenderer{}
	trigger := NewRenderTrigger(r)
	// Before the add-on manager started, triggers wait (its queues do not
	// exist yet) and none is lost.
	trigger.Trigger("mc-2")
	trigger.Trigger("mc-1")
	trigger.Trigger("mc-2")
	if len(r.triggered) != 0 {
		t.Fatalf("triggered before the manager started: %v", r.triggered)
	}
	trigger.Started()
	if want := []string{"mc-1/hcp-fleet", "mc-2/hcp-fleet"}; !reflect.DeepEqual(r.triggered, want) {
		t.Errorf("on start: triggered %v, want %v", r.triggered, want)
	}
	trigger.Trigger("mc-3")
	if want := []string{"mc-1/hcp-fleet", "mc-2/hcp-fleet", "mc-3/hcp-fleet"}; !reflect.DeepEqual(r.triggered, want) {
		t.Errorf("after start: triggered %v, want %v", r.triggered, want)
	}
}

func TestAddonsReferencing(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1alpha1.AddToScheme, addonv1alpha1.Install} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	hostingConfig := func(name, oidcSecret string) *v1alpha1.HostingConfig {
		return &v1alpha1.HostingConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "hcp-fleet", Name: name},
			Spec: v1alpha1.HostingConfigSpec{Install: &v1alpha1.InstallOptions{OIDCStorage: &v1alpha1.OIDCStorageS3{
				Bucket: "b", Region: "r", CredentialsSecret: v1alpha1.CredentialsSecretReference{Name: oidcSecret}}}}}
	}
	mca := func(cluster, name, config string) *addonv1alpha1.ManagedClusterAddOn {
		return &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name},
			Status: addonv1alpha1.ManagedClusterAddOnStatus{ConfigReferences: []addonv1alpha1.ConfigReference{{
				ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: HostingConfigGVR.Group, Resource: HostingConfigGVR.Resource},
				DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: addonv1alpha1.ConfigReferent{Namespace: "hcp-fleet", Name: config}, SpecHash: "h"},
			}}}}
	}
	c := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(
		hostingConfig("default", "s3"), hostingConfig("other", "s3-other"),
		&v1alpha1.HostingConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "default"}},
		mca("mc-1", addon.Name, "default"), mca("mc-2", addon.Name, "other"), mca("mc-3", addon.Name, "default"),
		mca("mc-4", "another-addon", "default"),
	).Build()
	w := &credentialsWatch{client: c}
	secret := func(ns, name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	for _, tc := range []struct {
		secret *metav1.PartialObjectMetadata
		want   []string
	}{
		{secret("hcp-fleet", "s3"), []string{"mc-1/hcp-fleet", "mc-3/hcp-fleet"}},
		{secret("hcp-fleet", "s3-other"), []string{"mc-2/hcp-fleet"}},
		{secret("hcp-fleet", "unreferenced"), nil},
		// A Secret of the same name in another namespace is not the one
		// the HostingConfigs reference.
		{secret("elsewhere", "s3"), nil},
	} {
		var got []string
		for _, req := range w.addonsReferencing(context.Background(), tc.secret) {
			got = append(got, req.String())
		}
		sort.Strings(got)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Secret %s/%s: re-renders %v, want %v", tc.secret.Namespace, tc.secret.Name, got, tc.want)
		}
	}
}
