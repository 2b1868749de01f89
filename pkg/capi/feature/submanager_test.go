package feature

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// startOnly is a manager of which launch uses Start only.
type startOnly struct {
	ctrl.Manager
	start func(context.Context) error
}

func (m startOnly) Start(ctx context.Context) error { return m.start(ctx) }

func TestSubManager(t *testing.T) {
	notified := make(chan struct{}, 10)
	s := newSubManager[string]("stopped", "the test manager ended", func() { notified <- struct{}{} })
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	s.begin(base)
	if !s.ready(context.Background()) {
		t.Fatal("not ready after begin")
	}
	waitNotified := func() {
		t.Helper()
		select {
		case <-notified:
		case <-time.After(10 * time.Second):
			t.Fatal("no notification")
		}
	}

	t.Run("a run that cannot start exits with the error", func(t *testing.T) {
		cleaned := false
		run := s.launch("broken", logr.Discard(), func(context.Context, *subRun[string]) (ctrl.Manager, func(), error) {
			return nil, func() { cleaned = true }, errors.New("no way")
		})
		waitNotified()
		if !run.exited || run.err == nil || run.err.Error() != "no way" || cleaned {
			t.Fatalf("run exited=%v err=%v cleaned=%v, want exited with no way, cleanup not run", run.exited, run.err, cleaned)
		}
		if s.current() != run {
			t.Fatal("the failed run is not the current one")
		}
	})

	t.Run("stop ends the manager and runs its cleanup", func(t *testing.T) {
		cleaned := make(chan struct{})
		run := s.launch("good", logr.Discard(), func(context.Context, *subRun[string]) (ctrl.Manager, func(), error) {
			return startOnly{start: func(ctx context.Context) error { <-ctx.Done(); return nil }}, func() { close(cleaned) }, nil
		})
		if run.info != "good" || s.current() != run {
			t.Fatalf("current run %+v, want the one of good", s.current())
		}
		s.stop()
		<-cleaned
		waitNotified()
		if !run.exited || run.err != nil || s.current() != nil {
			t.Fatalf("after stop: exited=%v err=%v current=%v, want exited without error, none current", run.exited, run.err, s.current())
		}
	})

	t.Run("a manager that ends on its own is an error", func(t *testing.T) {
		run := s.launch("short", logr.Discard(), func(context.Context, *subRun[string]) (ctrl.Manager, func(), error) {
			return startOnly{start: func(context.Context) error { return nil }}, nil, nil
		})
		waitNotified()
		<-run.done
		if run.err == nil || run.err.Error() != "the test manager ended" {
			t.Fatalf("err = %v, want the test manager ended", run.err)
		}
	})

	t.Run("fail records its reason first", func(t *testing.T) {
		run := s.launch("stuck", logr.Discard(), func(context.Context, *subRun[string]) (ctrl.Manager, func(), error) {
			return startOnly{start: func(ctx context.Context) error { <-ctx.Done(); return errors.New("later") }}, nil, nil
		})
		s.fail(run, errors.New("watches not in sync"))
		waitNotified()
		<-run.done
		if run.err == nil || run.err.Error() != "watches not in sync" {
			t.Fatalf("err = %v, want watches not in sync", run.err)
		}
	})

	t.Run("runs end with the base context", func(t *testing.T) {
		run := s.launch("last", logr.Discard(), func(context.Context, *subRun[string]) (ctrl.Manager, func(), error) {
			return startOnly{start: func(ctx context.Context) error { <-ctx.Done(); return nil }}, nil, nil
		})
		cancelBase()
		waitNotified()
		<-run.done
		if run.err != nil {
			t.Fatalf("err = %v, want none", run.err)
		}
	})
}
