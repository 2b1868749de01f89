package delivery

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// DefaultRefreshInterval is how often, at most, a HostedClusterDeployment's
// ManifestWork is rewritten because only a Secret or ConfigMap it refers to
// changed (Options.RefreshInterval).
const DefaultRefreshInterval = 30 * time.Second

var (
	// namespace is a tenant's hub namespace: the metric says whose writes
	// load the hub. One series per namespace with referenced objects.
	referenceRefreshes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hcpfleet_hub_reference_refreshes_total",
		Help: "ManifestWork rewrites because only a Secret or ConfigMap a HostedClusterDeployment refers to changed, by the HCD's namespace."}, []string{"namespace"})
	referenceRefreshesDelayed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hcpfleet_hub_reference_refreshes_delayed_total",
		Help: "Reference-only rewrites held back to the refresh interval (coalesced with later changes), by the HCD's namespace."}, []string{"namespace"})
)

func init() { metrics.Registry.MustRegister(referenceRefreshes, referenceRefreshesDelayed) }

// refreshLimiter coalesces rewrites of a ManifestWork whose only change is
// the content of referenced objects: a tenant patching one large Secret that
// twenty HostedClusterDeployments use, again and again, would otherwise make
// the hub rewrite twenty ManifestWorks per patch. Each HostedClusterDeployment
// is rewritten for its references at most once per interval; its own spec
// changes are never held back. In memory: a new leader starts afresh, which
// costs at most one early rewrite per HCD.
type refreshLimiter struct {
	interval time.Duration
	now      func() time.Time
	last     sync.Map // types.NamespacedName → lastWrite
}

type lastWrite struct {
	uid      types.UID
	specHash string // InputHash without the referenced objects' versions
	at       time.Time
}

// wait is how long the rewrite of key (at specHash) must wait: zero when
// its spec changed since the last write, or the interval has passed.
func (l *refreshLimiter) wait(key types.NamespacedName, uid types.UID, specHash string) time.Duration {
	v, ok := l.last.Load(key)
	if !ok {
		return 0
	}
	w := v.(lastWrite)
	if w.uid != uid || w.specHash != specHash {
		return 0
	}
	return max(0, w.at.Add(l.interval).Sub(l.now()))
}

// wrote records a write of key at specHash; refsOnly says it was a
// reference-only rewrite (counted per namespace).
func (l *refreshLimiter) wrote(key types.NamespacedName, uid types.UID, specHash string, refsOnly bool) {
	l.last.Store(key, lastWrite{uid: uid, specHash: specHash, at: l.now()})
	if refsOnly {
		referenceRefreshes.WithLabelValues(key.Namespace).Inc()
	}
}

func (l *refreshLimiter) forget(key types.NamespacedName) { l.last.Delete(key) }
