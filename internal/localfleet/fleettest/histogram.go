package fleettest

import (
	"fmt"
	"math"
	"testing"
	"time"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Histogram is one histogram series of controller-runtime's registry as
// read at one moment: cumulative counts per upper bound.
type Histogram struct {
	Count  uint64
	Bounds []float64
	Counts []uint64
}

// HistogramOf sums the histogram series of name whose labels include every
// pair of match, as Metric does for counters. The hub and the agents run in
// the test's process, so this reads theirs.
func HistogramOf(t testing.TB, name string, match map[string]string) Histogram {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var h Histogram
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			hist := m.GetHistogram()
			if hist == nil || !LabelsMatch(m.GetLabel(), match) {
				continue
			}
			if h.Bounds == nil {
				for _, b := range hist.GetBucket() {
					h.Bounds = append(h.Bounds, b.GetUpperBound())
				}
				h.Counts = make([]uint64, len(h.Bounds))
			}
			h.Count += hist.GetSampleCount()
			for i, b := range hist.GetBucket() {
				if i < len(h.Counts) {
					h.Counts[i] += b.GetCumulativeCount()
				}
			}
		}
	}
	return h
}

// Since is what was observed after before was read.
func (h Histogram) Since(before Histogram) Histogram {
	d := Histogram{Count: h.Count - before.Count, Bounds: h.Bounds, Counts: make([]uint64, len(h.Counts))}
	for i := range h.Counts {
		d.Counts[i] = h.Counts[i]
		if i < len(before.Counts) {
			d.Counts[i] -= before.Counts[i]
		}
	}
	return d
}

// Quantile is the upper bound of the bucket that holds quantile q: the
// q-th observation took at most this long. +Inf when it is beyond the last
// bucket, 0 without observations.
func (h Histogram) Quantile(q float64) time.Duration {
	if h.Count == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.Count)))
	for i, c := range h.Counts {
		if c >= rank {
			return time.Duration(h.Bounds[i] * float64(time.Second))
		}
	}
	return time.Duration(math.MaxInt64)
}

// Summary prints the count and the p50 and p99 bounds ("≤" since they are
// bucket bounds).
func (h Histogram) Summary() string {
	round := func(d time.Duration) string {
		if d == time.Duration(math.MaxInt64) {
			return "beyond the last bucket"
		}
		if d < time.Millisecond {
			return d.Round(time.Microsecond).String()
		}
		return d.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("p50 ≤%s p99 ≤%s (%d)", round(h.Quantile(0.5)), round(h.Quantile(0.99)), h.Count)
}
