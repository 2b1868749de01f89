package feature

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
)

// subManager starts and stops controllers, on demand, in a controller-runtime
// manager of their own: a running manager cannot remove controllers. Its
// user (providerRunner, migrationRunner) is a Runnable of the agent's
// manager and calls begin from its Start, so runs start only on the leader
// and derive from the agent's context; stop ends the current run. R is what
// the user records of each run (what it was started for, its progress).
type subManager[R any] struct {
	// stopped is logged with the error a run stopped with; ended is the
	// error of a manager that ended on its own.
	stopped, ended string
	// notify is called after a run exits, for its user to requeue or
	// report.
	notify func()

	started chan struct{}
	base    context.Context // the agent manager's; set before started closes

	mu  sync.Mutex
	cur *subRun[R]
}

// subRun is one start of the manager.
type subRun[R any] struct {
	info   R
	cancel context.CancelFunc
	done   chan struct{}

	// Guarded by subManager.mu (as are mutable parts of info).
	exited   bool
	err      error
	exitedAt time.Time
}

func newSubManager[R any](stopped, ended string, notify func()) subManager[R] {
	return subManager[R]{stopped: stopped, ended: ended, notify: notify, started: make(chan struct{})}
}

// begin records the agent manager's context, from which runs derive.
func (s *subManager[R]) begin(ctx context.Context) {
	s.base = ctx
	close(s.started)
}

// ready waits until begin was called; false if ctx ends first.
func (s *subManager[R]) ready(ctx context.Context) bool {
	select {
	case <-s.started:
		return true
	case <-ctx.Done():
		return false
	}
}

// current is the current run, or nil.
func (s *subManager[R]) current() *subRun[R] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// stop stops the current run, if any, and waits for it.
func (s *subManager[R]) stop() {
	s.mu.Lock()
	cur := s.cur
	s.cur = nil
	s.mu.Unlock()
	if cur != nil {
		cur.cancel()
		<-cur.done
	}
}

// launch makes a run of info the current one: build sets up its manager (ctx
// ends when the run stops; cleanup, if any, runs after the manager stopped),
// which then runs until stopped. A run that cannot start is returned as
// exited with build's error; build cleans up after itself then.
func (s *subManager[R]) launch(info R, log logr.Logger, build func(ctx context.Context, run *subRun[R]) (mgr ctrl.Manager, cleanup func(), err error)) *subRun[R] {
	ctx, cancel := context.WithCancel(s.base)
	run := &subRun[R]{info: info, cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.cur = run
	s.mu.Unlock()
	exit := func(err error) {
		if err != nil {
			log.Error(err, s.stopped)
		}
		s.mu.Lock()
		run.exited, run.exitedAt = true, time.Now()
		if run.err == nil { // a failure recorded with fail comes first
			run.err = err
		}
		s.mu.Unlock()
		cancel()
		close(run.done)
		s.notify()
	}

	mgr, cleanup, err := build(ctx, run)
	if err != nil {
		exit(err)
		return run
	}
	go func() {
		err := mgr.Start(ctx)
		if cleanup != nil {
			cleanup()
		}
		if err == nil && ctx.Err() == nil {
			err = errors.New(s.ended)
		}
		exit(err)
	}()
	return run
}

// fail stops run with err as the reason (unless it has one already).
func (s *subManager[R]) fail(run *subRun[R], err error) {
	s.mu.Lock()
	if run.err == nil {
		run.err = err
	}
	s.mu.Unlock()
	run.cancel()
}

// newRunManager is a manager on cfg for a subManager run: no metrics, no
// probes, and no leader election (the agent's manager elected us already:
// this runs on its leader).
func newRunManager(cfg *rest.Config, log logr.Logger) (ctrl.Manager, error) {
	return ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 agent.Scheme,
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
		// Controller names are checked for uniqueness process-wide; each
		// run registers the same controllers again.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
}
