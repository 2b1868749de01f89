package fleettest

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// AgentLeaseHolder is the identity holding the hcp-fleet agent's leader
// lease on a management cluster ("" when none does). A restarted agent
// takes the lease under a new identity before its controllers start: the
// per-agent signal that this agent, not another in the process, is back.
func AgentLeaseHolder(ctx context.Context, managed kubernetes.Interface) (string, error) {
	leases, err := managed.CoordinationV1().Leases(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", addon.Name+"-agent").String(),
	})
	if err != nil {
		return "", err
	}
	if len(leases.Items) == 0 || leases.Items[0].Spec.HolderIdentity == nil {
		return "", nil
	}
	return *leases.Items[0].Spec.HolderIdentity, nil
}
