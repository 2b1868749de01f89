package refschema

import (
	"reflect"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestIsReference(t *testing.T) {
	type nameValue struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	type intName struct {
		Name int `json:"name"`
	}
	type keyOnly struct {
		Key string `json:"key"`
	}
	type nested struct {
		Name string                       `json:"name"`
		Kind *corev1.LocalObjectReference `json:"kind"`
	}
	type inlined struct {
		corev1.LocalObjectReference `json:",inline"`
		Key                         string `json:"key"`
	}
	type hidden struct {
		Name  string `json:"name"`
		Extra string `json:"-"`
		extra string
	}
	_ = hidden{extra: "not a JSON field"}
	for _, tc := range []struct {
		t    reflect.Type
		want bool
	}{
		{reflect.TypeFor[corev1.LocalObjectReference](), true},
		{reflect.TypeFor[*corev1.LocalObjectReference](), true},
		{reflect.TypeFor[corev1.SecretReference](), true},
		{reflect.TypeFor[corev1.SecretKeySelector](), true},
		{reflect.TypeFor[corev1.ConfigMapKeySelector](), true},
		{reflect.TypeFor[corev1.ObjectReference](), true},
		{reflect.TypeFor[corev1.TypedLocalObjectReference](), true},
		{reflect.TypeFor[corev1.TypedObjectReference](), true},
		{reflect.TypeFor[configv1.SecretNameReference](), true},
		{reflect.TypeFor[configv1.ConfigMapNameReference](), true},
		{reflect.TypeFor[configv1.ConfigMapFileReference](), true},
		{reflect.TypeFor[hyperv1.KubeconfigSecretRef](), true},
		{reflect.TypeFor[hyperv1.OpenStackIdentityReference](), true},
		{reflect.TypeFor[inlined](), true},
		{reflect.TypeFor[hidden](), true},

		// {id, name} names a cloud resource, and its name is a pointer.
		{reflect.TypeFor[hyperv1.PowerVSResourceReference](), false},
		{reflect.TypeFor[hyperv1.AWSResourceReference](), false},
		{reflect.TypeFor[nameValue](), false},
		{reflect.TypeFor[intName](), false},
		{reflect.TypeFor[keyOnly](), false},
		{reflect.TypeFor[nested](), false},
		{reflect.TypeFor[metav1.Time](), false},
		{reflect.TypeFor[resource.Quantity](), false},
		{reflect.TypeFor[runtime.RawExtension](), false},
		{reflect.TypeFor[string](), false},
		{reflect.TypeFor[[]corev1.LocalObjectReference](), false},
	} {
		if got := IsReference(tc.t); got != tc.want {
			t.Errorf("IsReference(%v) = %v, want %v", tc.t, got, tc.want)
		}
	}
}

// walked is a type with every shape Find steps through.
type walked struct {
	Direct  corev1.LocalObjectReference   `json:"direct"`
	Pointer *configv1.SecretNameReference `json:"pointer,omitempty"`
	List    []corev1.SecretKeySelector    `json:"list"`
	Deep    []struct {
		Items map[string]*corev1.ObjectReference `json:"items"`
	} `json:"deep"`
	embedded
	Inline  inline                      `json:",inline"`
	Skipped corev1.LocalObjectReference `json:"-"`
	private corev1.LocalObjectReference
	NoTag   corev1.LocalObjectReference
	Bytes   []byte      `json:"bytes"`
	Time    metav1.Time `json:"time"`
	Self    *recursive  `json:"self"`
	// A struct with a name that is not a reference: walked into.
	Named struct {
		Name string                      `json:"name"`
		Spec corev1.LocalObjectReference `json:"spec"`
		Size int                         `json:"size"`
	} `json:"named"`
}

type embedded struct {
	FromEmbedded corev1.LocalObjectReference `json:"fromEmbedded"`
}

type inline struct {
	FromInline corev1.LocalObjectReference `json:"fromInline"`
}

type recursive struct {
	Ref  corev1.LocalObjectReference `json:"ref"`
	Next *recursive                  `json:"next"`
}

func TestFind(t *testing.T) {
	_ = walked{private: corev1.LocalObjectReference{Name: "not a JSON field"}}
	var got []string
	for _, f := range Find(reflect.TypeFor[walked]()) {
		got = append(got, f.Path+" "+f.Type)
	}
	want := []string{
		"NoTag k8s.io/api/core/v1.LocalObjectReference",
		"deep[].items{} k8s.io/api/core/v1.ObjectReference",
		"direct k8s.io/api/core/v1.LocalObjectReference",
		"fromEmbedded k8s.io/api/core/v1.LocalObjectReference",
		"fromInline k8s.io/api/core/v1.LocalObjectReference",
		"list[] k8s.io/api/core/v1.SecretKeySelector",
		"named.spec k8s.io/api/core/v1.LocalObjectReference",
		"pointer github.com/openshift/api/config/v1.SecretNameReference",
		"self.ref k8s.io/api/core/v1.LocalObjectReference",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Find:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFindHyperShift: fields of the pinned HyperShift API that a hand-kept
// list had missed are found.
func TestFindHyperShift(t *testing.T) {
	found := map[string]string{}
	for _, f := range Find(reflect.TypeFor[hyperv1.HostedClusterSpec]()) {
		found[f.Path] = f.Type
	}
	for _, p := range []string{
		"pullSecret",
		"etcd.unmanaged.tls.clientSecret",
		"configuration.authentication.oidcProviders[].oidcClients[].clientSecret",
		"configuration.authentication.webhookTokenAuthenticator.kubeConfig",
		"configuration.apiServer.clientCA",
		"configuration.ingress.componentRoutes[].servingCertKeyPairSecret",
		"configuration.oauth.identityProviders[].openID.clientSecret",
		"platform.openstack.identityRef",
		"platform.powervs.kubeCloudControllerCreds",
		"secretEncryption.kms.ibmcloud.auth.unmanaged.credentials",
	} {
		if found[p] == "" {
			t.Errorf("%s not found", p)
		}
	}
	for p := range found {
		if strings.HasPrefix(p, "status") || strings.Contains(p, "subnet") {
			t.Errorf("%s is not a reference of HostedClusterSpec", p)
		}
	}
}

func TestLooksLikeReference(t *testing.T) {
	for _, tc := range []struct {
		obj  map[string]any
		want bool
	}{
		{map[string]any{"name": "a"}, true},
		{map[string]any{"name": "a", "key": "k", "optional": true}, true},
		{map[string]any{"name": "a", "namespace": "other"}, true},
		{map[string]any{"name": "a", "cloudName": "openstack"}, true},
		{map[string]any{"name": "a", "kind": "Secret", "apiVersion": "v1", "uid": "u"}, true},

		{map[string]any{}, false},
		{map[string]any{"key": "k"}, false},
		{map[string]any{"name": int64(1)}, false},
		{map[string]any{"name": "a", "value": "b"}, false},
		{map[string]any{"name": "a", "id": "b"}, false},
		{map[string]any{"name": "a", "key": map[string]any{"x": "y"}}, false},
		{map[string]any{"name": "a", "optional": []any{}}, false},
	} {
		if got := LooksLikeReference(tc.obj); got != tc.want {
			t.Errorf("LooksLikeReference(%v) = %v, want %v", tc.obj, got, tc.want)
		}
	}
}
