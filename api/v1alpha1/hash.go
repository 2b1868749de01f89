package v1alpha1

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Hash returns the spec hash of a HostingConfig with this spec, computed the way the
// OCM add-on manager computes status.configReferences[].desiredConfig.specHash of a
// ManagedClusterAddOn (addon-framework utils.GetSpecHash): the SHA-256, in lowercase
// hex, of the JSON encoding of an object that holds every top-level field of the
// config except apiVersion, kind, metadata and status, i.e. {"spec": ...}, with object
// keys sorted. It therefore changes when, and only when, the spec changes, and the
// agent can compare it with the specHash OCM hands out to tell which configuration it
// runs.
//
// For a spec read from the apiserver, Hash equals OCM's specHash as long as the Go
// types encode back to exactly the JSON the apiserver stored. The schema is shaped for
// that (optional parts are pointers, optional collections cannot be empty, booleans and
// counts are defaulted); the one exception is a resource quantity written in a
// non-canonical form (e.g. cpu: 1000m, which Go re-encodes as "1"). Where a value must
// match OCM's byte for byte whatever the user wrote, use SpecHashOfUnstructured on the
// object as read from the apiserver.
func (s *HostingConfigSpec) Hash() (string, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encoding HostingConfig spec: %w", err)
	}
	// Decode into generic values, as an unstructured object read from the apiserver
	// holds them, so the final encoding follows the same rules (sorted map keys, the
	// same number formatting) as OCM's.
	var spec any
	if err := utiljson.Unmarshal(raw, &spec); err != nil {
		return "", fmt.Errorf("decoding HostingConfig spec: %w", err)
	}
	return hashConfigFields(map[string]any{"spec": spec})
}

// SpecHashOfUnstructured returns OCM's spec hash of an add-on configuration object
// (any kind) exactly as addon-framework utils.GetSpecHash computes it.
func SpecHashOfUnstructured(obj *unstructured.Unstructured) (string, error) {
	if obj == nil {
		return "", fmt.Errorf("object is nil")
	}
	fields := map[string]any{}
	for k, v := range obj.Object {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
		default:
			fields[k] = v
		}
	}
	return hashConfigFields(fields)
}

func hashConfigFields(fields map[string]any) (string, error) {
	raw, err := json.Marshal(fields)
	if err != nil {
		return "", fmt.Errorf("encoding configuration: %w", err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(raw)), nil
}
