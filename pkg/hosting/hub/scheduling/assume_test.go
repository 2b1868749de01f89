package scheduling

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestAssumeCache(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := newAssumeCache(func() time.Time { return now })
	key := types.NamespacedName{Namespace: "team-a", Name: "one"}
	a.assume(key, "uid-1", "mc1", []string{"clusters/one"})

	if !a.holds(key, "uid-1") {
		t.Fatal("a fresh binding is not held")
	}
	if got := a.on("mc1"); len(got) != 1 || got["uid-1"][0] != "clusters/one" {
		t.Fatalf("on(mc1) = %v, want the binding of uid-1", got)
	}
	if got := a.on("mc2"); len(got) != 0 {
		t.Fatalf("on(mc2) = %v, want nothing", got)
	}

	// Deleted and created again under the same name before the cache
	// showed the binding: the new object is not bound, and the old one's
	// binding no longer counts on mc1.
	if a.holds(key, "uid-2") {
		t.Fatal("a new object under the same name is held as bound")
	}
	if got := a.on("mc1"); len(got) != 0 {
		t.Fatalf("on(mc1) = %v after the name was reused, want nothing", got)
	}

	// forget with a uid spares another object's entry.
	a.assume(key, "uid-2", "mc1", nil)
	a.forget(key, "uid-1")
	if !a.holds(key, "uid-2") {
		t.Fatal("forgetting uid-1 dropped uid-2's binding")
	}
	a.forget(key, "uid-2")
	if a.holds(key, "uid-2") {
		t.Fatal("forget(uid-2) kept the binding")
	}

	// A binding the cache never shows expires.
	a.assume(key, "uid-3", "mc1", nil)
	now = now.Add(assumeTTL - time.Second)
	if len(a.on("mc1")) != 1 {
		t.Fatal("the binding expired early")
	}
	now = now.Add(time.Second)
	if len(a.on("mc1")) != 0 || a.holds(key, "uid-3") {
		t.Fatal("the binding outlived its TTL")
	}

	// Decided again (a conflict) onto another cluster: it counts there
	// only.
	a.assume(key, "uid-4", "mc1", nil)
	a.assume(key, "uid-4", "mc2", nil)
	if len(a.on("mc1")) != 0 || len(a.on("mc2")) != 1 {
		t.Fatalf("on(mc1) = %v, on(mc2) = %v after the binding moved to mc2", a.on("mc1"), a.on("mc2"))
	}
	a.forget(key, "")
	if len(a.entries) != 0 || len(a.byCluster) != 0 {
		t.Fatalf("entries %v, by cluster %v left after every binding was forgotten", a.entries, a.byCluster)
	}
}
