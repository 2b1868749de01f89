package delivery

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
)

// policyProblem checks u against the TenantPolicy of its namespace before
// every render: the scheduler bound it under the policy of that moment, and
// the admin may have tightened it since. A HostedClusterDeployment the
// policy refuses is not (re)delivered; what was delivered keeps running as
// it is, since tightening a policy must not tear hosted clusters down. An
// earlier problem (found stands) is kept.
func (r *Reconciler) policyProblem(ctx context.Context, u *unstructured.Unstructured, work *workv1.ManifestWork, found *Problem) (*tenancy.Policy, *Problem, error) {
	if found != nil {
		policy, err := r.tenancy.For(ctx, u.GetNamespace())
		return policy, found, err
	}
	policy, v, err := r.tenancy.Verdict(ctx, u, UnknownReferencesOf(u))
	if err != nil {
		return nil, nil, err
	}
	if len(v.List) == 0 {
		return policy, nil, nil
	}
	msg := "not delivered: " + v.Message()
	if work != nil {
		msg += "; what was delivered before keeps running as it is"
	}
	return policy, &Problem{Reason: v1alpha1.ReasonPolicyViolation, Message: msg}, nil
}

// tooLarge is a Problem when a referenced object is larger than the policy
// allows: a tenant's megabyte Secret referenced by many HostedClusterDeployments
// would be copied into each of their ManifestWorks, and rewritten in each on
// every change. The size counted is the data's, keys and values.
func tooLarge(referenced map[string]*unstructured.Unstructured, refs []Reference, namespace string, policy *tenancy.Policy) *Problem {
	limit := policy.MaxReferencedObjectBytes()
	for _, ref := range refs {
		obj := referenced[ref.Kind+"/"+ref.Name]
		if obj == nil {
			continue
		}
		if size := dataSize(obj); size > limit {
			return &Problem{Reason: v1alpha1.ReasonReferencedObjectTooLarge, Message: fmt.Sprintf(
				"not delivered: %s %s/%s (%s) holds %d bytes of data, more than the %d %s allows; what was delivered before keeps running as it is",
				ref.Kind, namespace, ref.Name, ref.Field, size, limit, policy.Name)}
		}
	}
	return nil
}

// dataSize is the bytes of a Secret's or ConfigMap's data as stored
// (base64 for Secrets and binaryData), keys included.
func dataSize(obj *unstructured.Unstructured) int64 {
	var n int64
	for _, field := range []string{"data", "stringData", "binaryData"} {
		m, _ := obj.Object[field].(map[string]any)
		for k, v := range m {
			s, _ := v.(string)
			n += int64(len(k) + len(s))
		}
	}
	return n
}

// UnknownReferencesOf is Spec.UnknownReferences of an unstructured
// HostedClusterDeployment (none when its spec does not read).
func UnknownReferencesOf(u *unstructured.Unstructured) []string {
	spec, err := SpecFrom(u)
	if err != nil {
		return nil
	}
	return spec.UnknownReferences()
}
