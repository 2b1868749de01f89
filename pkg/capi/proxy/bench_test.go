//go:build integration

package proxy

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

const (
	benchObjects = 1000
	benchNS      = "bench"
	getsPerRound = 100
)

// benchCluster is a Cluster of a realistic size (refs, labels, annotations).
func benchCluster(i int) *unstructured.Unstructured {
	name := fmt.Sprintf("cluster-%04d", i)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": privGV, "kind": "Cluster",
		"metadata": map[string]any{
			"name": name, "namespace": benchNS,
			"labels":      map[string]any{"cluster.x-k8s.io/cluster-name": name, "hypershift.openshift.io/hosted-control-plane": "true", "pool": "bench"},
			"annotations": map[string]any{"hypershift.openshift.io/cluster": "clusters/" + name, "note": "a benchmark object of ordinary size"},
		},
		"spec": map[string]any{
			"paused":               false,
			"clusterNetwork":       map[string]any{"pods": map[string]any{"cidrBlocks": []any{"10.132.0.0/14"}}, "services": map[string]any{"cidrBlocks": []any{"172.31.0.0/16"}}},
			"controlPlaneEndpoint": map[string]any{"host": name + ".example.com", "port": int64(6443)},
			"controlPlaneRef":      map[string]any{"apiGroup": "hypershift.openshift.io", "kind": "HostedControlPlane", "name": name},
			"infrastructureRef":    map[string]any{"apiGroup": "infrastructure.cluster.hypershift.openshift.io", "kind": "AgentCluster", "name": name},
		},
	}}
}

var clustersGVR = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "clusters"}
var privClustersGVR = schema.GroupVersionResource{Group: "cluster.hypershift.openshift.io", Version: "v1beta2", Resource: "clusters"}

type benchEnv struct {
	direct, proxied dynamic.Interface
}

var (
	benchOnce sync.Once
	benchE    *benchEnv
	benchErr  error
)

// setupBench starts one apiserver + proxy for all benchmarks of the run and
// fills it with benchObjects Clusters (written directly, in the private group).
func setupBench(b *testing.B) *benchEnv {
	benchOnce.Do(func() {
		bt := &onceTB{TB: b}
		e := startEnv(bt)
		unlimited := func(c *rest.Config) *rest.Config {
			c = rest.CopyConfig(c)
			c.QPS, c.Burst = -1, 0
			return c
		}
		be := &benchEnv{direct: dynamic.NewForConfigOrDie(unlimited(e.direct)), proxied: dynamic.NewForConfigOrDie(unlimited(e.proxied))}
		ctx := context.Background()
		if err := e.dc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNS}}); err != nil {
			benchErr = err
			return
		}
		var wg sync.WaitGroup
		errs := make(chan error, benchObjects)
		work := make(chan int)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					if _, err := be.direct.Resource(privClustersGVR).Namespace(benchNS).Create(ctx, benchCluster(i), metav1.CreateOptions{}); err != nil {
						errs <- err
					}
				}
			}()
		}
		for i := 0; i < benchObjects; i++ {
			work <- i
		}
		close(work)
		wg.Wait()
		close(errs)
		for err := range errs {
			benchErr = err
			return
		}
		benchE = be
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchE
}

// onceTB lets the shared environment outlive the first benchmark: its
// cleanups (stopping the apiserver) run from TestMain when the binary ends.
type onceTB struct{ testing.TB }

var sharedCleanups []func()

func (o *onceTB) Cleanup(f func()) { sharedCleanups = append(sharedCleanups, f) }

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(sharedCleanups) - 1; i >= 0; i-- {
		sharedCleanups[i]()
	}
	os.Exit(code)
}

// benchTable keeps the last figures of each sub-benchmark (Go runs them
// with growing b.N; the final run is the one it reports).
var benchTable struct {
	sync.Mutex
	order []string
	rows  map[string]string
}

func addRow(key, format string, args ...any) {
	benchTable.Lock()
	defer benchTable.Unlock()
	if benchTable.rows == nil {
		benchTable.rows = map[string]string{}
	}
	if _, ok := benchTable.rows[key]; !ok {
		benchTable.order = append(benchTable.order, key)
	}
	benchTable.rows[key] = fmt.Sprintf(format, args...)
}

