//go:build integration

package agent_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// BenchmarkAgentFootprint measures the agent as it runs on a management
// cluster: the cmd/agent binary, built and run as a process of its own (the
// local fleet's kubelet stand-in starts it for the agent's Deployment, with
// the Deployment's arguments and the hub identity OCM issued it), on the one
// management cluster of a local fleet, while the hub delivers
// BENCH_AGENT_HOSTED (default 80) HostedClusterDeployments there. Once the
// agent reports them all in its capacity claim and every one is imported
// (which needs the agent's kubeconfig export of each), it reads the
// process's resident set, peak and CPU time from /proc. BENCH_AGENT_BIN
// names a prebuilt agent binary instead; BENCH_LOG a file for the logs (the
// agent's and the in-process controllers'; otherwise the agent's go to
// hcp-fleet-agent.log in the fleet's log directory, which LOCALFLEET_KEEP=1
// keeps).
func BenchmarkAgentFootprint(b *testing.B) {
	n := 80
	if v, err := strconv.Atoi(os.Getenv("BENCH_AGENT_HOSTED")); err == nil && v > 0 {
		n = v
	}
	bin := agentBinary(b)
	ctx := context.Background()
	fleet, err := localfleet.Start(ctx, localfleet.Options{ManagementClusters: 1, StatusSyncInterval: time.Second,
		AddOnLeaseSyncInterval: 5 * time.Second, StartTimeout: 15 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer fleet.Stop()
	if err := hcpfleet.Install(ctx, fleet); err != nil {
		b.Fatal(err)
	}
	// The agent's logs: BENCH_LOG's file (with the in-process
	// controllers'), or one in the fleet's log directory.
	logs, logPath, err := fleettest.BenchLog()
	if err != nil {
		b.Fatal(err)
	}
	if logPath != "" {
		if _, err := fleettest.SetBenchLogger(); err != nil {
			b.Fatal(err)
		}
	} else {
		f, err := os.Create(filepath.Join(fleet.LogDir, "hcp-fleet-agent.log"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		logs = f
	}
	agent := &agentProcess{bin: bin, logs: logs}
	product, err := hcpfleet.Start(fleet, hcpfleet.Options{Agent: agent.run})
	if err != nil {
		b.Fatal(err)
	}
	defer product.Stop()
	env := &fleettest.Env{Fleet: fleet, Product: product}
	hubc, err := client.New(fleet.Hub.Config(), client.Options{Scheme: hub.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	mgmt, err := client.New(fleet.Managed[0].Config(), client.Options{Scheme: hub.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	cluster := fleet.Managed[0].Name
	// Room for all of them on the one cluster, whatever the default.
	hc := &v1alpha1.HostingConfig{}
	if err := hubc.Get(ctx, types.NamespacedName{Namespace: "hcp-fleet", Name: "default"}, hc); err != nil {
		b.Fatal(err)
	}
	patch := client.MergeFrom(hc.DeepCopy())
	hc.Spec.Capacity = &v1alpha1.CapacityConfig{MaxHostedClusters: int32(n + 1), AboveThreshold: int32(n + 1)}
	if err := hubc.Patch(ctx, hc, patch); err != nil {
		b.Fatal(err)
	}
	if err := hcpfleet.EnableOnAll(ctx, fleet); err != nil {
		b.Fatal(err)
	}
	hosted := func(want int) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			claim := &clusterv1alpha1.ClusterClaim{}
			if err := mgmt.Get(ctx, types.NamespacedName{Name: hosting.ClaimHostedClusters}, claim); err != nil {
				return err
			}
			if claim.Spec.Value != strconv.Itoa(want) {
				return fmt.Errorf("the agent reports %s hosted clusters", claim.Spec.Value)
			}
			return nil
		}
	}
	env.Eventually(b, 10*time.Minute, "the agent runs, installed the operator and reports no hosted cluster", func(ctx context.Context) error {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := hubc.Get(ctx, types.NamespacedName{Namespace: cluster, Name: addon.Name}, mca); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(mca.Status.Conditions, addon.ConditionHyperShiftOperatorInstalled) {
			return fmt.Errorf("operator not installed yet: %v", mca.Status.Conditions)
		}
		return hosted(0)(ctx)
	})
	b.ResetTimer()
	idle := agent.usage(b)
	starts := agent.starts.Load()

	if err := fleettest.Tenant(ctx, hubc, "bench"); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := range n {
		if err := hubc.Create(ctx, fleettest.HCD("bench", fmt.Sprintf("hc-%03d", i))); err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatal(err)
		}
	}
	env.Eventually(b, 20*time.Minute, fmt.Sprintf("the agent reports %d hosted clusters", n), hosted(n))
	env.Eventually(b, 20*time.Minute, "every hosted cluster rolled out and imported", func(ctx context.Context) error {
		var list v1alpha1.HostedClusterDeploymentList
		if err := hubc.List(ctx, &list, client.InNamespace("bench")); err != nil {
			return err
		}
		if len(list.Items) != n {
			return fmt.Errorf("%d HostedClusterDeployments", len(list.Items))
		}
		for _, h := range list.Items {
			for typ, want := range map[string]metav1.ConditionStatus{v1alpha1.ConditionAvailable: metav1.ConditionTrue,
				v1alpha1.ConditionProgressing: metav1.ConditionFalse, v1alpha1.ConditionImported: metav1.ConditionTrue} {
				if c := meta.FindStatusCondition(h.Status.Conditions, typ); c == nil || c.Status != want {
					return fmt.Errorf("%s: %s is %+v", h.Name, typ, c)
				}
			}
		}
		return nil
	})
	elapsed := time.Since(start)
	loaded := agent.usage(b)
	b.StopTimer()
	restarted := ""
	if s := agent.starts.Load(); s != starts {
		// A new process: its CPU and peak are its own, not the run's.
		restarted = fmt.Sprintf("; restarted %d times meanwhile: CPU and peak of the last process only", s-starts)
		idle.CPU = 0
	}
	fmt.Printf("\nagent: RSS %s with %d hosted clusters on its management cluster (peak %s; RSS %s with none; CPU %.1f s from the first HCD created until all %d imported in %s; the cmd/agent binary, a process of its own%s)\n",
		fleettest.KB(loaded.RSS), n, fleettest.KB(loaded.PeakRSS), fleettest.KB(idle.RSS), (loaded.CPU - idle.CPU).Seconds(), n,
		elapsed.Round(time.Second), restarted)
	b.ReportMetric(float64(loaded.RSS), "kB-agent-rss")
}

// agentBinary is BENCH_AGENT_BIN, or cmd/agent built into a temporary
// directory.
func agentBinary(b *testing.B) string {
	if bin := os.Getenv("BENCH_AGENT_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "hcp-fleet-agent")
	// go test puts its own toolchain first on the PATH.
	out, err := exec.Command("go", "build", "-o", bin, "github.com/hcp-fleet/hcp-fleet/cmd/agent").CombinedOutput()
	if err != nil {
		b.Fatalf("building cmd/agent: %v\n%s", err, out)
	}
	return bin
}

// agentProcess runs the agent binary for the kubelet stand-in
// (hcpfleet.Options.Agent) and remembers the process of its run command.
type agentProcess struct {
	bin  string
	logs io.Writer
	// pid is the running agent's; starts counts its starts.
	pid    atomic.Int64
	starts atomic.Int64
}

func (a *agentProcess) run(ctx context.Context, _ string, args []string) error {
	cmd := exec.CommandContext(ctx, a.bin, args...)
	cmd.Stdout, cmd.Stderr = a.logs, a.logs
	// Stopped as a kubelet stops a container: SIGTERM, then SIGKILL.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	// Never outlive the benchmark.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	if len(args) == 0 || args[0] != "cleanup" {
		a.pid.Store(int64(cmd.Process.Pid))
		a.starts.Add(1)
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		return nil //nolint:nilerr // stopped as asked
	}
	return err
}

func (a *agentProcess) usage(b *testing.B) fleettest.Usage {
	pid := int(a.pid.Load())
	if pid == 0 {
		b.Fatal("the agent binary is not running")
	}
	u, err := fleettest.ProcessUsage(pid)
	if err != nil {
		b.Fatalf("agent process %d: %v", pid, err)
	}
	return u
}
