//go:build integration

package scheduling_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	toolswatch "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/internal/testenv"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// BenchmarkHubOnly is the hub side toward fleet scale: one real hub API
// server with the OCM and hcp-fleet CRDs, hcp-fleet's scheduler and delivery,
// and management clusters that exist only as what the hub reads of them
// (ManagedClusters with status and claims, add-ons reporting Available and
// the operator installed, a Placement's decisions), written directly — no
// klusterlets, no agents. For each size it measures the time until every
// HostedClusterDeployment is bound and its ManifestWork written, the hub
// writes per HostedClusterDeployment and the CPU time and peak RSS of this
// process (the hub's controllers, and the benchmark's client creating the
// HCDs and polling for them; the API server and etcd are processes of their
// own) over that burst, and prints the slope of the time per
// HostedClusterDeployment. BENCH_HUBONLY lists the sizes as HCDs/clusters
// ("1000/50,5000/100,10000/200"); BENCH_LOG names a file for the
// controllers' logs.
func BenchmarkHubOnly(b *testing.B) {
	sizes := os.Getenv("BENCH_HUBONLY")
	if sizes == "" {
		sizes = "1000/50,5000/100"
	}
	if _, err := fleettest.SetBenchLogger(); err != nil {
		b.Fatal(err)
	}
	type result struct {
		n, clusters int
		hubOnlyResult
	}
	var results []result
	for _, size := range strings.Split(sizes, ",") {
		var n, clusters int
		if _, err := fmt.Sscanf(size, "%d/%d", &n, &clusters); err != nil {
			b.Fatalf("BENCH_HUBONLY %q: %v", size, err)
		}
		b.Run(size, func(b *testing.B) {
			results = append(results, result{n, clusters, hubOnly(b, n, clusters)})
		})
	}
	for _, r := range results {
		fmt.Printf("hub-only: %d HCDs / %d clusters bound in %s, bound and delivered in %s = %.2f ms per HCD, %.2f hub writes per HCD, hub process CPU %.1f s = %.2f ms per HCD (%.2f cores), peak RSS %s, RSS %s at the end\n",
			r.n, r.clusters, r.bound.Round(100*time.Millisecond), r.elapsed.Round(100*time.Millisecond), float64(r.elapsed.Milliseconds())/float64(r.n), r.writes,
			r.use.cpu.Seconds(), float64(r.use.cpu.Microseconds())/1000/float64(r.n), r.use.cores(), fleettest.KB(r.use.peakRSS), fleettest.KB(r.use.rss))
		fmt.Printf("hub-only %d/%d scheduling breakdown: %s\n", r.n, r.clusters, r.breakdown)
	}
	if len(results) >= 2 {
		first, last := results[0], results[len(results)-1]
		perFirst := first.elapsed.Seconds() / float64(first.n)
		perLast := last.elapsed.Seconds() / float64(last.n)
		fmt.Printf("hub-only slope: %.2f ms per HCD at %d, %.2f ms at %d (x%.2f per HCD for x%.1f HCDs; flat = 1)\n",
			perFirst*1000, first.n, perLast*1000, last.n, perLast/perFirst, float64(last.n)/float64(first.n))
	}
}

// hubOnlyResult is one size's figures.
type hubOnlyResult struct {
	// bound is until every HCD is bound, elapsed until every one's
	// ManifestWork is written too.
	bound, elapsed time.Duration
	// writes are the hub writes per HCD.
	writes float64
	// use is this process's over the burst.
	use usage
	// breakdown is where the bindings' time went.
	breakdown string
}

func hubOnly(b *testing.B, n, clusters int) hubOnlyResult {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testenv.Start(b, testenv.Options{CRDPaths: []string{"../../../../internal/localfleet/crds/hub", "../../../../manifests/crds"},
		ErrorIfCRDPathMissing: true})
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: hub.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	const ns = "bench"
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addon.DefaultHubNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: ns}, StringData: map[string]string{".dockerconfigjson": `{"auths":{}}`}},
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "hosts", Namespace: ns}},
	} {
		if err := c.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	names := make([]string, clusters)
	parallel(clusters, floorWorkers, func(i int) {
		names[i] = fmt.Sprintf("mc-%03d", i)
		if err := seedCluster(ctx, c, names[i]); err != nil {
			b.Error(err)
		}
	})
	// A Placement's decisions, 100 clusters per PlacementDecision as OCM
	// writes them.
	for i := 0; i*100 < clusters; i++ {
		pd := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("hosts-decision-%d", i), Namespace: ns,
			Labels: map[string]string{clusterv1beta1.PlacementLabel: "hosts"}}}
		if err := c.Create(ctx, pd); err != nil {
			b.Fatal(err)
		}
		for _, name := range names[i*100 : min(clusters, (i+1)*100)] {
			pd.Status.Decisions = append(pd.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: name})
		}
		if err := c.Status().Update(ctx, pd); err != nil {
			b.Fatal(err)
		}
	}
	if b.Failed() {
		return hubOnlyResult{}
	}
	startHubControllers(ctx, b, cfg)

	before := hubWrites(b, cfg)
	breakdown := startSchedulingBreakdown(b)
	var r hubOnlyResult
	r.use = measure(b, func() { r.bound, r.elapsed, err = hubOnlyBurst(ctx, b, c, n, clusters) })
	if err != nil {
		b.Fatalf("not all %d bound and delivered: %v", n, err)
	}
	r.breakdown = breakdown.stop(b)
	r.writes = float64(hubWrites(b, cfg)-before) / float64(n)
	return r
}

