//go:build integration

// Package resilience is hcp-fleet's resilience suite (`make resilience`):
// on one local fleet (a hub and three management clusters, real
// kube-apiservers and OCM controllers) it injects the failures a real fleet
// sees — hub replicas killed mid-burst, agents restarted, API servers
// stopped, drift — and checks that nothing is lost, duplicated, leaked or
// rescheduled. It ends with a table: scenario, what was injected, what was
// checked, the result and its figures.
//
// The scenarios run in order on the same fleet, the heaviest (the burst)
// last. It needs HCPFLEET_RESILIENCE=1 (`make resilience` sets it; CI runs
// it after `make test`); sizes come from the environment:
// RESILIENCE_HCDS (burst size, default 300), RESILIENCE_KILLS (hub kills
// during the burst, default 3), RESILIENCE_OUTAGE (how long a management
// cluster's API server stays down, default 2m), RESILIENCE_SEED (the random
// kill points; printed).
package resilience

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
)

var (
	env  *fleettest.Env
	hubc client.Client
	// spokes are admin clients of the management clusters.
	spokes = map[string]kubernetes.Interface{}
	// leader is the index of the hub replica that runs now.
	leader int
)

const enableVar = "HCPFLEET_RESILIENCE"

// unavailableGrace is the hub's --host-unavailable-grace here: shorter than
// the default (5m), so that the management outage outlasts it within the
// suite's time; the outage scenario waits for it.
const unavailableGrace = 30 * time.Second

func TestMain(m *testing.M) {
	if os.Getenv(enableVar) == "" {
		// Only TestResilience needs the fleet; it skips without it.
		os.Exit(m.Run())
	}
	fleettest.MainWith(m, 3, hcpfleet.Options{Hub: func(o *hub.Options) { o.HostUnavailableGrace = unavailableGrace }}, func(e *fleettest.Env) {
		env = e
		var err error
		if hubc, err = client.New(e.Fleet.Hub.Config(), client.Options{Scheme: hub.Scheme}); err != nil {
			panic(err)
		}
		for _, m := range e.Fleet.Managed {
			spokes[m.Name] = kubernetes.NewForConfigOrDie(m.Config())
		}
		ctx := context.Background()
		if err := hcpfleet.EnableOnAll(ctx, e.Fleet); err != nil {
			panic(err)
		}
		if err := hcpfleet.WaitHostsReady(ctx, e.Fleet, hubc, os.Stdout, 5*time.Minute); err != nil {
			panic(err)
		}
	})
}

// row is one line of the suite's table.
type row struct {
	scenario, injected, checked string
	figures                     []string
	passed                      bool
}

type table struct {
	mu   sync.Mutex
	rows []*row
}

func (tb *table) print() {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "\nSCENARIO\tRESULT\tINJECTED / CHECKED / MEASURED")
	for _, r := range tb.rows {
		result := "PASS"
		if !r.passed {
			result = "FAIL"
		}
		fmt.Fprintf(w, "%s\t%s\tinjected: %s\n", r.scenario, result, r.injected)
		fmt.Fprintf(w, "\t\tchecked:  %s\n", r.checked)
		if len(r.figures) > 0 {
			fmt.Fprintf(w, "\t\tmeasured: %s\n", strings.Join(r.figures, "; "))
		}
	}
	_ = w.Flush()
}

// scenario runs one scenario as a subtest and records its row; run adds
// figures to the row as it measures them.
func (tb *table) scenario(t *testing.T, name, injected, checked string, run func(t *testing.T, r *row)) {
	r := &row{scenario: name, injected: injected, checked: checked}
	tb.mu.Lock()
	tb.rows = append(tb.rows, r)
	tb.mu.Unlock()
	current = r
	r.passed = t.Run(name, func(t *testing.T) {
		run(t, r)
		if err := env.Fleet.Err(); err != nil {
			t.Errorf("a fleet component failed: %v", err)
		}
	})
}

func (r *row) figure(format string, args ...any) {
	r.figures = append(r.figures, fmt.Sprintf(format, args...))
}

// current is the row of the scenario running now (they run one at a time).
var current *row

// eventually is env.Eventually that also writes a failure into the current
// row, so the printed table (what CI shows of a long log) says why.
func eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	env.Eventually(recordingT{TB: t, r: current}, timeout, what, cond)
}

