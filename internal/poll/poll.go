// Package poll is the one polling helper of hcp-fleet's tests: wait
// until a condition holds, then fail with the condition's own last reason,
// never the deadline's.
package poll

import (
	"context"
	"testing"
	"time"
)

// Interval is how often a condition is checked.
const Interval = 250 * time.Millisecond

// attemptTimeout bounds one check of a condition.
const attemptTimeout = 30 * time.Second

// Until checks cond every Interval until it returns nil; when timeout passes
// first, t fails with what, cond's last error and hints (where to look:
// a log directory, say).
//
// Each check gets a context of its own, not one bounded by the overall
// deadline: near a shared deadline a client's rate limiter refuses to wait
// ("client rate limiter Wait returned an error"), and that error would
// replace the condition's real reason in the failure.
func Until(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) error, hints ...string) {
	t.Helper()
	if err := Wait(timeout, cond); err != nil {
		msg := what + ": not after " + timeout.String() + ": " + err.Error()
		for _, h := range hints {
			msg += "\n  " + h
		}
		t.Fatal(msg)
	}
}

// Wait checks cond every Interval until it returns nil (then nil) or
// timeout passes (then cond's last error).
func Wait(timeout time.Duration, cond func(ctx context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
		err := cond(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().Add(Interval).After(deadline) {
			return err
		}
		time.Sleep(Interval)
	}
}