// hubOnlyBurst creates n HCDs at once and waits until every one is bound
// and its ManifestWork written. It follows them with watches, not lists: a
// list of every HCD once a second costs the API server more, at 5000, than
// the writes it measures.
func hubOnlyBurst(ctx context.Context, b *testing.B, c client.WithWatch, n, clusters int) (bound, delivered time.Duration, err error) {
	const ns = "bench"
	hcds, err := retryWatch(ctx, c, &v1alpha1.HostedClusterDeploymentList{}, client.InNamespace(ns))
	if err != nil {
		return 0, 0, err
	}
	defer hcds.Stop()
	var workList metav1.PartialObjectMetadataList
	workList.SetGroupVersionKind(workv1.SchemeGroupVersion.WithKind("ManifestWorkList"))
	works, err := retryWatch(ctx, c, &workList, client.MatchingLabels{hosting.LabelHCDNamespace: ns})
	if err != nil {
		return 0, 0, err
	}
	defer works.Stop()
	start := time.Now()
	createCtx, stopCreating := context.WithCancel(ctx)
	defer stopCreating()
	go parallel(n, floorWorkers, func(i int) {
		if err := c.Create(createCtx, benchHCD(ns, fmt.Sprintf("hc-%05d", i))); err != nil && createCtx.Err() == nil {
			b.Error(err)
		}
	})
	created, isBound, written := map[string]bool{}, map[string]bool{}, map[string]bool{}
	done := 0
	progress := time.NewTicker(15 * time.Second)
	defer progress.Stop()
	timeout := time.After(60 * time.Minute)
	for done < n {
		select {
		case ev, ok := <-hcds.ResultChan():
			if !ok {
				return 0, 0, fmt.Errorf("the HostedClusterDeployment watch ended after %s, %d seen", time.Since(start), len(created))
			}
			h, isHCD := ev.Object.(*v1alpha1.HostedClusterDeployment)
			if !isHCD {
				if ev.Type == watch.Error {
					return 0, 0, fmt.Errorf("the HostedClusterDeployment watch failed: %v", apierrors.FromObject(ev.Object))
				}
				continue
			}
			created[h.Name] = true
			if h.Status.HostingCluster == "" || isBound[h.Name] {
				continue
			}
			isBound[h.Name] = true
			if len(isBound) == n {
				bound = time.Since(start)
			}
			if written[h.Name] {
				done++
			}
		case ev, ok := <-works.ResultChan():
			if !ok {
				return 0, 0, fmt.Errorf("the ManifestWork watch ended")
			}
			w, isWork := ev.Object.(*metav1.PartialObjectMetadata)
			if ev.Type == watch.Error {
				return 0, 0, fmt.Errorf("the ManifestWork watch failed: %v", apierrors.FromObject(ev.Object))
			}
			name := ""
			if isWork {
				name = w.Labels[hosting.LabelHCDName]
			}
			if name == "" || written[name] {
				continue
			}
			written[name] = true
			if isBound[name] {
				done++
			}
		case <-progress.C:
			fmt.Printf("  hub-only %d/%d: %d created, %d bound, %d delivered after %s\n", n, clusters, len(created), len(isBound), done, time.Since(start).Round(time.Second))
		case <-timeout:
			return 0, 0, fmt.Errorf("%d created, %d bound, %d delivered after 60m", len(created), len(isBound), done)
		}
	}
	return bound, time.Since(start), nil
}

// retryWatch watches list's kind from now on. It resumes where it stopped
// when the API server closes the watch (it closes a watcher that falls
// behind a burst of events), and when the API server no longer has that
// point (410 Gone: the watcher fell further behind than its watch cache
// keeps) it lists again, passes every object on as Modified, and watches
// from there, as an informer does.
func retryWatch(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	w, err := watchFromList(ctx, c, list, opts, nil)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	rw := &relistingWatch{events: make(chan watch.Event), cancel: cancel}
	send := func(ev watch.Event) bool {
		select {
		case rw.events <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	go func() {
		defer close(rw.events)
		for {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					break
				}
				if !send(ev) {
					w.Stop()
					return
				}
			}
			w.Stop()
			if ctx.Err() != nil {
				return
			}
			fresh := list.DeepCopyObject().(client.ObjectList)
			if w, err = watchFromList(ctx, c, fresh, opts, func(obj runtime.Object) bool {
				return send(watch.Event{Type: watch.Modified, Object: obj})
			}); err != nil {
				send(watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus})
				return
			}
		}
	}()
	return rw, nil
}

