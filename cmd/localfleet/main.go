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
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
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
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage); fs.PrintDefaults() }
	if err := fs.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "up":
		err = up(*dir, *clusters, *hubPort)
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

func up(dir string, clusters, hubPort int) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if pid, ok := runningPID(dir); ok {
		return fmt.Errorf("a local fleet (pid %d) is already running from %s: stop it with `localfleet down --dir %s`", pid, dir, dir)
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	fleet, err := localfleet.Start(ctx, localfleet.Options{
		ManagementClusters: clusters, Dir: dir, HubAPIServerPort: hubPort, Progress: os.Stdout,
		// Check add-on health leases every 5s instead of OCM's 30s, so the
		// console shows the agents Available right after they start.
		AddOnLeaseSyncInterval: 5 * time.Second,
	})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("\nlocalfleet: stopping…")
		fleet.Stop()
		_ = os.Remove(pidFile(dir))
		fmt.Println("localfleet: stopped")
	}()
	fmt.Println("localfleet: installing hcp-fleet (CRDs, ClusterManagementAddOn, default HostingConfig, Placement)")
	if err := hcpfleet.Install(ctx, fleet); err != nil {
		return err
	}
	product, err := hcpfleet.Start(fleet, hcpfleet.Options{})
	if err != nil {
		return err
	}
	defer product.Stop()
	if err := hcpfleet.EnableOnAll(ctx, fleet); err != nil {
		return err
	}
	kubeconfigs, err := publishKubeconfigs(fleet, dir)
	if err != nil {
		return err
	}
	printWelcome(fleet, dir, kubeconfigs)

	ticker := time.NewTicker(2 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			if err := fleet.Err(); err != nil {
				return err
			}
			if err := product.Err(); err != nil {
				return err
			}
		}
	}
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

func printWelcome(fleet *localfleet.Fleet, dir string, kubeconfigs map[string]string) {
	kubectl := "kubectl"
	if assets := os.Getenv("KUBEBUILDER_ASSETS"); assets != "" {
		if _, err := os.Stat(filepath.Join(assets, "kubectl")); err == nil {
			kubectl = filepath.Join(assets, "kubectl")
		}
	}
	var names []string
	for _, m := range fleet.Managed {
		names = append(names, m.Name)
	}
	fmt.Printf(`
The local fleet is up: a hub and %d management clusters (%s), with hcp-fleet
installed on the hub and its agent enabled on every management cluster.
Kubeconfigs:   %s (hub), %s/<cluster>.kubeconfig
Logs:          %s

Look around (in another terminal):
  export KUBECONFIG=%s
  %s get managedclusters
  %s get managedclusteraddons -A
  %s get manifestworks -A
  %s --kubeconfig %s get namespaces

Ctrl-C stops everything.
`, len(fleet.Managed), strings.Join(names, ", "), kubeconfigs["hub"], dir, fleet.LogDir,
		kubeconfigs["hub"], kubectl, kubectl, kubectl, kubectl, kubeconfigs[names[0]])
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
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if _, alive := runningPID(dir); !alive {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
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
