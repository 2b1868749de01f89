package proxy

import (
	"bytes"
	"errors"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

// protobufMagic prefixes every Kubernetes protobuf body
// (k8s.io/apimachinery/pkg/runtime/serializer/protobuf).
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

var errNotRewritable = errors.New("protobuf body has an unexpected shape")

// TranslateProtobuf rewrites the CAPI references in a Kubernetes protobuf
// body at the wire level: metadata.ownerReferences[].apiVersion and
// metadata.managedFields[].apiVersion of the object (or of every item of a
// list), and the object references of core/v1 and events.k8s.io/v1 Events.
//
// Why this exists: controller-runtime clients send built-in types (Secrets,
// ConfigMaps, Events) as protobuf by default, and CAPI controllers create
// Secrets owned by Clusters. Those ownerReferences must reach etcd in the
// private group or the garbage collector cannot resolve the owner. CAPI
// objects themselves are never protobuf (CRDs are JSON-only).
//
// Rewriting the wire format instead of decoding into Go types means fields
// that this binary's client-go does not know (a newer apiserver or client)
// are carried through byte for byte. Every Kubernetes object keeps ObjectMeta
// at field 1 and lists keep items at field 2; the field numbers below are
// those of k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto and
// k8s.io/api/{core,events}/v1/generated.proto.
func TranslateProtobuf(body []byte, dir groups.Direction) ([]byte, error) {
	if !bytes.HasPrefix(body, protobufMagic) {
		return body, errNotRewritable
	}
	if !dir.ContainsSource(body) {
		return body, nil
	}
	unknown := body[len(protobufMagic):]
	var apiVersion, kind string
	var raw []byte
	if err := eachField(unknown, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case num == 1 && typ == protowire.BytesType: // TypeMeta
			return eachField(v, func(n protowire.Number, t protowire.Type, s []byte) error {
				if t == protowire.BytesType && n == 1 {
					apiVersion = string(s)
				} else if t == protowire.BytesType && n == 2 {
					kind = string(s)
				}
				return nil
			})
		case num == 2 && typ == protowire.BytesType:
			raw = v
		}
		return nil
	}); err != nil {
		return body, err
	}
	obj, changed, err := rewriteObject(raw, apiVersion, kind, dir)
	if err != nil || !changed {
		return body, err
	}
	out, _, err := rewriteFields(unknown, func(num protowire.Number, typ protowire.Type, v []byte) ([]byte, bool, error) {
		if num == 2 && typ == protowire.BytesType {
			return obj, true, nil
		}
		return nil, false, nil
	})
	if err != nil {
		return body, err
	}
	return append(append([]byte{}, protobufMagic...), out...), nil
}

// rewriteObject rewrites one serialized object (or list) message.
func rewriteObject(raw []byte, apiVersion, kind string, dir groups.Direction) ([]byte, bool, error) {
	isList := strings.HasSuffix(kind, "List")
	var refFields map[protowire.Number]bool
	if kind == "Event" {
		switch apiVersion {
		case "v1":
			refFields = map[protowire.Number]bool{2: true, 13: true} // involvedObject, related
		case "events.k8s.io/v1":
			refFields = map[protowire.Number]bool{8: true, 9: true} // regarding, related
		}
	}
	return rewriteFields(raw, func(num protowire.Number, typ protowire.Type, v []byte) ([]byte, bool, error) {
		if typ != protowire.BytesType {
			return nil, false, nil
		}
		switch {
		case num == 1:
			return rewriteObjectMeta(v, dir)
		case isList && num == 2:
			return rewriteObject(v, "", "", dir)
		case refFields[num]:
			return rewriteStringField(v, 5, dir) // ObjectReference.apiVersion
		}
		return nil, false, nil
	})
}

func rewriteObjectMeta(meta []byte, dir groups.Direction) ([]byte, bool, error) {
	return rewriteFields(meta, func(num protowire.Number, typ protowire.Type, v []byte) ([]byte, bool, error) {
		if typ != protowire.BytesType {
			return nil, false, nil
		}
		switch num {
		case 13: // ownerReferences
			return rewriteStringField(v, 5, dir) // OwnerReference.apiVersion
		case 17: // managedFields
			return rewriteStringField(v, 3, dir) // ManagedFieldsEntry.apiVersion
		}
		return nil, false, nil
	})
}

// rewriteStringField translates the apiVersion string at field num of msg.
func rewriteStringField(msg []byte, num protowire.Number, dir groups.Direction) ([]byte, bool, error) {
	return rewriteFields(msg, func(n protowire.Number, typ protowire.Type, v []byte) ([]byte, bool, error) {
		if n != num || typ != protowire.BytesType {
			return nil, false, nil
		}
		out, ok := dir.APIVersion(string(v))
		if !ok {
			return nil, false, nil
		}
		return []byte(out), true, nil
	})
}

// eachField walks the fields of a message.
func eachField(msg []byte, f func(protowire.Number, protowire.Type, []byte) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return errNotRewritable
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return errNotRewritable
		}
		var v []byte
		if typ == protowire.BytesType {
			b, k := protowire.ConsumeBytes(msg[n:])
			if k < 0 {
				return errNotRewritable
			}
			v = b
		}
		if err := f(num, typ, v); err != nil {
			return err
		}
		msg = msg[n+m:]
	}
	return nil
}

// rewriteFields copies msg, replacing the value of length-delimited fields
// for which f returns changed. It returns msg itself when nothing changed.
func rewriteFields(msg []byte, f func(protowire.Number, protowire.Type, []byte) ([]byte, bool, error)) ([]byte, bool, error) {
	var out []byte
	changed := false
	rest := msg
	for len(rest) > 0 {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return msg, false, errNotRewritable
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return msg, false, errNotRewritable
		}
		field := rest[:n+m]
		var nv []byte
		var ok bool
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(rest[n:])
			var err error
			nv, ok, err = f(num, typ, v)
			if err != nil {
				return msg, false, err
			}
		}
		if ok && !changed {
			out = make([]byte, 0, len(msg)+32)
			out = append(out, msg[:len(msg)-len(rest)]...)
			changed = true
		}
		if changed {
			if ok {
				out = protowire.AppendTag(out, num, protowire.BytesType)
				out = protowire.AppendBytes(out, nv)
			} else {
				out = append(out, field...)
			}
		}
		rest = rest[n+m:]
	}
	if !changed {
		return msg, false, nil
	}
	return out, true, nil
}
