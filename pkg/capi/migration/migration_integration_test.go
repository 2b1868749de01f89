//go:build integration

package migration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

// One apiserver for all tests of the package; every test works in its own
// hosted cluster (and control-plane namespace).
func TestMigration(t *testing.T) {
	e := startEnv(t)

	t.Run("success keeps every object and field", func(t *testing.T) {
		f := e.newFixture(t, "ok")
		before := e.snapshot(t, f)
		opts := testOptions()
		tr := &Tracker{}
		opts.OnProgress = tr.Record
		var steps []Step
		r := e.reconciler(e.c, opts)
		r.beforeStep = func(_ types.NamespacedName, s Step) error {
			if len(steps) == 0 || steps[len(steps)-1] != s {
				steps = append(steps, s)
			}
			return nil
		}
		e.drive(t, r, f)
		e.assertMigrated(t, f, before, opts)
		if fmt.Sprint(steps) != fmt.Sprint(Steps) {
			t.Errorf("steps run %v, want %v", steps, Steps)
		}
		if p, _ := tr.Get(f.hc); p.Phase != PhaseMigrated {
			t.Errorf("progress %+v, want Migrated", p)
		}
		// Settled: another reconcile changes nothing.
		mid := e.snapshot(t, f)
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: f.hc}); err != nil {
			t.Fatal(err)
		}
		assertUnchanged(t, mid, e.snapshot(t, f))
	})

	// A failure injected before each step that can roll back.
	for _, step := range Steps[:len(Steps)-1] {
		t.Run("failure at "+string(step)+" rolls back", func(t *testing.T) {
			f := e.newFixture(t, "fail-"+string(step))
			before := e.snapshot(t, f)
			opts := testOptions()
			tr := &Tracker{}
			opts.OnProgress = tr.Record
			r := e.reconciler(e.c, opts)
			r.beforeStep = func(_ types.NamespacedName, s Step) error {
				if s == step {
					return errInjected
				}
				return nil
			}
			e.drive(t, r, f)
			e.assertRolledBack(t, f, before, string(step)+": injected")
			if p, _ := tr.Get(f.hc); p.Phase != PhaseFailed || p.Step != step {
				t.Errorf("progress %+v, want Failed at %s", p, step)
			}
		})
	}

	t.Run("failure in the middle of copying rolls back the copies made", func(t *testing.T) {
		f := e.newFixture(t, "fail-midcopy")
		before := e.snapshot(t, f)
		opts := testOptions()
		// The 5th private object's create fails: Cluster, MHC, MD, MS are made.
		c := failingWrites(e.c, 5, func(verb string, obj client.Object) bool {
			return verb == "create" && groups.IsPrivate(obj.GetObjectKind().GroupVersionKind().Group)
		})
		r := e.reconciler(c, opts)
		e.drive(t, r, f)
		e.assertRolledBack(t, f, before, "copy: copying Machine.cluster.x-k8s.io/")

		// SRE remediation: removing migration-failed lets it run again.
		hc := &metav1.PartialObjectMetadata{}
		hc.SetGroupVersionKind(HostedClusterGVK)
		hc.SetNamespace(f.hc.Namespace)
		hc.SetName(f.hc.Name)
		if err := e.c.Patch(context.Background(), hc, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+AnnotationMigrationFailed+`":null}}}`))); err != nil {
			t.Fatal(err)
		}
		e.drive(t, e.reconciler(e.c, opts), f)
		e.assertMigrated(t, f, before, opts)
	})

	t.Run("status write failure rolls back", func(t *testing.T) {
		f := e.newFixture(t, "fail-status")
		before := e.snapshot(t, f)
		c := failingWrites(e.c, 3, func(verb string, obj client.Object) bool { return verb == "update-status" })
		e.drive(t, e.reconciler(c, testOptions()), f)
		e.assertRolledBack(t, f, before, "copy: copying ")
	})

	t.Run("health check timeout rolls back", func(t *testing.T) {
		f := e.newFixture(t, "fail-health")
		before := e.snapshot(t, f)
		opts := testOptions()
		opts.HealthTimeout = time.Millisecond
		r := e.reconciler(e.c, opts)
		// No Deployment controller: the switched workloads never get available.
		ctx := context.Background()
		for i := 0; i < 20 && Classify(e.hcAnnotations(t, f), false) != Failed; i++ {
			if i < 4 { // up to wait-scaled-down the Deployments need nothing
				e.markAvailable(t, f.ns)
			}
			time.Sleep(2 * time.Millisecond)
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: f.hc}); err != nil {
				t.Log(err)
			}
		}
		e.assertRolledBack(t, f, before, "health-check: timed out after 1ms: deployment ")
	})

	t.Run("a copy that differs from its original fails the health check", func(t *testing.T) {
		f := e.newFixture(t, "fail-differs")
		before := e.snapshot(t, f)
		opts := testOptions()
		r := e.reconciler(e.c, opts)
		r.beforeStep = func(_ types.NamespacedName, s Step) error {
			if s != StepHealthCheck {
				return nil
			}
			// Someone edits a private copy behind the migration's back.
			m := &unstructured.Unstructured{}
			m.SetGroupVersionKind(schemaGVK("cluster.hypershift.openshift.io", "v1beta2", "Machine"))
			if err := e.c.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "np1-5f7d8-m0"}, m); err != nil {
				return err
			}
			return e.c.Patch(context.Background(), m, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"edited":"yes"}}}`)))
		}
		e.drive(t, r, f)
		e.assertRolledBack(t, f, before, "health-check: private copies differ: Machine.cluster.hypershift.openshift.io/np1-5f7d8-m0 labels")
	})

	t.Run("a failure during cleanup is retried, never rolled back", func(t *testing.T) {
		f := e.newFixture(t, "retry-cleanup")
		before := e.snapshot(t, f)
		opts := testOptions()
		// The first delete of a standard object fails.
		c := failingWrites(e.c, 1, func(verb string, obj client.Object) bool {
			return verb == "delete" && groups.IsStandard(obj.GetObjectKind().GroupVersionKind().Group)
		})
		e.drive(t, e.reconciler(c, opts), f)
		e.assertMigrated(t, f, before, opts)
	})

	t.Run("preflight refuses when private objects exist", func(t *testing.T) {
		f := e.newFixture(t, "fail-preexisting")
		stray := u("cluster.hypershift.openshift.io/v1beta2", "MachineHealthCheck", "stray", map[string]any{"spec": map[string]any{"clusterName": "x", "selector": map[string]any{}}})
		stray.SetNamespace(f.ns)
		if err := e.c.Create(context.Background(), stray); err != nil {
			t.Fatal(err)
		}
		before := e.snapshot(t, f)
		e.drive(t, e.reconciler(e.c, testOptions()), f)
		e.assertRolledBack(t, f, before, "preflight: private CAPI objects already exist")
	})

	// A controller restart (crash) right after any single write of the
	// migration: a new controller resumes and the migration ends migrated,
	// with nothing lost. Every write position is tried.
	t.Run("restart after any write resumes", func(t *testing.T) {
		opts := testOptions()
		total := 0
		for n := 1; ; n++ {
			f := e.newFixture(t, fmt.Sprintf("restart-%d", n))
			before := e.snapshot(t, f)
			writes := 0
			crashed := e.reconcileUntilCrash(t, e.reconciler(crashingWrites(e.c, n, &writes), opts), f)
			e.drive(t, e.reconciler(e.c, opts), f)
			e.assertMigrated(t, f, before, opts)
			if t.Failed() {
				t.Fatalf("after a crash at write %d", n)
			}
			if !crashed {
				total = writes
				break
			}
		}
		t.Logf("a migration of the fixture takes %d writes; a crash after each one was resumed", total)
		if total < 20 {
			t.Errorf("only %d writes: the crash positions did not cover the migration", total)
		}
	})

	// The same for the rollback: a failure at health-check, then a crash
	// after each write of the rollback; the next controller finishes it.
	t.Run("restart during rollback finishes it", func(t *testing.T) {
		opts := testOptions()
		fail := func(r *reconciler) *reconciler {
			r.beforeStep = func(_ types.NamespacedName, s Step) error {
				if s == StepHealthCheck {
					return errInjected
				}
				return nil
			}
			return r
		}
		for n := 1; ; n++ {
			f := e.newFixture(t, fmt.Sprintf("rbrestart-%d", n))
			before := e.snapshot(t, f)
			writes := 0
			// Count only the rollback's writes: start counting at the failure.
			r := fail(e.reconciler(e.c, opts))
			for range 30 {
				if st, _ := r.loadState(context.Background(), f.ns); st != nil && st.Step == StepHealthCheck {
					break
				}
				e.markAvailable(t, f.ns)
				if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: f.hc}); err != nil {
					t.Fatal(err)
				}
			}
			crashed := e.reconcileUntilCrash(t, fail(e.reconciler(crashingWrites(e.c, n, &writes), opts)), f)
			e.drive(t, fail(e.reconciler(e.c, opts)), f)
			e.assertRolledBack(t, f, before, "health-check: injected")
			if t.Failed() {
				t.Fatalf("after a crash at rollback write %d", n)
			}
			if !crashed {
				t.Logf("a rollback from health-check takes %d writes; a crash after each one was finished", writes)
				break
			}
		}
	})

	t.Run("one hosted cluster at a time", func(t *testing.T) {
		a, b := e.newFixture(t, "turn-a"), e.newFixture(t, "turn-b")
		beforeA, beforeB := e.snapshot(t, a), e.snapshot(t, b)
		opts := testOptions()
		opts.PollInterval = 50 * time.Millisecond
		tr := &Tracker{}
		opts.OnProgress = tr.Record

		mgr, err := ctrl.NewManager(e.cfg, ctrl.Options{Scheme: e.scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := newReconciler(mgr, opts)
		if err != nil {
			t.Fatal(err)
		}
		// The first to reach copy holds there until released.
		entered, release := make(chan types.NamespacedName, 1), make(chan struct{})
		held := false
		r.beforeStep = func(hc types.NamespacedName, s Step) error {
			if s == StepCopy && !held {
				held = true
				entered <- hc
				<-release
			}
			return nil
		}
		if err := r.setupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- mgr.Start(ctx) }()
		t.Cleanup(func() { cancel(); <-done })

		var first types.NamespacedName
		select {
		case first = <-entered:
		case <-time.After(time.Minute):
			t.Fatal("no migration started")
		}
		other := map[types.NamespacedName]fixture{a.hc: b, b.hc: a}[first]
		// While the first holds the lock, the other waits: no lock, Pending.
		deadline := time.Now().Add(time.Minute)
		for {
			p, _ := tr.Get(other.hc)
			if p.Phase == PhasePending && strings.Contains(p.Reason, first.Name) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("other hosted cluster's progress %+v, want Pending behind %s", p, first)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if ann := e.hcAnnotations(t, other); ann[AnnotationMigrationInProgress] != "" {
			t.Fatalf("both hosted clusters are migrating: %v", ann)
		}
		close(release)
		deadline = time.Now().Add(2 * time.Minute)
		for Classify(e.hcAnnotations(t, a), false) != Migrated || Classify(e.hcAnnotations(t, b), false) != Migrated {
			if time.Now().After(deadline) {
				t.Fatalf("not both migrated: %v / %v", e.hcAnnotations(t, a), e.hcAnnotations(t, b))
			}
			e.markAvailable(t, a.ns)
			e.markAvailable(t, b.ns)
			time.Sleep(50 * time.Millisecond)
		}
		e.assertMigrated(t, a, beforeA, opts)
		e.assertMigrated(t, b, beforeB, opts)
		pa, _ := tr.Get(a.hc)
		pb, _ := tr.Get(b.hc)
		if _, active := tr.Summary(); pa.Phase != PhaseMigrated || pb.Phase != PhaseMigrated || active != nil {
			t.Errorf("progress %+v, %+v, active %+v; want both Migrated, none active", pa, pb, active)
		}
	})
}

// assertRolledBack: everything as before, the HostedCluster marked failed
// with a reason starting with reasonPrefix, the lock released, scope kept.
func (e *env) assertRolledBack(t *testing.T, f fixture, before snapshot, reasonPrefix string) {
	t.Helper()
	after := e.snapshot(t, f)
	ann := after.hcAnn
	if !strings.HasPrefix(ann[AnnotationMigrationFailed], reasonPrefix) {
		t.Errorf("migration-failed %q, want prefix %q", ann[AnnotationMigrationFailed], reasonPrefix)
	}
	delete(ann, AnnotationMigrationFailed)
	after.hcAnn = ann
	if fmt.Sprint(after.hcAnn) != fmt.Sprint(before.hcAnn) {
		t.Errorf("HostedCluster annotations %v, want %v plus migration-failed", after.hcAnn, before.hcAnn)
	}
	assertUnchanged(t, before, after)
	for _, d := range after.deployments {
		if d.Spec.Replicas == nil {
			t.Errorf("%s: no replicas", d.Name)
		}
	}
}

func schemaGVK(g, v, k string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: g, Version: v, Kind: k}
}
