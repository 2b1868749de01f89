package fleettest

import (
	"context"
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Reconciles is how many reconciles the named controller has finished so far
// (controller-runtime's controller_runtime_reconcile_total). The hub and the
// agents run in the test's process, so their metrics are the test's to read;
// with several agents in the process, a controller name counts all of them.
// (client-go's workqueue metrics are no help here: the OCM components in the
// same process install component-base's workqueue metrics provider first, so
// controller-runtime's registry never gets them.)
func Reconciles(t testing.TB, controller string) float64 {
	t.Helper()
	return controllerMetric(t, "controller_runtime_reconcile_total", controller)
}

// Settled waits until the named controller finished a reconcile since it had
// finished reconcilesBefore (Reconciles, read before the change) and has no
// reconcile in progress: the positive signal that it saw a change which is
// expected to make it write nothing. Read reconcilesBefore before making the
// change.
func (e *Env) Settled(t testing.TB, controller string, reconcilesBefore float64) {
	t.Helper()
	e.Eventually(t, time.Minute, controller+" reconciled after the change and went idle", func(context.Context) error {
		done := controllerMetric(t, "controller_runtime_reconcile_total", controller)
		active := controllerMetric(t, "controller_runtime_active_workers", controller)
		if done <= reconcilesBefore || active > 0 {
			return fmt.Errorf("%v reconciles since, %v in progress", done-reconcilesBefore, active)
		}
		return nil
	})
}

func controllerMetric(t testing.TB, name, controller string) float64 {
	t.Helper()
	return Metric(t, name, map[string]string{"controller": controller})
}

// Metric sums the counter or gauge series of name in controller-runtime's
// registry whose labels include every pair of match (all series when match
// is empty). The hub and the agents run in the test's process, so this
// reads theirs, summed over the agents.
func Metric(t testing.TB, name string, match map[string]string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !LabelsMatch(m.GetLabel(), match) {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

// LabelsMatch reports whether labels include every pair of match.
func LabelsMatch(labels []*dto.LabelPair, match map[string]string) bool {
	have := make(map[string]string, len(labels))
	for _, l := range labels {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range match {
		if have[k] != v {
			return false
		}
	}
	return true
}
