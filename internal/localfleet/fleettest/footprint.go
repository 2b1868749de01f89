package fleettest

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Usage is what a process used, as Linux reports it in /proc (the
// benchmarks' footprint figures).
type Usage struct {
	// RSS is the resident set (VmRSS) and PeakRSS its peak (VmHWM) since the
	// process started or since ResetPeakRSS, in kB.
	RSS, PeakRSS int64
	// CPU is the user and system CPU time the process used since it
	// started (all its threads; not its children's).
	CPU time.Duration
}

// ProcessUsage reads the usage of process pid, or of this process when pid
// is 0.
func ProcessUsage(pid int) (Usage, error) {
	var u Usage
	status, err := os.ReadFile(procPath(pid, "status"))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		field, rest, _ := strings.Cut(line, ":")
		var into *int64
		switch field {
		case "VmRSS":
			into = &u.RSS
		case "VmHWM":
			into = &u.PeakRSS
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return u, fmt.Errorf("%s: %q: %w", procPath(pid, "status"), line, err)
		}
		*into = kb
	}
	if pid == 0 {
		// getrusage has microseconds; /proc/<pid>/stat only clock ticks.
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return u, err
		}
		u.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		return u, nil
	}
	stat, err := os.ReadFile(procPath(pid, "stat"))
	if err != nil {
		return u, err
	}
	// The command name (field 2) may hold spaces; utime and stime are the
	// 12th and 13th fields after it.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 13 {
		return u, fmt.Errorf("%s: too few fields", procPath(pid, "stat"))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		t, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return u, fmt.Errorf("%s: %w", procPath(pid, "stat"), err)
		}
		ticks += t
	}
	// USER_HZ, which Linux fixes at 100 for what it reports to user space.
	u.CPU = time.Duration(ticks) * (time.Second / 100)
	return u, nil
}

// ResetPeakRSS sets the peak resident set of process pid (this process
// when 0) back to its current one (Linux's clear_refs "5"), so that the next
// PeakRSS is the peak of what follows.
func ResetPeakRSS(pid int) error {
	return os.WriteFile(procPath(pid, "clear_refs"), []byte("5"), 0)
}

func procPath(pid int, file string) string {
	if pid == 0 {
		return "/proc/self/" + file
	}
	return fmt.Sprintf("/proc/%d/%s", pid, file)
}

// KB formats a size in kB as the benchmarks print it.
func KB(kb int64) string { return fmt.Sprintf("%d kB", kb) }

// BenchLog is where a benchmark's controller logs go: the file BENCH_LOG
// names (appended to; the path is returned), or nowhere.
func BenchLog() (io.Writer, string, error) {
	path := os.Getenv("BENCH_LOG")
	if path == "" {
		return io.Discard, "", nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, "", err
	}
	return f, path, nil
}

// SetBenchLogger sends the logs of the controllers a benchmark runs
// in-process to BenchLog: there when asked, nowhere otherwise — and
// controller-runtime does not warn that no logger was set. It gives
// controller-runtime a logger (info level), which takes only the first time
// (controller-runtime's logger is set once per process); after a local
// fleet started, which set it to klog's, it redirects klog's output instead
// (the fleet's OCM components log there too). It returns the file's path
// ("" when discarded).
func SetBenchLogger() (string, error) {
	w, path, err := BenchLog()
	if err != nil {
		return "", err
	}
	if path == "" {
		ctrl.SetLogger(logr.Discard())
		return "", nil
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(w), zap.ConsoleEncoder()))
	klog.SetOutput(w)
	return path, nil
}