// BenchmarkProxy compares the proxy with direct access to the same apiserver,
// interleaving the two so that background load hits both alike. Each
// iteration is a batch (100 GETs / a full watch replay of 1000 objects per
// side) so that even -benchtime 1x gives a usable figure. Nothing is
// asserted about times.
func BenchmarkProxy(b *testing.B) {
	be := setupBench(b)
	ctx := context.Background()

	b.Run("GET", func(b *testing.B) {
		var direct, proxied time.Duration
		get := func(c dynamic.Interface, gvr schema.GroupVersionResource, i int) time.Duration {
			start := time.Now()
			if _, err := c.Resource(gvr).Namespace(benchNS).Get(ctx, fmt.Sprintf("cluster-%04d", i%benchObjects), metav1.GetOptions{}); err != nil {
				b.Fatal(err)
			}
			return time.Since(start)
		}
		n := 0
		for it := 0; it < b.N; it++ {
			for i := 0; i < getsPerRound; i++ {
				// alternate which side goes first
				if i%2 == 0 {
					direct += get(be.direct, privClustersGVR, n)
					proxied += get(be.proxied, clustersGVR, n)
				} else {
					proxied += get(be.proxied, clustersGVR, n)
					direct += get(be.direct, privClustersGVR, n)
				}
				n++
			}
		}
		d, p := float64(direct.Microseconds())/float64(n), float64(proxied.Microseconds())/float64(n)
		b.ReportMetric(d, "direct-µs/get")
		b.ReportMetric(p, "proxy-µs/get")
		b.ReportMetric(p/d, "proxy/direct-latency")
		addRow("get", "%-28s %12.0f %12.0f %10.2fx", "GET latency (µs, mean)", d, p, p/d)
	})

	b.Run("Watch", func(b *testing.B) {
		var direct, proxied time.Duration
		events := 0
		replay := func(c dynamic.Interface, gvr schema.GroupVersionResource) time.Duration {
			start := time.Now()
			w, err := c.Resource(gvr).Namespace(benchNS).Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Stop()
			for seen := 0; seen < benchObjects; seen++ {
				ev, ok := <-w.ResultChan()
				if !ok {
					b.Fatalf("watch closed after %d events", seen)
				}
				if u, ok := ev.Object.(*unstructured.Unstructured); !ok || u.GetKind() != "Cluster" {
					b.Fatalf("unexpected event %v %T", ev.Type, ev.Object)
				}
			}
			return time.Since(start)
		}
		for it := 0; it < b.N; it++ {
			if it%2 == 0 {
				direct += replay(be.direct, privClustersGVR)
				proxied += replay(be.proxied, clustersGVR)
			} else {
				proxied += replay(be.proxied, clustersGVR)
				direct += replay(be.direct, privClustersGVR)
			}
			events += benchObjects
		}
		d, p := float64(events)/direct.Seconds(), float64(events)/proxied.Seconds()
		b.ReportMetric(d, "direct-events/s")
		b.ReportMetric(p, "proxy-events/s")
		b.ReportMetric(p/d, "proxy/direct-throughput")
		addRow("watch", "%-28s %12.0f %12.0f %10.2fx", "watch throughput (events/s)", d, p, p/d)
	})

	benchTable.Lock()
	defer benchTable.Unlock()
	fmt.Fprintf(os.Stdout, "\nCAPI proxy vs direct, same kube-apiserver, %d Clusters (target: proxy ≥ 0.90x direct throughput)\n", benchObjects)
	fmt.Fprintf(os.Stdout, "%-28s %12s %12s %11s\n", "", "direct", "proxy", "proxy/direct")
	for _, k := range benchTable.order {
		fmt.Fprintln(os.Stdout, benchTable.rows[k])
	}
}

// BenchmarkTranslate measures the pure translation of one Cluster (the
// per-object cost the proxy adds on top of the network path).
func BenchmarkTranslate(b *testing.B) {
	doc, err := benchCluster(1).MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	ev := append(append([]byte(`{"type":"ADDED","object":`), doc...), '}')
	b.SetBytes(int64(len(ev)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := TranslateWatchEvent(ev, std, ScopeCAPI); err != nil {
			b.Fatal(err)
		}
	}
}
