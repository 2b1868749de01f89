package scheduling

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
)

// tenancyCacheBehind is when a decision whose unstructured copy of the
// HostedClusterDeployment lags the typed one runs again.
const tenancyCacheBehind = 200 * time.Millisecond

// policyVerdict checks hcd against the TenantPolicy of its namespace before
// anything is decided for it: nothing a policy refuses is ever bound. It
// reads the unstructured copy, which keeps the fields newer than the pinned
// HyperShift API that the typed one drops. behind: that copy is not at
// hcd's generation yet.
func (r *Reconciler) policyVerdict(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment) (v tenancy.Violations, behind bool, err error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("HostedClusterDeployment"))
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(hcd), u); err != nil {
		// Not in that cache yet (the typed one can run ahead): decide
		// nothing on a copy that was not checked.
		if apierrors.IsNotFound(err) {
			return v, true, nil
		}
		return v, false, err
	}
	if u.GetGeneration() != hcd.Generation || u.GetUID() != hcd.UID {
		return v, true, nil
	}
	var unknown []string
	if r.opts.UnknownReferences != nil {
		unknown = r.opts.UnknownReferences(u)
	}
	_, v, err = r.tenancy.Verdict(ctx, u, unknown)
	return v, false, err
}