// watchFromList lists list's kind, hands each object to each (if set), and
// watches from the list's resourceVersion on.
func watchFromList(ctx context.Context, c client.WithWatch, list client.ObjectList, opts []client.ListOption, each func(runtime.Object) bool) (watch.Interface, error) {
	// A full list, not a limited one: that is read from etcd, and its
	// resourceVersion may be older than the API server's watch cache
	// (which refuses it as too old).
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	if each != nil {
		items, err := apimeta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, obj := range items {
			if !each(obj) {
				return nil, ctx.Err()
			}
		}
	}
	return toolswatch.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), &toolscache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, list.DeepCopyObject().(client.ObjectList), append(opts, &client.ListOptions{Raw: &options})...)
		},
	})
}

// relistingWatch is retryWatch's watch.Interface.
type relistingWatch struct {
	events chan watch.Event
	cancel context.CancelFunc
}

func (w *relistingWatch) Stop()                          { w.cancel() }
func (w *relistingWatch) ResultChan() <-chan watch.Event { return w.events }

// seedCluster writes what the hub reads of a management cluster whose agent
// reports it ready to host.
func seedCluster(ctx context.Context, c client.Client, name string) error {
	now := metav1.Now()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	if err := c.Create(ctx, mc); err != nil {
		return err
	}
	mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "Bench", LastTransitionTime: now}}
	mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{
		{Name: hosting.ClaimHostingCluster, Value: "true"}, {Name: hosting.ClaimHostedClusters, Value: "0"},
		{Name: hosting.ClaimUnmanagedHostedClusters, Value: "0"},
		{Name: hosting.ClaimSupportedVersions, Value: strings.Join(hypershiftsim.SupportedVersions, ",")},
		{Name: hosting.ClaimPlatforms, Value: "Agent,KubeVirt,None"},
	}
	mc.Status.Version = clusterv1.ManagedClusterVersion{Kubernetes: "v1.34.3"}
	if err := c.Status().Update(ctx, mc); err != nil {
		return err
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		return err
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: addon.Name, Namespace: name}}
	if err := c.Create(ctx, mca); err != nil {
		return err
	}
	mca.Status.Namespace = "open-cluster-management-agent-addon"
	mca.Status.Conditions = []metav1.Condition{
		{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable, Status: metav1.ConditionTrue, Reason: "Bench", LastTransitionTime: now},
		{Type: addon.ConditionHyperShiftOperatorInstalled, Status: metav1.ConditionTrue, Reason: "Installed", LastTransitionTime: now},
	}
	return c.Status().Update(ctx, mca)
}

// startHubControllers runs the hub's scheduler and delivery with cmd/hub's
// own wiring and defaults (hub.SetupScheduleAndDeliver, its cache options),
// until ctx ends.
func startHubControllers(ctx context.Context, b *testing.B, cfg *rest.Config) {
	// With cmd/hub's client-side rate limits: at fleet scale they can be
	// what a burst waits for.
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = hub.DefaultKubeAPIQPS, hub.DefaultKubeAPIBurst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: hub.Scheme, Cache: hub.CacheOptions(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		// One manager per size in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		b.Fatal(err)
	}
	opts := hub.NewOptions()
	if n := envInt("BENCH_SCHED_WORKERS", 0); n > 0 {
		opts.SchedulerWorkers = n
	}
	if n := envInt("BENCH_DELIVERY_WORKERS", 0); n > 0 {
		opts.DeliveryWorkers = n
	}
	if err := hub.SetupScheduleAndDeliver(mgr, opts); err != nil {
		b.Fatal(err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			b.Error(err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		b.Fatal("hub caches did not sync")
	}
}

// hubWrites counts what hubWriteBreakdown counts, on the API server behind
// cfg.
func hubWrites(b *testing.B, cfg *rest.Config) int {
	client, err := clientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	body, err := client.Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	total := 0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		verb, resource, sub := promLabel(line, "verb"), promLabel(line, "resource"), promLabel(line, "subresource")
		if verb == "GET" || verb == "LIST" || verb == "WATCH" {
			continue
		}
		if (resource == "hostedclusterdeployments" && verb != "POST") || (resource == "manifestworks" && sub == "" && verb != "PATCH") {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			total += int(v)
		}
	}
	return total
}

func clientFor(cfg *rest.Config) (rest.Interface, error) {
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return kc.CoreV1().RESTClient(), nil
}
