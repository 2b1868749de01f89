package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	addonagent "github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// ReasonExtensionsActive is the add-on cleanup's reason while hosted
// clusters on this management cluster still run extensions.
const ReasonExtensionsActive = "ExtensionsActive"

// heldReleases are the releases that still carry the engine's finalizer.
func heldReleases(releases []corev1.ConfigMap) []corev1.ConfigMap {
	return slices.DeleteFunc(slices.Clone(releases), func(cm corev1.ConfigMap) bool {
		return !controllerutil.ContainsFinalizer(&cm, extension.Finalizer)
	})
}

// releasesAtCleanup sorts the held releases the add-on's cleanup finds:
// active ones (extensions of hosted clusters that still run: the cleanup
// must wait for the admin), ones the running engine is tearing down (wait
// for it) and ones being torn down for longer than grace (the engine is
// gone or stuck: the cleanup lets them go itself).
type releasesAtCleanup struct {
	active, tearingDown, overdue []corev1.ConfigMap
}

func sortReleases(releases []corev1.ConfigMap, now time.Time, grace time.Duration) releasesAtCleanup {
	var out releasesAtCleanup
	for _, cm := range heldReleases(releases) {
		switch {
		case cm.DeletionTimestamp == nil:
			out.active = append(out.active, cm)
		case now.Sub(cm.DeletionTimestamp.Time) > grace:
			out.overdue = append(out.overdue, cm)
		default:
			out.tearingDown = append(out.tearingDown, cm)
		}
	}
	return out
}

// activeMessage names (up to five of) the active releases for the cleanup
// condition: namespaces and ConfigMap names only.
func activeMessage(active []corev1.ConfigMap) string {
	var names []string
	for i, cm := range active {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(active)-5))
			break
		}
		names = append(names, cm.Namespace+"/"+cm.Name)
	}
	return fmt.Sprintf("hosted clusters on this cluster still run extensions (releases %s); delete their HostedClusterDeployments, or the HostedClusterExtensions, first",
		strings.Join(names, ", "))
}

// cleanup is the feature's part of the add-on's removal: it waits for the
// running engine to finish the teardowns under way (the engine keeps its
// grants while any release holds its finalizer), lets go of releases whose
// teardown takes longer than grace (the guest's objects are then left, as a
// gone guest's are), refuses while extensions are active, and finally
// removes the engine's grants in every control-plane namespace.
func cleanup(ctx context.Context, c client.Client, grace, poll time.Duration) error {
	log := ctrl.Log.WithName("extension-cleanup")
	var blocked error
	err := wait.PollUntilContextCancel(ctx, poll, true, func(ctx context.Context) (bool, error) {
		namespaces, err := kubeutil.BoundNamespaces(ctx, c, ClusterRole)
		if err != nil {
			return false, err
		}
		var all []corev1.ConfigMap
		for _, ns := range namespaces {
			releases := &corev1.ConfigMapList{}
			if err := c.List(ctx, releases, client.InNamespace(ns), client.MatchingLabels{extension.LabelRelease: "true"}); err != nil {
				return false, err
			}
			all = append(all, releases.Items...)
		}
		sorted := sortReleases(all, time.Now(), grace)
		if len(sorted.active) > 0 {
			blocked = &addonagent.CleanupBlockedError{Reason: ReasonExtensionsActive, Message: activeMessage(sorted.active)}
			return true, nil
		}
		for i := range sorted.overdue {
			cm := &sorted.overdue[i]
			log.Info("the extension engine did not finish tearing down a release in time; letting it go (objects left in the hosted cluster)",
				"namespace", cm.Namespace, "release", cm.Name, "grace", grace.String())
			if err := kubeutil.RemoveFinalizer(ctx, c, cm, extension.Finalizer); client.IgnoreNotFound(err) != nil {
				return false, err
			}
		}
		return len(sorted.tearingDown) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for extension teardowns to finish: %w", err)
	}
	if blocked != nil {
		return blocked
	}
	// Connectors the engine did not get to remove (releases let go above).
	namespaces, err := kubeutil.BoundNamespaces(ctx, c, ClusterRole)
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		if err := removeConnector(ctx, c, ns); err != nil {
			return err
		}
	}
	return kubeutil.UnbindSelf(ctx, c, ClusterRole)
}
