package delivery

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// reportedRecheck is how often a deployment held by reportedMismatch reads
// its host's inventory again: the earlier deployment's HostedCluster may be
// on its way out, or the report behind.
const reportedRecheck = 15 * time.Second

// reportedMismatch is the problem of a HostedClusterDeployment with no
// ManifestWork whose management cluster's agent reports a HostedCluster
// delivered for an earlier HostedClusterDeployment of its namespace and
// name (another hcdstatus.IdentityUID), or nil. That is a hub restored without its
// ManifestWorks (the scheduler recovered the binding from the same report):
// the work agent still holds what the lost ManifestWork applied, under the
// same ManifestWork name, so a new one would have it delete the Secret
// copies the running hosted cluster uses (their names depend on the UID)
// and conflict on the rest. Nothing is written; the hosted cluster keeps
// running as it is, as with a restored ManifestWork (uidMismatch). The
// inventory is not watched: a deployment held by it looks again every
// reportedRecheck.
func (r *Reconciler) reportedMismatch(ctx context.Context, hcd *v1alpha1.HostedClusterDeployment, cluster string) (*Problem, error) {
	inv, err := r.hostInventory(ctx, cluster)
	if inv == nil || err != nil {
		return nil, err
	}
	own := hcdstatus.IdentityUID(hcd)
	for _, e := range inv.Status.HostedClusters {
		d := e.Deployment
		if d == nil || d.Namespace != hcd.Namespace || d.Name != hcd.Name || d.UID == "" || types.UID(d.UID) == own {
			continue
		}
		if e.Deleting {
			// The earlier deployment's, on its way out (its finalizer waits
			// for it): delivered once it is gone.
			return &Problem{Reason: v1alpha1.ReasonUIDMismatch, Message: fmt.Sprintf(
				"management cluster %s is deleting HostedCluster %s/%s of an earlier HostedClusterDeployment %s/%s (UID %s); delivering once it is gone",
				cluster, e.Namespace, e.Name, hcd.Namespace, hcd.Name, d.UID)}, nil
		}
		return &Problem{Reason: v1alpha1.ReasonUIDMismatch, Message: fmt.Sprintf(
			"management cluster %s runs HostedCluster %s/%s of an earlier HostedClusterDeployment %s/%s (UID %s; this one's is %s, as after a backup restore without its ManifestWork "+
				"of a deployment that carried no %s or was created again since), its agent reports: no ManifestWork is written, so the hosted cluster keeps running as it is "+
				"and nothing on %s is renamed or deleted; the hub does not take it over on its own (docs/operations.md, \"Backup and restore\")",
			cluster, e.Namespace, e.Name, hcd.Namespace, hcd.Name, d.UID, own, hcdstatus.AnnotationIdentityUID, cluster)}, nil
	}
	return nil, nil
}

// hostInventory is the HostedClusterInventory cluster's agent writes, or
// nil when it has written none (yet).
func (r *Reconciler) hostInventory(ctx context.Context, cluster string) (*v1alpha1.HostedClusterInventory, error) {
	inv := &v1alpha1.HostedClusterInventory{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: cluster, Name: v1alpha1.InventoryName}, inv); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return inv, nil
}
