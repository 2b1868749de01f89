package hcpfleet

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// ApplyDir server-side applies every *.yaml file of dir to the hub, in file
// name order, as `kubectl apply --server-side -f dir` does, and returns the
// objects applied.
func ApplyDir(ctx context.Context, fleet *localfleet.Fleet, dir string) ([]*unstructured.Unstructured, error) {
	objs, err := localfleet.ReadManifestDir(os.DirFS(dir), ".")
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("no manifests in %s", dir)
	}
	applier, err := localfleet.NewApplier(fleet.Hub.Config())
	if err != nil {
		return nil, err
	}
	if err := applier.Apply(ctx, objs...); err != nil {
		return nil, fmt.Errorf("applying %s: %w", filepath.Clean(dir), err)
	}
	return objs, nil
}

// HostReady returns nil when a management cluster can host: the hcp-fleet
// add-on on it is Available, reports the HyperShift operator installed, and
// its hosting report (the supported-versions and platforms ClusterClaims the
// scheduler filters on) reached the hub; else it says what is missing.
func HostReady(ctx context.Context, hub client.Reader, cluster string) error {
	mc := &clusterv1.ManagedCluster{}
	if err := hub.Get(ctx, types.NamespacedName{Name: cluster}, mc); err != nil {
		return err
	}
	claims := map[string]string{}
	for _, c := range mc.Status.ClusterClaims {
		claims[c.Name] = c.Value
	}
	for _, claim := range []string{hosting.ClaimSupportedVersions, hosting.ClaimPlatforms} {
		if claims[claim] == "" {
			return fmt.Errorf("ManagedCluster %s: ClusterClaim %s not reported yet", cluster, claim)
		}
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: cluster, Name: addon.Name}, mca); err != nil {
		return err
	}
	var notYet []string
	for _, t := range []string{addonv1alpha1.ManagedClusterAddOnConditionAvailable, addon.ConditionHyperShiftOperatorInstalled} {
		c := meta.FindStatusCondition(mca.Status.Conditions, t)
		switch {
		case c == nil:
			notYet = append(notYet, t+" not reported yet")
		case c.Status != metav1.ConditionTrue:
			notYet = append(notYet, fmt.Sprintf("%s=%s (%s: %s)", t, c.Status, c.Reason, c.Message))
		}
	}
	if len(notYet) > 0 {
		return fmt.Errorf("add-on on %s: %s", cluster, strings.Join(notYet, "; "))
	}
	return nil
}

// WaitHostsReady waits until HostReady holds on every management cluster,
// writing a line to progress as each gets there.
func WaitHostsReady(ctx context.Context, fleet *localfleet.Fleet, hub client.Reader, progress io.Writer, timeout time.Duration) error {
	began := time.Now()
	ready := map[string]bool{}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := fleet.Err(); err != nil {
			return false, err
		}
		last = nil
		for _, m := range fleet.Managed {
			if ready[m.Name] {
				continue
			}
			if err := HostReady(ctx, hub, m.Name); err != nil {
				last = err
				continue
			}
			ready[m.Name] = true
			_, _ = fmt.Fprintf(progress, "localfleet: %s: hcp-fleet agent available, HyperShift operator installed, capacity reported (%s)\n",
				m.Name, time.Since(began).Round(100*time.Millisecond))
		}
		return len(ready) == len(fleet.Managed), nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w: %w", err, last)
	}
	return err
}
