package proxy

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

var pb = protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)

func encodePB(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := pb.Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func decodePB(t testing.TB, b []byte) runtime.Object {
	t.Helper()
	obj, _, err := pb.Decode(b, nil, nil)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return obj
}

func ownedSecret(apiVersion string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "c1-kubeconfig", Namespace: "ns",
			Labels: map[string]string{"cluster.x-k8s.io/cluster-name": "c1"},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: apiVersion, Kind: "Cluster", Name: "c1", UID: "u1"},
				{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "u2"},
			},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", APIVersion: "v1", Operation: metav1.ManagedFieldsOperationUpdate}},
		},
		Data: map[string][]byte{"apiVersion": []byte("cluster.x-k8s.io/v1beta2")},
	}
}

func TestTranslateProtobufSecret(t *testing.T) {
	in := encodePB(t, ownedSecret("cluster.x-k8s.io/v1beta2"))
	out, err := TranslateProtobuf(in, priv)
	if err != nil {
		t.Fatal(err)
	}
	got := decodePB(t, out).(*corev1.Secret)
	if av := got.OwnerReferences[0].APIVersion; av != "cluster.hypershift.openshift.io/v1beta2" {
		t.Fatalf("owner apiVersion %q", av)
	}
	if got.OwnerReferences[1].APIVersion != "v1" || string(got.Data["apiVersion"]) != "cluster.x-k8s.io/v1beta2" || got.Labels["cluster.x-k8s.io/cluster-name"] != "c1" {
		t.Fatalf("untouched fields changed: %+v", got)
	}
	// and back, byte for byte
	back, err := TranslateProtobuf(out, std)
	if err != nil || !bytes.Equal(back, in) {
		t.Fatalf("round trip differs (err %v)", err)
	}
	// nothing to do: same slice
	plain := encodePB(t, ownedSecret("v1"))
	same, err := TranslateProtobuf(plain, priv)
	if err != nil || &same[0] != &plain[0] {
		t.Fatalf("unchanged body was copied (err %v)", err)
	}
}

func TestTranslateProtobufListAndEvents(t *testing.T) {
	list := &corev1.SecretList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "SecretList"},
		Items: []corev1.Secret{*ownedSecret("cluster.hypershift.openshift.io/v1beta2"), *ownedSecret("v1")}}
	out, err := TranslateProtobuf(encodePB(t, list), std)
	if err != nil {
		t.Fatal(err)
	}
	gl := decodePB(t, out).(*corev1.SecretList)
	if gl.Items[0].OwnerReferences[0].APIVersion != "cluster.x-k8s.io/v1beta2" || gl.Items[1].OwnerReferences[0].APIVersion != "v1" {
		t.Fatalf("list items: %+v", gl.Items)
	}

	ev := &corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"}, ObjectMeta: metav1.ObjectMeta{Name: "e"},
		InvolvedObject: corev1.ObjectReference{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Machine", Name: "m"},
		Related:        &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "AgentMachine"},
		Message:        "cluster.x-k8s.io/v1beta2 is mentioned"}
	out, err = TranslateProtobuf(encodePB(t, ev), priv)
	if err != nil {
		t.Fatal(err)
	}
	ge := decodePB(t, out).(*corev1.Event)
	if ge.InvolvedObject.APIVersion != "cluster.hypershift.openshift.io/v1beta2" || ge.Related.APIVersion != "infrastructure.cluster.hypershift.openshift.io/v1beta1" || ge.Message != ev.Message {
		t.Fatalf("core event: %+v", ge)
	}

	ev2 := &eventsv1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"}, ObjectMeta: metav1.ObjectMeta{Name: "e"},
		Regarding: corev1.ObjectReference{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster"},
		Related:   &corev1.ObjectReference{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Machine"}}
	out, err = TranslateProtobuf(encodePB(t, ev2), priv)
	if err != nil {
		t.Fatal(err)
	}
	ge2 := decodePB(t, out).(*eventsv1.Event)
	if ge2.Regarding.APIVersion != "cluster.hypershift.openshift.io/v1beta2" || ge2.Related.APIVersion != "cluster.hypershift.openshift.io/v1beta2" {
		t.Fatalf("events/v1 event: %+v", ge2)
	}
}

// Fields this binary does not know (a newer client or apiserver) are carried
// through: the rewrite works on the wire format, not on Go types.
func TestTranslateProtobufKeepsUnknownFields(t *testing.T) {
	in := encodePB(t, ownedSecret("cluster.x-k8s.io/v1beta2"))
	u := &runtime.Unknown{}
	if err := u.Unmarshal(in[4:]); err != nil {
		t.Fatal(err)
	}
	u.Raw = protowire.AppendBytes(protowire.AppendTag(u.Raw, 9999, protowire.BytesType), []byte("future"))
	raw, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out, err := TranslateProtobuf(append(append([]byte{}, protobufMagic...), raw...), priv)
	if err != nil {
		t.Fatal(err)
	}
	got := &runtime.Unknown{}
	if err := got.Unmarshal(out[4:]); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(got.Raw, protowire.AppendBytes(protowire.AppendTag(nil, 9999, protowire.BytesType), []byte("future"))) {
		t.Fatal("unknown field lost")
	}
	if !bytes.Contains(got.Raw, []byte("cluster.hypershift.openshift.io/v1beta2")) {
		t.Fatal("owner not translated")
	}
}

func TestTranslateProtobufGarbage(t *testing.T) {
	for _, in := range [][]byte{nil, []byte("k8s"), append(append([]byte{}, protobufMagic...), 0xff, 0xff, 'c', 'l', 'u', 's', 't', 'e', 'r', '.', 'x', '-', 'k', '8', 's', '.', 'i', 'o')} {
		out, err := TranslateProtobuf(in, priv)
		if err == nil {
			t.Errorf("%q: no error", in)
		}
		if !bytes.Equal(out, in) {
			t.Errorf("%q: changed on error", in)
		}
	}
}
