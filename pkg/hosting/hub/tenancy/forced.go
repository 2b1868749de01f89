package tenancy

import (
	"maps"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Forced is what the admin's policy sets over every HostedCluster and
// NodePool of a namespace (TenantPolicy spec.forced).
type Forced struct {
	HostedClusterSpec map[string]any
	NodePoolSpec      map[string]any
	Labels            map[string]string
	Annotations       map[string]string
}

// Empty reports whether nothing is forced.
func (f Forced) Empty() bool {
	return len(f.HostedClusterSpec) == 0 && len(f.NodePoolSpec) == 0 && len(f.Labels) == 0 && len(f.Annotations) == 0
}

// Merge returns spec with forced merged over it: objects merge key by key,
// everything else (lists included) is replaced by the forced value. Neither
// argument is changed.
func Merge(spec, forced map[string]any) map[string]any {
	out, _ := runtime.DeepCopyJSONValue(spec).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range forced {
		if fm, ok := v.(map[string]any); ok {
			if sm, ok := out[k].(map[string]any); ok {
				out[k] = Merge(sm, fm)
				continue
			}
		}
		out[k] = runtime.DeepCopyJSONValue(v)
	}
	return out
}

// MergeStrings returns a with b's entries over it (nil when both are empty).
func MergeStrings(a, b map[string]string) map[string]string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

func rawOf(j *apiextensionsv1.JSON) []byte {
	if j == nil || len(j.Raw) == 0 {
		return nil
	}
	return j.Raw
}
