package fleettest

import (
	"context"
	"fmt"
	"testing"
	"time"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// QueueAdds is how many requests the named controller's work queue has
// taken so far (controller-runtime's workqueue_adds_total). The hub and the
// agents run in the test's process, so their metrics are the test's to read;
// with several agents in the process, a controller name counts all of them.
func QueueAdds(t testing.TB, controller string) float64 {
	t.Helper()
	return workqueueMetric(t, "workqueue_adds_total", controller)
}

// Settled waits until the named controller took a request since its queue
// had taken addsBefore (QueueAdds, read before the change) and has nothing
// queued or in progress: the positive signal that it saw a change which is
// expected to make it write nothing. Read addsBefore before making the
// change.
func (e *Env) Settled(t testing.TB, controller string, addsBefore float64) {
	t.Helper()
	e.Eventually(t, time.Minute, controller+" handled the change and went idle", func(context.Context) error {
		adds := workqueueMetric(t, "workqueue_adds_total", controller)
		depth := workqueueMetric(t, "workqueue_depth", controller)
		busy := workqueueMetric(t, "workqueue_unfinished_work_seconds", controller)
		if adds <= addsBefore || depth > 0 || busy > 0 {
			return fmt.Errorf("%v requests taken since, %v queued, %vs of work in progress", adds-addsBefore, depth, busy)
		}
		return nil
	})
}

func workqueueMetric(t testing.TB, name, controller string) float64 {
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
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == controller {
					switch {
					case m.GetCounter() != nil:
						sum += m.GetCounter().GetValue()
					case m.GetGauge() != nil:
						sum += m.GetGauge().GetValue()
					}
				}
			}
		}
	}
	return sum
}
