package localfleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/hcp-fleet/hcp-fleet/internal/k8sbins"
)

// process is one child process of the fleet (etcd, kube-apiserver,
// kube-controller-manager), with its output in a log file.
type process struct {
	name    string // e.g. "kube-apiserver (hub)"
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
	mu      sync.Mutex
	exitErr error
}

func startProcess(name, binary string, args []string, logPath string) (*process, error) {
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("%s: binary %s not found (run `make k8s-bins`): %w", name, binary, err)
	}
	// Appended to: a component started again (Cluster.StartAPIServer) keeps
	// one log.
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: creating log file: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Never outlive the process that started us, even on a crash or kill -9.
		Pdeathsig: syscall.SIGKILL,
		Setpgid:   true,
	}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("%s: starting %s: %w", name, binary, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		_ = logFile.Close()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// renice sets the scheduling priority (nice value) of every thread of the
// process; threads it starts later inherit it. Each process runs in a
// process group of its own (Setpgid), so the group is the process. Setting
// the value a process already has needs no privilege (a new process: 0).
func (p *process) renice(nice int) error {
	if err := syscall.Setpriority(syscall.PRIO_PGRP, p.cmd.Process.Pid, nice); err != nil {
		return fmt.Errorf("%s: setting nice %d: %w", p.name, nice, err)
	}
	return nil
}

// exited reports whether the process has ended, and why.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.exitErr == nil {
			return true, errors.New("exited with status 0")
		}
		return true, p.exitErr
	default:
		return false, nil
	}
}

// failure builds the one clear error the fleet reports when a component
// fails: what failed, why, where its log is, and the log's last lines.
func (p *process) failure(what string, cause error) error {
	return fmt.Errorf("%s %s: %w\n  log: %s\n%s", p.name, what, cause, p.logPath, indent(tail(p.logPath, 15)))
}

// waitReady polls ready every 100ms until it succeeds, the process exits, or
// the timeout passes; all three end with a clear answer, never a hang.
func (p *process) waitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	var last, exit error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if gone, why := p.exited(); gone {
			exit = p.failure("exited during start-up", why)
			return false, exit
		}
		last = ready(ctx)
		return last == nil, nil
	})
	switch {
	case err == nil:
		return nil
	case exit != nil:
		return exit
	default:
		return p.failure(fmt.Sprintf("not ready after %s", timeout), last)
	}
}

// stop terminates the process (SIGTERM, then SIGKILL after the grace period).
func (p *process) stop(grace time.Duration) {
	if gone, _ := p.exited(); gone {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

func tail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	var b bytes.Buffer
	for _, l := range strings.Split(s, "\n") {
		b.WriteString("    | ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// freePort asks the kernel for a free loopback port. Another process may take
// it before we bind it; the component then fails with "address already in
// use" in its log and start-up reports that clearly.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portFree reports an error when something already listens on the port.
func portFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("port %d is in use: %w", port, err)
	}
	return l.Close()
}

// binaryDir finds etcd, kube-apiserver and kube-controller-manager.
func binaryDir() (string, error) {
	return k8sbins.Dir("etcd", "kube-apiserver", "kube-controller-manager")
}
