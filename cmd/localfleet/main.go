// Command localfleet runs a whole hcp-fleet on this machine: a hub and
// management clusters, each a real kube-apiserver, joined through the real
// OCM registration flow. See `localfleet help`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/internal/k8sbins"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	hubapp "github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/fleetview"
)

const usage = `localfleet runs a whole hcp-fleet on this machine, without Docker.

Usage:
  localfleet up   [flags]   start a hub and management clusters; Ctrl-C stops everything
  localfleet down [flags]   stop a fleet left running (e.g. after a crash) and remove its state

Flags:
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".localfleet", "state directory: kubeconfigs, certificates, etcd data and logs")
	clusters := fs.Int("clusters", 2, "number of management clusters (cluster-1 … cluster-N)")
	hubPort := fs.Int("hub-port", 0, "fixed port for the hub kube-apiserver (0: any free port)")
	examples := fs.String("examples", "examples", "directory of manifests applied to the hub once the add-on is ready (\"\" applies none)")
	guests := fs.Bool("guest-apiservers", true, "run a real kube-apiserver for every available hosted cluster (its admin kubeconfig works); false: endpoints only, lighter")
	rollout := fs.Duration("rollout-duration", 0, "how long the HyperShift stand-in takes to roll out a hosted cluster or an upgrade (0: 1.5s); per hosted cluster: annotation hypershiftsim.hcpfleet.io/rollout-duration")
	operatorFailure := fs.String("operator-failure", "", "failure injection: the HyperShift operator (stand-in) crash-loops with this message on every management cluster, so the add-on reports it degraded and nothing is scheduled")
	view := fs.Bool("view", true, "show the live fleet view (redrawn in place on a terminal, printed on change otherwise)")
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage); fs.PrintDefaults() }
	if err := fs.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "up":
		err = up(upOptions{dir: *dir, clusters: *clusters, hubPort: *hubPort, examples: *examples, view: *view, guests: *guests,
			rolloutDuration: *rollout, operatorFailure: *operatorFailure})
	case "down":
		err = down(*dir)
	case "help", "-h", "--help":
		fs.Usage()
		return
	default:
		fs.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "localfleet:", err)
		os.Exit(1)
	}
}

func pidFile(dir string) string { return filepath.Join(dir, "localfleet.pid") }

type upOptions struct {
	dir      string
	clusters int
	hubPort  int
	examples string
	view     bool
	guests   bool
	// rolloutDuration and operatorFailure tune the HyperShift stand-in.
	rolloutDuration time.Duration
	operatorFailure string
}

func up(o upOptions) error {
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	if pid, ok := runningPID(dir); ok {
		return fmt.Errorf("a local fleet (pid %d) is already running from %s: stop it with `localfleet down --dir %s`", pid, dir, dir)
	}
	if err := ensureK8sBinaries(); err != nil {
		return err
	}
	// A previous run's state is stale: its processes are gone.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(pidFile(dir), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return err
	}
	defer func() { _ = os.Remove(pidFile(dir)) }()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	fleet, err := localfleet.Start(ctx, localfleet.Options{
		ManagementClusters: o.clusters, Dir: dir, HubAPIServerPort: o.hubPort, Progress: os.Stdout,
		// Check add-on health leases every 5s instead of OCM's 30s, and
		// poll status feedback every 2s instead of 10s, so the view follows
		// changes closely.
		AddOnLeaseSyncInterval: 5 * time.Second,
		StatusSyncInterval:     2 * time.Second,
	})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("\nlocalfleet: stopping…")
		fleet.Stop()
		fmt.Println("localfleet: stopped")
	}()
	kubeconfigs, err := publishKubeconfigs(fleet, dir)
	if err != nil {
		return err
	}
	fmt.Printf("localfleet: kubeconfigs written: %s, %s\n", kubeconfigs["hub"], filepath.Join(dir, "<cluster>.kubeconfig"))
	fmt.Println("localfleet: installing hcp-fleet (CRDs, ClusterManagementAddOn, default HostingConfig, Placement)")
	if err := hcpfleet.Install(ctx, fleet); err != nil {
		return err
	}
	productOpts := hcpfleet.Options{HyperShift: hypershiftsim.Options{RolloutDuration: o.rolloutDuration, OperatorFailure: o.operatorFailure}}
	if o.guests {
		productOpts.HyperShift.ControlPlanes = hcpfleet.GuestControlPlanes{Fleet: fleet}
	}
	product, err := hcpfleet.Start(fleet, productOpts)
	if err != nil {
		return err
	}
	defer product.Stop()
	fmt.Printf("localfleet: enabling the add-on: labeling the management clusters %s=true\n", hcpfleet.HostLabel)
	if err := hcpfleet.EnableOnAll(ctx, fleet); err != nil {
		return err
	}
	hub, err := client.New(fleet.Hub.Config(), client.Options{Scheme: hubapp.Scheme})
	if err != nil {
		return err
	}
	if o.operatorFailure != "" {
		// Nothing becomes ready: show the failure instead of waiting.
		fmt.Printf("localfleet: failure injection: the HyperShift operator fails with %q on every management cluster\n", o.operatorFailure)
	} else {
		fmt.Println("localfleet: waiting for the hcp-fleet agents and the HyperShift operator on every management cluster")
		if err := hcpfleet.WaitHostsReady(ctx, fleet, hub, os.Stdout, 5*time.Minute); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	if err := applyExamples(ctx, fleet, o.examples); err != nil {
		return err
	}
	welcome := welcome(fleet, dir, kubeconfigs, o.examples)
	tty := isTerminal(os.Stdout)
	if !o.view || !tty {
		fmt.Print(welcome)
	}
	return watch(ctx, fleet, product, hub, o.view, tty, welcome)
}

// applyExamples applies the example manifests, if their directory exists.
func applyExamples(ctx context.Context, fleet *localfleet.Fleet, dir string) error {
	if dir == "" {
		return nil
	}
	if _, err := os.Stat(dir); err != nil {
		fmt.Printf("localfleet: no examples applied (%v)\n", err)
		return nil
	}
	objs, err := hcpfleet.ApplyDir(ctx, fleet, dir)
	if err != nil {
		return err
	}
	fmt.Printf("localfleet: applied %d objects from %s:\n", len(objs), dir)
	for _, o := range objs {
		fmt.Printf("  %s %s\n", strings.ToLower(o.GetKind()), strings.TrimPrefix(o.GetNamespace()+"/"+o.GetName(), "/"))
	}
	return nil
}

// watch redraws the fleet view every second until ctx ends or a component
// of the fleet fails. On a terminal it redraws in place; otherwise it prints
// the view whenever it changes.
func watch(ctx context.Context, fleet *localfleet.Fleet, product *hcpfleet.Product, hub client.Reader, view, tty bool, footer string) error {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	var last string
	for {
		if err := fleet.Err(); err != nil {
			return err
		}
		if view {
			frame := frame(ctx, hub, product)
			switch {
			case tty:
				// Cursor home, draw over the last frame clearing each line's
				// rest, clear below: no flicker.
				screen := strings.ReplaceAll(frame+footer, "\n", "\x1b[K\n")
				if last == "" {
					screen = "\x1b[2J" + screen // the first frame: clear the start-up log
					last = "drawn"
				}
				fmt.Print("\x1b[H" + screen + "\x1b[J")
			case stripClock(frame) != last:
				fmt.Print(frame + "\n")
				last = stripClock(frame)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// frame is one rendering of the view; a failure to read the hub is shown,
// not fatal (the hub may be busy).
func frame(ctx context.Context, hub client.Reader, product *hcpfleet.Product) string {
	var b strings.Builder
	readCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	snapshot, err := fleetview.Collect(readCtx, hub, "")
	if err != nil {
		fmt.Fprintf(&b, "hcp-fleet local fleet — %s\n\ncannot read the hub: %v\n", time.Now().Format("15:04:05"), err)
	} else if err := fleetview.Render(&b, "hcp-fleet local fleet", snapshot, time.Now()); err != nil {
		fmt.Fprintf(&b, "rendering: %v\n", err)
	}
	if err := product.Err(); err != nil {
		fmt.Fprintf(&b, "\nwarning: %v\n", err)
	}
	return b.String()
}

// stripClock drops the first line (the time), so an unchanged fleet is not
// printed again.
func stripClock(frame string) string {
	if _, rest, ok := strings.Cut(frame, "\n"); ok {
		return rest
	}
	return frame
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// pluginPath puts the kubectl-hcpfleet `make run` builds next to this
// binary (bin/) on the PATH, for the hints; or says how to install it.
func pluginPath() string {
	if exe, err := os.Executable(); err == nil {
		if bin := filepath.Dir(exe); fileExists(filepath.Join(bin, "kubectl-hcpfleet")) {
			return "\n  export PATH=" + bin + ":$PATH            # kubectl hcpfleet (the plugin, built by make run)"
		}
	}
	return "\n  go install ./cmd/kubectl-hcpfleet         # the kubectl hcpfleet plugin"
}

// ensureK8sBinaries builds etcd, kube-apiserver, kube-controller-manager and
// kubectl with hack/k8s-bins/build.sh (its progress on stderr) when they are
// missing and the script is at hand, i.e. when run from the repository.
func ensureK8sBinaries() error {
	if _, err := k8sbins.Dir("etcd", "kube-apiserver", "kube-controller-manager", "kubectl"); err == nil {
		return nil
	}
	script := filepath.Join("hack", "k8s-bins", "build.sh")
	if os.Getenv("KUBEBUILDER_ASSETS") != "" {
		return nil // given explicitly: localfleet.Start reports what is missing
	}
	if !fileExists(script) {
		return nil // not in the repository: localfleet.Start reports what is missing
	}
	fmt.Println("localfleet: building etcd, kube-apiserver, kube-controller-manager and kubectl once for this machine (about 12 minutes)")
	cmd := exec.Command(script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s: %w", script, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return os.Setenv("KUBEBUILDER_ASSETS", lines[len(lines)-1])
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// publishKubeconfigs copies the admin kubeconfigs to stable names at the top
// of the state directory: hub.kubeconfig and <cluster>.kubeconfig.
func publishKubeconfigs(fleet *localfleet.Fleet, dir string) (map[string]string, error) {
	out := map[string]string{}
	copyTo := func(name, src string) error {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, name+".kubeconfig")
		out[name] = dst
		return os.WriteFile(dst, data, 0o600)
	}
	if err := copyTo("hub", fleet.Hub.KubeconfigPath); err != nil {
		return nil, err
	}
	for _, m := range fleet.Managed {
		if err := copyTo(m.Name, m.KubeconfigPath); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// welcome says where things are and how to look around; it is shown under
// the live view.
func welcome(fleet *localfleet.Fleet, dir string, kubeconfigs map[string]string, examples string) string {
	kubectl := "kubectl"
	if bins, err := k8sbins.Dir("kubectl"); err == nil {
		kubectl = filepath.Join(bins, "kubectl")
	}
	var names []string
	for _, m := range fleet.Managed {
		names = append(names, m.Name)
	}
	examplesLine := "no examples applied"
	if examples != "" {
		examplesLine = "applied from " + examples + "/ (edit and re-apply, or add your own)"
	}
	return fmt.Sprintf(`
