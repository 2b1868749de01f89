package poll

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	calls := 0
	if err := Wait(time.Minute, func(context.Context) error {
		calls++
		if calls < 3 {
			return errors.New("not yet")
		}
		return nil
	}); err != nil || calls != 3 {
		t.Fatalf("Wait = %v after %d calls, want nil after 3", err, calls)
	}
	err := Wait(3*Interval, func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("a check has no deadline of its own")
		}
		return errors.New("the real reason")
	})
	if err == nil || err.Error() != "the real reason" {
		t.Fatalf("Wait = %v, want the condition's last error", err)
	}
}
