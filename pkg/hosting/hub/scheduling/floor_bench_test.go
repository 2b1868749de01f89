//go:build integration

package scheduling_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	hcdac "github.com/hcp-fleet/hcp-fleet/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// floorWorkers is how many parallel writers measure the floor: enough that
// the API server, not the client, is the limit.
const floorWorkers = 16

// floor measures the hub API server's own limit for the writes hcp-fleet
// makes per hosted cluster, with parallel writers and nothing to decide:
// bind is one status apply per HostedClusterDeployment (the binding), and
// deliver adds the ManifestWork's creation and the status apply that
// records it. The HostedClusterDeployments are pinned to a cluster that
// does not exist, so the hub writes them once (Scheduled=False) before the
// measurement and not during it; the ManifestWorks go to a namespace no
// work agent serves, with the size of a real delivery's.
func floor(b *testing.B, env *fleettest.Env, hubc client.WithWatch, n int) (bind, deliver time.Duration) {
	ctx := context.Background()
	ns := "floor"
	tenant(b, hubc, ns)
	parallel(n, floorWorkers, func(i int) {
		h := benchHCD(ns, fmt.Sprintf("f-%04d", i))
		h.Object["spec"].(map[string]any)["hostingCluster"] = "no-such-cluster"
		delete(h.Object["spec"].(map[string]any), "placement")
		if err := hubc.Create(ctx, h); err != nil {
			b.Error(err)
		}
	})
	env.Eventually(b, 10*time.Minute, "the hub reports every floor HostedClusterDeployment unschedulable", func(ctx context.Context) error {
		var list v1alpha1.HostedClusterDeploymentList
		if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		waiting := 0
		for _, h := range list.Items {
			if meta.FindStatusCondition(h.Status.Conditions, v1alpha1.ConditionScheduled) == nil {
				waiting++
			}
		}
		if waiting > 0 || len(list.Items) != n {
			return fmt.Errorf("%d of %d not reported yet", waiting, len(list.Items))
		}
		return nil
	})
	statusApply := func(i int, reason string) {
		cond := metav1.Condition{Type: "BenchFloor", Status: metav1.ConditionTrue, Reason: reason,
			Message: "a status write of the size of a binding", LastTransitionTime: metav1.Now()}
		apply := hcdac.HostedClusterDeployment(fmt.Sprintf("f-%04d", i), ns).
			WithStatus(hcdac.HostedClusterDeploymentStatus().WithConditions(hcdstatus.ApplyConditions([]metav1.Condition{cond})...))
		if err := hcdstatus.Apply(ctx, hubc, apply, "bench-floor"); err != nil {
			b.Error(err)
		}
	}
	start := time.Now()
	parallel(n, floorWorkers, func(i int) { statusApply(i, "Bound") })
	bind = time.Since(start)
	payload := hostedCluster("payload")
	start = time.Now()
	parallel(n, floorWorkers, func(i int) {
		work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("f-%04d", i), Namespace: ns},
			Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				{RawExtension: runtime.RawExtension{Object: &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "clusters"}}}},
				{RawExtension: runtime.RawExtension{Object: payload}},
			}}}}
		if err := hubc.Create(ctx, work); err != nil {
			b.Error(err)
		}
		statusApply(i, "Delivered")
	})
	deliver = bind + time.Since(start)
	// Out of the way of what is measured next.
	if err := hubc.DeleteAllOf(ctx, &workv1.ManifestWork{}, client.InNamespace(ns)); err != nil {
		b.Error(err)
	}
	if err := hubc.DeleteAllOf(ctx, &v1alpha1.HostedClusterDeployment{}, client.InNamespace(ns)); err != nil {
		b.Error(err)
	}
	env.Eventually(b, 10*time.Minute, "the floor's objects deleted", func(ctx context.Context) error {
		var list v1alpha1.HostedClusterDeploymentList
		if err := hubc.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d left", len(list.Items))
		}
		return nil
	})
	return bind, deliver
}

// restFigures are the requests per minute at rest.
type restFigures struct {
	// all is every client's (the OCM controllers', the klusterlets' and
	// agents' leases included), as the hub API server counts them; allTop
	// the largest by verb and resource.
	all    int
	allTop []string
	// own is hcp-fleet's hub's, leader-election lease requests apart
	// (ownLeases), by verb and resource in ownBy.
	own, ownLeases int
	ownBy          []string
	// use is what this process used over the window.
	use usage
}

// atRest counts the requests the hub API server serves over one minute
// while nothing changes (every HostedClusterDeployment delivered, no user
// writing): every client's, by verb and resource, and hcp-fleet's hub's own.
func atRest(b *testing.B, env *fleettest.Env, own *hubRequests) restFigures {
	own.quiet(10 * time.Second)
	var r restFigures
	var before, after map[string]int
	r.use = measure(b, func() {
		before = apiserverRequests(b, env)
		ownBefore := own.snapshot()
		start := time.Now()
		time.Sleep(time.Minute)
		if debugRest {
			own.dumpWrites(start, 200)
		}
		after = apiserverRequests(b, env)
		r.own, r.ownLeases, r.ownBy = since(ownBefore, own.snapshot())
	})
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			r.all += d
			all = append(all, kv{k, d})
		}
	}
	slices.SortFunc(all, func(a, b kv) int { return b.v - a.v })
	for i := range min(5, len(all)) {
		r.allTop = append(r.allTop, fmt.Sprintf("%s %d", all[i].k, all[i].v))
	}
	return r
}

