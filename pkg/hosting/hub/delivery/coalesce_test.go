package delivery

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestRefreshLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := &refreshLimiter{interval: 30 * time.Second, now: func() time.Time { return now }}
	key := types.NamespacedName{Namespace: "team-a", Name: "prod"}
	if w := l.wait(key, "u1", "s1"); w != 0 {
		t.Fatalf("first write waits %s", w)
	}
	l.wrote(key, "u1", "s1", false)
	now = now.Add(10 * time.Second)
	if w := l.wait(key, "u1", "s1"); w != 20*time.Second {
		t.Errorf("a reference-only rewrite 10s after a write waits %s, want 20s", w)
	}
	if w := l.wait(key, "u1", "s2"); w != 0 {
		t.Errorf("a spec change waits %s", w)
	}
	if w := l.wait(key, "u2", "s1"); w != 0 {
		t.Errorf("a recreated HCD waits %s", w)
	}
	now = now.Add(21 * time.Second)
	if w := l.wait(key, "u1", "s1"); w != 0 {
		t.Errorf("after the interval it waits %s", w)
	}
	l.forget(key)
	if _, ok := l.last.Load(key); ok {
		t.Error("forgotten key kept")
	}
}