hub + %d management clusters (%s); hcp-fleet installed, add-on enabled; examples %s
kubeconfigs: %s and %s/<cluster>.kubeconfig; logs: %s
In another terminal (kubectl is %s):
  export KUBECONFIG=%s%s
  kubectl hcpfleet status                   # this view, from any hub
  kubectl hcpfleet explain hcd NAME -n NS   # why a hosted cluster is (not) where it is
  kubectl hcpfleet hosts %s           # one management cluster in detail
  kubectl get hcd -A                        # HostedClusterDeployments: host, version, availability
  kubectl get managedclusters               # management clusters and imported hosted clusters
  kubectl get managedclusteraddons -A       # the hcp-fleet agent on each management cluster
  kubectl get manifestworks -A              # what the hub delivers to each management cluster
  kubectl --kubeconfig %s get hostedclusters,nodepools -A
Ctrl-C stops everything.
`, len(fleet.Managed), strings.Join(names, ", "), examplesLine, kubeconfigs["hub"], dir, fleet.LogDir,
		kubectl, kubeconfigs["hub"], pluginPath(), names[0], kubeconfigs[names[0]])
}

// runningPID returns the pid of a live `localfleet up` using dir.
func runningPID(dir string) (int, bool) {
	data, err := os.ReadFile(pidFile(dir))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return 0, false
	}
	return pid, true
}

// down stops a running `localfleet up` (which stops its child processes) and
// removes the state directory. Child processes die with their parent
// (Pdeathsig), so a crashed fleet leaves only the directory behind.
func down(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if pid, ok := runningPID(dir); ok {
		fmt.Printf("localfleet: stopping pid %d\n", pid)
		_ = syscall.Kill(pid, syscall.SIGTERM)
		// Wait up to 30s for it to exit; the check below decides what a
		// timeout means.
		_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			_, alive := runningPID(dir)
			return !alive, nil
		})
		if _, alive := runningPID(dir); alive {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	fmt.Printf("localfleet: removed %s\n", dir)
	return nil
}