// recordingT records Fatalf's message in its row before failing.
type recordingT struct {
	testing.TB
	r *row
}

func (x recordingT) Fatalf(format string, args ...any) {
	x.Helper()
	if x.r != nil {
		x.r.figure("FAILED: "+format, args...)
	}
	x.TB.Fatalf(format, args...)
}

func TestResilience(t *testing.T) {
	if env == nil {
		t.Skipf("the resilience suite runs with %s=1 (`make resilience`)", enableVar)
	}
	var tb table
	defer tb.print()
	ctx := context.Background()

	// One long-lived hosted cluster per management cluster: what must stay
	// untouched (or recover) while failures hit.
	ns := "steady"
	if err := fleettest.Tenant(ctx, hubc, ns); err != nil {
		t.Fatal(err)
	}
	for _, m := range env.Fleet.Managed {
		pinned := func(spec map[string]any) { spec["hostingCluster"] = m.Name }
		if err := hubc.Create(ctx, fleettest.HCD(ns, m.Name, pinned)); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range env.Fleet.Managed {
		waitHCD(t, 3*time.Minute, ns, m.Name, available)
	}

	tb.scenario(t, "drift", "cluster-1: operator Deployment edited; a CRD, the hypershift Role and RoleBinding deleted",
		"all restored, one write each", drift)
	tb.scenario(t, "agent restarts", "cluster-2: agent and HyperShift pods restarted 3 times",
		"no redeploy, no write, no duplicate hub object, HCD Available", agentRestarts)
	tb.scenario(t, "hub API server restart", "hub kube-apiserver down 20s",
		"all reconnect alone; a new HCD becomes Available; others stay Available", hubAPIServerRestart)
	tb.scenario(t, "management API server outage", fmt.Sprintf("cluster-3 kube-apiserver down %s", outage()),
		"its HCDs report it, then recover; others undisturbed; nothing rescheduled", managementOutage)
	tb.scenario(t, "hub killed mid-burst", fmt.Sprintf("%d HCDs at once; hub killed %d times (no lease release); one HCD deleted on delivery, one recreated under its name",
		envInt("RESILIENCE_HCDS", 300), envInt("RESILIENCE_KILLS", 3)),
		"each bound once, never moved, one ManifestWork, none orphaned, all Available, within capacity", hubKilledMidBurst)
}

// --- helpers ---

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// outage is how long the management outage lasts: RESILIENCE_OUTAGE, but
// at least a minute past the hub's grace, so that the hub acts on it.
func outage() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("RESILIENCE_OUTAGE")); err == nil && d > 0 {
		return max(d, unavailableGrace+time.Minute)
	}
	return 2 * time.Minute
}

func getHCD(ctx context.Context, ns, name string) (*v1alpha1.HostedClusterDeployment, error) {
	h := &v1alpha1.HostedClusterDeployment{}
	return h, hubc.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, h)
}

// hcdCheck returns nil when a HostedClusterDeployment is as wanted.
type hcdCheck func(h *v1alpha1.HostedClusterDeployment) error

func conditionIs(condType string, want metav1.ConditionStatus) hcdCheck {
	return func(h *v1alpha1.HostedClusterDeployment) error {
		c := meta.FindStatusCondition(h.Status.Conditions, condType)
		if c == nil {
			return fmt.Errorf("%s: no %s condition yet", h.Name, condType)
		}
		if c.Status != want {
			return fmt.Errorf("%s: %s=%s (%s: %s), want %s", h.Name, condType, c.Status, c.Reason, c.Message, want)
		}
		return nil
	}
}

var available = conditionIs(v1alpha1.ConditionAvailable, metav1.ConditionTrue)

func waitHCD(t *testing.T, timeout time.Duration, ns, name string, checks ...hcdCheck) *v1alpha1.HostedClusterDeployment {
	t.Helper()
	var h *v1alpha1.HostedClusterDeployment
	eventually(t, timeout, ns+"/"+name, func(ctx context.Context) error {
		var err error
		if h, err = getHCD(ctx, ns, name); err != nil {
			return err
		}
		for _, c := range checks {
			if err := c(h); err != nil {
				return err
			}
		}
		return nil
	})
	return h
}

func objectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}
