//go:build integration

package kubeletsim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/hcp-fleet/hcp-fleet/internal/testenv"
)

// TestDeploymentAvailability runs the kubelet stand-in against a real
// kube-apiserver: a program that keeps running makes its Deployment
// available; one that exits is reported CrashLoopBackOff, and stays so when
// the Deployment is synced again (a status write of ours, a label change),
// as a real crash-looping pod is not ready; one whose crash loop ends is
// available again.
func TestDeploymentAvailability(t *testing.T) {
	cfg := testenv.Start(t)
	kube := kubernetes.NewForConfigOrDie(cfg)

	ctx, cancel := context.WithCancel(context.Background())
	var recoversRuns atomic.Int32
	k, err := New(cfg, Images{
		// Fails once (as an agent whose ServiceAccount is not there yet),
		// then keeps running.
		"example.com/recovers": func(ctx context.Context, _ []string) error {
			if recoversRuns.Add(1) == 1 {
				// After the start's status write, so that the crash is
				// the status to recover from.
				select {
				case <-ctx.Done():
				case <-time.After(300 * time.Millisecond):
				}
				return errors.New("not yet")
			}
			<-ctx.Done()
			return nil
		},
		"example.com/runs":           func(ctx context.Context, _ []string) error { <-ctx.Done(); return nil },
		"example.com/crashes":        func(context.Context, []string) error { return errors.New("webhook certificate expired") },
		"example.com/probed-runs":    func(ctx context.Context, _ []string) error { <-ctx.Done(); return nil },
		"example.com/probed-crashes": func(context.Context, []string) error { return errors.New("operator image broken") },
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); k.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	// No kube-controller-manager here: the pods' service account by hand.
	if _, err := kube.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	create := func(name string, probe ...*corev1.Probe) {
		t.Helper()
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.com/" + name + ":v1"}}},
				},
			},
		}
		if len(probe) > 0 {
			d.Spec.Template.Spec.Containers[0].ReadinessProbe = probe[0]
		}
		if _, err := kube.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("runs")
	create("crashes")

	// available returns the Deployment's Available condition once its
	// status is for the current generation.
	available := func(name string) (*appsv1.DeploymentCondition, error) {
		d, err := kube.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && d.Status.ObservedGeneration == d.Generation {
				return &c, nil
			}
		}
		return nil, fmt.Errorf("%s: no Available condition for generation %d yet", name, d.Generation)
	}
	waitFor := func(name string, status corev1.ConditionStatus, reason string) {
		t.Helper()
		var last error
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			c, err := available(name)
			if c != nil {
				err = fmt.Errorf("%s: Available=%s %s: %s", name, c.Status, c.Reason, c.Message)
			}
			last = err
			return c != nil && c.Status == status && c.Reason == reason, nil
		})
		if err != nil {
			t.Fatalf("waiting for %s Available=%s %s: %v", name, status, reason, last)
		}
	}

	waitFor("runs", corev1.ConditionTrue, "MinimumReplicasAvailable")
	waitFor("crashes", corev1.ConditionFalse, "CrashLoopBackOff")
	c, _ := available("crashes")
	if want := "webhook certificate expired"; c == nil || !strings.Contains(c.Message, want) {
		t.Errorf("CrashLoopBackOff message %+v does not say %q", c, want)
	}

	// A change that does not touch the pod template syncs the Deployment
	// again without a restart: still crash-looping, still unavailable.
	if _, err := kube.AppsV1().Deployments("default").Patch(ctx, "crashes", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"touched":"true"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 20 { // 2s: several syncs and at least one restart
		if c, err := available("crashes"); err == nil && c.Status != corev1.ConditionFalse {
			t.Fatalf("a crash-looping program's Deployment was reported available: %+v", c)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitFor("runs", corev1.ConditionTrue, "MinimumReplicasAvailable")

	// A program that exited once and then keeps running is available again
	// after its restart, as a pod whose crash loop ended is ready again.
	create("recovers")
	waitFor("recovers", corev1.ConditionFalse, "CrashLoopBackOff")
	waitFor("recovers", corev1.ConditionTrue, "MinimumReplicasAvailable")
	if n := recoversRuns.Load(); n != 2 {
		t.Errorf("the recovering program ran %d times, want 2", n)
	}

	// A container with a readiness probe is ready only once its probe
	// passes: one whose program fails at start is never reported
	// available, not even for a moment (every status write is watched from
	// before its creation); one that keeps running is, after a while.
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/metrics", Port: intstr.FromInt32(9000)}}}
	w, err := kube.AppsV1().Deployments("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=probed-crashes"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	create("probed-crashes", probe)
	create("probed-runs", probe)
	timeout := time.After(time.Minute)
	for crashLoop := false; !crashLoop; {
		select {
		case ev := <-w.ResultChan():
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok {
				continue
			}
			for _, c := range d.Status.Conditions {
				if c.Type != appsv1.DeploymentAvailable {
					continue
				}
				if c.Status == corev1.ConditionTrue {
					t.Fatalf("a probed program that fails at start was reported available: %+v", c)
				}
				crashLoop = c.Reason == "CrashLoopBackOff"
			}
		case <-timeout:
			t.Fatal("probed-crashes: no CrashLoopBackOff after 1m")
		}
	}
	waitFor("probed-runs", corev1.ConditionTrue, "MinimumReplicasAvailable")
}