func orNone(parts []string) string {
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// apiserverRequests reads apiserver_request_total from the hub API server,
// summed by verb and resource (watches left out: they are long-running).
func apiserverRequests(b *testing.B, env *fleettest.Env) map[string]int {
	kc := kubernetes.NewForConfigOrDie(env.Fleet.Hub.Config())
	raw, err := kc.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		verb, resource := promLabel(line, "verb"), promLabel(line, "resource")
		if verb == "WATCH" || resource == "" {
			continue
		}
		f := strings.Fields(line)
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		out[verb+" "+resource] += int(v)
	}
	return out
}

func promLabel(line, k string) string {
	i := strings.Index(line, k+`="`)
	if i < 0 {
		return ""
	}
	rest := line[i+len(k)+2:]
	return rest[:strings.Index(rest, `"`)]
}

// usage is what this process used over one phase of a benchmark.
type usage struct {
	cpu, wall time.Duration
	// peakRSS is the peak resident set over the phase and rss the resident
	// set at its end, in kB.
	peakRSS, rss int64
	// planes is the CPU time the fleet's control planes used, by group
	// (planeGroups; none in the hub-only harness).
	planes map[string]time.Duration
}

// cores is the CPU time per wall-clock time.
func (u usage) cores() float64 { return u.cpu.Seconds() / max(u.wall.Seconds(), 0.001) }

// planeCores says how many cores each group of control-plane processes and
// this process used over the phase.
func (u usage) planeCores() string {
	parts := []string{}
	for _, g := range planeGroups {
		parts = append(parts, fmt.Sprintf("%s %.2f", g, u.planes[g].Seconds()/max(u.wall.Seconds(), 0.001)))
	}
	return strings.Join(append(parts, fmt.Sprintf("this process %.2f", u.cores())), ", ")
}

// The groups of the local fleet's control-plane processes whose CPU a phase
// reports: the hub's API server against the rest of the machine.
const (
	planeHub     = "hub kube-apiserver"
	planeEtcd    = "etcd (shared)"
	planeManaged = "management clusters' kube-apiservers and controller-managers"
)

var planeGroups = []string{planeHub, planeEtcd, planeManaged}

// benchFleet is the local fleet whose control planes a meter measures
// (nil in the hub-only harness).
var benchFleet *localfleet.Fleet

// planesCPU reads the CPU time each group of benchFleet's control-plane
// processes used so far.
func planesCPU() map[string]time.Duration {
	out := map[string]time.Duration{}
	if benchFleet == nil {
		return out
	}
	for _, p := range benchFleet.Processes() {
		group := planeManaged
		switch {
		case p.Component == "etcd":
			group = planeEtcd
		case p.Cluster == "hub" && p.Component == "kube-apiserver":
			group = planeHub
		case p.Cluster == "hub":
			continue // its kube-controller-manager: garbage collection, namespaces
		}
		if u, err := fleettest.ProcessUsage(p.PID); err == nil {
			out[group] += u.CPU
		}
	}
	return out
}

// peakSoFar is the largest peak resident set read before a reset
// (measure resets it for each phase).
var peakSoFar int64

// meter measures what this process uses from startMeter to stop.
type meter struct {
	before fleettest.Usage
	planes map[string]time.Duration
	start  time.Time
}

// startMeter starts a phase: it resets the process's peak resident set, so
// that the phase's peak is its own.
func startMeter(b *testing.B) meter {
	before := selfUsage(b)
	peakSoFar = max(peakSoFar, before.PeakRSS)
	if err := fleettest.ResetPeakRSS(0); err != nil {
		b.Fatalf("resetting the peak RSS: %v", err)
	}
	return meter{before: before, planes: planesCPU(), start: time.Now()}
}

// stop returns the CPU time this process used since startMeter and its
// peak and current resident set.
func (m meter) stop(b *testing.B) usage {
	wall := time.Since(m.start)
	after := selfUsage(b)
	peakSoFar = max(peakSoFar, after.PeakRSS)
	planes := planesCPU()
	for g, cpu := range planes {
		planes[g] = cpu - m.planes[g]
	}
	return usage{cpu: after.CPU - m.before.CPU, wall: wall, peakRSS: after.PeakRSS, rss: after.RSS, planes: planes}
}

// measure runs f and returns what this process used meanwhile.
func measure(b *testing.B, f func()) usage {
	m := startMeter(b)
	f()
	return m.stop(b)
}

// processPeak is this process's peak resident set since it started, in kB.
func processPeak(b *testing.B) int64 {
	return max(peakSoFar, selfUsage(b).PeakRSS)
}

func selfUsage(b *testing.B) fleettest.Usage {
	u, err := fleettest.ProcessUsage(0)
	if err != nil {
		b.Fatal(err)
	}
	return u
}
