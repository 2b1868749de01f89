package kubectlhcpfleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/relocation"
)

// relocate and drain without --dry-run ask the hub to move hosted clusters:
// each creates HostedClusterRelocations, which the hub checks and drives
// (pkg/hosting/hub/relocation); they need the hcp-fleet:relocate
// ClusterRole (docs/security.md). The plugin decides nothing itself: a
// refusal is the hub's, with its reason, on the relocation.

// LabelDrain marks the HostedClusterRelocations a drain of the management
// cluster it names created.
const LabelDrain = "hcpfleet.io/drain"

// Relocate creates a HostedClusterRelocation of the HostedClusterDeployment
// namespace/name to to ("" for the scheduler's choice) and returns it.
func Relocate(ctx context.Context, c client.Client, namespace, name, to string, labels map[string]string) (*v1alpha1.HostedClusterRelocation, error) {
	hcr := &v1alpha1.HostedClusterRelocation{
		ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-", Namespace: namespace, Labels: labels},
		Spec:       v1alpha1.HostedClusterRelocationSpec{HostedClusterDeployment: name, Destination: to},
	}
	if err := c.Create(ctx, hcr); err != nil {
		return nil, fmt.Errorf("creating a HostedClusterRelocation of %s/%s: %w", namespace, name, err)
	}
	return hcr, nil
}

// DrainOptions: see Drain.
type DrainOptions struct {
	// Concurrency bounds the drain's relocations that run at once (the
	// hub's --relocation-concurrency bounds all of them).
	Concurrency int
	// To names the destination of every move ("": the scheduler's choice
	// for each).
	To string
	// Interval is how often the drain looks at its relocations.
	Interval time.Duration
}

// Drain cordons cluster, then relocates every HostedClusterDeployment
// bound to it, at most opts.Concurrency at once, and waits until each move
// ended. It returns the relocations as they ended. A move refused because
// no management cluster can take it (DestinationNotAvailable) stops the
// drain from starting more: the others would be refused alike.
func Drain(ctx context.Context, c client.Client, out io.Writer, cluster string, opts DrainOptions) ([]v1alpha1.HostedClusterRelocation, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 1
	}
	if opts.Interval <= 0 {
		opts.Interval = 2 * time.Second
	}
	if err := Cordon(ctx, c, out, cluster, true); err != nil {
		return nil, err
	}
	var hcds v1alpha1.HostedClusterDeploymentList
	if err := c.List(ctx, &hcds); err != nil {
		return nil, err
	}
	var todo []v1alpha1.HostedClusterDeployment
	for _, h := range hcds.Items {
		if h.Status.HostingCluster == cluster && h.DeletionTimestamp == nil {
			todo = append(todo, h)
		}
	}
	slices.SortFunc(todo, func(a, b v1alpha1.HostedClusterDeployment) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	if len(todo) == 0 {
		_, err := fmt.Fprintf(out, "no HostedClusterDeployment is bound to %s: nothing to move\n", cluster)
		return nil, err
	}
	var started []*v1alpha1.HostedClusterRelocation
	stopped := false
	err := wait.PollUntilContextCancel(ctx, opts.Interval, true, func(ctx context.Context) (bool, error) {
		running := 0
		for _, hcr := range started {
			if err := c.Get(ctx, client.ObjectKeyFromObject(hcr), hcr); err != nil {
				return false, err
			}
			p := relocation.Phase(hcr.Status.Phase)
			if !p.Final() {
				running++
				continue
			}
			if p == relocation.PhaseFailed && progressReason(hcr) == relocation.ReasonDestinationNotAvailable && !stopped {
				stopped = true
				_, _ = fmt.Fprintf(out, "%s/%s: no management cluster can take it; starting no more moves\n", hcr.Namespace, hcr.Spec.HostedClusterDeployment)
			}
		}
		for !stopped && running < opts.Concurrency && len(todo) > 0 {
			h := todo[0]
			todo = todo[1:]
			hcr, err := Relocate(ctx, c, h.Namespace, h.Name, opts.To, map[string]string{LabelDrain: cluster})
			if err != nil {
				return false, err
			}
			_, _ = fmt.Fprintf(out, "relocating %s/%s (HostedClusterRelocation %s)\n", h.Namespace, h.Name, hcr.Name)
			started = append(started, hcr)
			running++
		}
		return running == 0 && (stopped || len(todo) == 0), nil
	})
	ended := make([]v1alpha1.HostedClusterRelocation, 0, len(started))
	for _, hcr := range started {
		ended = append(ended, *hcr)
	}
	return ended, err
}

// progressReason is the relocation's RelocationProgressing reason.
func progressReason(hcr *v1alpha1.HostedClusterRelocation) string {
	for _, c := range hcr.Status.Conditions {
		if c.Type == v1alpha1.ConditionRelocationProgressing {
			return c.Reason
		}
	}
	return ""
}

func progressMessage(hcr *v1alpha1.HostedClusterRelocation) string {
	for _, c := range hcr.Status.Conditions {
		if c.Type == v1alpha1.ConditionRelocationProgressing {
			return c.Message
		}
	}
	return ""
}

// RenderDrain writes how each of a drain's moves ended, and an error when
// one did not end Done.
func RenderDrain(w io.Writer, ended []v1alpha1.HostedClusterRelocation) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "NAMESPACE\tNAME\tRELOCATION\tPHASE\tDESTINATION\tREASON\tMESSAGE")
	failed := 0
	for i := range ended {
		hcr := &ended[i]
		if hcr.Status.Phase != string(relocation.PhaseDone) {
			failed++
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", hcr.Namespace, hcr.Spec.HostedClusterDeployment, hcr.Name, hcr.Status.Phase,
			hcr.Status.Destination, progressReason(hcr), progressMessage(hcr))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return errors.New("not every hosted cluster was moved: the table says why; the cluster stays cordoned")
	}
	return nil
}
