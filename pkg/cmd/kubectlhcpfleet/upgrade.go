package kubectlhcpfleet

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// upgradeCommand is `kubectl hcpfleet upgrade status NAME`: one
// ReleaseRollout (docs/upgrades.md) as its status says, read with the
// user's own permissions (a tenant reads its namespace's).
func (o *options) upgradeCommand() *cobra.Command {
	upgrade := &cobra.Command{
		Use:   "upgrade",
		Short: "Fleet release upgrades (ReleaseRollouts)",
	}
	status := &cobra.Command{
		Use:     "status NAME",
		Short:   "One ReleaseRollout: its release, wave, counts and each hosted cluster's state and reason",
		Example: "  kubectl hcpfleet upgrade status to-4.18.9 -n team-a",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			c, err := o.reader()
			if err != nil {
				return err
			}
			ns, _, err := o.namespace()
			if err != nil {
				return err
			}
			rr := &v1alpha1.ReleaseRollout{}
			if err := c.Get(cmd.Context(), client.ObjectKey{Namespace: ns, Name: args[0]}, rr); err != nil {
				return err
			}
			return o.print(o.streams.Out, rr, func(w io.Writer) error { return RenderRollout(w, rr) })
		},
	}
	o.addOutputFlag(status)
	upgrade.AddCommand(status)
	return upgrade
}

// RenderRollout writes rr as `kubectl hcpfleet upgrade status` shows it.
func RenderRollout(w io.Writer, rr *v1alpha1.ReleaseRollout) error {
	var b strings.Builder
	s := rr.Status
	target := rr.Spec.Release.Image
	if rr.Spec.Release.LatestZStream {
		target = "the latest z-stream of each hosted cluster's minor"
	}
	fmt.Fprintf(&b, "ReleaseRollout %s/%s → %s\n", rr.Namespace, rr.Name, target)
	if len(rr.Spec.AcceptRisks) > 0 {
		fmt.Fprintf(&b, "accepted update risks: %s\n", strings.Join(rr.Spec.AcceptRisks, ", "))
	}
	if w := rr.Spec.MaintenanceWindow; w != nil {
		fmt.Fprintf(&b, "maintenance window: %s\n", windowText(w))
	}
	for i := range rr.Spec.MaintenanceWindows {
		w := &rr.Spec.MaintenanceWindows[i]
		who := "every hosted cluster"
		if w.HostedClusterSelector != nil {
			who = metav1.FormatLabelSelector(w.HostedClusterSelector)
		}
		fmt.Fprintf(&b, "maintenance window for %s: %s\n", who, windowText(&w.MaintenanceWindow))
	}
	if s.ObservedGeneration != rr.Generation {
		fmt.Fprintf(&b, "  (the hub has not seen generation %d yet; this is generation %d's status)\n", rr.Generation, s.ObservedGeneration)
	}
	fmt.Fprintf(&b, "wave %d of %d; %d selected: %d done, %d upgrading, %d pending, %d blocked, %d failed\n",
		s.Wave, s.Waves, s.Selected, s.Done, s.Upgrading, s.Pending, s.Blocked, s.Failed)
	// Absolute times, as the controller recorded them: a completed
	// rollout's status is a record.
	if s.CompletionTime != nil {
		fmt.Fprintf(&b, "completed at %s: a record from then on; its spec can no longer change\n", s.CompletionTime.UTC().Format(time.RFC3339))
	} else if s.WaveStartTime != nil {
		start := s.WaveStartTime.UTC()
		fmt.Fprintf(&b, "wave %d current since %s", s.Wave, start.Format(time.RFC3339))
		// The soak holds a wave after the first from when it became current
		// (releaserollout's plan): the wave before it stays healthy meanwhile.
		if soak := time.Duration(rr.Spec.SoakSeconds) * time.Second; soak > 0 && s.Wave > 0 && s.Wave < s.Waves {
			fmt.Fprintf(&b, "; its hosted clusters start after a soak of %s, at %s", soak, start.Add(soak).Format(time.RFC3339))
		}
		b.WriteString("\n")
	}
	for _, t := range []string{v1alpha1.ConditionRolloutProgressing, v1alpha1.ConditionRolloutCompleted} {
		if c := meta.FindStatusCondition(s.Conditions, t); c != nil {
			fmt.Fprintf(&b, "%s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	if len(s.HostedClusters) > 0 {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "HOSTED CLUSTER\tWAVE\tSTATE\tREASON\tMESSAGE")
		for _, h := range s.HostedClusters {
			_, _ = fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", h.Name, h.Wave, h.State, h.Reason, h.Message)
		}
		_ = tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// windowText is a weekly window as a person reads it:
// "Saturday, Sunday 02:00 for 240 minutes (Europe/Berlin)".
func windowText(w *v1alpha1.MaintenanceWindow) string {
	days := make([]string, len(w.Days))
	for i, d := range w.Days {
		days[i] = string(d)
	}
	tz := w.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	return fmt.Sprintf("%s %s for %d minutes (%s)", strings.Join(days, ", "), w.Start, w.DurationMinutes, tz)
}
